// End-to-end test of the packaged extension in a real VS Code (code-server) driven by headless
// Chromium through playwright-core: `node e2e/run.mjs` (runs e2e/setup.sh first unless
// PERF_LINT_NODE24 and PERF_LINT_CODE_SERVER are set, as setup.sh prints them).
// PERF_LINT_PYTHON is the interpreter with perf-lint installed (default: the repository's .venv).
// Steps: package the .vsix, install it, open examples/train.py and see perf-lint's diagnostics
// in the Problems panel, apply a quick fix and compare the text with the engine's own fix,
// open examples/timing.ipynb and see a cell diagnostic, profile a `# %%` cell and see the report
// (skipped, with a message, where the profiler is not importable), then switch to an
// interpreter without perf-lint and see the server restart into the install hint.
// Screenshots and logs go to test-artifacts/. Exit code 0: every step passed; 77: setup.sh
// found that this machine cannot run it.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const client = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.dirname(client);
const artifacts = path.join(client, "test-artifacts");

if (!process.env.PERF_LINT_NODE24 || !process.env.PERF_LINT_CODE_SERVER) {
  const setup = spawnSync("bash", [path.join(client, "e2e", "setup.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (setup.status !== 0) process.exit(setup.status ?? 1);
  for (const match of setup.stdout.matchAll(/^(PERF_LINT_\w+)=(.*)$/gm)) process.env[match[1]] = match[2];
}
const node24 = process.env.PERF_LINT_NODE24;
const codeServer = process.env.PERF_LINT_CODE_SERVER;
const chromiumPath = process.env.PERF_LINT_CHROMIUM || "/usr/bin/chromium";
const python = process.env.PERF_LINT_PYTHON || path.join(repo, ".venv", "bin", "python");
const profileTimeoutMs = Number(process.env.PERF_LINT_E2E_PROFILE_TIMEOUT_S || 300) * 1000;

const started = Date.now();
const log = (message) => console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
const results = [];

async function step(name, body) {
  const t0 = Date.now();
  try {
    const note = await body();
    const skipped = note?.skipped;
    results.push({ name, status: skipped ? "skipped" : "passed", seconds: (Date.now() - t0) / 1000, note: skipped ?? note });
    log(`${skipped ? "SKIP" : "ok  "} ${name}${skipped ? `: ${skipped}` : ""}`);
  } catch (error) {
    results.push({ name, status: "failed", seconds: (Date.now() - t0) / 1000, note: String(error?.message ?? error) });
    log(`FAIL ${name}: ${error?.stack ?? error}`);
    throw error;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Facts from the engine itself: the first `code` finding of `file` and the text its fix produces. */
function engineFacts(file, code) {
  const script = `
import json, sys
from perf_lint.analyzers import analyze, fixed_text, read_source, render
source = read_source(sys.argv[1])
finding = next(f for f in analyze(source) if f.code == sys.argv[2])
print(json.dumps({"line": finding.range.start_line, "column": finding.range.start_col,
                  "title": f"{finding.fix.title} ({finding.code})",
                  "fixed": render(fixed_text(source, [finding])).decode()}))
`;
  return JSON.parse(execFileSync(python, ["-c", script, file, code], { encoding: "utf8" }));
}

function profilerMissing() {
  try {
    execFileSync(python, ["-c", "from perf_lint.profiler import run_profile"], { stdio: "pipe" });
    return undefined;
  } catch (error) {
    return String(error.stderr || error.message).trim().split("\n").pop();
  }
}

function lineOf(file, prefix) {
  return fs.readFileSync(file, "utf8").split("\n").findIndex((line) => line.trimStart().startsWith(prefix));
}

function makeWorkspace(root) {
  const ws = path.join(root, "workspace");
  fs.mkdirSync(path.join(ws, ".vscode"), { recursive: true });
  for (const name of ["train.py", "timing.ipynb"]) fs.copyFileSync(path.join(repo, "examples", name), path.join(ws, name));
  fs.copyFileSync(path.join(client, "e2e", "fixtures", "profile_me.py"), path.join(ws, "profile_me.py"));
  fs.writeFileSync(
    path.join(ws, ".vscode", "settings.json"),
    JSON.stringify({ "perfLint.interpreter": python, "perfLint.profiling.steps": [1, 1, 3], "perfLint.profiling.timeoutS": 240 }, null, 2),
  );
  const user = path.join(root, "user-data", "User");
  fs.mkdirSync(user, { recursive: true });
  fs.writeFileSync(
    path.join(user, "settings.json"),
    JSON.stringify(
      {
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "telemetry.telemetryLevel": "off",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "extensions.ignoreRecommendations": true,
        "update.mode": "none",
        "chat.disableAIFeatures": true,
        "security.workspace.trust.enabled": false,
        "window.restoreWindows": "none",
        "files.hotExit": "off",
        "editor.minimap.enabled": false,
      },
      null,
      2,
    ),
  );
  return { ws, userData: path.dirname(user), extensions: path.join(root, "extensions") };
}

// ---------------------------------------------------------------------------------------------
// Driving the workbench.

async function quickInput(page, text) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 15_000 });
  await input.fill(text);
  return input;
}

/** Runs a command palette entry (">title") or opens a file by name (quick open). */
async function pick(page, text, rowText) {
  const input = await quickInput(page, text);
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: rowText }).first().waitFor({ state: "visible", timeout: 20_000 });
  await input.press("Enter");
}

