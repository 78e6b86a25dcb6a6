/**
 * The `perfLint` settings as the server understands them (no `vscode` import: unit-tested).
 *
 * Only settings the user set reach the server (`setValues`): an unset setting never
 * overrides `[tool.perf-lint]` in pyproject.toml, so the editor agrees with
 * `perf-lint check`. VS Code's `perfLint` section also holds settings only the extension
 * reads (`enable`, `interpreter`, `importStrategy`); the server rejects keys it does not
 * know, so every value that reaches it goes through `serverSettings`.
 */

export const SECTION = "perfLint";

/** Settings whose change needs a new server process (the others are pulled by the server). */
export const RESTART_SETTINGS = ["enable", "interpreter", "importStrategy"] as const;

/** Settings that choose what runs: an untrusted workspace's own values are never used. */
export const RESTRICTED_SETTINGS = ["interpreter", "importStrategy", "profiling.enabled", "profiling.python", "profiling.rayAddress"];

/** The settings the server reads, as dotted keys. */
export const SERVER_KEYS = [
  "select", "ignore", "extendSelect", "debounceMs", "showSyntaxErrors", "configurationPreference",
  "profiling.enabled", "profiling.python", "profiling.steps", "profiling.timeoutS", "profiling.runner",
  "profiling.rayAddress", "profiling.numGpus",
] as const;

export type Preference = "editorFirst" | "filesystemFirst" | "editorOnly";

/** What the server gets: only what the user set (the server and pyproject.toml decide the rest). */
export interface ServerSettings {
  select?: string[];
  ignore?: string[];
  extendSelect?: string[];
  debounceMs?: number;
  showSyntaxErrors?: boolean;
  configurationPreference?: Preference;
  profiling: {
    enabled: boolean;
    python?: string;
    steps?: [number, number, number];
    timeoutS?: number;
    runner?: "local" | "ray";
    rayAddress?: string;
    numGpus?: number;
  };
}

/** VS Code's `inspect()` of one setting. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The settings the user set, by dotted key: the most specific scope's value (folder, then
 * workspace, then user); for a restricted setting in an untrusted workspace, the user's only.
 */
export function setValues(inspect: (key: string) => Inspected | undefined, trusted: boolean, keys: readonly string[] = SERVER_KEYS): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const key of keys) {
    const found = inspect(key);
    if (!found) continue;
    const value = !trusted && RESTRICTED_SETTINGS.includes(key)
      ? found.globalValue
      : found.workspaceFolderValue ?? found.workspaceValue ?? found.globalValue;
    if (value !== undefined) values[key] = value;
  }
  return values;
}

type Raw = Record<string, unknown> | null | undefined;

function codes(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter((code): code is string => typeof code === "string" && code.trim() !== "").map((code) => code.trim());
}

const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isText = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

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
 * The server's view of the settings the user set (nested as `getConfiguration` returns
 * them, or with dotted keys as `setValues` gives them). A value of the wrong type is left
 * out (the server's default applies); an empty `select` means "not set".
 */
export function serverSettings(raw: Raw, context: Context): ServerSettings {
  const source = raw ?? {};
  const nested = typeof source.profiling === "object" && source.profiling !== null ? (source.profiling as Record<string, unknown>) : {};
  const profilingValue = (key: string) => (key in nested ? nested[key] : source[`profiling.${key}`]);
  const enabled = profilingValue("enabled");
  const settings: ServerSettings = { profiling: { enabled: context.trusted && (isBool(enabled) ? enabled : true) } };

  const select = codes(source.select);
  if (select && select.length > 0) settings.select = select;
  const ignore = codes(source.ignore);
  if (ignore && ignore.length > 0) settings.ignore = ignore;
  const extendSelect = codes(source.extendSelect);
  if (extendSelect && extendSelect.length > 0) settings.extendSelect = extendSelect;
  if (isNumber(source.debounceMs) && source.debounceMs >= 0 && source.debounceMs <= 10_000) settings.debounceMs = source.debounceMs;
  if (isBool(source.showSyntaxErrors)) settings.showSyntaxErrors = source.showSyntaxErrors;
  const preference = source.configurationPreference;
  if (preference === "editorFirst" || preference === "filesystemFirst" || preference === "editorOnly") settings.configurationPreference = preference;

  const profiling = settings.profiling;
  const python = profilingValue("python");
  if (isText(python)) profiling.python = expandPath(python, context.home, context.workspaceFolder);
  const steps = profilingValue("steps");
  if (Array.isArray(steps) && steps.length === 3 && steps.every((s) => Number.isInteger(s) && s >= 0) && steps[2] >= 1) {
    profiling.steps = steps as [number, number, number];
  }
  const timeoutS = profilingValue("timeoutS");
  if (isNumber(timeoutS) && timeoutS > 0) profiling.timeoutS = timeoutS;
  const runner = profilingValue("runner");
  if (runner === "local" || runner === "ray") profiling.runner = runner;
  const rayAddress = profilingValue("rayAddress");
  if (isText(rayAddress)) profiling.rayAddress = rayAddress.trim();
  const numGpus = profilingValue("numGpus");
  if (isNumber(numGpus) && numGpus >= 0) profiling.numGpus = numGpus;
  return settings;
}

/** Whether a configuration change needs a server restart (`affects` is VS Code's `affectsConfiguration`). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_SETTINGS.some((key) => affects(`${SECTION}.${key}`));
}
