"""What runs and what is measured: a source's segments, the target around a finding, and
the loop whose iterations become profiler steps.

A segment is what one `exec` runs: a notebook code cell, a `# %%` cell of a `.py`, or the
whole script. The program is the segments up to the target's (all of them when the target
is a function, whose callers usually come later). Lines here are 0-based within a segment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from perf_lint.analyzers import Source
from perf_lint.analyzers.findings import cell_label
from perf_lint.analyzers.source import split_lines

_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_HEAVY_CALLS = {"backward", "step", "zero_grad", "item", "synchronize", "all_reduce"}
_HEAVY_CALLEE = re.compile(r"train|fit|epoch|evaluat|valid", re.IGNORECASE)
_HEAVY_ITER = re.compile(r"loader|dataset|batch|epoch|\bdl\b|_dl\b", re.IGNORECASE)
_OUTER_TARGET = re.compile(r"epoch|step|iter", re.IGNORECASE)
_MAX_CALL_DEPTH = 3


class TargetError(Exception):
    """The request names no code that can be profiled (a bad cell or line)."""


@dataclass(frozen=True)
class Segment:
    index: int  # position in the source's segment list
    cell: int | None  # notebook cell index, `# %%` cell index, or None for a whole script
    offset: int  # first line of the segment in its unit (0-based)
    code: str  # the text that runs (IPython syntax masked)
    magics: tuple = ()  # the notebook cell's IPython lines (perf_lint.analyzers.source.Magic)

    @property
    def label(self) -> str:
        return "the script" if self.cell is None else cell_label(self.cell)

    def user_line(self, line: int) -> int:
        """1-based line the user sees (within the notebook cell, or within the file)."""
        return self.offset + line + 1


def segments_of(source: Source) -> list[Segment]:
    if source.kind == "notebook":
        return [Segment(i, u.cell, 0, u.code, u.magics) for i, u in enumerate(source.units)]
    lines = split_lines(source.units[0].code)
    if not source.percent_cells:
        return [Segment(0, None, 0, "\n".join(lines))]
    return [Segment(i, c.index, c.start, "\n".join(lines[c.start:c.end])) for i, c in enumerate(source.percent_cells)]


def segment_of_line(segments: list[Segment], line: int) -> tuple[int, int]:
    """(segment, line in it) of a 0-based line of a `.py` file."""
    for segment in segments:
        if segment.offset <= line < segment.offset + len(segment.code.split("\n")):
            return segment.index, line - segment.offset
    raise TargetError(f"line {line + 1} is past the end of the file")


def finding_place(finding, segments: list[Segment], notebook: bool) -> tuple[int, int, int]:
    """(segment, first line, last line) of a finding, in lines of its segment."""
    start, end = finding.range.start_line, finding.range.end_line
    if notebook:
        segment = next(c for c in segments if c.cell == finding.cell)
        return segment.index, start, end
    index, line = segment_of_line(segments, start)
    return index, line, line + end - start


@dataclass(frozen=True)
class Target:
    """The profiled code: a cell, a loop, a function, or (plain script) the script."""

    kind: str  # "cell", "loop", "function", "script"
    segment: int
    line: int | None  # the loop's / def's line in the segment; the request's line for "script"
    last_segment: int  # the program runs segments[0 .. last_segment]
    description: str


@dataclass(frozen=True)
class Measure:
    """How steps are made: the iterations of a loop, or repeated runs of a segment/function."""

    how: str  # "loop", "repeat-segment", "repeat-function"
    segment: int
    line: int | None  # line of the loop or def in the segment (None for repeat-segment)
    region: tuple[int, int] | None = None  # lines wrapped in a loop first (a timed region), the loop at `line`


@dataclass
class Tree:
    """A segment's libcst tree with positions, its loops and functions in source order."""

    module: cst.Module
    positions: Mapping[cst.CSTNode, CodeRange]
    loops: list = field(default_factory=list)
    nodes: list = field(default_factory=list)  # loops and function definitions
    defs: dict = field(default_factory=dict)  # name -> module-level FunctionDef

    def start(self, node) -> int:
        return self.positions[node].start.line - 1

    def end(self, node) -> int:
        return self.positions[node].end.line - 1

    def loop_at(self, line: int):
        return next((n for n in self.loops if self.start(n) == line), None)

    def def_at(self, line: int):
        return next((n for n in self.nodes if isinstance(n, cst.FunctionDef) and self.start(n) == line), None)


