"""TPL000: a file or notebook cell that does not parse (reported by the engine itself)."""

from __future__ import annotations

from .base import Rule


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a file, or a notebook code cell, that does not parse as Python, at the
    position and with the message of Python's own parser; also a statement too deep or
    too long to analyze, which is left out while the rest of the file is checked.

    ## Why is this bad?
    perf-lint cannot check code it cannot parse: no other finding is reported for it.

    ## Fix
    Fix the syntax error. In notebooks IPython syntax (`%magic`, `!shell`, `?help`) is
    understood; a cell starting with another cell magic (`%%bash`...) is not Python and
    is skipped.
    """

    code = "TPL000"
    name = "syntax-error"
    summary = "File (or notebook cell) does not parse, so it was not checked"
    severity = "error"
