"""Statements nested too deep for recursive parsers and visitors (long elif chains and
operator chains, deep unary, string and call nesting, huge lines) cost only themselves:
one TPL000 "Not checked: ... (line N)" each, and the rest of the file keeps its findings,
in `analyze()`, `perf-lint check` and the language server. Every analysis here runs in
its own process, under a time limit and an address-space cap."""

from __future__ import annotations

import json
import pathlib
import resource
import subprocess
import sys

import pytest

from . import lsp_client
from .fuzzing import LAST, SAMPLE
from .lsp_client import VSCODE, edit, open_py, pushed, server_info, session, timed

ROOT = pathlib.Path(__file__).resolve().parents[1]
MEMORY = 2 * 1024**3  # bytes of address space for each analysis process
TOO_DEEP = "Not checked: statement too deeply nested to analyse (line 3)"

# a notebook that never uses a GPU is a CPU session, and a loader nothing reads loads nothing: no TPL101
GPU_CELL = "model = Net().cuda()\nfor loaded in (loader, loader2):\n    for batch in loaded:\n        model(batch).sum().backward()\n"

def _plus(n: int, sep: str = " +\n    ") -> str:
    return "(" + sep.join(["1"] * n) + ")"


def _elif(n: int, first: str = "pass") -> str:
    return f"if x == 0:\n    {first}\n" + "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, n))


def _trailers(n: int) -> str:
    """`(a.c()[0].c()[0]...)` over n lines: 1 + 1.5 n expressions deep (calls, attributes, subscripts)."""
    return "(a" + "\n    ".join(".c()" if i % 2 == 0 else "[0]" for i in range(n)) + ")"


TOO_SLOW = "Not checked: expressions nested {} deep, too slow to parse"


DEEP = {  # statement (line 3 of the file) -> what its TPL000 says
    "elif chain too deep for ast": (_elif(5000), TOO_DEEP),
    "operator chain too deep for ast": (f"x = {_plus(5000)}\n", TOO_DEEP),
    "backslashed chain in a function": ("def f():\n    x = " + " + \\\n        ".join(["1"] * 5000) + "\n", TOO_DEEP),
    "finding inside an operator chain too slow to parse": (f"x = (DataLoader(ds) + {_plus(1000)})\n",
                                                           TOO_SLOW.format(1001)),
    "unary chain in a literal argument": ("y = DataLoader(ds, batch_size=" + "-" * 1500 + "1)\n",
                                          TOO_SLOW.format(1502)),
    "elif chain with a finding inside": (_elif(1000, "DataLoader(ds)"), TOO_DEEP),
    "strings libcst cannot read": ("z = (" + "\n    ".join(["'a'"] * 5000) + ")\n",
                                   "Not checked: perf-lint's parser cannot read this statement"),
    "line over 10,000 characters": (f"x = {_plus(5000, ' + ')}\n", "Not checked: a line of 20,003 characters, over the 10,000"),
    # too slow for libcst's parser (1,900 trailers took it 43 s), not too deep for `ast`
    "trailer chain": (f"x = {_trailers(1200)}\n", TOO_SLOW.format(1801)),
    "finding inside a trailer chain": (f"y = DataLoader(ds, batch_size={_trailers(1200)})\n", TOO_SLOW.format(1802)),
    "nested calls as deep as Python allows": ("z = " + "f(" * 199 + "a" + ")" * 199 + "\n", TOO_SLOW.format(200)),
}


