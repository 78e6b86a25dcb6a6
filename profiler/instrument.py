"""libcst rewrites that turn a segment into what the child runs, and the line map back.

- the measured loop: `if __perf_lint__.step(): break` first in its body, then
  `__perf_lint__.finish()` after it (ends the program once the steps are done);
- other heavy loops: `__perf_lint__.enter(id)` before, `if __perf_lint__.tick(id): break`
  first in the body (capped at a few iterations outside the measured steps);
- a measured function without a loop: decorated with `@__perf_lint__.repeated`;
- clock reads (`time.perf_counter()` ...): `__perf_lint__.clock(site, time.perf_counter)`;
- IPython timing magics: `__perf_lint__.mark(...)` around the timed statement or cell;
- a timed region outside any loop: wrapped in an endless loop that becomes the measured one.
Every rewrite keeps the user's text around it, so a line of the program maps back to a
line of the segment by diffing the two.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import libcst as cst

from .program import Tree, heavy

HOOK = "__perf_lint__"
CLOCKS = {
    "time": {"time", "perf_counter", "monotonic", "perf_counter_ns", "time_ns", "monotonic_ns"},
    "timeit": {"default_timer"},
}
_TIMING_MAGICS = ("time", "timeit")


@dataclass
class Rewritten:
    code: str
    lines: list[int]  # program line -> line of the segment as given (0-based)


def _prepend(loop, code: str):
    check = cst.parse_statement(code)
    body = loop.body
    if isinstance(body, cst.IndentedBlock):
        return loop.with_changes(body=body.with_changes(body=[check, *body.body]))
    return loop.with_changes(body=cst.IndentedBlock(body=[check, cst.SimpleStatementLine(body=body.body)]))


class _ClockNames(cst.CSTVisitor):
    """Names under which the clock functions are reachable: `time`, `t` (import time as t),
    `perf_counter` (from time import perf_counter)..."""

    def __init__(self) -> None:
        self.modules: dict[str, str] = {}
        self.functions: set[str] = set()

    def visit_Import(self, node) -> None:
        for alias in node.names:
            name = cst.Module([]).code_for_node(alias.name)
            if name in CLOCKS:
                self.modules[alias.asname.name.value if alias.asname else name] = name

    def visit_ImportFrom(self, node) -> None:
        module = cst.Module([]).code_for_node(node.module) if node.module else ""
        if module in CLOCKS and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if alias.name.value in CLOCKS[module]:
                    self.functions.add(alias.asname.name.value if alias.asname else alias.name.value)


    def reads(self, func) -> bool:
        """Whether a call of `func` reads a clock."""
        if isinstance(func, cst.Name):
            return func.value in self.functions
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            module = self.modules.get(func.value.value)
            return module is not None and func.attr.value in CLOCKS[module]
        return False


def clock_names(trees: list[Tree]) -> _ClockNames:
    names = _ClockNames()
    for tree in trees:
        tree.module.visit(names)
    return names


class _Rewrite(cst.CSTTransformer):
    def __init__(self, tree: Tree, measured, repeated, clocks: _ClockNames | None, segment: int, cap_inner: bool,
                 to_original: list[int]) -> None:
        super().__init__()
        self.tree, self.segment, self.to_original = tree, segment, to_original
        self.measured, self.repeated, self.clocks = measured, repeated, clocks
        inner = set()
        if measured is not None:
            start, end = tree.start(measured), tree.end(measured)
            inner = {n for n in tree.loops if n is not measured and start <= tree.start(n) <= end}
        capped = [n for n in tree.loops if n is not measured and (cap_inner or n not in inner) and heavy(n)]
        self.capped = {loop: (1000 * segment + i, loop in inner) for i, loop in enumerate(capped)}

    def _loop(self, original, updated):
        if original is self.measured:
            loop = _prepend(updated, f"if {HOOK}.step(): break")
            return cst.FlattenSentinel([loop, cst.parse_statement(f"{HOOK}.finish()")])
        if original in self.capped:
            loop_id, always = self.capped[original]
            loop = _prepend(updated, f"if {HOOK}.tick({loop_id}{', True' if always else ''}): break")
            return cst.FlattenSentinel([cst.parse_statement(f"{HOOK}.enter({loop_id})"), loop])
        return updated

    def leave_For(self, original, updated):
        return self._loop(original, updated)

    def leave_While(self, original, updated):
        return self._loop(original, updated)

    def leave_FunctionDef(self, original, updated):
        if original is not self.repeated:
            return updated
        decorator = cst.Decorator(cst.parse_expression(f"{HOOK}.repeated"))
        return updated.with_changes(decorators=[decorator, *updated.decorators])

    def leave_Call(self, original, updated):
        if self.clocks is None or not self.clocks.reads(original.func):
            return updated
        position = self.tree.positions[original].start
        line = self.to_original[position.line - 1]
        site = f"{self.segment}:{line}:{position.column}"  # in lines of the code as written
        args = [cst.Arg(cst.SimpleString(repr(site))), cst.Arg(updated.func)]
        if updated.args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(func=cst.parse_expression(f"{HOOK}.clock"), args=[*args, *updated.args])



def rewrite(code: str, tree: Tree, *, measured_line: int | None = None, repeated_line: int | None = None,
            clocks: _ClockNames | None = None, segment: int = 0, cap_inner: bool = False,
            original: str | None = None) -> Rewritten:
    """`code` (already parsed as `tree`) instrumented; its lines map to `original` (default
    `code`), and so do clock sites ("segment:line:column"). `segment` (the index in the
    program) numbers the capped loops; `cap_inner` caps heavy loops inside the measured
    loop too, always (each step then holds a few of their iterations)."""
    original = code if original is None else original
    measured = tree.loop_at(measured_line) if measured_line is not None else None
    repeated = tree.def_at(repeated_line) if repeated_line is not None else None
    if measured_line is not None and measured is None:
        raise ValueError(f"no loop starts at line {measured_line + 1}")
    if repeated_line is not None and repeated is None:
        raise ValueError(f"no function starts at line {repeated_line + 1}")
    transformer = _Rewrite(tree, measured, repeated, clocks, segment, cap_inner, line_map(original, code))
    new = tree.module.visit(transformer).code
    return Rewritten(new, line_map(original, new))


def mark_magic(code: str, magics, line: int) -> str:
    """The timed region of a `%time`/`%timeit` line (at `line`) or of a `%%time`/`%%timeit`
    cell between `__perf_lint__.mark("start")` and `mark("end")`; the masked cell keeps a
    `pass` where each magic was, and `pass; statement` for a timed statement."""
    lines = code.split("\n")
    first = next((i for i, text in enumerate(lines) if text.strip()), None)
    timing = [m for m in magics if m.name in _TIMING_MAGICS]
    for magic in timing:
        if not magic.is_cell_magic and magic.line == line:
            masked = lines[magic.line]
            indent = masked[: len(masked) - len(masked.lstrip())]
            statement = magic.statement if magic.statement and masked.strip() != "pass" else "pass"
            lines[magic.line] = f'{indent}{HOOK}.mark("start"); {statement}'
            lines.insert(magic.line + 1, f'{indent}{HOOK}.mark("end")')
            return "\n".join(lines)
    for magic in timing:
        if magic.is_cell_magic and magic.line == first:
            lines[magic.line] = f'{HOOK}.mark("start")'
            lines.append(f'{HOOK}.mark("end")')
            return "\n".join(lines)
    raise ValueError("no %time/%timeit magic where the finding is")


class _Blocks(cst.CSTVisitor):
    def __init__(self) -> None:
        self.bodies: list = []

    def visit_Module(self, node) -> None:
        self.bodies.append(node.body)

    def visit_IndentedBlock(self, node) -> None:
        self.bodies.append(node.body)


def timed_region(tree: Tree, line: int, clocks: _ClockNames) -> tuple[int, int] | None:
    """Lines [first, last] of the statements of a timed interval around `line`: from the
    clock read before it in the same block to the one after it (`line` itself may be
    either read)."""
    blocks = _Blocks()
    tree.module.visit(blocks)

    def reads_clock(statement) -> bool:
        found = []

        class Calls(cst.CSTVisitor):
            def visit_Call(self, node) -> None:
                found.append(clocks.reads(node.func))

        statement.visit(Calls())
        return any(found)

    for body in blocks.bodies:
        for i, statement in enumerate(body):
            if not (isinstance(statement, cst.SimpleStatementLine) and tree.start(statement) <= line <= tree.end(statement)):
                continue
            before = [j for j in range(i) if reads_clock(body[j])]
            after = [j for j in range(i + 1, len(body)) if reads_clock(body[j])]
            if reads_clock(statement):
                first, last = (before[-1], i) if before else (i, after[0]) if after else (None, None)
            else:
                first, last = (before[-1], after[0]) if before and after else (None, None)
            return None if first is None else (tree.start(body[first]), tree.end(body[last]))
    return None


def wrap_region(code: str, first: int, last: int) -> str:
    """Lines [first, last] of `code` inside `for _ in iter(int, 1):` (an endless loop whose
    iterations become the steps)."""
    lines = code.split("\n")
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    body = [("    " + text) if text.strip() else text for text in lines[first:last + 1]]
    return "\n".join(lines[:first] + [f"{indent}for __perf_lint_step in iter(int, 1):"] + body + lines[last + 1:])


def line_map(old: str, new: str) -> list[int]:
    """For each line of `new`, the line of `old` it comes from (inserted lines: the next
    one), matching lines whatever their indentation (a region wrapped in a loop moves right)."""
    a, b = [line.strip() for line in old.split("\n")], [line.strip() for line in new.split("\n")]
    out = [0] * len(b)
    last = max(len(a) - 1, 0)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                out[j] = i1 + (j - j1)
            elif tag == "replace":
                out[j] = min(i1 + (j - j1), i2 - 1)
            elif tag == "insert":
                out[j] = min(i1, last)
    return out
