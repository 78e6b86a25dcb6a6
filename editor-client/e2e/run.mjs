// End-to-end test of the packaged extension in a real VS Code (code-server) driven by headless
// Chromium through playwright-core: `node e2e/run.mjs` (runs e2e/setup.sh first unless
// PERF_LINT_NODE24 and PERF_LINT_CODE_SERVER are set, as setup.sh prints them).
// PERF_LINT_PYTHON is an interpreter with perf-lint and torch (default: the repository's .venv);
// the server itself runs from the .vsix alone, in a bare Python with nothing installed.
// Steps: package the .vsix with vsce (server bundled, images packaged), install it; open an
// untrusted folder full of planted modules (json.py, perf_lint/, ...) and interpreter
// settings, see diagnostics and check none of it ran; then, trusted: train.py's Problems
// equal `perf-lint check` with pyproject's ignore list, the quick fix gives the engine's fix,
// a notebook cell diagnostic, profile a `# %%` cell (the report opens rendered), cancel a
// profile (its process is gone at once), and the errors for an interpreter without
// perf-lint (fromEnvironment) and one too old.
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

const USER_SETTINGS = {
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
  "window.restoreWindows": "none",
  "files.hotExit": "off",
  "editor.minimap.enabled": false,
};

/** A bare venv: Python with nothing installed (no pip, no perf-lint). Returns its python. */
function bareVenv(root) {
  const venv = path.join(root, "bare-venv");
  execFileSync("python3", ["-m", "venv", "--without-pip", venv]);
  return path.join(venv, "bin", "python");
}

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

/** User data (settings) for one code-server. */
function userData(root, name, settings) {
  const dir = path.join(root, name);
  writeJson(path.join(dir, "User", "settings.json"), { ...USER_SETTINGS, ...settings });
  return dir;
}

/** The trusted workspace: examples, a `# %%` script to profile, pyproject's ignore list. */
function makeWorkspace(root, interpreter) {
  const ws = path.join(root, "workspace");
  fs.mkdirSync(ws, { recursive: true });
  for (const name of ["train.py", "timing.ipynb"]) fs.copyFileSync(path.join(repo, "examples", name), path.join(ws, name));
  fs.copyFileSync(path.join(client, "e2e", "fixtures", "profile_me.py"), path.join(ws, "profile_me.py"));
  fs.writeFileSync(path.join(ws, "pyproject.toml"), '[tool.perf-lint]\nignore = ["TPL401"]\n');
  writeJson(path.join(ws, ".vscode", "settings.json"), {
    "perfLint.interpreter": interpreter, "perfLint.profiling.python": python, "perfLint.profiling.steps": [1, 1, 3], "perfLint.profiling.timeoutS": 240,
  });
  return ws;
}

/** Modules a hostile folder plants to be imported by a Python started in it. */
const PLANTED = ["json.py", "typing.py", "logging.py", "dataclasses.py", "enum.py", "re.py", "asyncio.py", "perf_lint/__init__.py",
  "pygls/__init__.py", "libcst/__init__.py", "sitecustomize.py", "usercustomize.py"];

/** An untrusted folder: planted modules, an "interpreter" of its own and settings that point
 * at it; each records in `ran/` that it ran. */
function makeHostileWorkspace(root) {
  const ws = path.join(root, "hostile");
  const marks = path.join(root, "hostile-ran");
  fs.mkdirSync(marks, { recursive: true });
  for (const name of PLANTED) {
    const file = path.join(ws, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `open(${JSON.stringify(path.join(marks, name.replace(/\W/g, "_")))}, "w").close()\nraise SystemExit("planted")\n`);
  }
  const evil = path.join(ws, "evil-python");
  fs.writeFileSync(evil, `#!/bin/sh\ntouch ${JSON.stringify(path.join(marks, "evil-python"))}\nexec python3 "$@"\n`, { mode: 0o755 });
  writeJson(path.join(ws, ".vscode", "settings.json"), {
    "perfLint.interpreter": "${workspaceFolder}/evil-python", "perfLint.importStrategy": "fromEnvironment",
    "perfLint.profiling.python": "${workspaceFolder}/evil-python", "perfLint.profiling.rayAddress": "evil:6379",
    "perfLint.profiling.runner": "ray",
  });
  fs.copyFileSync(path.join(repo, "examples", "train.py"), path.join(ws, "train.py"));
  return { ws, ran: () => fs.readdirSync(marks) };
}