class _Collect(cst.CSTVisitor):
    def __init__(self, parsed: Tree) -> None:
        self.parsed = parsed
        self.depth = 0

    def visit_For(self, node) -> None:
        self.parsed.loops.append(node)
        self.parsed.nodes.append(node)

    def visit_While(self, node) -> None:
        self.parsed.loops.append(node)
        self.parsed.nodes.append(node)

    def visit_FunctionDef(self, node) -> None:
        self.parsed.nodes.append(node)
        if self.depth == 0:
            self.parsed.defs[node.name.value] = node
        self.depth += 1

    def leave_FunctionDef(self, node) -> None:
        self.depth -= 1

    def visit_ClassDef(self, node) -> None:
        self.depth += 1

    def leave_ClassDef(self, node) -> None:
        self.depth -= 1


def tree_of(code: str) -> Tree:
    wrapper = MetadataWrapper(cst.parse_module(code))
    parsed = Tree(wrapper.module, wrapper.resolve(PositionProvider))
    wrapper.module.visit(_Collect(parsed))
    return parsed


def render(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


# -- the target around a line ------------------------------------------------------------------
def find_target(segments: list[Segment], parsed: list[Tree], segment: int, line: int | None, cells: bool) -> Target:
    """The smallest function/loop around `line` of `segment`, else its cell (or, in a script
    without cells, the script from that line on)."""
    if line is None:
        return Target("cell", segment, None, segment, segments[segment].label)
    tree = parsed[segment]
    around = [n for n in tree.nodes if tree.start(n) <= line <= tree.end(n)]
    if around:
        node = min(around, key=lambda n: (tree.end(n) - tree.start(n), -tree.start(n)))
        where = segments[segment].user_line(tree.start(node))
        scope = "" if segments[segment].cell is None else f" of {segments[segment].label}"
        if isinstance(node, cst.FunctionDef):
            return Target("function", segment, tree.start(node), len(segments) - 1,
                          f"function {node.name.value} (line {where}{scope})")
        return Target("loop", segment, tree.start(node), segment, f"loop at line {where}{scope}")
    if cells:
        return Target("cell", segment, None, segment, segments[segment].label)
    return Target("script", segment, line, segment, f"the script from line {segments[segment].user_line(line)}")


# -- the measured loop -------------------------------------------------------------------------------
class _Outer(cst.CSTVisitor):
    """Outermost loops and called names of a block, not looking into nested functions."""

    def __init__(self) -> None:
        self.loops: list = []
        self.calls: list[str] = []

    def visit_For(self, node) -> bool:
        self.loops.append(node)
        return False

    def visit_While(self, node) -> bool:
        self.loops.append(node)
        return False

    def visit_Call(self, node) -> None:
        if isinstance(node.func, cst.Name):
            self.calls.append(node.func.value)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _outer(nodes) -> _Outer:
    visitor = _Outer()
    for node in nodes:
        node.visit(visitor)
    return visitor


def _body(node) -> list:
    body = node.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else [body]


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []
        self.loops = 0

    def visit_Call(self, node) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name:
            self.names.append(name)

    def visit_For(self, node) -> None:
        self.loops += 1

    def visit_While(self, node) -> None:
        self.loops += 1


def heavy(loop) -> bool:
    """A loop that looks like training or evaluation (capped outside the measured steps):
    a `while`, a loop over a loader/dataset/batches/epochs, or one whose body calls
    backward/step/item/train...; loops that build a model or read a config are left alone."""
    if isinstance(loop, cst.While):
        return True
    if _HEAVY_ITER.search(render(loop.iter)) or _HEAVY_ITER.search(render(loop.target)):
        return True
    calls = _Calls()
    for statement in _body(loop):
        statement.visit(calls)
    return calls.loops > 0 or any(n in _HEAVY_CALLS or _HEAVY_CALLEE.search(n) for n in calls.names)


def _outer_loop_kind(loop) -> bool:
    """An epoch-like loop whose iterations are too coarse to be steps when it holds another."""
    if isinstance(loop, cst.While):
        return True
    text = render(loop.iter)
    return bool(re.match(r"^\s*(\w+\.)*(range|enumerate\(\s*range|trange|tqdm\(\s*range)\b", text)) or bool(
        _OUTER_TARGET.search(render(loop.target))
    )


class Program:
    """The segments that run, parsed, with the module-level functions they define."""

    def __init__(self, segments: list[Segment], parsed: list[Tree]) -> None:
        self.segments, self.parsed = segments, parsed
        self.defs: dict[str, tuple[int, cst.FunctionDef]] = {}
        for index, tree in enumerate(parsed):
            for name, node in tree.defs.items():
                self.defs[name] = (index, node)

    def choose(self, segment: int, block: list, depth: int = 0, after: int | None = None,
               descend: bool = True) -> tuple[int, object] | None:
        """The loop of `block` to measure: its first heavy loop (after line `after` when
        given), else one reached through a call to a function of the program, else its
        first loop; with `descend`, from an epoch loop into the loop it holds."""
        found = _outer(block)
        tree = self.parsed[segment]
        loops = found.loops
        if after is not None:
            later = [l for l in loops if tree.start(l) >= after]
            loops = later or loops
        heavy_loops = [l for l in loops if heavy(l)]
        if heavy_loops:
            return self.descend(segment, heavy_loops[0], depth) if descend else (segment, heavy_loops[0])
        if depth < _MAX_CALL_DEPTH:
            for name in found.calls:
                if name in self.defs:
                    index, node = self.defs[name]
                    inner = self.choose(index, _body(node), depth + 1, descend=descend)
                    if inner is not None:
                        return inner
        if not loops:
            return None
        return self.descend(segment, loops[0], depth) if descend else (segment, loops[0])

    def descend(self, segment: int, loop, depth: int) -> tuple[int, object]:
        if _outer_loop_kind(loop):
            inner = self.choose(segment, _body(loop), depth)
            if inner is not None and heavy(inner[1]) and inner[1] is not loop:
                return inner
        return segment, loop

    def measure(self, target: Target, descend: bool = True) -> Measure:
        """Steps for a target: the training loop in it (`descend`: not the epoch loop)."""
        tree = self.parsed[target.segment]
        found: tuple[int, object] | None
        if target.kind == "loop":
            assert target.line is not None  # a loop's target has its line
            loop = tree.loop_at(target.line)
            found = self.descend(target.segment, loop, 0) if descend else (target.segment, loop)
        elif target.kind == "function":
            assert target.line is not None  # a function's target has its line
            node = tree.def_at(target.line)
            found = self.choose(target.segment, _body(node), descend=descend)
            if found is None:
                return Measure("repeat-function", target.segment, target.line)
        else:
            after = target.line if target.kind == "script" else None
            found = self.choose(target.segment, list(tree.module.body), after=after, descend=descend)
            later = target.segment + 1
            while found is None and target.kind == "cell" and later < len(self.segments):
                found = self.choose(later, list(self.parsed[later].module.body), descend=descend)  # the loop using it
                found = found if found is not None and heavy(found[1]) else None
                later += 1
        if found is None:
            return Measure("repeat-segment", target.segment, None)
        index, loop = found
        return Measure("loop", index, self.parsed[index].start(loop))

    def measure_in_place(self, target: Target, region: tuple[int, int] | None = None) -> Measure:
        """The target itself as steps (timed regions): its loop, else the timed `region`
        repeated in place, else its function or segment repeated."""
        if target.kind == "loop":
            return Measure("loop", target.segment, target.line)
        if region is not None:
            return Measure("loop", target.segment, region[0], region)
        if target.kind == "function":
            return Measure("repeat-function", target.segment, target.line)
        return Measure("repeat-segment", target.segment, None)

    def describe(self, measure: Measure) -> str:
        segment = self.segments[measure.segment]
        scope = "" if segment.cell is None else f" of {segment.label}"
        if measure.region is not None:
            first, last = (segment.user_line(line) for line in measure.region)
            return f"repeated runs of the timed lines {first}-{last}{scope}"
        if measure.how in ("loop", "repeat-function"):
            assert measure.line is not None  # a loop or a function is measured at its line
            line = segment.user_line(measure.line)
            if measure.how == "loop":
                return f"iterations of the loop at line {line}{scope}"
            return f"repeated calls of the function at line {line}{scope}"
        return f"repeated runs of {segment.label}"
