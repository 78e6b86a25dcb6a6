/**
 * Which Python runs the server, how it is started, and whether it can run it (no `vscode`
 * import: unit-tested with real processes).
 *
 * Every Python process of the extension runs isolated (`-I`): neither the workspace (the
 * working directory) nor PYTHON* variables reach `sys.path`, so a folder holding
 * `json.py` or `perf_lint/` runs none of it. The bundled server also runs with `-S`: no
 * site-packages and no `.pth` file of the environment is read.
 */

import { execFile, type ExecFileException } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { expandPath } from "./settings";

export const DEFAULT_PYTHON = "python3";
export const OLDEST_PYTHON: [number, number] = [3, 10];

export type InterpreterSource = "perfLint.interpreter" | "Python extension" | "default";
export type ImportStrategy = "useBundled" | "fromEnvironment";

export interface Interpreter {
  /** Executable path or a command looked up on PATH. */
  python: string;
  source: InterpreterSource;
  /** Why a candidate was passed over (an untrusted workspace's own interpreter), for the log. */
  skipped?: string;
}

export interface Candidates {
  /** The `perfLint.interpreter` setting (in an untrusted workspace: the user's value only). */
  setting?: string;
  /** The interpreter selected in the Python extension, when it is installed. */
  pythonExtension?: string;
  home: string;
  workspaceFolder?: string;
  /** Whether the workspace is trusted; if not, no interpreter inside `workspaceFolders` runs. */
  trusted?: boolean;
  workspaceFolders?: string[];
}

/** Whether `file` lies in (or is) one of `folders`. */
export function inside(file: string, folders: string[]): boolean {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const target = real(file);
  return folders.some((folder) => {
    const root = real(folder);
    return target === root || target.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  });
}

/**
 * `perfLint.interpreter`, else the Python extension's interpreter, else `python3`; in an
 * untrusted workspace a candidate inside the workspace (its `.venv`, say) is passed over.
 */
export function chooseInterpreter(candidates: Candidates): Interpreter {
  const untrustedFolders = candidates.trusted === false ? candidates.workspaceFolders ?? [] : [];
  const skipped: string[] = [];
  const usable = (python: string, what: string) => {
    const bare = !python.includes("/") && !python.includes("\\");
    if (!bare && untrustedFolders.length > 0 && inside(python, untrustedFolders)) {
      skipped.push(`${what} ${python} is inside the untrusted workspace`);
      return false;
    }
    return true;
  };
  const result = (python: string, source: InterpreterSource): Interpreter =>
    skipped.length ? { python, source, skipped: skipped.join("; ") } : { python, source };

  const setting = candidates.setting?.trim();
  if (setting) {
    let python = expandPath(setting, candidates.home, candidates.workspaceFolder);
    const bare = !python.includes("/") && !python.includes("\\");
    if (!bare && !path.isAbsolute(python) && candidates.workspaceFolder !== undefined) {
      python = path.join(candidates.workspaceFolder, python);
    }
    if (usable(python, "perfLint.interpreter")) return result(python, "perfLint.interpreter");
  }
  const selected = candidates.pythonExtension?.trim();
  if (selected && usable(selected, "the Python extension's interpreter")) return result(selected, "Python extension");
  return result(DEFAULT_PYTHON, "default");
}

/** The extension's own server launcher (`bundled/tool/perf_lint_server.py`). */
export function bundledScript(extensionRoot: string): string {
  return path.join(extensionRoot, "bundled", "tool", "perf_lint_server.py");
}

/** The server's command line for a strategy: the bundled launcher by path, or the environment's perf-lint. */
export function serverCommand(python: string, strategy: ImportStrategy, extensionRoot: string): { command: string; args: string[] } {
  if (strategy === "useBundled") return { command: python, args: ["-I", "-S", bundledScript(extensionRoot)] };
  return { command: python, args: ["-I", "-m", "perf_lint", "server"] };
}

export type Check =
  | { ok: true; version: string; python: string }
  | { ok: false; reason: "no-interpreter" | "too-old" | "no-bundle" | "not-installed" | "broken"; message: string };

interface Ran {
  error: ExecFileException | null;
  stdout: string;
  stderr: string;
}

function run(python: string, args: string[], timeoutMs: number, cwd?: string): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(python, args, { timeout: timeoutMs, windowsHide: true, cwd }, (error, stdout, stderr) =>
      resolve({ error, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

const VERSION_PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])";
const PERF_LINT_PROBE = "import perf_lint; print(perf_lint.__version__)";
const lastLine = (text: string) => text.trim().split("\n").pop() ?? "";

/**
 * Whether `python` can run the server with `strategy`: it runs, is Python 3.10+, and has a
 * bundled libcst for its version (useBundled) or perf-lint installed (fromEnvironment).
 * `cwd` is where the server will run (the workspace): the probes run there, isolated, too.
 */
export async function checkInterpreter(
  python: string,
  strategy: ImportStrategy,
  extensionRoot: string,
  options: { timeoutMs?: number; cwd?: string } = {},
): Promise<Check> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const probe = await run(python, ["-I", "-S", "-c", VERSION_PROBE], timeoutMs, options.cwd);
  const code = probe.error?.code;
  if (code === "ENOENT" || code === "EACCES") {
    return { ok: false, reason: "no-interpreter", message: `Python interpreter '${python}' was not found or cannot be run (${code}).` };
  }
  const oldest = OLDEST_PYTHON.join(".");
  const version = /^(\d+)\.(\d+)\.(\d+)$/.exec(probe.stdout.trim());
  if (probe.error || !version) {
    const detail = probe.error?.killed ? `timed out after ${timeoutMs} ms` : lastLine(probe.stderr) || probe.error?.message || "no version printed";
    return { ok: false, reason: "too-old", message: `'${python}' is not Python ${oldest} or newer (${detail}). perf-lint needs Python ${oldest}+.` };
  }
  const [major, minor] = [Number(version[1]), Number(version[2])];
  const found = version[0];
  if (major < OLDEST_PYTHON[0] || (major === OLDEST_PYTHON[0] && minor < OLDEST_PYTHON[1])) {
    return { ok: false, reason: "too-old", message: `${python} is Python ${found}; perf-lint needs Python ${oldest} or newer. Choose another interpreter (perfLint.interpreter).` };
  }
  if (strategy === "useBundled") {
    if (!fs.existsSync(path.join(extensionRoot, "bundled", "libs", `cp${major}${minor}`))) {
      return {
        ok: false,
        reason: "no-bundle",
        message: `The extension bundles no server for Python ${major}.${minor} (${python}). Choose another interpreter, or install perf-lint there and set perfLint.importStrategy to "fromEnvironment".`,
      };
    }
    return { ok: true, version: "bundled", python: found };
  }
  const installed = await run(python, ["-I", "-c", PERF_LINT_PROBE], timeoutMs, options.cwd);
  if (!installed.error) return { ok: true, version: installed.stdout.trim(), python: found };
  if (/ModuleNotFoundError: No module named '?perf_lint'?/.test(installed.stderr)) {
    return {
      ok: false,
      reason: "not-installed",
      message: `perf-lint is not installed for ${python} (perfLint.importStrategy is "fromEnvironment"). Install it there, or set perfLint.importStrategy to "useBundled".`,
    };
  }
  const detail = lastLine(installed.stderr) || (installed.error.killed ? `timed out after ${timeoutMs} ms` : installed.error.message);
  return { ok: false, reason: "broken", message: `'${python} -I -c "import perf_lint"' failed: ${detail}` };
}
