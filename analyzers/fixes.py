"""Applying fixes: text edits per unit, validated by parsing, repeated to a fixed point."""

from __future__ import annotations

import ast
import json
from collections import Counter
from dataclasses import dataclass

from .config import Config
from .engine import analyze
from .findings import Edit, Finding
from .parse import deep_statements
from .source import LINE_BREAK, Source, notebook_source, python_source

_MAX_ROUNDS = 8


def _offsets(text: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in LINE_BREAK.finditer(text))
    return starts


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply edits to one unit's text; an edit overlapping an earlier one is skipped."""
    starts = _offsets(text)

    def offset(line: int, col: int) -> int:
        if line >= len(starts):
            return len(text)
        return min(starts[line] + col, starts[line + 1] if line + 1 < len(starts) else len(text))

    spans = sorted(
        ((offset(e.range.start_line, e.range.start_col), offset(e.range.end_line, e.range.end_col), e.text) for e in edits),
        key=lambda s: (s[0], s[1]),
    )
    out, cursor = [], 0
    for start, end, new in spans:
        if start < cursor:
            continue
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def parses(source: Source, before: Source | None = None) -> bool:
    """Whether every unit parses (with `before`: every unit whose text changed parses at
    least as well as before, see `_no_worse`)."""
    old = {unit.cell: unit for unit in before.units} if before is not None else {}
    return all(
        _no_worse(unit.code, old[unit.cell].code if unit.cell in old else None)
        for unit in source.units if unit.cell not in old or old[unit.cell].text != unit.text
    )


def _no_worse(code: str, before: str | None) -> bool:
    """Whether `code` parses or, too deep for `ast` as a whole like `before` (the code it was
    fixed from), fails only in top-level statements that `before` has too, as deep."""
    try:
        ast.parse(code)
        return True
    except (SyntaxError, ValueError):
        return False
    except (RecursionError, MemoryError):
        if before is None:
            return False
        deep, was = deep_statements(code), deep_statements(before)
        return deep is not None and bool(was) and not Counter(deep) - Counter(was)


def _with_texts(source: Source, texts: dict) -> Source:
    """A new Source with some units' texts replaced."""
    if source.kind == "notebook":
        assert source.notebook is not None  # a notebook's Source keeps its JSON
        # a copy of what changes only: the rest (outputs, metadata nested any depth) is shared
        notebook = {**source.notebook, "cells": list(source.notebook["cells"])}
        for cell_index, text in texts.items():
            cell = notebook["cells"][cell_index] = dict(notebook["cells"][cell_index])
            if isinstance(cell.get("source"), list):
                cell["source"] = text.splitlines(keepends=True)
            else:
                cell["source"] = text
        result = notebook_source(notebook, source.path)
        return result
    (text,) = texts.values() if texts else (source.units[0].text,)
    return python_source(text, source.path, source.encoding)


def _compatible(findings: list[Finding]) -> list[Finding]:
    """The findings whose fixes can be applied together: no edit overlaps an earlier one's."""
    taken: list[Edit] = []
    chosen = []
    for finding in findings:
        edits = _edits(finding)
        if any(_overlap(a, b) for a in edits for b in taken):
            continue
        chosen.append(finding)
        taken.extend(edits)
    return chosen


def _edits(finding: Finding) -> tuple[Edit, ...]:
    """The edits of a finding's fix (only findings with one are fixed)."""
    assert finding.fix is not None
    return finding.fix.edits


def _overlap(a: Edit, b: Edit) -> bool:
    if a.cell != b.cell:
        return False
    ra, rb = a.range, b.range
    start_a, end_a = (ra.start_line, ra.start_col), (ra.end_line, ra.end_col)
    start_b, end_b = (rb.start_line, rb.start_col), (rb.end_line, rb.end_col)
    if start_a == end_a or start_b == end_b:  # an insertion overlaps only what strictly contains it
        return start_b < start_a < end_b or start_a < start_b < end_a or (start_a == start_b and a.text == b.text)
    return start_a < end_b and start_b < end_a


def _apply(source: Source, findings: list[Finding]) -> Source:
    by_cell: dict = {}
    for finding in findings:
        for edit in _edits(finding):
            by_cell.setdefault(edit.cell, []).append(edit)
    texts = {cell: apply_edits(source.unit(cell).text, edits) for cell, edits in by_cell.items()}
    return _with_texts(source, texts)


@dataclass
class FixResult:
    source: Source  # the fixed source (the input itself when nothing changed)
    applied: list[Finding]  # the findings whose fixes were applied, over all rounds
    rejected: list[Finding]  # fixes dropped because the result would not parse

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def fix_source(source: Source, config: Config | None = None, select=None) -> FixResult:
    """Apply every available fix (or those whose code starts with one of `select`) until
    none is left; never produces text that does not parse."""
    applied: list[Finding] = []
    rejected: list[Finding] = []
    current = source
    seen_rejected: set = set()
    for _ in range(_MAX_ROUNDS):
        fixable = [
            f for f in analyze(current, config)
            if f.fix is not None and (select is None or any(f.code.startswith(s) for s in select))
            and (f.code, f.cell, f.range) not in seen_rejected
        ]
        if not fixable:
            break
        fixable = _compatible(fixable)
        candidate = _apply(current, fixable)
        if parses(candidate, current):
            applied.extend(fixable)
            current = candidate
            continue
        progress = False
        for finding in fixable:  # one at a time, keeping those that parse
            single = _apply(current, [finding])
            if parses(single, current):
                applied.append(finding)
                current, progress = single, True
                break
            rejected.append(finding)
            seen_rejected.add((finding.code, finding.cell, finding.range))
        if not progress:
            break
    return FixResult(current, applied, rejected)


def render(source: Source) -> bytes:
    """The bytes to write for a source: its encoding for `.py`, nbformat JSON for notebooks."""
    if source.kind == "notebook":
        return (json.dumps(source.notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    return source.units[0].text.encode(source.encoding)


def fixed_text(source: Source, findings: list[Finding]) -> Source:
    """The source with these findings' fixes applied (what an editor's quick fix does).

    Fixes that overlap an earlier one's edits (TPL101 and TPL102 both rewrite one
    DataLoader call) are left out: apply those one at a time, re-analyzing in between,
    as `fix_source` does.
    """
    return _apply(source, _compatible([f for f in findings if f.fix is not None]))


__all__ = ["apply_edits", "fix_source", "fixed_text", "render", "FixResult"]
