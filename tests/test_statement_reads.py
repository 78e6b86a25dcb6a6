"""A statement reading several CUDA values on the host (a progress line formatting each loss
with `.item()`) is one TPL203 finding on its first read, naming the others as related
places of the same file or notebook cell: in JSON, in the cache's replay and in the editor."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.lsp_client import CODE, VSCODE, Notebook, diagnostics, open_py, session, timed

LOOP = """\
import torch

model = torch.nn.Linear(4, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    out = model(x.cuda())
    loss = ((out - y.cuda()) ** 2).mean()
    reg = out.abs().mean()
    (loss + reg).backward()
    opt.step()
    print("loss %f reg %f out %f" % (loss.item(),
                                     reg.item(),
                                     out.mean().item()))
"""


def check_json(cwd, *args: str) -> list[dict]:
    run = subprocess.run([sys.executable, "-m", "perf_lint", "check", "--no-config", "--select", "TPL203",
                          "--format", "json", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    return json.loads(run.stdout)


def test_one_finding_names_the_statements_other_reads_and_the_cache_replays_them(tmp_path):
    (tmp_path / "train.py").write_text(LOOP)
    [finding] = check_json(tmp_path, "train.py")
    assert finding["line"] == 11 and "`loss.item()`" in finding["message"]
    assert "reads 2 more values on the host too (`reg.item()`, `out.mean().item()`)" in finding["message"]
    assert [(r["path"], r["cell"], r["line"]) for r in finding["related"]] == [("train.py", None, 12), ("train.py", None, 13)]
    assert check_json(tmp_path, "train.py") == [finding]  # (the second run reads the cache)


def test_in_a_notebook_the_other_reads_are_in_the_findings_cell(tmp_path):
    cells = [LOOP.split("for x, y")[0], "for x, y" + LOOP.split("for x, y")[1]]
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": text}
                          for text in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))
    [finding] = check_json(tmp_path, "--no-cache", "train.ipynb")
    assert (finding["cell"], finding["line"]) == (2, 7)
    assert [(r["path"], r["cell"], r["line"]) for r in finding["related"]] == [("train.ipynb", 2, 8), ("train.ipynb", 2, 9)]


def test_a_read_in_another_statement_is_a_finding_of_its_own(tmp_path):
    (tmp_path / "train.py").write_text(LOOP.replace("reg.item(),", "0.0,") + "    print(reg.item())\n")
    findings = check_json(tmp_path, "train.py")
    assert [(f["line"], len(f["related"])) for f in findings] == [(11, 1), (14, 0)]


@timed(120)
async def test_the_editor_points_the_related_reads_at_the_file_and_at_the_cell(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", LOOP)
        [diagnostic] = [d for d in await diagnostics(client, VSCODE, uri, 1) if d.code == "TPL203"]
        assert [(r.location.uri, r.location.range.start.line) for r in diagnostic.related_information] == [(uri, 11), (uri, 12)]
        assert "`reg.item()` also reads a value on the host" == diagnostic.related_information[0].message
        head, tail = LOOP.split("for x, y")
        nb = Notebook(client, tmp_path / "train.ipynb", [(CODE, head), (CODE, "for x, y" + tail)])
        cell = nb.uri_of(1)
        [diagnostic] = [d for d in await diagnostics(client, VSCODE, cell, 1) if d.code == "TPL203"]
        assert [(r.location.uri, r.location.range.start.line) for r in diagnostic.related_information] == [(cell, 7), (cell, 8)]
