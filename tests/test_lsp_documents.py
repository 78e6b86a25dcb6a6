"""The server's document model against an independent client-side one: random LSP edits
(UTF-16/UTF-8 positions, CRLF, astral characters) give the same text, and diagnostics
moved with an edit still cover the same text (or are dropped)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from perf_lint.analyzers import Edit, Finding, Range, apply_edits
from perf_lint.analyzers.source import LINE_BREAK, split_lines
from perf_lint.server.diagnostics import Entry, shift
from perf_lint.server.documents import TextDoc
from tests.lsp_client import apply_text_edits, units

ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\r\n", "\r", "é", "😀", "\t"])
TEXT = st.lists(ALPHABET, max_size=40).map("".join)
LF_TEXT = st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "😀"]), max_size=40).map("".join)


@st.composite
def edits(draw, text: str, encoding: str):
    """An LSP range of `text` (in `encoding` units, possibly past a line's end) and new text."""
    lines = split_lines(text)

    def position():
        line = draw(st.integers(0, len(lines)))
        width = units(lines[line], encoding) if line < len(lines) else 0
        return types.Position(line, draw(st.integers(0, width + 2)))

    a, b = position(), position()
    start, end = sorted([a, b], key=lambda p: (p.line, p.character))
    return types.Range(start, end), draw(TEXT)


@settings(max_examples=300, deadline=5000)  # ms per example: the timeout of these tests
@given(data=st.data(), text=TEXT, encoding=st.sampled_from(["utf-16", "utf-8", "utf-32"]))
def test_incremental_changes_match_a_client(data, text, encoding):
    doc = TextDoc("file:///t.py", text, 1, "python")
    expected = text
    for _ in range(data.draw(st.integers(1, 4))):
        rng, new = data.draw(edits(expected, encoding))
        clamped = _clamp(expected, rng, encoding)
        expected = apply_text_edits(expected, [types.TextEdit(range=clamped, new_text=new)], encoding)
        doc.apply(types.TextDocumentContentChangePartial(range=rng, text=new), encoding)  # the server clamps itself
        assert doc.text == expected
        assert doc.lines == split_lines(expected)  # kept up to date by the edit when only \n breaks


@settings(max_examples=200, deadline=5000)  # ms per example: the timeout of these tests
@given(data=st.data(), text=LF_TEXT)
def test_incremental_changes_of_lf_text_keep_its_lines(data, text):
    doc = TextDoc("file:///t.py", text, 1, "python")
    doc.lines  # computed once, then updated by each edit
    expected = text
    for _ in range(data.draw(st.integers(1, 4))):
        rng, new = data.draw(edits(expected, "utf-16"))
        new = new.replace("\r", "")
        expected = apply_text_edits(expected, [types.TextEdit(range=_clamp(expected, rng, "utf-16"), new_text=new)], "utf-16")
        doc.apply(types.TextDocumentContentChangePartial(range=rng, text=new), "utf-16")
        assert doc.text == expected
        assert doc.lines == split_lines(expected)


@settings(max_examples=300, deadline=5000)  # ms per example: the timeout of these tests
@given(old=TEXT, new=TEXT)
def test_full_text_changes(old, new):
    doc = TextDoc("file:///t.py", old, 1, "python")
    change = doc.apply(types.TextDocumentContentChangeWholeDocument(text=new), "utf-16")
    assert doc.text == new
    assert apply_edits(old, [Edit(None, Range(*change.start, *change.end), change.text)]) == new


@settings(max_examples=400, deadline=5000)  # ms per example: the timeout of these tests
@given(data=st.data(), text=TEXT)
def test_moved_diagnostics_cover_the_same_text(data, text):
    lines = split_lines(text)
    doc = TextDoc("file:///t.py", text, 1, "python")
    rng, new = data.draw(edits(text, "utf-32"))
    change = doc.apply(types.TextDocumentContentChangePartial(range=_clamp(text, rng, "utf-32"), text=new), "utf-32")
    for _ in range(4):
        (sl, sc), (el, ec) = sorted([_point(data, lines), _point(data, lines)])
        entry = Entry(Finding("TPL101", "m", "warning", None, Range(sl, sc, el, ec)), True)
        kept, touched = shift([entry], change)  # `touched`: held while the statement is typed (test_lsp_flicker)
        assert len(kept) + len(touched) == 1
        for moved in kept:
            r = moved.finding.range
            assert not moved.fresh
            assert _slice(doc.text, r.start_line, r.start_col, r.end_line, r.end_col) == _slice(text, sl, sc, el, ec)
            assert (moved.finding is entry.finding) == (r == entry.finding.range)  # kept when not moved


def _point(data, lines: list[str]) -> tuple[int, int]:
    line = data.draw(st.integers(0, len(lines) - 1))
    return line, data.draw(st.integers(0, len(lines[line])))


def _clamp(text: str, rng: types.Range, encoding: str) -> types.Range:
    """Positions past a line's end mean its end (as LSP says); the reference client needs them exact."""
    lines = split_lines(text)

    def fix(p: types.Position) -> types.Position:
        if p.line >= len(lines):
            return types.Position(len(lines) - 1, units(lines[-1], encoding))
        return types.Position(p.line, min(p.character, units(lines[p.line], encoding)))

    return types.Range(fix(rng.start), fix(rng.end))


def _slice(text: str, start_line: int, start_col: int, end_line: int, end_col: int) -> str:
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    return text[starts[start_line] + start_col: starts[end_line] + end_col]
