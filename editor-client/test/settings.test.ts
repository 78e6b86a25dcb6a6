import assert from "node:assert/strict";
import { test } from "node:test";
import { type Inspected, needsRestart, serverSettings, setValues } from "../src/settings";
import { perfLintPython, runPython } from "./python";

const trusted = { trusted: true, home: "/home/ada", workspaceFolder: "/work/proj" };

/** VS Code's `inspect()` for a section where nothing is set: defaults only. */
const nothingSet = (): Inspected => ({});

test("with default settings the server gets nothing that could override pyproject.toml", () => {
  const settings = serverSettings(setValues(nothingSet, true), trusted);
  assert.deepEqual(settings, { profiling: { enabled: true } });
});

test("the most specific scope the user set wins; unset scopes do not count", () => {
  const values: Record<string, Inspected> = {
    ignore: { globalValue: ["TPL401"], workspaceValue: ["TPL101"] },
    select: { globalValue: ["TPL1"], workspaceValue: undefined, workspaceFolderValue: ["TPL2"] },
    debounceMs: { globalValue: 0 },
  };
  assert.deepEqual(setValues((key) => values[key], true), { ignore: ["TPL101"], select: ["TPL2"], debounceMs: 0 });
});

test("an untrusted workspace's own values of restricted settings are ignored", () => {
  const values: Record<string, Inspected> = {
    interpreter: { globalValue: "/usr/bin/python3", workspaceValue: "./evil/python" },
    importStrategy: { workspaceValue: "fromEnvironment" },
    "profiling.python": { workspaceFolderValue: "./evil/python" },
    "profiling.rayAddress": { workspaceValue: "evil:6379" },
    "profiling.enabled": { workspaceValue: true },
    ignore: { workspaceValue: ["TPL101"] },
  };
  const keys = Object.keys(values);
  assert.deepEqual(setValues((key) => values[key], false, keys), { interpreter: "/usr/bin/python3", ignore: ["TPL101"] });
  assert.deepEqual(setValues((key) => values[key], true, keys), {
    interpreter: "./evil/python", importStrategy: "fromEnvironment", "profiling.python": "./evil/python",
    "profiling.rayAddress": "evil:6379", "profiling.enabled": true, ignore: ["TPL101"],
  });
  assert.equal(serverSettings({ "profiling.enabled": true }, { ...trusted, trusted: false }).profiling.enabled, false);
});

test("values are passed through, nested or dotted", () => {
  const raw = {
    select: ["TPL1", " TPL2 "],
    ignore: ["TPL401"],
    extendSelect: ["TPL301"],
    debounceMs: 0,
    showSyntaxErrors: true,
    configurationPreference: "filesystemFirst",
    profiling: {
      enabled: true, python: "${workspaceFolder}/.venv/bin/python", steps: [0, 1, 2], timeoutS: 12.5,
      runner: "ray", rayAddress: " head:6379 ", numGpus: 0,
    },
  };
  const expected = {
    select: ["TPL1", "TPL2"],
    ignore: ["TPL401"],
    extendSelect: ["TPL301"],
    debounceMs: 0,
    showSyntaxErrors: true,
    configurationPreference: "filesystemFirst",
    profiling: {
      enabled: true, python: "/work/proj/.venv/bin/python", steps: [0, 1, 2], timeoutS: 12.5,
      runner: "ray", rayAddress: "head:6379", numGpus: 0,
    },
  };
  assert.deepEqual(serverSettings(raw, trusted), expected);
  const { profiling, ...flat } = raw;
  const dotted = { ...flat, ...Object.fromEntries(Object.entries(profiling).map(([k, v]) => [`profiling.${k}`, v])) };
  assert.deepEqual(serverSettings(dotted, trusted), expected);
});

test("values of the wrong type are left out (the server's defaults apply)", () => {
  const settings = serverSettings(
    {
      select: "TPL1",
      ignore: [1, "TPL101", ""],
      debounceMs: 20_000,
      showSyntaxErrors: "yes",
      configurationPreference: "editor",
      profiling: { enabled: 1, python: 3, steps: [1, 1, 0], timeoutS: -1, runner: "slurm", rayAddress: 6379, numGpus: -1 },
    },
    trusted,
  );
  assert.deepEqual(settings, { ignore: ["TPL101"], profiling: { enabled: true } });
  assert.deepEqual(serverSettings(null, trusted), { profiling: { enabled: true } });
  assert.equal(serverSettings({ profiling: { steps: [1, 2] } }, trusted).profiling.steps, undefined);
});

test("enable, interpreter and importStrategy need a restart", () => {
  const changed = (keys: string[]) => needsRestart((section) => keys.some((key) => key === section || key.startsWith(`${section}.`)));
  assert.equal(changed(["perfLint.interpreter"]), true);
  assert.equal(changed(["perfLint.enable"]), true);
  assert.equal(changed(["perfLint.importStrategy"]), true);
  assert.equal(changed(["perfLint.select", "perfLint.profiling.python", "perfLint.debounceMs"]), false);
  assert.equal(changed(["python.defaultInterpreterPath"]), false);
});

const PARSE = [
  "import json, sys",
  "from perf_lint.analyzers import ConfigError",
  "from perf_lint.server.settings import parse_editor_settings",
  "try:",
  "    print(repr(parse_editor_settings(json.load(sys.stdin))))",
  "except ConfigError as exc:",
  "    print(exc); sys.exit(3)",
].join("\n");

test("the server accepts what the extension sends, and rejects extension-only keys", { timeout: 60_000 }, (t) => {
  const python = perfLintPython();
  if (!python) return t.skip("no interpreter with perf-lint (set PERF_LINT_PYTHON)");
  const sent = serverSettings({
    select: ["TPL1"], configurationPreference: "editorOnly",
    profiling: { steps: [1, 1, 3], runner: "ray", rayAddress: "head:6379", numGpus: 0.5 },
  }, trusted);
  const accepted = runPython(python, PARSE, JSON.stringify(sent));
  assert.equal(accepted.status, 0, accepted.stdout + accepted.stderr);
  assert.match(accepted.stdout, /select=\('TPL1',\), ignore=None, extend_select=None/);
  assert.match(accepted.stdout, /preference='editorOnly'/);
  assert.match(accepted.stdout, /profiling_steps=\(1, 1, 3\)/);
  assert.match(accepted.stdout, /profiling_runner='ray', profiling_ray_address='head:6379', profiling_num_gpus=0.5/);
  const raw = runPython(python, PARSE, JSON.stringify({ enable: true, interpreter: "" }));
  assert.equal(raw.status, 3, raw.stdout + raw.stderr);
  assert.match(raw.stdout, /unknown key 'enable'/);
});