const command = (page, title) => pick(page, `>${title}`, title);
const openFile = (page, name) => pick(page, name, name);

async function goTo(page, line, column) {
  const input = await quickInput(page, `:${line}:${column}`);
  await page.waitForTimeout(300);
  await input.press("Enter");
}

async function problemRows(page) {
  return (await page.locator(".markers-panel .monaco-list-row").allInnerTexts()).map((text) => text.replace(/\s+/g, " "));
}

async function waitForProblems(page, codes, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let rows = [];
  while (Date.now() < deadline) {
    rows = await problemRows(page);
    if (codes.every((code) => rows.some((row) => row.includes(code)))) return rows;
    await page.waitForTimeout(500);
  }
  throw new Error(`Problems panel never showed ${codes.join(", ")}; it showed:\n  ${rows.join("\n  ") || "(nothing)"}`);
}

/** Fails on an error notification (the server's, the client library's, the extension's) not expected. */
async function noErrorToasts(page, expected = "\u0000") {
  const errors = page.locator(".notifications-toasts .notification-list-item", { has: page.locator(".codicon-error") });
  const texts = (await errors.allInnerTexts()).map((text) => text.replace(/\s+/g, " ")).filter((text) => !text.includes(expected));
  if (texts.length > 0) throw new Error(`error notifications: ${JSON.stringify(texts)}`);
}

async function statusText(page) {
  const item = page.locator(".statusbar-item", { hasText: "perf-lint" }).first();
  return (await item.count()) ? (await item.innerText()).replace(/\s+/g, " ").trim() : "";
}

/** The first h1 of a Markdown preview (a webview: its own frame). */
async function previewHeading(page) {
  for (const frame of page.frames()) {
    const heading = await frame.locator("h1").first().innerText({ timeout: 200 }).catch(() => "");
    if (heading.startsWith("perf-lint profile")) return heading;
  }
  return "";
}

async function shoot(page, name) {
  const file = path.join(artifacts, `${name}.png`);
  await page.screenshot({ path: file });
  log(`screenshot ${path.relative(client, file)}`);
}

function copyLogs(userData) {
  const out = path.join(artifacts, "logs");
  fs.mkdirSync(out, { recursive: true });
  const walk = (dir) => {
    for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/perf-lint|exthost|remoteagent/i.test(entry.name)) fs.copyFileSync(full, path.join(out, entry.name));
    }
  };
  walk(path.join(userData, "logs"));
}

// ---------------------------------------------------------------------------------------------

