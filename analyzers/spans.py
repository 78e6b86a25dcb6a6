"""Where every node of a module is in its code, from one code generation."""

from __future__ import annotations

import bisect
import contextlib
import itertools

import libcst as cst
from libcst._nodes.internal import CodegenState

from .findings import Range
from .source import LINE_BREAK


class Spans:
    """For every node of a module, which tokens of its code it produced (its syntactic
    span, as libcst's PositionProvider defines it); lines and columns are computed
    afterwards for the few nodes that have findings. About a third of the cost of
    PositionProvider, which builds a CodeRange for every node."""

    def __init__(self, spans: dict[cst.CSTNode, tuple[int, int]], tokens: list[str]) -> None:
        self.spans, self.tokens = spans, tokens
        self.text = "".join(tokens)  # the module's code
        self.offsets = [0, *itertools.accumulate(map(len, tokens))]  # token -> its first character
        self._line_starts = [0, *(m.end() for m in LINE_BREAK.finditer(self.text))]

    @classmethod
    def of(cls, module: cst.Module) -> Spans:
        recorder = _Recorder(module)
        return cls(recorder.spans, recorder.tokens)

    def replaced(self, token: int, value: str, renamed: dict[cst.CSTNode, cst.CSTNode]) -> Spans:
        """The spans of the module made from this one by changing one leaf's token to
        `value`, where `renamed` maps the leaf and its ancestors to their new nodes: the
        same tokens but one, so every span stays (libcst's code generation of a node
        depends on its fields only)."""
        spans = dict(self.spans)
        for old, new in renamed.items():
            spans[new] = spans.pop(old)
        tokens = list(self.tokens)
        tokens[token] = value
        return Spans(spans, tokens)

    def _point(self, token: int) -> tuple[int, int]:
        offset = self.offsets[min(token, len(self.offsets) - 1)]
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line, offset - self._line_starts[line]

    def range(self, node: cst.CSTNode) -> Range:
        start, end = self.spans[node]
        (first, first_col), (last, last_col) = self._point(start), self._point(end)
        return Range(first, first_col, last, last_col)


class _Recorder(CodegenState):
    """A module's code generation that notes the tokens of every node."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(module.default_indent, module.default_newline)
        self.spans: dict[cst.CSTNode, tuple[int, int]] = {}
        self._starts: list[int] = []
        module._codegen(self)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.spans:  # a syntactic span recorded inside wins
            self.spans[node] = (start, len(self.tokens))

    @contextlib.contextmanager
    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            self.spans[node] = (
                self.spans[start_node][0] if start_node is not None else start,
                self.spans[end_node][1] if end_node is not None else end,
            )
