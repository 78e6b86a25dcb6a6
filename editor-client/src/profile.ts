/**
 * The server's `perf-lint.profile` command: its arguments, what it returns, and where its
 * Markdown reports land (no `vscode` import: unit-tested).
 */

import * as fs from "node:fs";
import * as path from "node:path";

export const PROFILE_COMMAND = "perf-lint.profile";
export const FIX_ALL_COMMAND = "perf-lint.fixAll";

/** Where in a document to profile: a notebook cell (index in the cells array) or a `.py` line (0-based). */
export type Where = { cell: number } | { line: number } | null;

/** The server command's arguments: `[uri, where, rule]` (rule null: every finding of the cell). */
export function profileArguments(uri: string, where: Where, rule: string | null = null): [string, Where, string | null] {
  return [uri, where, rule];
}

/** The arguments back as values, from a call made by the extension, a code lens or a code action. */
export function parseProfileArguments(args: unknown[]): { uri?: string; where: Where; rule: string | null } {
  const [uri, where, rule] = args;
  let parsed: Where = null;
  if (typeof where === "number") parsed = { line: where };
  else if (where && typeof where === "object") {
    const value = where as Record<string, unknown>;
    if (typeof value.cell === "number") parsed = { cell: value.cell };
    else if (typeof value.line === "number") parsed = { line: value.line };
  }
  return { uri: typeof uri === "string" ? uri : undefined, where: parsed, rule: typeof rule === "string" ? rule : null };
}

/** "cell 3" / "line 12" / "" for a `Where` (1-based for people). */
export function describeWhere(where: Where): string {
  if (where === null) return "";
  return "cell" in where ? `cell ${where.cell + 1}` : `line ${where.line + 1}`;
}

export interface Outcome {
  /** One line for the status bar, e.g. "TPL101 faster 1.8x". */
  verdict?: string;
  /** Absolute path of the Markdown report. */
  report?: string;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** The verdict line and report path from the command's result (the profiler's `to_dict()`). */
export function outcomeOf(result: unknown): Outcome {
  if (!result || typeof result !== "object") return {};
  const value = result as Record<string, unknown>;
  const outcome: Outcome = {};
  const report = str(value.report_path) ?? str(value.report);
  if (report && report.endsWith(".md")) outcome.report = report;
  const summary = str(value.summary);
  if (summary) {
    outcome.verdict = summary.split("\n")[0];
  } else if (Array.isArray(value.verdicts)) {
    const parts = value.verdicts
      .filter((v): v is Record<string, unknown> => !!v && typeof v === "object")
      .map((v) => {
        const ratio = typeof v.ratio === "number" ? ` ${v.ratio.toFixed(2)}x` : "";
        return [str(v.code), str(v.verdict)].filter(Boolean).join(" ") + ratio;
      })
      .filter((part) => part.trim() !== "");
    if (parts.length > 0) outcome.verdict = parts.join(", ");
  }
  return outcome;
}

/** The newest `.perf-lint/traces/<run>/report.md` under any of `folders`, by modification time. */
export function newestReport(folders: string[]): string | undefined {
  let best: { file: string; mtime: number } | undefined;
  for (const folder of folders) {
    const traces = path.join(folder, ".perf-lint", "traces");
    let runs: string[];
    try {
      runs = fs.readdirSync(traces);
    } catch {
      continue;
    }
    for (const run of runs) {
      const file = path.join(traces, run, "report.md");
      try {
        const mtime = fs.statSync(file).mtimeMs;
        if (!best || mtime > best.mtime) best = { file, mtime };
      } catch {
        // a run without a report (still running, failed)
      }
    }
  }
  return best?.file;
}
