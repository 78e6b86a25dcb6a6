/** Real interpreters and servers for the tests: the project's venv (perf-lint installed),
 * throwaway venvs, old Pythons, the bundled server, and a workspace full of planted modules. */

import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after } from "node:test";

const client = path.resolve(__dirname, "../..");
const repo = path.dirname(client);

/** The interpreter with perf-lint installed: $PERF_LINT_PYTHON, else the repository's .venv. */
export function perfLintPython(): string | undefined {
  const candidates = [process.env.PERF_LINT_PYTHON, path.join(repo, ".venv", "bin", "python")];
  return candidates.find((p): p is string => !!p && fs.existsSync(p));
}

/** The newest modification time of the `.py` files under `dir`. */
function newest(dir: string): number {
  let best = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "__pycache__") best = Math.max(best, newest(full));
    else if (entry.name.endsWith(".py")) best = Math.max(best, fs.statSync(full).mtimeMs);
  }
  return best;
}

/** The extension's root with the server bundled: `scripts/bundle.mjs` runs when the bundle
 * is missing or older than this checkout's perf-lint sources. */
export function bundledRoot(): string {
  const bundled = path.join(client, "bundled", "libs", "built");
  const sources = Math.max(...["perf_lint", "analyzers", "server", "profiler"].map((name) => newest(path.join(repo, name))));
  if (!fs.existsSync(bundled) || fs.statSync(bundled).mtimeMs < sources) {
    execFileSync("node", [path.join(client, "scripts", "bundle.mjs")], { stdio: ["ignore", "ignore", "inherit"], timeout: 600_000 });
  }
  return client;
}

/** An old CPython (`3.8`, `2.7`) from pyenv or PATH, if this machine has one. */
export function oldPython(version: string): string | undefined {
  const pyenv = path.join(os.homedir(), ".pyenv", "versions");
  const found = fs.existsSync(pyenv) ? fs.readdirSync(pyenv).find((name) => name.startsWith(`${version}.`)) : undefined;
  if (found) return path.join(pyenv, found, "bin", "python");
  try {
    return execFileSync("sh", ["-c", `command -v python${version}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
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

/** Modules a hostile folder plants to be imported by a Python started in it. */
export const PLANTED = [
  "json.py", "typing.py", "logging.py", "dataclasses.py", "enum.py", "re.py", "asyncio.py", "attrs.py", "libcst.py",
  "perf_lint/__init__.py", "pygls/__init__.py", "sitecustomize.py", "usercustomize.py",
];

/** A workspace with `train.py` (a TPL101 finding) and every PLANTED module, each of which
 * records that it ran; `ran()` lists those that did. Removed when the tests end. */
export function plantedWorkspace(): { ws: string; ran: () => string[] } {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-planted-"));
  after(() => fs.rmSync(ws, { recursive: true, force: true }));
  const marks = path.join(ws, "ran");
  fs.mkdirSync(marks);
  for (const name of PLANTED) {
    const file = path.join(ws, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const mark = path.join(marks, name.replace(/\W/g, "_"));
    fs.writeFileSync(file, `open(${JSON.stringify(mark)}, "w").close()\nraise SystemExit("planted ${name} ran")\n`);
  }
  fs.writeFileSync(
    path.join(ws, "train.py"),
    "import torch\nimport torchvision\nfrom torch.utils.data import DataLoader\n\nloader = DataLoader(torchvision.datasets.ImageFolder(\"images\"), batch_size=4)\nfor x, y in loader:\n    x.cuda()\n",
  );
  return { ws, ran: () => fs.readdirSync(marks) };
}

/** Starts a server (`command args`, in `cwd`, with `cwd` also on PYTHONPATH), opens `file`
 * and returns the first diagnostics published for it. */
export function firstDiagnostics(command: string, args: string[], cwd: string, file: string, timeoutMs = 120_000): Promise<{ code?: string }[]> {
  const uri = `file://${file}`;
  const child = spawn(command, args, { cwd, env: { ...process.env, PYTHONPATH: cwd, PYTHONSTARTUP: path.join(cwd, "json.py") }, stdio: ["pipe", "pipe", "pipe"] });
  const send = (message: object) => {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }));
    child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  };
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no diagnostics within ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
    const finish = (error?: Error, value?: { code?: string }[]) => {
      clearTimeout(timer);
      child.kill();
      if (error) reject(error);
      else resolve(value!);
    };
    let buffer = Buffer.alloc(0);
    child.stdout.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, Math.max(end, 0)).toString())?.[1]);
        if (end < 0 || buffer.length < end + 4 + length) return;
        const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
        buffer = buffer.subarray(end + 4 + length);
        if (message.id === 1 && message.result) {
          send({ method: "initialized", params: {} });
          send({ method: "textDocument/didOpen", params: { textDocument: { uri, languageId: "python", version: 1, text: fs.readFileSync(file, "utf8") } } });
        } else if (message.method === "textDocument/publishDiagnostics" && message.params.uri === uri) {
          finish(undefined, message.params.diagnostics);
        }
      }
    });
    child.on("exit", (code) => finish(new Error(`server exited with ${code}; stderr:\n${stderr}`)));
    send({ id: 1, method: "initialize", params: { processId: null, rootUri: `file://${cwd}`, capabilities: {} } });
  });
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
