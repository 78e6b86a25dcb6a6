/**
 * Which Python runs the server, and whether perf-lint is installed there (no `vscode`
 * import: unit-tested with real processes).
 */

import { execFile } from "node:child_process";
import * as path from "node:path";
import { expandPath } from "./settings";

export const DEFAULT_PYTHON = "python3";

export type InterpreterSource = "perfLint.interpreter" | "Python extension" | "default";

export interface Interpreter {
  /** Executable path or a command looked up on PATH. */
  python: string;
  source: InterpreterSource;
}

export interface Candidates {
  /** The `perfLint.interpreter` setting. */
  setting?: string;
  /** The interpreter selected in the Python extension, when it is installed. */
  pythonExtension?: string;
  home: string;
  workspaceFolder?: string;
}

/** `perfLint.interpreter`, else the Python extension's interpreter, else `python3`. */
export function chooseInterpreter(candidates: Candidates): Interpreter {
  const setting = candidates.setting?.trim();
  if (setting) {
    let python = expandPath(setting, candidates.home, candidates.workspaceFolder);
    const bare = !python.includes("/") && !python.includes("\\");
    if (!bare && !path.isAbsolute(python) && candidates.workspaceFolder !== undefined) {
      python = path.join(candidates.workspaceFolder, python);
    }
    return { python, source: "perfLint.interpreter" };
  }
  const selected = candidates.pythonExtension?.trim();
  if (selected) return { python: selected, source: "Python extension" };
  return { python: DEFAULT_PYTHON, source: "default" };
}

/** The server's command line. */
export function serverCommand(python: string): { command: string; args: string[] } {
  return { command: python, args: ["-m", "perf_lint", "server"] };
}

/** A POSIX-shell-safe rendering of one word. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command that installs perf-lint into `python`. */
export function installCommand(python: string): string {
  return `${shellQuote(python)} -m pip install perf-lint`;
}

export type Check =
  | { ok: true; version: string }
  | { ok: false; reason: "no-interpreter" | "not-installed" | "broken"; message: string };

const PROBE = "import perf_lint; print(perf_lint.__version__)";

/** Runs `python -c "import perf_lint"` and explains a failure in words a user can act on. */
export function checkPerfLint(python: string, timeoutMs = 20_000): Promise<Check> {
  return new Promise((resolve) => {
    execFile(python, ["-c", PROBE], { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      if (!error) {
        resolve({ ok: true, version: stdout.trim() });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EACCES") {
        resolve({ ok: false, reason: "no-interpreter", message: `Python interpreter '${python}' was not found or cannot be run (${code}).` });
      } else if (/ModuleNotFoundError: No module named '?perf_lint'?/.test(stderr)) {
        resolve({
          ok: false,
          reason: "not-installed",
          message: `perf-lint is not installed for ${python}. Install it with: ${installCommand(python)}`,
        });
      } else {
        const detail = (stderr.trim().split("\n").pop() ?? "") || (error.killed ? `timed out after ${timeoutMs} ms` : error.message);
        resolve({ ok: false, reason: "broken", message: `'${python} -c "import perf_lint"' failed: ${detail}` });
      }
    });
  });
}
