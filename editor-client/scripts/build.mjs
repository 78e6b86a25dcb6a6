// Bundles the extension (dist/extension.js) with esbuild; `--tests` also bundles the unit
// tests (test/*.test.ts -> out/test/*.test.js) for `node --test`; `--production` minifies.
import { build } from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const production = process.argv.includes("--production");
const common = { bundle: true, platform: "node", target: "node20", format: "cjs", logLevel: "warning", absWorkingDir: root };

rmSync(join(root, "dist"), { recursive: true, force: true });
await build({
  ...common,
  entryPoints: ["src/extension.ts"],
  outfile: "dist/extension.js",
  external: ["vscode"],
  minify: production,
  sourcemap: !production,
});

if (process.argv.includes("--tests")) {
  rmSync(join(root, "out"), { recursive: true, force: true });
  const tests = readdirSync(join(root, "test")).filter((name) => name.endsWith(".test.ts"));
  await build({ ...common, entryPoints: tests.map((name) => `test/${name}`), outdir: "out/test", external: ["vscode"] });
}
