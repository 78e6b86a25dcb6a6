"""The source model: cells, IPython masking, positions, encodings, syntax errors, suppression."""

from __future__ import annotations

import codecs

from hypothesis import given, settings
from hypothesis import strategies as st

from perf_lint.analyzers import analyze, fix_source, mask_ipython, notebook_source, python_source, read_source, render
from perf_lint.analyzers.source import codepoint_column, common_length, utf16_column

LOADER = "from torch.utils.data import DataLoader\n"


def test_utf16_columns_for_astral_characters():
    line = "x = '🚀🚀'; loader = DataLoader(ds)"
    col = line.index("DataLoader")
    assert utf16_column(line, col) == col + 2
    assert codepoint_column(line, utf16_column(line, col)) == col


def test_finding_columns_are_code_points_after_non_ascii():
    source = python_source(LOADER + "note = 'é🚀'; loader = DataLoader(ds)\n")
    (finding,) = analyze(source)
    assert finding.range.start_col == "note = 'é🚀'; loader = ".__len__()


def test_masking_keeps_lines_and_columns():
    text = "%matplotlib inline\nx = 1\n!pip list\nfiles = !ls\ny?\n%timeit -n 3 f(x)\n  %time g()"
    unit = mask_ipython(text, 0)
    masked = unit.code.split("\n")
    assert len(masked) == len(text.split("\n"))
    assert masked[1] == "x = 1"
    assert masked[5].endswith("f(x)") and masked[5].index("f(x)") == text.split("\n")[5].index("f(x)")
    assert [m.name for m in unit.magics] == ["matplotlib", "", "", "", "timeit", "time"]
    assert unit.magics[4].statement == "f(x)"
    compile(unit.code.replace("  pass", "pass"), "cell", "exec")


def test_cell_magic_first_line_after_blank_lines():
    unit = mask_ipython("\n%%time\nx = 1", 0)
    assert unit.cell_magic is not None and unit.cell_magic.name == "time"
    assert mask_ipython("x = 1\n%%time\ny = 2", 0).cell_magic is None
    stacked = mask_ipython("%%capture\n\n%%time\nx = 1", 0)  # IPython drops the blank line above `%%time`'s cell
    assert [m.name for m in stacked.honoured_cell_magics] == ["capture", "time"] and stacked.misplaced_cell_magics == []


def test_percent_cells():
    source = python_source("import torch\n# %%\nx = 1\n# %% [markdown]\n# text\n")
    assert [(c.start, c.end) for c in source.percent_cells] == [(0, 1), (1, 3), (3, 6)]


def test_syntax_error_is_one_tpl000_at_python_position():
    (finding,) = analyze(python_source("import torch\nx = (1,\n"))
    assert finding.code == "TPL000" and finding.severity == "error"
    assert finding.range.start_line == 1
    assert "never closed" in finding.message


