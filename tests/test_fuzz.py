"""Crash-freedom of the analyzer and safety of fixes on generated and mutated inputs
(a bounded budget here; `python bench/fuzz.py` runs longer)."""

from __future__ import annotations

import ast

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perf_lint.analyzers import SourceError, analyze, fix_source, read_source, render
from perf_lint.analyzers.fixes import parses

from .fuzzing import LAST, SAMPLE, encodings, malformed_notebook, mutated_script

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def check_source_bytes(path: str, data: bytes) -> None:
    """The contract: findings (maybe one TPL000) or a clear SourceError; fixes stay parseable,
    idempotent and round-trip through render()."""
    try:
        source = read_source(path, data)
    except SourceError as exc:
        assert str(exc)
        return
    findings = analyze(source)
    assert all(f.code.startswith("TPL") and f.message for f in findings)
    if any(f.fix for f in findings):
        result = fix_source(source)
        assert parses(result.source, source)
        assert not fix_source(result.source).changed
        again = read_source(path, render(result.source))
        assert [u.text for u in again.units] == [u.text for u in result.source.units]


def check_findings_survive(path: str, data: bytes) -> None:
    """check_source_bytes, and the DataLoaders on SAMPLE's and LAST's lines are still found
    around a deep statement (tests.fuzzing.deep_script), unless Python rejects the file."""
    check_source_bytes(path, data)
    try:
        source = read_source(path, data)
    except SourceError:
        return
    findings = analyze(source)
    if any(f.code == "TPL000" and "does not parse (Python" in f.message for f in findings):
        return
    found = {(f.cell, f.range.start_line) for f in findings if f.code == "TPL101"}
    for unit in source.units:
        for index, line in enumerate(unit.text.splitlines()):
            if line in (SAMPLE.splitlines()[1], LAST.strip()):
                assert (unit.cell, index) in found, (unit.cell, index, findings)


@FUZZ
@given(hypothesmith.from_grammar())
def test_valid_programs(code):
    findings = analyze(read_source("gen.py", ("import torch\n" + code).encode()))
    assert all(f.code != "TPL000" or "internal error" not in f.message for f in findings)


@FUZZ
@given(mutated_script())
def test_mutated_training_scripts(text):
    check_source_bytes("train.py", text.encode("utf-8", "surrogatepass"))


@settings(FUZZ, max_examples=25)
@given(mutated_script().flatmap(encodings))
def test_encodings_and_boms(data):
    check_source_bytes("train.py", data)


@FUZZ
@given(malformed_notebook())
def test_malformed_notebooks(data):
    check_source_bytes("nb.ipynb", data)


def test_ten_thousand_cells():
    import json

    cells = [{"cell_type": "code", "source": f"import torch\nx{i} = torch.ones(2)", "metadata": {}, "outputs": []}
             for i in range(10_000)]
    cells.append({"cell_type": "code", "source": "from torch.utils.data import DataLoader\nDataLoader(ds)\nmodel = Net().cuda()"})
    findings = analyze(read_source("big.ipynb", json.dumps({"cells": cells, "nbformat": 4}).encode()))
    assert [(f.code, f.cell) for f in findings] == [("TPL101", 10_000)]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 60))
def test_fixed_files_differ_only_at_finding_sites(seed):
    from .fuzzing import SEEDS

    source = read_source("train.py", SEEDS[seed % len(SEEDS)].encode())
    findings = analyze(source)
    result = fix_source(source)
    before = source.units[0].text.splitlines()
    after = result.source.units[0].text.splitlines()
    ast.parse(result.source.units[0].text)
    import difflib

    touched = {f.range.start_line for f in findings} | {e.range.start_line for f in findings if f.fix for e in f.fix.edits}
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=before, b=after).get_opcodes():
        if tag != "equal":
            lines = set(range(i1, max(i2, i1 + 1)))
            assert any(abs(line - t) <= 12 for line in lines for t in touched), (tag, i1, i2)
