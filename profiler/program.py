"""What runs and what is measured: a source's chunks, the target around a finding, and
the loop whose iterations become profiler steps.

A chunk is what one `exec` runs: a notebook code cell, a `# %%` cell of a `.py`, or the
whole script. The program is the chunks up to the target's (all of them when the target
is a function, whose callers usually come later). Lines here are 0-based within a chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

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
class Chunk:
    index: int  # position in the source's chunk list
    cell: int | None  # notebook cell index, `# %%` cell index, or None for a whole script
    offset: int  # first line of the chunk in its unit (0-based)
    code: str  # the text that runs (IPython syntax masked)
    magics: tuple = ()  # the notebook cell's IPython lines (perf_lint.analyzers.source.Magic)

    @property
    def label(self) -> str:
        return "the script" if self.cell is None else cell_label(self.cell)

    def user_line(self, line: int) -> int:
        """1-based line the user sees (within the notebook cell, or within the file)."""
        return self.offset + line + 1


def chunks_of(source: Source) -> list[Chunk]:
    if source.kind == "notebook":
        return [Chunk(i, u.cell, 0, u.code, u.magics) for i, u in enumerate(source.units)]
    lines = split_lines(source.units[0].code)
    if not source.percent_cells:
        return [Chunk(0, None, 0, "\n".join(lines))]
    return [Chunk(i, c.index, c.start, "\n".join(lines[c.start:c.end])) for i, c in enumerate(source.percent_cells)]


def chunk_of_line(chunks: list[Chunk], line: int) -> tuple[int, int]:
    """(chunk, line in it) of a 0-based line of a `.py` file."""
    for chunk in chunks:
        if chunk.offset <= line < chunk.offset + len(chunk.code.split("\n")):
            return chunk.index, line - chunk.offset
    raise TargetError(f"line {line + 1} is past the end of the file")


def finding_place(finding, chunks: list[Chunk], notebook: bool) -> tuple[int, int, int]:
    """(chunk, first line, last line) of a finding, in lines of its chunk."""
    start, end = finding.range.start_line, finding.range.end_line
    if notebook:
        chunk = next(c for c in chunks if c.cell == finding.cell)
        return chunk.index, start, end
    index, line = chunk_of_line(chunks, start)
    return index, line, line + end - start


@dataclass(frozen=True)
class Target:
    """The profiled code: a cell, a loop, a function, or (plain script) the script."""

    kind: str  # "cell", "loop", "function", "script"
    chunk: int
    line: int | None  # the loop's / def's line in the chunk; the request's line for "script"
    last_chunk: int  # the program runs chunks[0 .. last_chunk]
    description: str


@dataclass(frozen=True)
class Measure:
    """How steps are made: the iterations of a loop, or repeated runs of a chunk/function."""

    how: str  # "loop", "repeat-chunk", "repeat-function"
    chunk: int
    line: int | None  # line of the loop or def in the chunk (None for repeat-chunk)
    region: tuple[int, int] | None = None  # lines wrapped in a loop first (a timed region), the loop at `line`


@dataclass
class Parsed:
    """A chunk's libcst tree with positions, its loops and functions in source order."""

    module: cst.Module
    positions: object
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
    def __init__(self, parsed: Parsed) -> None:
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


def parse(code: str) -> Parsed:
    wrapper = MetadataWrapper(cst.parse_module(code))
    parsed = Parsed(wrapper.module, wrapper.resolve(PositionProvider))
    wrapper.module.visit(_Collect(parsed))
    return parsed


