/** Real interpreters for the tests: the project's venv (perf-lint installed) and throwaway venvs. */

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after } from "node:test";

/** The interpreter with perf-lint installed: $PERF_LINT_PYTHON, else the repository's .venv. */
export function perfLintPython(): string | undefined {
  const candidates = [process.env.PERF_LINT_PYTHON, path.resolve(__dirname, "../../../.venv/bin/python")];
  return candidates.find((p): p is string => !!p && fs.existsSync(p));
}

/** A new venv without perf-lint (and without pip), removed when the tests end; `files` are
 * written into its site-packages. Returns its python. */
export function bareVenv(files: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-venv-"));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync("python3", ["-m", "venv", "--without-pip", dir]);
  const lib = path.join(dir, "lib");
  const site = path.join(lib, fs.readdirSync(lib).find((name) => name.startsWith("python"))!, "site-packages");
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(site, name)), { recursive: true });
    fs.writeFileSync(path.join(site, name), text);
  }
  return path.join(dir, "bin", "python");
}

/** Runs a Python snippet with `input` on stdin and returns stdout and the exit status. */
export function runPython(python: string, code: string, input: string): { status: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(python, ["-c", code], { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], timeout: 30_000 });
    return { status: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}
