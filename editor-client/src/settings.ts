/**
 * The `perfLint` settings as the server understands them (no `vscode` import: unit-tested).
 *
 * VS Code's `perfLint` section also holds settings only the extension reads (`enable`,
 * `interpreter`); the server rejects keys it does not know, so every value that reaches it
 * (workspace/configuration answers, initializationOptions, didChangeConfiguration) goes
 * through `serverSettings`.
 */

export const SECTION = "perfLint";

/** Settings whose change needs a new server process (the others are pulled by the server). */
export const RESTART_SETTINGS = ["enable", "interpreter"] as const;

export interface ServerSettings {
  select?: string[];
  ignore: string[];
  extendSelect: string[];
  debounceMs: number;
  showSyntaxErrors: boolean;
  settingsPrecedence: "editor" | "pyproject";
  profiling: {
    enabled: boolean;
    python?: string;
    steps?: [number, number, number];
    timeoutS: number;
    runner: "local" | "ray";
    rayAddress?: string;
    numGpus: number;
  };
}

export const DEFAULTS: ServerSettings = {
  ignore: [],
  extendSelect: [],
  debounceMs: 150,
  showSyntaxErrors: false,
  settingsPrecedence: "editor",
  profiling: { enabled: true, timeoutS: 300, runner: "local", numGpus: 1 },
};

type Raw = Record<string, unknown> | null | undefined;

function codes(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter((code): code is string => typeof code === "string" && code.trim() !== "").map((code) => code.trim());
}

function pick<T>(value: unknown, ok: (v: unknown) => boolean, fallback: T): T {
  return ok(value) ? (value as T) : fallback;
}

const isBool = (v: unknown) => typeof v === "boolean";
const isNumber = (v: unknown) => typeof v === "number" && Number.isFinite(v);

/** A user's path setting with `~` and `${workspaceFolder}` (or `${workspaceFolder:name}`) expanded. */
export function expandPath(value: string, home: string, workspaceFolder: string | undefined): string {
  let path = value.trim();
  if (workspaceFolder !== undefined) path = path.replace(/\$\{workspaceFolder(?::[^}]*)?\}/g, workspaceFolder);
  if (path === "~" || path.startsWith("~/")) path = home + path.slice(1);
  return path;
}

export interface Context {
  /** Whether the workspace is trusted: profiling runs user code and is off otherwise. */
  trusted: boolean;
  home: string;
  workspaceFolder?: string;
}

/**
 * The server's view of a `perfLint` settings object (nested as `getConfiguration` returns it,
 * or with dotted keys such as `"profiling.enabled"`). Values of the wrong type fall back to
 * the defaults; an empty `select` means "not set" (pyproject's or the default selection).
 */
export function serverSettings(raw: Raw, context: Context): ServerSettings {
  const source = raw ?? {};
  const nested = typeof source.profiling === "object" && source.profiling !== null ? (source.profiling as Record<string, unknown>) : {};
  const profilingValue = (key: string) => (key in nested ? nested[key] : source[`profiling.${key}`]);

  const settings: ServerSettings = {
    ignore: codes(source.ignore) ?? [],
    extendSelect: codes(source.extendSelect) ?? [],
    debounceMs: pick(source.debounceMs, (v) => isNumber(v) && (v as number) >= 0 && (v as number) <= 10_000, DEFAULTS.debounceMs),
    showSyntaxErrors: pick(source.showSyntaxErrors, isBool, DEFAULTS.showSyntaxErrors),
    settingsPrecedence: pick(source.settingsPrecedence, (v) => v === "editor" || v === "pyproject", DEFAULTS.settingsPrecedence),
    profiling: {
      enabled: context.trusted && pick(profilingValue("enabled"), isBool, DEFAULTS.profiling.enabled),
      timeoutS: pick(profilingValue("timeoutS"), (v) => isNumber(v) && (v as number) > 0, DEFAULTS.profiling.timeoutS),
      runner: pick(profilingValue("runner"), (v) => v === "local" || v === "ray", DEFAULTS.profiling.runner),
      numGpus: pick(profilingValue("numGpus"), (v) => isNumber(v) && (v as number) >= 0, DEFAULTS.profiling.numGpus),
    },
  };
  const select = codes(source.select);
  if (select && select.length > 0) settings.select = select;
  const python = profilingValue("python");
  if (typeof python === "string" && python.trim() !== "") {
    settings.profiling.python = expandPath(python, context.home, context.workspaceFolder);
  }
  const rayAddress = profilingValue("rayAddress");
  if (typeof rayAddress === "string" && rayAddress.trim() !== "") settings.profiling.rayAddress = rayAddress.trim();
  const steps = profilingValue("steps");
  if (Array.isArray(steps) && steps.length === 3 && steps.every((s) => Number.isInteger(s) && s >= 0) && steps[2] >= 1) {
    settings.profiling.steps = steps as [number, number, number];
  }
  return settings;
}

/** Whether a configuration change needs a server restart (`affects` is VS Code's `affectsConfiguration`). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_SETTINGS.some((key) => affects(`${SECTION}.${key}`));
}
