import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { describeWhere, newestReport, outcomeOf, parseProfileArguments, profileArguments } from "../src/profile";

test("arguments are [uri, where, rule] and read back from lenses and actions", () => {
  assert.deepEqual(profileArguments("file:///a.ipynb", { cell: 2 }), ["file:///a.ipynb", { cell: 2 }, null]);
  assert.deepEqual(parseProfileArguments(["file:///a.py", { line: 4 }, "TPL101"]), { uri: "file:///a.py", where: { line: 4 }, rule: "TPL101" });
  assert.deepEqual(parseProfileArguments(["file:///a.py", 7]), { uri: "file:///a.py", where: { line: 7 }, rule: null });
  assert.deepEqual(parseProfileArguments([]), { uri: undefined, where: null, rule: null });
  assert.equal(describeWhere({ cell: 0 }), "cell 1");
  assert.equal(describeWhere({ line: 9 }), "line 10");
  assert.equal(describeWhere(null), "");
});

test("the verdict and the report come from the command's result", () => {
  assert.deepEqual(outcomeOf({ summary: "TPL101 confirmed: 1.8x faster\nmore", report_path: "/w/.perf-lint/traces/1/report.md" }), {
    verdict: "TPL101 confirmed: 1.8x faster",
    report: "/w/.perf-lint/traces/1/report.md",
  });
  assert.deepEqual(outcomeOf({ verdicts: [{ code: "TPL101", verdict: "confirmed", ratio: 1.5 }, { code: "TPL102", verdict: "inconclusive" }] }), {
    verdict: "TPL101 confirmed 1.50x, TPL102 inconclusive",
  });
  assert.deepEqual(outcomeOf({ report: "/w/trace.json" }), {});
  assert.deepEqual(outcomeOf(null), {});
  assert.deepEqual(outcomeOf("done"), {});
});

test("the newest report under .perf-lint/traces is found", () => {
  const a = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-ws-"));
  const b = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-ws-"));
  after(() => [a, b].forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  assert.equal(newestReport([a, b]), undefined);
  const write = (folder: string, run: string, seconds: number) => {
    const file = path.join(folder, ".perf-lint", "traces", run, "report.md");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "# report\n");
    fs.utimesSync(file, seconds, seconds);
    return file;
  };
  write(a, "run-1", 1_000);
  const newest = write(b, "run-2", 3_000);
  write(a, "run-3", 2_000);
  fs.mkdirSync(path.join(b, ".perf-lint", "traces", "running"), { recursive: true });
  assert.equal(newestReport([a, b]), newest);
});
