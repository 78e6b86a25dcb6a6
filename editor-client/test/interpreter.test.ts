import assert from "node:assert/strict";
import { test } from "node:test";
import { checkPerfLint, chooseInterpreter, installCommand, serverCommand, shellQuote } from "../src/interpreter";
import { bareVenv, perfLintPython } from "./python";

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

test("the server command and the install hint", () => {
  assert.deepEqual(serverCommand("/v/bin/python"), { command: "/v/bin/python", args: ["-m", "perf_lint", "server"] });
  assert.equal(installCommand("/v/bin/python"), "/v/bin/python -m pip install perf-lint");
  assert.equal(installCommand("/My Envs/it's/python"), `'/My Envs/it'\\''s/python' -m pip install perf-lint`);
  assert.equal(shellQuote("python3"), "python3");
});

test("an interpreter with perf-lint installed passes the check", { timeout: 60_000 }, async (t) => {
  const python = perfLintPython();
  if (!python) return t.skip("no interpreter with perf-lint (set PERF_LINT_PYTHON)");
  const check = await checkPerfLint(python);
  assert.equal(check.ok, true, JSON.stringify(check));
  if (check.ok) assert.match(check.version, /^\d+\.\d+/);
});

test("an interpreter without perf-lint gets the exact install command", { timeout: 60_000 }, async () => {
  const python = bareVenv();
  const check = await checkPerfLint(python);
  assert.equal(check.ok, false);
  if (!check.ok) {
    assert.equal(check.reason, "not-installed");
    assert.ok(check.message.endsWith(`Install it with: ${python} -m pip install perf-lint`), check.message);
  }
});

test("a missing interpreter is named", { timeout: 30_000 }, async () => {
  const check = await checkPerfLint("/nonexistent/bin/python");
  assert.equal(check.ok, false);
  if (!check.ok) {
    assert.equal(check.reason, "no-interpreter");
    assert.match(check.message, /\/nonexistent\/bin\/python/);
  }
});

test("a perf_lint that fails to import is reported with its error", { timeout: 60_000 }, async () => {
  const python = bareVenv({ "perf_lint/__init__.py": "raise RuntimeError('half-installed perf-lint')\n" });
  const check = await checkPerfLint(python);
  assert.equal(check.ok, false);
  if (!check.ok) {
    assert.equal(check.reason, "broken");
    assert.match(check.message, /RuntimeError: half-installed perf-lint/);
  }
});