/** The codes `perf-lint check` reports for a file, sorted. */
function cliCodes(file) {
  const run = spawnSync(python, ["-m", "perf_lint", "check", "--format", "json", path.basename(file)], { cwd: path.dirname(file), encoding: "utf8" });
  if (run.status !== 0 && run.status !== 1) throw new Error(`perf-lint check exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout).map((finding) => finding.code).sort();
}

function childProcesses() {
  return fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("profiler/child.py");
    } catch {
      return false;
    }
  });
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
      else if (/perf-lint|exthost|remoteagent/i.test(entry.name)) fs.copyFileSync(full, path.join(out, `${path.basename(userData)}-${entry.name}`));
    }
  };
  walk(path.join(userData, "logs"));
}

// ---------------------------------------------------------------------------------------------

async function startCodeServer(data, extensions, ws, trust, env) {
  const port = await freePort();
  const serverLog = fs.openSync(path.join(artifacts, `code-server-${path.basename(data)}.log`), "w");
  const server = spawn(
    codeServer,
    [
      "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--user-data-dir", data, "--extensions-dir", extensions,
      "--disable-telemetry", "--disable-update-check", ...(trust ? [] : ["--disable-workspace-trust"]), ws,
    ],
    { env, stdio: ["ignore", serverLog, serverLog], detached: true },
  );
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return { server, port };
    } catch {
      // not listening yet
    }
    if (server.exitCode !== null) throw new Error(`code-server exited with ${server.exitCode} (see its log)`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("code-server did not answer within 60 s");
}

function stopCodeServer(server) {
  if (!server?.pid) return;
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {
    // already gone
  }
}

async function openWorkbench(browser, port, ws, firstFile) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (error) => log(`page error: ${error.message}`));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
  await page.locator(".explorer-folders-view .monaco-list-row", { hasText: firstFile }).first().waitFor({ timeout: 60_000 });
  return page;
}

/** The rule codes in the Problems panel rows (`perf-lint(TPL101)`), sorted. */
function rowCodes(rows) {
  return rows.flatMap((row) => [...row.matchAll(/perf-lint\W{0,3}(TPL\d{3})\b/g)].map((m) => m[1])).sort();
}

async function waitForCodes(page, expected, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let rows = [];
  while (Date.now() < deadline) {
    rows = await problemRows(page);
    if (JSON.stringify(rowCodes(rows)) === JSON.stringify(expected)) return rows;
    await page.waitForTimeout(500);
  }
  throw new Error(`Problems panel shows ${JSON.stringify(rowCodes(rows))}, perf-lint check ${JSON.stringify(expected)}:\n  ${rows.join("\n  ")}`);
}

async function errorToast(page, text, timeoutMs = 60_000) {
  const toast = page.locator(".notifications-toasts .notification-list-item", { hasText: text }).first();
  await toast.waitFor({ state: "visible", timeout: timeoutMs });
  if ((await toast.locator(".codicon-error").count()) !== 1) throw new Error(`'${text}' is not an error notification`);
  return toast;
}

async function setWorkspaceSettings(ws, changes) {
  const file = path.join(ws, ".vscode", "settings.json");
  writeJson(file, { ...JSON.parse(fs.readFileSync(file, "utf8")), ...changes });
}

async function main() {
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "perf-lint-e2e-"));
  const bare = bareVenv(root);
  const ws = makeWorkspace(root, bare);
  const hostile = makeHostileWorkspace(root);
  const extensions = path.join(root, "extensions");
  const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
  const vsix = path.join(client, "perf-lint.vsix");
  const dataDirs = [];
  let server;
  let browser;
  let page;
  try {
    await step("package the extension with vsce (server bundled, images packaged)", () => {
      fs.rmSync(vsix, { force: true });
      execFileSync(path.join(client, "node_modules", ".bin", "vsce"), ["package", "--no-dependencies", "-o", vsix], {
        cwd: client, stdio: ["ignore", "pipe", "inherit"], timeout: 600_000,
      });
      const listing = execFileSync("python3", ["-c", "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))", vsix], { encoding: "utf8" });
      for (const entry of ["extension/bundled/tool/perf_lint_server.py", "extension/bundled/libs/common/perf_lint/server/lsp.py",
        "extension/images/diagnostics.png", "extension/dist/extension.js"]) {
        if (!listing.includes(entry)) throw new Error(`${entry} is not in the .vsix`);
      }
      if (!/extension\/bundled\/libs\/cp3\d+\/libcst\/native/.test(listing)) throw new Error("no bundled libcst in the .vsix");
      return `${(fs.statSync(vsix).size / 1e6).toFixed(1)} MB`;
    });

    await step("install it into code-server", () => {
      const data = path.join(root, "install-data");
      const out = execFileSync(codeServer, ["--install-extension", vsix, "--extensions-dir", extensions, "--user-data-dir", data], {
        env, encoding: "utf8", timeout: 120_000,
      });
      if (!/perf-lint/.test(out)) throw new Error(`unexpected install output: ${out}`);
    });

    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });

    await step("an untrusted folder: diagnostics, and none of its modules, interpreters or settings run", async () => {
      const data = userData(root, "untrusted-data", {
        "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "never", "perfLint.interpreter": bare,
      });
      dataDirs.push(data);
      const started = await startCodeServer(data, extensions, hostile.ws, true, env);
      server = started.server;
      page = await openWorkbench(browser, started.port, hostile.ws, "train.py");
      await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first().waitFor({ timeout: 60_000 });
      await openFile(page, "train.py");
      await command(page, "Problems: Focus on Problems View");
      await waitForProblems(page, ["TPL101", "TPL102"], 120_000);
      await shoot(page, "0-untrusted-diagnostics");
      await command(page, "perf-lint: Profile this cell");
      await page.locator(".notifications-toasts .notification-list-item", { hasText: "disabled in untrusted workspaces" }).first()
        .waitFor({ state: "visible", timeout: 20_000 });
      const ran = hostile.ran();
      if (ran.length > 0) throw new Error(`the untrusted folder's code ran: ${ran.join(", ")}`);
      await page.close();
      page = undefined;
      stopCodeServer(server);
      server = undefined;
      return `planted ${PLANTED.length} modules and an interpreter; none ran`;
    });

    const data = userData(root, "trusted-data", { "security.workspace.trust.enabled": false });
    dataDirs.push(data);
    await step("start code-server on a trusted workspace, the server in a bare Python", async () => {
      const started = await startCodeServer(data, extensions, ws, false, env);
      server = started.server;
      page = await openWorkbench(browser, started.port, ws, "train.py");
    });

    await step("train.py: the Problems panel agrees with perf-lint check (pyproject ignores TPL401)", async () => {
      const expected = cliCodes(path.join(ws, "train.py"));
      if (expected.includes("TPL401") || !expected.includes("TPL101")) throw new Error(`perf-lint check gave ${expected}`);
      await openFile(page, "train.py");
      await command(page, "Problems: Focus on Problems View");
      const rows = await waitForCodes(page, expected);
      const status = await statusText(page);
      if (!status.includes("perf-lint")) throw new Error(`no perf-lint status bar item (got '${status}')`);
      await openFile(page, "train.py");
      await goTo(page, lineOf(path.join(ws, "train.py"), "loader = DataLoader(") + 1, 1);
      await page.locator(".monaco-editor .squiggly-warning").first().waitFor({ timeout: 30_000 });
      await noErrorToasts(page);
      await shoot(page, "1-train-problems");
      return `${expected.join(" ")}; e.g. ${rows.find((row) => row.includes("TPL101"))}`;
    });

    await step("train.py: the quick fix for TPL102 gives the engine's fix", async () => {
      const file = path.join(ws, "train.py");
      const facts = engineFacts(file, "TPL102");
      await openFile(page, "train.py");
      await goTo(page, facts.line + 1, facts.column + 1);
      const action = page.locator(".action-widget .monaco-list-row", { hasText: facts.title }).first();
      for (let attempt = 1; ; attempt++) { // a Ctrl+. before the editor has the line's actions opens no menu
        await page.keyboard.press("Control+.");
        try {
          await action.waitFor({ state: "visible", timeout: 15_000 });
          break;
        } catch (error) {
          if (attempt === 3) throw error;
          await page.keyboard.press("Escape");
        }
      }
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

    await step("train.py: hover shows the message, a short summary and the docs link", async () => {
      const file = path.join(ws, "train.py");
      await openFile(page, "train.py");
      const line = fs.readFileSync(file, "utf8").split("\n")[lineOf(file, "loader = DataLoader(")];
      await goTo(page, lineOf(file, "loader = DataLoader(") + 1, line.indexOf("DataLoader(") + 3);
      await command(page, "Show or Focus Hover");
      // VS Code shows the problem's own hover part, then the server's.
      const hover = page.locator(".monaco-hover:not(.hidden)").first();
      await hover.waitFor({ state: "visible", timeout: 20_000 });
      let text = "";
      const deadline = Date.now() + 20_000;
      while (!text.includes("TPL101 documentation") && Date.now() < deadline) {
        text = (await hover.innerText()).replace(/\s+/g, " ");
        await page.waitForTimeout(250);
      }
      if (!text.includes("TPL101 dataloader-sync-loading") || !text.includes("TPL101 documentation") || !text.includes("num_workers")) {
        throw new Error(`the hover shows: ${text}`);
      }
      if ((await hover.locator("h1, h2").count()) > 0) throw new Error(`the hover has headings: ${text}`);
      await shoot(page, "3a-hover");
      await page.keyboard.press("Escape");
      return text.slice(text.indexOf("TPL101 dataloader"), text.indexOf("TPL101 dataloader") + 200);
    });

    await step("train.py: while a statement does not parse, the findings stay (no flicker)", async () => {
      const file = path.join(ws, "train.py");
      const expected = cliCodes(file);
      await openFile(page, "train.py");
      await command(page, "Problems: Focus on Problems View");
      await waitForCodes(page, expected);
      await openFile(page, "train.py");
      await goTo(page, lineOf(file, "loader = DataLoader(") + 1, 1);
      await page.keyboard.press("End");
      await page.keyboard.type(" +", { delay: 80 }); // `loader = DataLoader(...) +` does not parse
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const shown = rowCodes(await problemRows(page));
        if (JSON.stringify(shown) !== JSON.stringify(expected)) throw new Error(`while typing the Problems panel showed ${JSON.stringify(shown)}, not ${JSON.stringify(expected)}`);
        await page.waitForTimeout(250);
      }
      await shoot(page, "3b-typing");
      await page.keyboard.press("Backspace");
      await page.keyboard.press("Backspace");
      await page.keyboard.press("Control+s");
      await waitForCodes(page, expected);
      return expected.join(" ");
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

    const missing = profilerMissing();
    await step("profile_me.py: Profile this cell, then the rendered report", async () => {
      if (missing) return { skipped: `the profiler is not ready (python -c "from perf_lint.profiler import run_profile": ${missing})` };
      await openFile(page, "profile_me.py");
      // One lens: on the `# %%` cell with a finding, none on the cell without.
      const editor = page.locator(".monaco-editor").filter({ has: page.locator(".view-line", { hasText: "# %% training steps" }) });
      const lenses = editor.locator(".codelens-decoration", { hasText: "Profile this cell" });
      await lenses.first().waitFor({ state: "visible", timeout: 30_000 });
      await page.waitForTimeout(1_000);
      if ((await lenses.count()) !== 1) throw new Error(`${await lenses.count()} "Profile this cell" lenses, not 1`);
      await goTo(page, lineOf(path.join(ws, "profile_me.py"), "loader = DataLoader(") + 1, 1);
      await command(page, "perf-lint: Profile this cell");
      const run = page.locator(".monaco-dialog-box .monaco-button", { hasText: /^Run$/ });
      await run.waitFor({ state: "visible", timeout: 20_000 });
      const dialog = await page.locator(".monaco-dialog-box").innerText();
      if (!dialog.includes(python) || !dialog.includes("profile_me.py")) throw new Error(`the consent dialog does not name the interpreter and the file:\n${dialog}`);
      await shoot(page, "4-profile-consent");
      await run.click();
      const progress = page.locator(".notifications-toasts .notification-list-item", { hasText: "perf-lint: profiling" }).first();
      await progress.waitFor({ state: "visible", timeout: 20_000 });
      if ((await progress.locator(".monaco-button", { hasText: "Cancel" }).count()) !== 1) throw new Error("the profiling notification has no Cancel button");
      await shoot(page, "5-profiling-progress");
      // The report opens rendered (the Markdown preview), then the verdict reaches the status bar.
      await page.locator(".tabs-container .tab", { hasText: /Preview.*report\.md/ }).first().waitFor({ state: "visible", timeout: profileTimeoutMs });
      const traces = path.join(ws, ".perf-lint", "traces");
      const report = fs.readdirSync(traces).map((run) => path.join(traces, run, "report.md")).find((file) => fs.existsSync(file));
      if (!report) throw new Error("no .perf-lint/traces/*/report.md was written");
      fs.copyFileSync(report, path.join(artifacts, "report.md"));
      const verdict = fs.readFileSync(report, "utf8").split("\n")[0].replace(/^# perf-lint profile: /, "");
      let deadline = Date.now() + 30_000;
      let heading = "";
      while (!heading.includes(verdict) && Date.now() < deadline) heading = await previewHeading(page);
      if (!heading.includes(verdict)) throw new Error(`the Markdown preview does not show the report (heading '${heading}')`);
      deadline = Date.now() + 30_000;
      while (!(await statusText(page)).includes(verdict) && Date.now() < deadline) await page.waitForTimeout(500);
      const status = await statusText(page);
      if (!status.includes(verdict)) throw new Error(`the status bar shows '${status}', not the report's verdict '${verdict}'`);
      await noErrorToasts(page);
      await shoot(page, "6-profile-report");
      return `status bar '${status}'; preview '${heading}'; ${path.relative(ws, report)}`;
    });

    await step("profile_me.py: Cancel stops the profiled process at once", async () => {
      if (missing) return { skipped: "the profiler is not ready" };
      await openFile(page, "profile_me.py");
      await goTo(page, lineOf(path.join(ws, "profile_me.py"), "loader = DataLoader(") + 1, 1);
      await command(page, "perf-lint: Profile this cell");
      const progress = page.locator(".notifications-toasts .notification-list-item", { hasText: "perf-lint: profiling" }).first();
      await progress.waitFor({ state: "visible", timeout: 20_000 });
      let deadline = Date.now() + 120_000;
      while (childProcesses().length === 0 && Date.now() < deadline) await page.waitForTimeout(100);
      if (childProcesses().length === 0) throw new Error("no profiled process started");
      await progress.hover();
      await progress.locator(".monaco-button", { hasText: "Cancel" }).click();
      const cancelled = Date.now();
      deadline = cancelled + 10_000;
      while (childProcesses().length > 0 && Date.now() < deadline) await page.waitForTimeout(100);
      if (childProcesses().length > 0) throw new Error("the profiled process still runs 10 s after Cancel");
      const gone = Date.now() - cancelled;
      deadline = Date.now() + 30_000;
      while (!(await statusText(page)).includes("cancelled") && Date.now() < deadline) await page.waitForTimeout(300);
      if (!(await statusText(page)).includes("cancelled")) throw new Error(`the status bar shows '${await statusText(page)}' after Cancel`);
      await noErrorToasts(page);
      return `the profiled process was gone ${gone} ms after Cancel`;
    });

    await step("fromEnvironment with an interpreter without perf-lint: a clear error", async () => {
      await setWorkspaceSettings(ws, { "perfLint.importStrategy": "fromEnvironment" });
      const toast = await errorToast(page, `perf-lint is not installed for ${bare}`);
      const actions = await toast.locator(".monaco-button").allInnerTexts();
      if (!actions.some((a) => a.includes("Choose Interpreter"))) throw new Error(`the notification offers ${JSON.stringify(actions)}`);
      const label = await page.locator(".statusbar-item", { hasText: "perf-lint" }).first().getAttribute("aria-label");
      if (!label?.includes("error")) throw new Error(`the status bar item says '${label}', not an error`);
      await shoot(page, "7-not-installed");
      return await toast.locator(".notification-list-item-message").innerText();
    });

    await step("a Python older than 3.10 is named as too old", async () => {
      const old = oldPython();
      if (!old) return { skipped: "no Python 3.8 or 3.9 on this machine" };
      await setWorkspaceSettings(ws, { "perfLint.importStrategy": "useBundled", "perfLint.interpreter": old });
      const toast = await errorToast(page, "perf-lint needs Python 3.10 or newer");
      await shoot(page, "8-too-old");
      return await toast.locator(".notification-list-item-message").innerText();
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
    stopCodeServer(server);
    for (const data of dataDirs) copyLogs(data);
    fs.rmSync(root, { recursive: true, force: true });
    const seconds = (Date.now() - started) / 1000;
    fs.writeFileSync(path.join(artifacts, "results.json"), JSON.stringify({ seconds, results }, null, 2));
    const count = (status) => results.filter((r) => r.status === status).length;
    console.log(`e2e: ${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} skipped in ${seconds.toFixed(0)} s`);
  }
}

/** A CPython 3.8 or 3.9 (pyenv's, else on PATH), to be refused as too old. */
function oldPython() {
  const pyenv = path.join(os.homedir(), ".pyenv", "versions");
  const found = fs.existsSync(pyenv) ? fs.readdirSync(pyenv).find((name) => /^3\.[89]\./.test(name)) : undefined;
  if (found) return path.join(pyenv, found, "bin", "python");
  for (const name of ["python3.9", "python3.8"]) {
    const hit = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
    if (hit) return hit;
  }
  return undefined;
}

await main();
