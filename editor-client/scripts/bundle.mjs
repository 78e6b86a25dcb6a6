// Bundles the language server into the extension (bundled/libs), so that a plain Python 3.10+
// with nothing installed runs it (perfLint.importStrategy "useBundled"):
//   bundled/libs/common   perf-lint from this checkout and its pure-Python dependencies
//   bundled/libs/cpXY     libcst (compiled) for CPython X.Y, one folder per version
// bundled/tool/perf_lint_server.py (committed) puts both on sys.path and starts the server.
// Run by `vscode:prepublish`; needs python3 with pip and the package index.
// PERF_LINT_BUNDLE_PYTHON: the Python that runs pip (default python3).
// PERF_LINT_BUNDLE_PLATFORMS: pip platform tags for libcst (default: Linux x86_64).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const client = dirname(dirname(fileURLToPath(import.meta.url)));
const repo = dirname(client);
const libs = join(client, "bundled", "libs");
const python = process.env.PERF_LINT_BUNDLE_PYTHON || "python3";
const platforms = (process.env.PERF_LINT_BUNDLE_PLATFORMS || "manylinux_2_28_x86_64,manylinux_2_17_x86_64,manylinux2014_x86_64").split(",");
const requirements = JSON.parse(readFileSync(join(client, "bundled", "requirements.json"), "utf8"));

function pip(target, args) {
  console.error(`bundle: pip install --target ${target.slice(client.length + 1)} ${args.filter((a) => !a.startsWith("-")).join(" ")}`);
  execFileSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--root-user-action=ignore", "--no-compile", "--target", target, ...args], {
    stdio: ["ignore", "inherit", "inherit"],
  });
}

rmSync(libs, { recursive: true, force: true });
const common = join(libs, "common");
mkdirSync(common, { recursive: true });
pip(common, ["--no-deps", repo]);
// The oldest supported Python's markers (tomli, exceptiongroup); pure wheels serve them all.
pip(common, ["--only-binary=:all:", "--implementation", "py", "--abi", "none", "--platform", "any",
  "--python-version", requirements.oldest, ...requirements.pure]);
for (const version of requirements.pythons) {
  pip(join(libs, `cp${version.replace(".", "")}`), ["--only-binary=:all:", "--implementation", "cp", "--python-version", version,
    ...platforms.flatMap((p) => ["--platform", p]), ...requirements.native]);
}
rmSync(join(common, "bin"), { recursive: true, force: true }); // perf-lint's console script: unused here
writeFileSync(join(libs, "built"), `${new Date().toISOString()}\n`); // when: tests rebuild a bundle older than the sources