def bounded(args: list[str], timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """Run a process under `timeout` seconds and MEMORY bytes of address space."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, preexec_fn=cap, **kwargs)


_ANALYZE = """
import json, sys
from perf_lint.analyzers import analyze, read_source
path = sys.argv[1]
findings = analyze(read_source(path, open(path, "rb").read()))
print(json.dumps([[f.code, f.cell, f.range.start_line, f.message] for f in findings]))
"""


def analyzed(path) -> list[tuple]:
    result = bounded([sys.executable, "-c", _ANALYZE, str(path)])
    assert result.returncode == 0, result.stderr[-2000:]
    return [tuple(f) for f in json.loads(result.stdout)]


@pytest.mark.parametrize("statement, reason", DEEP.values(), ids=list(DEEP))
def test_analyze_keeps_the_findings_around_a_deep_statement(tmp_path, statement, reason):
    text = SAMPLE + statement + LAST
    path = tmp_path / "deep.py"
    path.write_text(text)
    findings = analyzed(path)
    last = text.count("\n") - 1
    assert [(code, line) for code, _, line, _ in findings] == [("TPL101", 1), ("TPL000", 2), ("TPL101", last)]
    assert findings[1][3].startswith(reason)


def test_a_deep_notebook_cell_costs_only_itself(tmp_path):
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    cells = [{**cell, "source": SAMPLE}, {**cell, "source": f"x = {_plus(5000)}\n"},
             {**cell, "source": f"y = (DataLoader(ds) + {_plus(1000)})\n" + LAST}, {**cell, "source": GPU_CELL}]
    path = tmp_path / "deep.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    assert [(code, cell, line) for code, cell, line, _ in analyzed(path)] == [
        ("TPL101", 0, 1), ("TPL000", 1, 0), ("TPL000", 2, 0), ("TPL101", 2, 1000)]


def test_code_in_strings_is_bounded_like_statements(tmp_path):
    """Statements kept in strings (`timeit` strings, `%timeit` lines) get the split's bounds:
    too deep for Python's parser, or too slow for libcst's, they are not parsed, and the
    cell keeps its other findings (a `%timeit` too deep for `ast` raised out of the reader)."""
    from perf_lint.analyzers.parse import parse_snippet

    assert parse_snippet("f(" * 199 + "a" + ")" * 199) is None  # libcst: seconds
    assert parse_snippet("a" + ".c()[0]" * 1200) is None  # too deep for ast
    assert parse_snippet("f(g(x)) @ y").code == "f(g(x)) @ y"
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    magic = "%timeit a" + ".c()[0]" * 1200 + "\n"
    timed = 'import timeit\nt = timeit.timeit("' + "f(" * 199 + "a" + ")" * 199 + '", number=1)\n'
    path = tmp_path / "strings.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                "cells": [{**cell, "source": SAMPLE + magic + timed}, {**cell, "source": GPU_CELL}]}))
    assert [(code, line) for code, _, line, _ in analyzed(path)] == [("TPL101", 1)]


def test_check_reports_each_deep_statement_and_every_other_finding(tmp_path):
    names = ["elif chain too deep for ast", "operator chain too deep for ast", "finding inside an operator chain too slow to parse"]
    for index, name in enumerate(names):
        (tmp_path / f"deep{index}.py").write_text(SAMPLE + DEEP[name][0] + LAST)
    result = bounded([sys.executable, "-m", "perf_lint", "check", "--no-cache", "--format", "json", "-j", "1"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    found = [(d["path"], d["code"], d["line"]) for d in json.loads(result.stdout)]
    expected = []
    for index, name in enumerate(names):
        last = (SAMPLE + DEEP[name][0]).count("\n") + 1
        expected += [(f"deep{index}.py", "TPL101", 2), (f"deep{index}.py", "TPL000", 3), (f"deep{index}.py", "TPL101", last)]
    assert found == expected
    messages = [d["message"] for d in json.loads(result.stdout) if d["code"] == "TPL000"]
    assert all(message.startswith(DEEP[name][1]) for message, name in zip(messages, names, strict=True))


def test_edits_of_a_deep_file_with_a_document_state_keep_their_findings():
    script = """
from perf_lint.analyzers import analyze, python_source
from perf_lint.analyzers.document import DocumentState
import sys
state, text = DocumentState(), sys.stdin.read()
for edited in (text, text.replace("    1 +", "    12 +", 1), text + "# typed\\n", text.replace("ds)", "ds2)")):
    print([(f.code, f.range.start_line) for f in analyze(python_source(edited), state=state)])
"""
    text = SAMPLE + DEEP["finding inside an operator chain too slow to parse"][0] + LAST  # a keystroke in, above, below it
    result = bounded([sys.executable, "-c", script], input=text)
    last = text.count("\n") - 1
    assert result.stdout.splitlines() == [str([("TPL101", 1), ("TPL000", 2), ("TPL101", last)])] * 4, result.stderr[-2000:]


def test_statements_share_one_allowance_for_deep_expressions():
    """Each statement under its own bound, but together over the unit's: those past it are
    left out, and what comes after them is checked again."""
    script = """
import ast, json, sys
from perf_lint.analyzers import analyze, python_source
from perf_lint.analyzers.parse import FILE_NESTING_WORK, _nesting
statement, count = sys.argv[1], int(sys.argv[2])
work = _nesting(ast.parse(statement).body)[0]
text = "from torch.utils.data import DataLoader\\n" + statement * count + "loader = DataLoader(ds)\\n"
print(json.dumps([work, FILE_NESTING_WORK, [(f.code, f.range.start_line, f.message) for f in analyze(python_source(text))]]))
"""
    statement = f"loaders.append(DataLoader(ds, batch_size={_plus(150)}))\n"  # each checked on its own: a 150-term sum (152 deep); kept apart, not a name bound again
    count = 12
    result = bounded([sys.executable, "-c", script, statement, str(count)])
    assert result.returncode == 0, result.stderr[-2000:]
    work, allowance, findings = json.loads(result.stdout)
    kept = allowance // work
    assert 0 < kept < count
    size = statement.count("\n")
    assert [(code, line) for code, line, _ in findings] == [
        *(("TPL101", 1 + size * i) for i in range(kept)),
        *(("TPL000", 1 + size * i) for i in range(kept, count)),
        ("TPL101", 1 + size * count)]
    assert findings[kept][2].startswith("Not checked: expressions nested 152 deep, after the file's allowance")


def test_an_edit_that_makes_a_statement_too_slow_to_parse_and_back():
    script = """
from perf_lint.analyzers import analyze, python_source
from perf_lint.analyzers.document import DocumentState
import sys
state, text, deep = DocumentState(), sys.stdin.read(), sys.argv[1]
for edited in (text, text.replace("ds2", deep), text):  # an edit re-splits only the statement it touched
    print([(f.code, f.range.start_line) for f in analyze(python_source(edited), state=state)])
"""
    text = SAMPLE + "y = DataLoader(ds2)\n" + LAST
    result = bounded([sys.executable, "-c", script, _trailers(1200)], input=text)
    checked = str([("TPL101", 1), ("TPL101", 2), ("TPL101", 3)])
    slow = str([("TPL101", 1), ("TPL000", 2), ("TPL101", 1202)])
    assert result.stdout.splitlines() == [checked, slow, checked], result.stderr[-2000:]


def test_real_deep_code_is_checked(tmp_path):
    """The deepest expressions of real code (torch's: 27, configuration tables) and long
    generated sums are checked: the findings inside them are reported."""
    table = "config = " + "[" * 25 + "DataLoader(ds)" + "]" * 25 + "\n"
    total = f"y = DataLoader(ds, batch_size={_plus(100)})\n"
    path = tmp_path / "real.py"
    path.write_text(SAMPLE + table + total)
    assert [(code, line) for code, _, line, _ in analyzed(path)] == [("TPL101", 1), ("TPL101", 2), ("TPL101", 3)]


def test_fuzzing_deep_scripts_finds_no_crash():
    result = bounded([sys.executable, "bench/fuzz.py", "--only", "deep scripts", "--examples", "4", "--seed", "1",
                      "--memory-gb", str(MEMORY / 1024**3)], timeout=600, cwd=ROOT)
    assert result.returncode == 0 and ", 0 crashes," in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]


def test_statement_split_without_ast_matches_ast_on_the_examples():
    script = """
import pathlib
from perf_lint.analyzers.parse import _deep_starts, _starts, lines_of
for path in sorted(pathlib.Path("examples").rglob("*.py")):
    code = path.read_text(encoding="utf-8")
    starts, nesting = _starts(code, 0)
    assert _deep_starts(lines_of(code)) == (starts, {}, nesting), path
print("same")
"""
    result = bounded([sys.executable, "-c", script], cwd=ROOT)
    assert result.stdout.strip() == "same", result.stderr[-2000:]


@timed(240)
async def test_language_server_survives_a_deep_file_and_its_edits(tmp_path, monkeypatch):
    monkeypatch.setattr(lsp_client, "SERVER", ["prlimit", f"--as={MEMORY}", *lsp_client.SERVER])
    text = SAMPLE + DEEP["finding inside an operator chain too slow to parse"][0] + f"x = {_plus(5000)}\n" + LAST
    deep = [index for index, line in enumerate(text.splitlines()) if line.startswith("x = (")]
    expected = [("TPL101", 1), *(("TPL000", line) for line in deep), ("TPL101", text.count("\n") - 1)]
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "deep.py", text)
        shown = await pushed(client, uri, 1, timeout=120)
        assert [(d.code, d.range.start.line) for d in shown] == expected
        version = edit(client, uri, (0, 0), (0, 0), "# typed\n")  # a keystroke above the deep statements
        shown = await pushed(client, uri, version, timeout=120)
        assert [(d.code, d.range.start.line) for d in shown] == [(code, line + 1) for code, line in expected]
        version = edit(client, uri, (deep[0] + 2, 5), (deep[0] + 2, 5), "2")  # and one inside the first
        shown = await pushed(client, uri, version, timeout=120)
        assert [(d.code, d.range.start.line) for d in shown] == [(code, line + 1) for code, line in expected]
        assert (await server_info(client))["documents"] == 1