def render(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


# -- the target around a line ------------------------------------------------------------------
def find_target(chunks: list[Chunk], parsed: list[Parsed], chunk: int, line: int | None, cells: bool) -> Target:
    """The smallest function/loop around `line` of `chunk`, else its cell (or, in a script
    without cells, the script from that line on)."""
    if line is None:
        return Target("cell", chunk, None, chunk, chunks[chunk].label)
    tree = parsed[chunk]
    around = [n for n in tree.nodes if tree.start(n) <= line <= tree.end(n)]
    if around:
        node = min(around, key=lambda n: (tree.end(n) - tree.start(n), -tree.start(n)))
        where = chunks[chunk].user_line(tree.start(node))
        scope = "" if chunks[chunk].cell is None else f" of {chunks[chunk].label}"
        if isinstance(node, cst.FunctionDef):
            return Target("function", chunk, tree.start(node), len(chunks) - 1,
                          f"function {node.name.value} (line {where}{scope})")
        return Target("loop", chunk, tree.start(node), chunk, f"loop at line {where}{scope}")
    if cells:
        return Target("cell", chunk, None, chunk, chunks[chunk].label)
    return Target("script", chunk, line, chunk, f"the script from line {chunks[chunk].user_line(line)}")


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
    """The chunks that run, parsed, with the module-level functions they define."""

    def __init__(self, chunks: list[Chunk], parsed: list[Parsed]) -> None:
        self.chunks, self.parsed = chunks, parsed
        self.defs: dict[str, tuple[int, cst.FunctionDef]] = {}
        for index, tree in enumerate(parsed):
            for name, node in tree.defs.items():
                self.defs[name] = (index, node)

    def choose(self, chunk: int, block: list, depth: int = 0, after: int | None = None,
               descend: bool = True) -> tuple[int, object] | None:
        """The loop of `block` to measure: its first heavy loop (after line `after` when
        given), else one reached through a call to a function of the program, else its
        first loop; with `descend`, from an epoch loop into the loop it holds."""
        found = _outer(block)
        tree = self.parsed[chunk]
        loops = found.loops
        if after is not None:
            later = [l for l in loops if tree.start(l) >= after]
            loops = later or loops
        heavy_loops = [l for l in loops if heavy(l)]
        if heavy_loops:
            return self.descend(chunk, heavy_loops[0], depth) if descend else (chunk, heavy_loops[0])
        if depth < _MAX_CALL_DEPTH:
            for name in found.calls:
                if name in self.defs:
                    index, node = self.defs[name]
                    inner = self.choose(index, _body(node), depth + 1, descend=descend)
                    if inner is not None:
                        return inner
        if not loops:
            return None
        return self.descend(chunk, loops[0], depth) if descend else (chunk, loops[0])

    def descend(self, chunk: int, loop, depth: int) -> tuple[int, object]:
        if _outer_loop_kind(loop):
            inner = self.choose(chunk, _body(loop), depth)
            if inner is not None and heavy(inner[1]) and inner[1] is not loop:
                return inner
        return chunk, loop

    def measure(self, target: Target, descend: bool = True) -> Measure:
        """Steps for a target: the training loop in it (`descend`: not the epoch loop)."""
        tree = self.parsed[target.chunk]
        if target.kind == "loop":
            loop = tree.loop_at(target.line)
            found = self.descend(target.chunk, loop, 0) if descend else (target.chunk, loop)
        elif target.kind == "function":
            node = tree.def_at(target.line)
            found = self.choose(target.chunk, _body(node), descend=descend)
            if found is None:
                return Measure("repeat-function", target.chunk, target.line)
        else:
            after = target.line if target.kind == "script" else None
            found = self.choose(target.chunk, list(tree.module.body), after=after, descend=descend)
            later = target.chunk + 1
            while found is None and target.kind == "cell" and later < len(self.chunks):
                found = self.choose(later, list(self.parsed[later].module.body), descend=descend)  # the loop using it
                found = found if found is not None and heavy(found[1]) else None
                later += 1
        if found is None:
            return Measure("repeat-chunk", target.chunk, None)
        index, loop = found
        return Measure("loop", index, self.parsed[index].start(loop))

    def measure_in_place(self, target: Target, region: tuple[int, int] | None = None) -> Measure:
        """The target itself as steps (timed regions): its loop, else the timed `region`
        repeated in place, else its function or chunk repeated."""
        if target.kind == "loop":
            return Measure("loop", target.chunk, target.line)
        if region is not None:
            return Measure("loop", target.chunk, region[0], region)
        if target.kind == "function":
            return Measure("repeat-function", target.chunk, target.line)
        return Measure("repeat-chunk", target.chunk, None)

    def describe(self, measure: Measure) -> str:
        chunk = self.chunks[measure.chunk]
        scope = "" if chunk.cell is None else f" of {chunk.label}"
        if measure.region is not None:
            first, last = (chunk.user_line(line) for line in measure.region)
            return f"repeated runs of the timed lines {first}-{last}{scope}"
        if measure.how == "loop":
            return f"iterations of the loop at line {chunk.user_line(measure.line)}{scope}"
        if measure.how == "repeat-function":
            return f"repeated calls of the function at line {chunk.user_line(measure.line)}{scope}"
        return f"repeated runs of {chunk.label}"
