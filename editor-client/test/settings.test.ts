import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULTS, needsRestart, serverSettings } from "../src/settings";
import { perfLintPython, runPython } from "./python";

const trusted = { trusted: true, home: "/home/ada", workspaceFolder: "/work/proj" };

/** What VS Code's getConfiguration("perfLint") gives with every setting at its default. */
const vscodeDefaults = {
  enable: true,
  interpreter: "",
  select: [],
  ignore: [],
  extendSelect: [],
  debounceMs: 150,
  showSyntaxErrors: false,
  settingsPrecedence: "editor",
  profiling: { enabled: true, python: "", steps: null, timeoutS: 300, runner: "local", rayAddress: "", numGpus: 1 },
};

test("extension-only settings never reach the server; empty select means 'not set'", () => {
  const settings = serverSettings(vscodeDefaults, trusted);
  assert.deepEqual(settings, DEFAULTS);
  assert.ok(!("enable" in settings) && !("interpreter" in settings) && !("select" in settings));
});

test("values are passed through, nested or dotted", () => {
  const raw = {
    ...vscodeDefaults,
    select: ["TPL1", " TPL2 "],
    ignore: ["TPL401"],
    extendSelect: ["TPL301"],
    debounceMs: 0,
    showSyntaxErrors: true,
    settingsPrecedence: "pyproject",
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
    settingsPrecedence: "pyproject",
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

test("profiling is off in an untrusted workspace whatever the setting says", () => {
  assert.equal(serverSettings(vscodeDefaults, { ...trusted, trusted: false }).profiling.enabled, false);
  assert.equal(serverSettings({ profiling: { enabled: false } }, trusted).profiling.enabled, false);
});

test("values of the wrong type fall back to the defaults", () => {
  const settings = serverSettings(
    {
      select: "TPL1",
      ignore: [1, "TPL101", ""],
      debounceMs: 20_000,
      showSyntaxErrors: "yes",
      settingsPrecedence: "user",
      profiling: { enabled: 1, python: 3, steps: [1, 1, 0], timeoutS: -1, runner: "slurm", rayAddress: 6379, numGpus: -1 },
    },
    trusted,
  );
  assert.deepEqual(settings, { ...DEFAULTS, ignore: ["TPL101"] });
  assert.equal(serverSettings(null, trusted).debounceMs, DEFAULTS.debounceMs);
  assert.equal(serverSettings({ profiling: { steps: [1, 2] } }, trusted).profiling.steps, undefined);
});

test("only enable and interpreter need a restart", () => {
  const changed = (keys: string[]) => needsRestart((section) => keys.some((key) => key === section || key.startsWith(`${section}.`)));
  assert.equal(changed(["perfLint.interpreter"]), true);
  assert.equal(changed(["perfLint.enable"]), true);
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

test("the server accepts what the extension sends, and would reject VS Code's raw section", { timeout: 60_000 }, (t) => {
  const python = perfLintPython();
  if (!python) return t.skip("no interpreter with perf-lint (set PERF_LINT_PYTHON)");
  const sent = serverSettings({
    ...vscodeDefaults, select: ["TPL1"],
    profiling: { ...vscodeDefaults.profiling, steps: [1, 1, 3], runner: "ray", rayAddress: "head:6379", numGpus: 0.5 },
  }, trusted);
  const accepted = runPython(python, PARSE, JSON.stringify(sent));
  assert.equal(accepted.status, 0, accepted.stdout + accepted.stderr);
  assert.match(accepted.stdout, /select=\('TPL1',\)/);
  assert.match(accepted.stdout, /profiling_steps=\(1, 1, 3\)/);
  assert.match(accepted.stdout, /profiling_runner='ray', profiling_ray_address='head:6379', profiling_num_gpus=0.5/);
  const raw = runPython(python, PARSE, JSON.stringify(vscodeDefaults));
  assert.equal(raw.status, 3, raw.stdout + raw.stderr);
  assert.match(raw.stdout, /unknown key 'enable'/);
});
