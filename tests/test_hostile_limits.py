"""Limits a huge or hostile file must not cross: the work of an analysis grows linearly with
its statements, identical ones included; `--fix` still fixes a file with a statement too
deep for Python's parser; a `--diff` line cannot be taken for a CI workflow command."""

from __future__ import annotations

import json
import os
import sys

import pytest

from perf_lint import analyzers
from perf_lint.analyzers import analyze, read_source
from perf_lint.analyzers.fixes import parses
from perf_lint.analyzers.source import python_source
from perf_lint.cli.formats import diff_line

HEAD = "import torch\nfrom torch.utils.data import DataLoader\n"
LOADER = "loader = DataLoader(ds, batch_size=64)\n"
KEPT = "loaders.append(DataLoader(ds, batch_size=64))\n"  # (not a name bound again before a read: each reported)
PACKAGE = os.path.dirname(analyzers.__file__)


def traced(code: str) -> tuple[int, list[int]]:
    """Trace events (calls, lines, returns) in perf-lint's analyzers while `code` is analysed,
    and the lines of its findings: a count of work that does not depend on the machine."""
    events = 0

    def local(frame, event, arg):
        nonlocal events
        events += 1
        return local

    def calls(frame, event, arg):
        return local(frame, event, arg) if frame.f_code.co_filename.startswith(PACKAGE) else None

    sys.settrace(calls)
    try:
        findings = analyze(read_source("repeated.py", code.encode()))
    finally:
        sys.settrace(None)
    return events, [f.range.start_line for f in findings]


@pytest.mark.parametrize("statement", ["x = 1\n", "y = torch.zeros(3).cuda()\n", LOADER, KEPT])
def test_work_is_linear_in_repeated_statements(statement):
    (few, found), (many, found_4x) = (traced(HEAD + statement * n) for n in (500, 2000))
    assert many < 5 * few, f"4x the statements cost {many / few:.1f}x the work"  # it was 7-9x: one scan per statement
    if statement == KEPT:
        assert (found, found_4x) == (list(range(2, 502)), list(range(2, 2002)))
    if statement == LOADER:  # (bound again before anything reads it: only the last is a loader in use)
        assert (found, found_4x) == ([501], [2001])


def _elif(n: int) -> str:
    return "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, n))


DEEP = _elif(5000)  # too deep for `ast` (and so for the whole file)


def test_fix_applies_beside_a_statement_too_deep_for_ast(cli, tmp_path):
    path = tmp_path / "deep.py"
    path.write_text(HEAD + KEPT + DEEP + KEPT)
    diff = cli("check", "--no-cache", "--diff", "--select", "TPL101", "deep.py")
    assert diff.returncode == 1 and diff.stdout.count("\n+loaders.append(DataLoader(ds, batch_size=64, num_workers=") == 2
    result = cli("check", "--no-cache", "--fix", "--select", "TPL101,TPL000", "deep.py")
    assert "deep.py: fixed 2 findings (TPL101 x2)" in result.stderr, result.stderr
    assert result.stdout == "deep.py:4:1: TPL000 Not checked: statement too deeply nested to analyse (line 4)\n"
    fixed = "loaders.append(DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True))\n"
    assert path.read_text() == HEAD + fixed + DEEP + fixed


@pytest.mark.parametrize("before, after, safe", [
    (LOADER + DEEP, "ok = 1\n" + DEEP, True),
    (LOADER + DEEP, "ok = (\n" + DEEP, False),  # a syntax error elsewhere
    (LOADER + DEEP, LOADER + DEEP.replace("y = 7\n", "y = 8\n"), False),  # the deep statement edited: not judged
    (LOADER + "z = 1\n", LOADER + DEEP, False),  # a file that parsed now parses only statement by statement
])
def test_a_fix_is_safe_when_the_file_parses_no_worse(before, after, safe):
    assert parses(python_source(after, "f.py"), python_source(before, "f.py")) is safe


@pytest.mark.parametrize("line, shown", [
    (" ::add-mask::secret\n", " \\x3a:add-mask::secret\n"),
    ("   \t::error file=x.py::forged\n", "   \t\\x3a:error file=x.py::forged\n"),
    (" \u00a0::warning::x\n", " \u00a0\\x3a:warning::x\n"),
    ("+x = '##[error]legacy'\n", "+x = '#\\x23[error]legacy'\n"),
    ("+::error::added\n", "+::error::added\n"),  # after `+` or `-` it is no command
    (" x = {'a': 1}  # :: ok\n", " x = {'a': 1}  # :: ok\n"),
])
def test_diff_lines_cannot_forge_workflow_commands(line, shown):
    assert diff_line(line) == shown
    assert not diff_line(line).lstrip().startswith("::") and "##[" not in diff_line(line)


def test_diff_of_file_content_cannot_forge_workflow_commands(cli, tmp_path):
    (tmp_path / "t.py").write_text(HEAD + 'DOC = """\n  ::error::forged\n##[error]legacy\n"""\n' + LOADER)
    result = cli("check", "--no-cache", "--diff", "t.py")
    assert result.returncode == 1 and "+loader = DataLoader(" in result.stdout
    assert [l for l in result.stdout.splitlines() if l.lstrip().startswith("::") or "##[" in l] == []


def test_too_much_code_is_one_finding_not_gigabytes(cli, tmp_path):
    from perf_lint.analyzers.engine import MAX_CODE

    (tmp_path / "huge.py").write_text("x = 1\n" * (MAX_CODE // 6 + 1))
    (tmp_path / "train.py").write_text(HEAD + LOADER)
    result = cli("check", "--no-cache", "--format", "json", ".")
    found = {(f["path"], f["code"]) for f in json.loads(result.stdout)}
    assert found == {("huge.py", "TPL000"), ("train.py", "TPL101")}
    assert "MiB of Python code is over the 4 MiB" in result.stdout


def test_a_huge_pyproject_is_a_configuration_error_not_read_whole(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.perf-lint]\n" + "# padding\n" * 200_000)
    (tmp_path / "train.py").write_text(HEAD + LOADER)
    result = cli("check", "--no-cache", "train.py")
    assert result.returncode == 2 and "pyproject.toml: over 1 MiB, not read as configuration" in result.stderr
