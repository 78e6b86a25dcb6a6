// Opens a notebook in a running JupyterLab with headless Chromium and waits until
// jupyterlab-lsp shows a diagnostic with the given code: an underline in the notebook, then
// a row of its diagnostics panel. Writes screenshots and console.log to the artifacts folder
// and prints on stdout {"rows": [{Message, Code, Cell, ...}], "tooltip": "...", "text": the
// virtual document last sent to the server, "diagnostics": what the server last published for
// it}, both read off the LSP websocket; exits 1 on failure.
// usage: node run.mjs LAB_URL NOTEBOOK ARTIFACTS CODE
// env: PERF_LINT_PLAYWRIGHT (the playwright-core folder), PERF_LINT_CHROMIUM, PERF_LINT_E2E_TIMEOUT_MS
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const { chromium } = createRequire(import.meta.url)(process.env.PERF_LINT_PLAYWRIGHT);
const [url, notebook, artifacts, code] = process.argv.slice(2);
const timeout = Number(process.env.PERF_LINT_E2E_TIMEOUT_MS || 180000);
const log = [];
const step = (text) => log.push(`${new Date().toISOString()} step: ${text}`);

const browser = await chromium.launch({
  executablePath: process.env.PERF_LINT_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
page.setDefaultTimeout(timeout);
page.on('console', (message) => log.push(`${message.type()}: ${message.text()}`));
page.on('pageerror', (error) => log.push(`pageerror: ${error.message}`));
const lsp = { text: null, diagnostics: null };
page.on('websocket', (socket) => {
  if (!socket.url().includes('/lsp/ws/')) return;
  const read = (payload, sent) => {
    let message;
    try { message = JSON.parse(payload); } catch { return; }
    if (sent && message.method === 'textDocument/didOpen') lsp.text = message.params.textDocument.text;
    if (sent && message.method === 'textDocument/didChange') lsp.text = message.params.contentChanges.at(-1).text;
    if (!sent && message.method === 'textDocument/publishDiagnostics') lsp.diagnostics = message.params.diagnostics;
  };
  socket.on('framesent', (frame) => read(frame.payload, true));
  socket.on('framereceived', (frame) => read(frame.payload, false));
});
let failed = null;
try {
  step('open the notebook');
  await page.goto(`${url}/lab/tree/${encodeURIComponent(notebook)}`);
  await page.waitForSelector('.jp-Notebook .jp-CodeCell .cm-content');
  step('wait for an underline');
  await page.waitForSelector('.jp-Notebook .cm-lintRange');
  step('open the diagnostics panel');
  await page.waitForFunction(() => window.jupyterapp?.commands.hasCommand('lsp:show-diagnostics-panel'));
  await page.evaluate(() => window.jupyterapp.commands.execute('lsp:show-diagnostics-panel'));
  await page.waitForFunction(
    (wanted) => [...document.querySelectorAll('.lsp-diagnostics-listing tbody tr')].some((row) => row.textContent.includes(wanted)),
    code,
  );
  const rows = await page.$$eval('.lsp-diagnostics-listing', (tables) => tables.flatMap((table) => {
    const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    return [...table.querySelectorAll('tbody tr')].map((row) => Object.fromEntries(
      [...row.querySelectorAll('td')].map((td, i) => [headers[i] || String(i), td.textContent.trim()])));
  }));
  step('hover the first underline');
  await page.hover('.jp-Notebook .cm-lintRange');
  const tooltip = await page.waitForSelector('.cm-tooltip-lint').then((element) => element.textContent());
  await page.screenshot({ path: join(artifacts, 'jupyterlab-diagnostics.png') });
  console.log(JSON.stringify({ rows, tooltip, ...lsp }));
} catch (error) {
  failed = error;
  await page.screenshot({ path: join(artifacts, 'jupyterlab-failure.png') }).catch(() => {});
} finally {
  writeFileSync(join(artifacts, 'console.log'), log.join('\n') + '\n');
  await browser.close();
}
if (failed) {
  console.error(`run.mjs failed at "${log.filter((l) => l.includes(' step: ')).pop()}": ${failed.message}`);
  process.exit(1);
}