async function main() {
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-e2e-"));
  const { ws, userData, extensions } = makeWorkspace(root);
  const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
  const vsix = path.join(client, "perf-lint.vsix");
  let server;
  let browser;
  let page;
  try {
    await step("package the extension (.vsix)", () => {
      fs.rmSync(vsix, { force: true });
      execFileSync("npm", ["run", "--silent", "package"], { cwd: client, stdio: ["ignore", "pipe", "inherit"] });
      if (!fs.existsSync(vsix)) throw new Error(`npm run package did not produce ${vsix}`);
    });

    await step("install it into code-server", () => {
      const out = execFileSync(codeServer, ["--install-extension", vsix, "--extensions-dir", extensions, "--user-data-dir", userData], {
        env,
        encoding: "utf8",
        timeout: 120_000,
      });
      if (!/perf-lint/.test(out)) throw new Error(`unexpected install output: ${out}`);
    });

    const port = await freePort();
    await step("start code-server", async () => {
      const serverLog = fs.openSync(path.join(artifacts, "code-server.log"), "w");
      server = spawn(
        codeServer,
        [
          "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--user-data-dir", userData, "--extensions-dir", extensions,
          "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", ws,
        ],
        { env, stdio: ["ignore", serverLog, serverLog], detached: true },
      );
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
        } catch {
          // not listening yet
        }
        if (server.exitCode !== null) throw new Error(`code-server exited with ${server.exitCode} (see code-server.log)`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new Error("code-server did not answer within 60 s");
    });

    await step("open the workspace in headless Chromium", async () => {
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
      });
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.on("pageerror", (error) => log(`page error: ${error.message}`));
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
      await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
      await page.locator(".explorer-folders-view .monaco-list-row", { hasText: "train.py" }).first().waitFor({ timeout: 60_000 });
    });

    await step("train.py: perf-lint diagnostics in the Problems panel", async () => {
      await openFile(page, "train.py");
      await command(page, "Problems: Focus on Problems View");
      const rows = await waitForProblems(page, ["TPL101", "TPL102", "TPL401"], 90_000);
      const status = await statusText(page);
      if (!status.includes("perf-lint")) throw new Error(`no perf-lint status bar item (got '${status}')`);
      await openFile(page, "train.py");
      await goTo(page, lineOf(path.join(ws, "train.py"), "loader = DataLoader(") + 1, 1);
      await page.locator(".monaco-editor .squiggly-warning").first().waitFor({ timeout: 30_000 });
      await noErrorToasts(page);
      await shoot(page, "1-train-problems");
      return `${rows.length} rows, e.g. ${rows.find((row) => row.includes("TPL101"))}`;
    });

    await step("train.py: the quick fix for TPL102 gives the engine's fix", async () => {
      const file = path.join(ws, "train.py");
      const facts = engineFacts(file, "TPL102");
      await openFile(page, "train.py");
      await goTo(page, facts.line + 1, facts.column + 1);
      await page.keyboard.press("Control+.");
      const action = page.locator(".action-widget .monaco-list-row", { hasText: facts.title }).first();
      await action.waitFor({ state: "visible", timeout: 30_000 });
      await noErrorToasts(page);
      await shoot(page, "2-quick-fix");
      await action.click();
      await page.locator(".markers-panel .monaco-list-row", { hasText: "TPL102" }).first().waitFor({ state: "detached", timeout: 30_000 });
      const deadline = Date.now() + 30_000;
      let text = "";
      while (text !== facts.fixed && Date.now() < deadline) {
        await page.keyboard.press("Control+s");
        await page.waitForTimeout(700);
        text = fs.readFileSync(file, "utf8");
      }
      if (text !== facts.fixed) {
        fs.writeFileSync(path.join(artifacts, "train.after-fix.py"), text);
        throw new Error("train.py after the quick fix differs from the engine's fix (see test-artifacts/train.after-fix.py)");
      }
      return facts.title;
    });

    await step("timing.ipynb: cell diagnostic TPL202", async () => {
      await openFile(page, "timing.ipynb");
      await page.locator(".notebook-editor").first().waitFor({ timeout: 60_000 });
      await command(page, "Problems: Focus on Problems View");
      const rows = await waitForProblems(page, ["TPL202"]);
      await page.locator(".notebook-editor .squiggly-warning, .notebook-editor .squiggly-error").first().waitFor({ timeout: 30_000 });
      await noErrorToasts(page);
      await shoot(page, "3-notebook-problems");
      return rows.find((row) => row.includes("TPL202"));
    });

    await step("profile_me.py: Profile this cell, then the report", async () => {
      const missing = profilerMissing();
      if (missing) return { skipped: `the profiler is not ready (python -c "from perf_lint.profiler import run_profile": ${missing})` };
      await openFile(page, "profile_me.py");
      await goTo(page, lineOf(path.join(ws, "profile_me.py"), "loader = DataLoader(") + 1, 1);
      await command(page, "perf-lint: Profile this cell");
      const run = page.locator(".monaco-dialog-box .monaco-button", { hasText: /^Run$/ });
      await run.waitFor({ state: "visible", timeout: 20_000 });
      const dialog = await page.locator(".monaco-dialog-box").innerText();
      if (!dialog.includes(python) || !dialog.includes("profile_me.py")) throw new Error(`the consent dialog does not name the interpreter and the file:\n${dialog}`);
      await shoot(page, "4-profile-consent");
      await run.click();
      // The server opens the report itself (window/showDocument), then answers with the verdict.
      await page.locator(".tabs-container .tab", { hasText: "report.md" }).first().waitFor({ state: "visible", timeout: profileTimeoutMs });
      const traces = path.join(ws, ".perf-lint", "traces");
      const report = fs.readdirSync(traces).map((run) => path.join(traces, run, "report.md")).find((file) => fs.existsSync(file));
      if (!report) throw new Error("no .perf-lint/traces/*/report.md was written");
      fs.copyFileSync(report, path.join(artifacts, "report.md"));
      const verdict = fs.readFileSync(report, "utf8").split("\n")[0].replace(/^# perf-lint profile: /, "");
      let deadline = Date.now() + 30_000;
      while (!(await statusText(page)).includes(verdict) && Date.now() < deadline) await page.waitForTimeout(500);
      const status = await statusText(page);
      if (!status.includes(verdict)) throw new Error(`the status bar shows '${status}', not the report's verdict '${verdict}'`);
      await command(page, "perf-lint: Show last profile report");
      await page.locator(".tabs-container .tab", { hasText: /Preview.*report\.md/ }).first().waitFor({ timeout: 30_000 });
      let heading = "";
      deadline = Date.now() + 30_000;
      while (!heading.includes(verdict) && Date.now() < deadline) heading = await previewHeading(page);
      if (!heading.includes(verdict)) throw new Error(`the Markdown preview does not show the report (heading '${heading}')`);
      await noErrorToasts(page);
      await shoot(page, "5-profile-report");
      return `status bar '${status}'; preview '${heading}'; ${path.relative(ws, report)}`;
    });

    await step("an interpreter without perf-lint: restart and the install command", async () => {
      const venv = path.join(root, "bare-venv");
      execFileSync("python3", ["-m", "venv", "--without-pip", venv]);
      const bare = path.join(venv, "bin", "python");
      const settings = path.join(ws, ".vscode", "settings.json");
      fs.writeFileSync(settings, JSON.stringify({ ...JSON.parse(fs.readFileSync(settings, "utf8")), "perfLint.interpreter": bare }, null, 2));
      const hint = `${bare} -m pip install perf-lint`;
      const toast = page.locator(".notifications-toasts .notification-list-item", { hasText: hint }).first();
      await toast.waitFor({ state: "visible", timeout: 60_000 });
      if ((await toast.locator(".codicon-error").count()) !== 1) throw new Error("the install hint is not an error notification");
      const actions = await toast.locator(".monaco-button").allInnerTexts();
      if (!actions.some((a) => a.includes("Install in Terminal"))) throw new Error(`the notification offers ${JSON.stringify(actions)}`);
      const label = await page.locator(".statusbar-item", { hasText: "perf-lint" }).first().getAttribute("aria-label");
      if (!label?.includes("error")) throw new Error(`the status bar item says '${label}', not an error`);
      await noErrorToasts(page, hint);
      await shoot(page, "6-install-hint");
      return hint;
    });
  } catch {
    if (page) {
      const toasts = await page.locator(".notifications-toasts .notification-list-item-message").allInnerTexts().catch(() => []);
      log(`notifications: ${JSON.stringify(toasts)}`);
      log(`status bar: ${await statusText(page).catch(() => "?")}`);
      await page.screenshot({ path: path.join(artifacts, "failure.png") }).catch(() => undefined);
    }
    process.exitCode = 1;
  } finally {
    await browser?.close().catch(() => undefined);
    if (server?.pid) {
      try {
        process.kill(-server.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    copyLogs(userData);
    fs.rmSync(root, { recursive: true, force: true });
    const seconds = (Date.now() - started) / 1000;
    fs.writeFileSync(path.join(artifacts, "results.json"), JSON.stringify({ seconds, results }, null, 2));
    const count = (status) => results.filter((r) => r.status === status).length;
    console.log(`e2e: ${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} skipped in ${seconds.toFixed(0)} s`);
  }
}

await main();