def test_unparseable_cell_does_not_stop_the_others():
    nb = {"cells": [{"cell_type": "code", "source": "import torch\nfrom torch.utils.data import DataLoader"},
                    {"cell_type": "code", "source": "def broken(:"},
                    {"cell_type": "raw", "source": "whatever"},
                    {"cell_type": "code", "source": ["loader = DataLoader(ds)\n", "model.cuda()\n",
                                                     "for x in loader:\n", "    model(x).sum().backward()"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    found = [(f.code, f.cell) for f in analyze(notebook_source(nb))]
    assert found == [("TPL000", 1), ("TPL101", 3)]


def test_syntax_errors_are_reported_in_every_file():
    (finding,) = analyze(python_source("def broken(:\n"))
    assert finding.code == "TPL000"


def test_deep_nesting_is_a_clear_tpl000_not_a_crash():
    (finding,) = analyze(python_source("import torch\nx = " + "(" * 1000 + ")" * 1000 + "\n"))
    assert finding.code == "TPL000" and "nested" in finding.message


def test_huge_line_is_skipped_with_a_clear_tpl000():
    (finding,) = analyze(python_source("import torch\nx = " + " + ".join(["1"] * 20000) + "\n"))
    assert finding.code == "TPL000" and "line of" in finding.message


def test_files_without_rule_triggers_are_not_parsed_by_libcst():
    # valid Python that libcst never sees: no finding, no TPL000
    assert analyze(python_source("import torch\nx = torch.ones(3)\n")) == []


def test_fix_applied_counts_each_finding_once():
    text = LOADER + "import torch\nloader = DataLoader(ds)\nfor x, y in loader:\n    x = x.cuda(non_blocking=True)\n"
    result = fix_source(python_source(text))
    codes = [f.code for f in result.applied]
    assert len(codes) == len(set(codes)) and "TPL101" in codes  # TPL102's edit also settles TPL103
    assert analyze(result.source) == []


def test_noqa_forms():
    base = LOADER + "loader = DataLoader(ds)"
    assert analyze(python_source(base + "  # noqa\n")) == []
    assert analyze(python_source(base + "  # noqa: TPL101\n")) == []
    assert analyze(python_source(base + "  # perf-lint: ignore[TPL101]\n")) == []
    assert len(analyze(python_source(base + "  # noqa: E501\n"))) == 1
    multi = LOADER + "# noqa: TPL101\nloader = DataLoader(\n    ds,\n)\n"
    assert analyze(python_source(multi)) == []
    single_above = LOADER + "# noqa: TPL101\nloader = DataLoader(ds)\n"
    assert len(analyze(python_source(single_above))) == 1
    code_above = LOADER + "b = DataLoader(ds, num_workers=2)  # noqa: E501, TPL101\nloader = DataLoader(\n    ds,\n)\n"
    assert len(analyze(python_source(code_above))) == 1


def test_crlf_is_kept_by_fixes():
    text = (LOADER + "loader = DataLoader(\n    ds,\n    batch_size=2,\n)\n").replace("\n", "\r\n")
    fixed = render(fix_source(python_source(text)).source).decode()
    assert "num_workers=4" in fixed
    assert fixed.count("\r\n") == fixed.count("\n")


def test_encodings_are_kept(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes("# -*- coding: latin-1 -*-\n# café\n".encode("latin-1") + (LOADER + "dl = DataLoader(ds)\n").encode())
    source = read_source(str(path))
    assert codecs.lookup(source.encoding).name == "iso8859-1"
    out = render(fix_source(source).source)
    assert "café".encode("latin-1") in out and b"num_workers=4" in out
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + (LOADER + "dl = DataLoader(ds)\n").encode())
    assert render(fix_source(read_source(str(bom))).source).startswith(b"\xef\xbb\xbf")


def test_fix_that_would_not_parse_is_rejected():
    # a statement sharing its line with a clause header: TPL201's insertion has no safe place
    text = "import time, torch\nx = torch.ones(3).cuda()\nt0 = time.time()\ny = x @ x\nif True: t1 = time.time() - t0\n"
    result = fix_source(python_source(text))
    assert not result.changed


@settings(max_examples=300, deadline=None)
@given(st.text("ab\n", max_size=40), st.integers(1, 300),
       st.lists(st.tuples(st.floats(0, 1), st.text("abc\n", max_size=3)), max_size=3), st.booleans(), st.booleans())
def test_common_length_is_the_longest_common_prefix_or_suffix(unit, times, edits, from_end, as_lines):
    """`common_length` (blocks, then a binary search) against its definition, on texts and
    on lists of lines up to thousands long, one of them edited in a few places."""
    text = unit * times
    edited = text
    for where, inserted in edits:
        at = int(where * len(edited))
        edited = edited[:at] + inserted + edited[at + 1:]
    a, b = (text.split("\n"), edited.split("\n")) if as_lines else (text, edited)
    x, y = (a[::-1], b[::-1]) if from_end else (a, b)
    expected = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    assert common_length(a, b, from_end) == expected


def test_common_length_at_block_edges():
    """A difference on each side of each block edge (blocks of 256, 512, 1024... items)."""
    edges = {0, 1, 2, 255, 256, 257, 767, 768, 769, 1791, 1792, 1793, 3839, 3840, 3841}
    for length in sorted(edges | {4000}):
        text = "a" * length
        for at in sorted(k for k in edges | {length - 1, length - 2} if 0 <= k < length):
            edited = text[:at] + "b" + text[at + 1:]
            assert common_length(text, edited) == at
            assert common_length(text, edited, from_end=True) == length - 1 - at
        assert common_length(text, text) == common_length(text, text + "a", from_end=True) == length
