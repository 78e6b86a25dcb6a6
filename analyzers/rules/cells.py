"""The statements of a notebook cell, for rules about what a cell magic runs."""

from __future__ import annotations

import ast
import functools
from typing import cast

import libcst as cst

from ..source import Block, Unit


def cell_statements(module: cst.Module, unit: Unit, block: Block) -> list[cst.BaseStatement]:
    """The top-level statements of `block`: all of a notebook cell's; in a virtual
    document (jupyterlab-lsp's, one unit), those that start on the block's lines."""
    if unit.blocks is None:
        return list(module.body)
    starts = _starts(unit.code)
    if len(starts) != len(module.body):  # not the statements libcst sees: none rather than wrong ones
        return []
    return [s for s, line in zip(module.body, starts) if block.start <= line < block.end]


@functools.lru_cache(maxsize=8)
def _starts(code: str) -> tuple[int, ...]:
    """The 0-based first line of each top-level statement as libcst counts them (those
    joined by `;` on a logical line are one)."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError):
        return ()
    starts, last_end = [], -1
    for node in body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]) - 1
        if first > last_end:
            starts.append(first)
        last_end = max(last_end, cast(int, node.end_lineno) - 1)  # ast.parse sets it
    return tuple(starts)
