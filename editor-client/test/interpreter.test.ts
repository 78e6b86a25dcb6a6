import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { checkInterpreter, chooseInterpreter, serverCommand } from "../src/interpreter";
import { bareVenv, bundledRoot, firstDiagnostics, oldPython, perfLintPython, PLANTED, plantedWorkspace } from "./python";

const home = "/home/ada";

test("perfLint.interpreter wins over the Python extension's choice", () => {
  const chosen = chooseInterpreter({ setting: "/opt/py/bin/python", pythonExtension: "/usr/bin/python3.12", home });
  assert.deepEqual(chosen, { python: "/opt/py/bin/python", source: "perfLint.interpreter" });
});

test("the Python extension's interpreter is used when the setting is empty or blank", () => {
  for (const setting of [undefined, "", "   "]) {
    assert.deepEqual(chooseInterpreter({ setting, pythonExtension: "/envs/a/bin/python", home }), {
      python: "/envs/a/bin/python",
      source: "Python extension",
    });
  }
});

test("python3 is the last resort", () => {
  assert.deepEqual(chooseInterpreter({ home }), { python: "python3", source: "default" });
  assert.deepEqual(chooseInterpreter({ setting: "", pythonExtension: " ", home }), { python: "python3", source: "default" });
});

test("~, ${workspaceFolder} and relative paths in the setting are resolved", () => {
  const ws = "/work/proj";
  assert.equal(chooseInterpreter({ setting: "~/venv/bin/python", home, workspaceFolder: ws }).python, "/home/ada/venv/bin/python");
  assert.equal(chooseInterpreter({ setting: "${workspaceFolder}/.venv/bin/python", home, workspaceFolder: ws }).python, "/work/proj/.venv/bin/python");
  assert.equal(chooseInterpreter({ setting: "${workspaceFolder:proj}/bin/python", home, workspaceFolder: ws }).python, "/work/proj/bin/python");
  assert.equal(chooseInterpreter({ setting: ".venv/bin/python", home, workspaceFolder: ws }).python, "/work/proj/.venv/bin/python");
  // A bare command is looked up on PATH, not made relative.
  assert.equal(chooseInterpreter({ setting: "python3.12", home, workspaceFolder: ws }).python, "python3.12");
});

test("an untrusted workspace's own interpreters are never chosen", () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-ws-"));
  const untrusted = { home, workspaceFolder: ws, trusted: false, workspaceFolders: [ws] };
  const chosen = chooseInterpreter({ ...untrusted, setting: "${workspaceFolder}/.venv/bin/python", pythonExtension: `${ws}/env/bin/python` });
  assert.equal(chosen.python, "python3");
  assert.equal(chosen.source, "default");
  assert.match(chosen.skipped ?? "", /perfLint\.interpreter .*inside the untrusted workspace.*Python extension/);
  // Outside the workspace, and once it is trusted, they are.
  assert.equal(chooseInterpreter({ ...untrusted, pythonExtension: "/usr/bin/python3.12" }).python, "/usr/bin/python3.12");
  assert.equal(chooseInterpreter({ ...untrusted, trusted: true, setting: ".venv/bin/python" }).python, path.join(ws, ".venv/bin/python"));
  fs.rmSync(ws, { recursive: true, force: true });
});

test("the server command runs isolated: a script by path (bundled) or the environment's module", () => {
  assert.deepEqual(serverCommand("/v/bin/python", "useBundled", "/ext"), {
    command: "/v/bin/python",
    args: ["-I", "-S", "/ext/bundled/tool/perf_lint_server.py"],
  });
  assert.deepEqual(serverCommand("/v/bin/python", "fromEnvironment", "/ext"), { command: "/v/bin/python", args: ["-I", "-m", "perf_lint", "server"] });
});

test("a plain Python 3.10+ with nothing installed passes the bundled check", { timeout: 180_000 }, async () => {
  const check = await checkInterpreter(bareVenv(), "useBundled", bundledRoot());
  assert.equal(check.ok, true, JSON.stringify(check));
  if (check.ok) assert.match(check.python, /^3\.\d+\.\d+$/);
});

test("fromEnvironment: an interpreter with perf-lint passes, one without is told what to do", { timeout: 60_000 }, async (t) => {
  const python = perfLintPython();
  if (!python) return t.skip("no interpreter with perf-lint (set PERF_LINT_PYTHON)");
  const ok = await checkInterpreter(python, "fromEnvironment", bundledRoot());
  assert.equal(ok.ok, true, JSON.stringify(ok));
  if (ok.ok) assert.match(ok.version, /^\d+\.\d+/);
  const bare = bareVenv();
  const missing = await checkInterpreter(bare, "fromEnvironment", bundledRoot());
  assert.equal(missing.ok, false);
  if (!missing.ok) {
    assert.equal(missing.reason, "not-installed");
    assert.ok(missing.message.includes(bare) && missing.message.includes('"useBundled"'), missing.message);
  }
});

test("a missing interpreter is named", { timeout: 30_000 }, async () => {
  const check = await checkInterpreter("/nonexistent/bin/python", "useBundled", bundledRoot());
  assert.equal(check.ok, false);
  if (!check.ok) {
    assert.equal(check.reason, "no-interpreter");
    assert.match(check.message, /\/nonexistent\/bin\/python/);
  }
});

test("a Python older than 3.10 is named as too old", { timeout: 60_000 }, async (t) => {
  const pythons = ["3.8", "2.7"].map(oldPython).filter((p): p is string => !!p);
  if (pythons.length === 0) return t.skip("no Python 3.8 or 2.7 on this machine");
  for (const python of pythons) {
    const check = await checkInterpreter(python, "useBundled", bundledRoot());
    assert.equal(check.ok, false, python);
    if (!check.ok) {
      assert.equal(check.reason, "too-old");
      assert.match(check.message, /needs Python 3\.10/);
      assert.ok(check.message.includes(python), check.message);
    }
  }
});

test("a perf_lint that fails to import is reported with its error (fromEnvironment)", { timeout: 60_000 }, async () => {
  const python = bareVenv({ "perf_lint/__init__.py": "raise RuntimeError('half-installed perf-lint')\n" });
  const check = await checkInterpreter(python, "fromEnvironment", bundledRoot());
  assert.equal(check.ok, false);
  if (!check.ok) {
    assert.equal(check.reason, "broken");
    assert.match(check.message, /RuntimeError: half-installed perf-lint/);
  }
});

for (const strategy of ["useBundled", "fromEnvironment"] as const) {
  test(`${strategy}: a workspace's json.py, typing.py, perf_lint/ ... never run; diagnostics still come`, { timeout: 180_000 }, async (t) => {
    const python = strategy === "useBundled" ? bareVenv() : perfLintPython();
    if (!python) return t.skip("no interpreter with perf-lint (set PERF_LINT_PYTHON)");
    const { ws, ran } = plantedWorkspace();
    // The probes run where the server will: in the workspace, with it on PYTHONPATH too.
    const check = await checkInterpreter(python, strategy, bundledRoot(), { cwd: ws });
    assert.equal(check.ok, true, JSON.stringify(check));
    const { command, args } = serverCommand(python, strategy, bundledRoot());
    const diagnostics = await firstDiagnostics(command, args, ws, path.join(ws, "train.py"));
    assert.ok(diagnostics.some((d) => d.code === "TPL101"), JSON.stringify(diagnostics));
    assert.deepEqual(ran(), [], `planted modules ran: ${ran().join(", ")} (planted: ${PLANTED.join(", ")})`);
  });
}
