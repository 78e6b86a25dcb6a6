"""IPython magics as jupyterlab-lsp rewrites them: the same findings and fixes as in the notebook."""

from __future__ import annotations

import pytest

from perf_lint.analyzers import ALL_RULES, Config, analyze, fix_source, notebook_source, python_source
from perf_lint.analyzers.findings import Range
from tests.jupyterlab.virtual_document import rewrite_cell, virtual_document
from tests.timeouts import timeout

CUDA = "import torch\nx = torch.randn(64, 64, device='cuda')"


def _notebook(cells):
    data = [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": None} for c in cells]
    return notebook_source({"cells": data, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, "example.ipynb")


def _in_document(finding, cells, starts):
    """Where a notebook finding lands in the virtual document: the same offset in the cell's
    lines, the same columns; in a `run_cell_magic` cell the first two lines share one (its
    columns there, `()`, are not compared)."""
    r, start = finding.range, starts[finding.cell]
    if rewrite_cell(cells[finding.cell]).startswith("get_ipython().run_cell_magic("):
        line = start + max(r.start_line - 1, 0)
        return finding.code, finding.message, line, () if r.start_line <= 1 else (r.start_col, r.end_col)
    return finding.code, finding.message, start + r.start_line, (r.start_col, r.end_col)


def _located(finding):
    r = finding.range
    return finding.code, finding.message, r.start_line, (r.start_col, r.end_col)


NOTEBOOK_CASES = [
    (rule, kind, i, ex)
    for rule in ALL_RULES
    for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for i, ex in enumerate(examples)
    if isinstance(ex.code, tuple)
]


@pytest.mark.parametrize("rule,kind,index,example", NOTEBOOK_CASES, ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in NOTEBOOK_CASES])
@timeout(60)
def test_rewritten_notebook_example_has_the_notebooks_findings_and_fix(rule, kind, index, example):
    config = Config(select=(rule.code,))
    cells = list(example.code)
    text, starts = virtual_document(cells)
    assert "get_ipython()" in text or "# START_CELL_MAGIC(" in text  # the example has a rewritten form
    virtual = python_source(text, "example.ipynb")
    if any(f.code == "TPL000" for f in analyze(_notebook(cells))):  # a cell does not parse: the whole
        assert [f.code for f in analyze(virtual)] == ["TPL000"]  # document, one unit, does not either
        return
    expected = sorted(_in_document(f, cells, starts) for f in analyze(_notebook(cells), config))
    found = analyze(virtual, config)
    located = sorted(_located(f) for f in found)
    assert [e[:3] for e in located] == [e[:3] for e in expected]
    assert [f for f, e in zip(located, expected) if e[3] != () and f != e] == []
    assert len(found) == (example.count if kind == "invalid" else 0)
    if kind == "invalid" and example.fixed is not None:
        assert fix_source(virtual, config).source.units[0].text == virtual_document(list(example.fixed))[0]


def _findings(cells, code="TPL202"):
    text, starts = virtual_document(cells)
    return analyze(python_source(text, "nb.ipynb"), Config(select=(code,))), starts


@timeout(60)
def test_each_rewritten_cell_magic_times_its_own_cell_only():
    # the first %%time cell ends with a synchronize; the second does not, nor does the code after it
    cells = [CUDA, "%%time\ny = x @ x\ntorch.cuda.synchronize()", "%%time\ny = torch.mm(x, x)", "z = torch.mm(x, x)"]
    findings, starts = _findings(cells)
    assert [(f.range, f.message[:6]) for f in findings] == [(Range(starts[2], 0, starts[2], 6), "%%time")]


@timeout(60)
def test_timed_statement_with_quotes_is_read_unescaped_at_its_cell_columns():
    line = '%timeit torch.mm(torch.randn(4096, 4096, device="cuda"), x)'
    cells = ["import torch\nx = torch.ones(4096, 4096).cuda()", line]
    assert '\\"cuda\\"' in virtual_document(cells)[0]
    (finding,), starts = _findings(cells, "TPL205")
    column = line.index("torch.randn")
    assert finding.range == Range(starts[1], column, starts[1], line.index(", x)"))


@timeout(60)
def test_timed_cell_body_with_triple_quotes_parses():
    cells = [CUDA, '%%time\ny = torch.mm(x, x)\nnote = """done"""']
    assert '\\"\\"\\"done' in virtual_document(cells)[0]
    (finding,), starts = _findings(cells)
    assert finding.range.start_line == starts[1]


@pytest.mark.parametrize("above,reported", [("torch.cuda.synchronize()\n", True), ("\n", False)])
@timeout(60)
def test_cell_magic_jupyterlab_lsp_left_as_a_line_magic_is_misplaced_only_below_a_line(above, reported):
    # "\n%%time" starts a cell IPython runs as %%time; jupyterlab-lsp rewrites it as a line magic
    cells = [CUDA, above + "%%time\ny = x * 2"]
    assert 'run_line_magic("%time", "")' in virtual_document(cells)[0]
    findings, _ = _findings(cells)
    assert [f.severity for f in findings] == (["error"] if reported else [])


@timeout(60)
def test_python_without_rewritten_forms_is_analyzed_as_written():
    text = "import torch\ndef get_ipython():\n    return None\n# START_CELL_MAGIC is only a comment here\n"
    (unit,) = python_source(text).units
    assert (unit.code, unit.magics, unit.blocks) == (text, (), None)


@timeout(60)
def test_rewritten_document_keeps_its_lines_when_masked():
    cells = [CUDA, "%%timeit -n 3\ny = x @ x\n!nvidia-smi\nfor i in range(2):\n    y = y @ x", "files = !ls\n%env A=1", "x?"]
    text, starts = virtual_document(cells)
    (unit,) = python_source(text).units
    assert len(unit.code.split("\n")) == len(text.split("\n"))
    compile(unit.code, "virtual", "exec")
    names = [(m.line, m.prefix, m.name) for m in unit.magics]
    assert names == [(starts[1], "%%", "timeit"), (starts[1] + 1, "!", ""), (starts[2], "!", ""), (starts[2] + 1, "%", "env"),
                     (starts[3], "?", "")]


@pytest.mark.parametrize("cell", [
    "%%time\ny = torch.mm(x, x)", "%%timeit -n 3\ny = torch.mm(x, x)\n", "%%capture\n%%time\ny = torch.mm(x, x)",
    '%timeit -n 10 torch.mm(x, x.to("cuda"))', "%%timeit\nfor _ in range(3):\n    y = torch.mm(x, x)",
])
@timeout(60)
def test_fix_of_a_rewritten_magic_is_the_notebooks_fix_rewritten(cell):
    config = Config(select=("TPL202",))
    notebook = _notebook([CUDA, cell])
    (expected,) = analyze(notebook, config)
    fixed_cells = ["".join(c["source"]) for c in fix_source(notebook, config).source.notebook["cells"]]
    text, starts = virtual_document([CUDA, cell])
    (finding,) = analyze(python_source(text), config)
    assert finding.range.start_line == starts[1] + expected.range.start_line
    assert fix_source(python_source(text), config).source.units[0].text == virtual_document(fixed_cells)[0]
