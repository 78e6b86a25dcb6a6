"""Every rule's inline examples: VALID gives nothing, INVALID gives its findings and fix."""

from __future__ import annotations

import json

import pytest

from perf_lint.analyzers import ALL_RULES, Config, analyze, fix_source, notebook_source, python_source, render


def _source(code):
    if isinstance(code, tuple):
        cells = [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": None} for c in code]
        return notebook_source({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, "example.ipynb")
    return python_source(code, "example.py")


def _text(source):
    if source.kind == "notebook":
        return tuple(
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in source.notebook["cells"]
        )
    return source.units[0].text


CASES = [(rule, "valid", i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.VALID)] + [
    (rule, "invalid", i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.INVALID)
]


@pytest.mark.parametrize("rule,kind,index,example", CASES, ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in CASES])
def test_example(rule, kind, index, example):
    config = Config(select=(rule.code,))
    source = _source(example.code)
    findings = analyze(source, config)
    assert all(f.code == rule.code for f in findings)
    if kind == "valid":
        assert findings == [], [f.message for f in findings]
        return
    assert len(findings) == example.count, [f.message for f in findings]
    result = fix_source(source, config)
    if example.fixed is None:
        assert not result.changed
        assert all(f.fix is None for f in findings)
    else:
        assert _text(result.source) == example.fixed
        assert analyze(result.source, config) == []
        assert not fix_source(result.source, config).changed


def test_every_rule_is_documented():
    codes = [rule.code for rule in ALL_RULES]
    assert len(codes) == len(set(codes))
    for rule in ALL_RULES:
        docs = rule.docs()
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
            assert heading in docs, (rule.code, heading)
        assert rule.VALID and rule.INVALID, rule.code


def test_every_rule_module_class_is_in_the_catalog():
    """The catalog is discovered; every class in analyzers/rules/ that assigns a `code`
    (read from the files, not imported) is in it, under that code."""
    import ast
    import pathlib

    from perf_lint.analyzers import CATALOG

    written = {}
    for path in (pathlib.Path(__file__).parent.parent / "analyzers" / "rules").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["code"]:
                        written[stmt.value.value] = node.name
    assert len(written) >= 23
    assert {rule.code: rule.__name__ for rule in CATALOG} == written


def test_notebook_render_keeps_outputs():
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["# title"], "metadata": {}},
            {"cell_type": "code", "source": [
                "from torch.utils.data import DataLoader\n", "dl = DataLoader(ds)\n", "model.cuda()\n",
                "for epoch in range(5):\n", "    for x in dl:\n", "        model(x.cuda()).sum().backward()"],
             "metadata": {"tags": ["x"]}, "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}],
             "execution_count": 3},
        ],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    }
    result = fix_source(notebook_source(nb, "n.ipynb"))
    out = json.loads(render(result.source))
    assert out["cells"][1]["outputs"] == nb["cells"][1]["outputs"]
    assert out["cells"][1]["metadata"] == {"tags": ["x"]}
    assert out["metadata"] == nb["metadata"]
    assert "num_workers=4" in "".join(out["cells"][1]["source"])
