"""A unit's code -> libcst module, parsed by top-level statement and reused across edits.

A unit is split into chunks, each a run of whole top-level statements (with the
comments and blank lines after them), and every chunk is parsed on its own. Chunks
are cached by text, so after an edit only the chunks it touched are parsed again:
the split of the previous version is kept, and only the region between the first
and the last chunk the edit touched is re-split with `ast` (a region that does not
parse on its own, or that would move a `__future__` import, sends the whole unit
through `ast` again). A chunk ends where a statement ends, so each starts a logical
line of its own and the text around an edited region tokenizes as before. The unit's module is assembled from the chunks' statements:
the same nodes a whole-unit parse gives, and positions come from each chunk's own
code generation, so findings do not depend on how a unit was parsed.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import keyword
import re
import tokenize
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from .nodes import children
from .source import LINE_BREAK, common_ends
from .spans import Spans

MAX_LINE = 10_000  # libcst's parser is quadratic on very long expressions (minified code)
MAX_DEPTH = 100  # statements nested deeper are left out once an analysis runs out of stack (real code: under 40)
FREE_DEPTH = 30  # expressions nested this deep cost libcst's parser nothing extra (torch's deepest: 27)
NESTING_WORK = 20_000  # at most this much work past FREE_DEPTH per statement (nested calls, the worst: 1-3 s)
FILE_NESTING_WORK = 5 * NESTING_WORK  # and in all the statements of a unit
_OTHER_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")  # line breaks to str.splitlines only
_INDENTED = re.compile(r"[ \t]+(?=[^ \t\r\n#\\])")


def lines_of(code: str) -> list[str]:
    """The unit's lines with their line breaks (only `\\r\\n`, `\\r`, `\\n` end a line)."""
    if not any(other in code for other in _OTHER_BREAKS):
        return code.splitlines(keepends=True)  # the same lines, several times faster
    lines, start = [], 0
    for match in LINE_BREAK.finditer(code):
        lines.append(code[start:match.end()])
        start = match.end()
    if start < len(code):
        lines.append(code[start:])
    return lines


class LongLine(ValueError):
    """A unit with over 100 * MAX_LINE characters in lines over MAX_LINE (minified code): not parsed at all."""

    def __init__(self, line: int, length: int) -> None:
        super().__init__(f"line of {length:,} characters")
        self.line, self.length = line, length


@dataclass(eq=False)
class Chunk:
    """Whole top-level statements parsed on their own; `nodes` and `events` are filled by
    the first pass over it, `spans`, `positions` and `placed` by the positions asked in it."""

    module: cst.Module
    text: str
    nodes: frozenset | None = None  # ids of the nodes the pass visits
    events: dict = field(default_factory=dict)  # the pass's wanted event codes -> [event, node, ...]
    spans: Spans | None = None
    positions: dict = field(default_factory=dict)  # node id -> its Range in this chunk (see engine._Positions)
    offset: int = -1  # the chunk's first line in its unit when `placed` was made
    placed: dict = field(default_factory=dict)  # node id -> its Range in the unit, the chunk at `offset`
    depth: int = -1  # how deep its tree is, once asked (see `_depth`)


@dataclass
class Parsed:
    """A unit's module and its chunks; `starts[i]` is the first line of `chunks[i]`."""

    module: cst.Module
    chunks: list[Chunk]
    starts: list[int]
    owners: dict  # node id -> its chunk (the ChunkPool's), noted as chunks are first walked


@dataclass
class Split:
    """A unit that Python's parser accepts, cut into chunks: `starts[i]` is the first line
    of chunk i; `config` is libcst's for every chunk (the unit's own indent and newline).
    `chunks` are set by `parse`; `previous` are those of the unit's previous version, and
    `kept` (chunk index -> one of them) those whose lines an edit left alone. `skipped`:
    chunk index -> why it is left out (too deep, or libcst cannot read it; its chunk is None)."""

    lines: list[str]
    starts: list[int]
    config: cst.PartialParserConfig
    chunks: list[Chunk | None] = field(default_factory=list)
    previous: list[Chunk | None] = field(default_factory=list)
    kept: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    nesting: list = field(default_factory=list)  # chunk index -> its (work, depth), see `_nesting`


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", ())
    return min([statement.lineno, *(d.lineno for d in decorators)]) - 1


def _starts(code: str, offset: int) -> tuple[list[int], list[tuple[int, int]]]:
    """Chunk starts and each chunk's `_nesting`: a chunk begins on the line after the last
    line of a top-level statement (so a blank `\\` continuation line or a comment before a
    statement is in the statement's chunk), unless the next statement shares that line
    (`a; b`). The first chunk starts at `offset`. Raises what `ast.parse` raises."""
    body = ast.parse(code).body
    if not body:
        return [], []
    starts, groups = [offset], [[body[0]]]
    for before, statement in zip(body, body[1:]):
        end = before.end_lineno
        assert end is not None  # ast.parse sets every statement's end
        if end <= _first_line(statement):
            starts.append(offset + end)
            groups.append([])
        groups[-1].append(statement)
    return starts, [_nesting(group) for group in groups]


def _nesting(statements: Sequence[ast.AST]) -> tuple[int, int]:
    """(work, depth): how deep expressions nest in `statements` (counted from the statement
    that holds them), and the work past FREE_DEPTH that costs libcst's parser: the sum, over
    expressions nested deeper, of how much deeper. Its parser copies what it has read of
    an expression each time it backtracks or grows a left-recursive rule, so an expression
    costs about its depth: a chain of n calls, subscripts or operators takes n**2 to n**3."""
    work = deepest = 0
    stack = [(statement, 0) for statement in statements]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            depth += 1
            if depth > FREE_DEPTH:
                work += depth - FREE_DEPTH
                deepest = max(deepest, depth)
        elif isinstance(node, ast.stmt):
            depth = 0
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return work, deepest


def _too_costly(nesting: list[tuple[int, int]]) -> dict[int, str]:
    """Chunk index -> why it is left out, for the chunks whose expressions nest so deep
    that libcst would take seconds to minutes: over NESTING_WORK each, or once the unit's
    chunks have used FILE_NESTING_WORK."""
    skipped, spent = {}, 0
    for index, (work, depth) in enumerate(nesting):
        if work > NESTING_WORK:
            skipped[index] = (f"expressions nested {depth} deep, too slow to parse "
                              "(perf-lint's parser takes time that grows with depth x size)")
        elif spent + work > FILE_NESTING_WORK:
            skipped[index] = f"expressions nested {depth} deep, after the file's allowance for deep nesting was spent"
        else:
            spent += work
    return skipped


def parse_snippet(text: str | None) -> cst.Module | None:
    """Code kept in a string (a `timeit` statement, a `%timeit` line) as a libcst module, or
    None when it does not parse or would cost libcst's parser as much as a statement the
    split leaves out (a line over MAX_LINE, nesting work over NESTING_WORK)."""
    if not text or any(len(line) > MAX_LINE for line in text.splitlines()):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if _nesting(tree.body)[0] > NESTING_WORK:
        return None
    try:
        return cst.parse_module(text)
    except Exception:  # what Python accepts and libcst does not
        return None


TOO_DEEP = "statement too deeply nested to analyse"
_CLAUSES = ("elif", "else", "except", "finally")  # a top-level line that continues a statement


def _deep_starts(lines: list[str]) -> tuple[list[int], dict[int, str], list[tuple[int, int]]] | None:
    """Chunk starts for a unit too deep for `ast` as a whole (out of stack or parser memory):
    top-level statements found by `tokenize`, each checked by `ast` on its own, the chunks
    too deep for that (index -> TOO_DEEP) and each chunk's `_nesting`. None when a chunk
    does not parse alone (a syntax error, or a wrong split)."""
    starts, level, begins, decorated, end, last = [0], 0, True, False, 0, 0
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            kind = token.type
            if kind == tokenize.INDENT or kind == tokenize.DEDENT:
                level += 1 if kind == tokenize.INDENT else -1
            elif kind == tokenize.NEWLINE:
                begins, end = True, last  # a statement ends with its last token's line, as in `ast`
            elif kind not in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
                last = token.end[0]
                if begins and level == 0:
                    if end and not decorated and token.string not in _CLAUSES:
                        starts.append(end)
                    decorated = token.string == "@"
                begins = False
    except (tokenize.TokenError, SyntaxError):
        return None
    skipped, nesting = {}, []
    for index, (begin, stop) in enumerate(zip(starts, [*starts[1:], len(lines)])):
        try:
            nesting.append(_nesting(ast.parse("".join(lines[begin:stop])).body))
        except (RecursionError, MemoryError):
            skipped[index] = TOO_DEEP
            nesting.append((0, 0))
        except (SyntaxError, ValueError):
            return None
    return starts, skipped, nesting


def deep_statements(code: str) -> list[str] | None:
    """The texts of the top-level statements (see `_deep_starts`) too deep for `ast` on their
    own; None when `code` does not split into statements that parse alone."""
    lines = lines_of(code)
    found = _deep_starts(lines)
    if found is None:
        return None
    starts, skipped, _ = found
    bounds = [*starts, len(lines)]
    return ["".join(lines[bounds[index]:bounds[index + 1]]) for index in skipped]


def _depth(node: cst.CSTNode) -> int:
    """The number of nodes on the longest path down from `node` (walked without recursion)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children(node))
    return deepest


_LEAVES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


def patched(donor: Chunk, text: str) -> Chunk | None:
    """The chunk of `text` made from `donor` (its previous version) without parsing, when
    the edit between them stays inside one name, number or plain string and the token keeps
    its kind (a keystroke, mostly): the donor's module with that leaf replaced, every other
    node shared. None when the edit is anything else. Its spans are the donor's with one
    token changed, checked to spell exactly `text`; its recorded traversals and visited
    nodes are the donor's with the rebuilt nodes (the leaf and its parents) put in."""
    old = donor.text
    prefix, suffix = common_ends(old, text)
    start, end, inserted = prefix, len(old) - suffix, text[prefix:len(text) - suffix]
    if donor.spans is None:
        try:
            donor.spans = Spans.of(donor.module)
        except RecursionError:  # a statement too deep for libcst's code generation
            return None
    spans = donor.spans
    leaf, token = None, -1
    for node, (first, last) in spans.spans.items():  # the one token of a leaf is its value
        if isinstance(node, _LEAVES) and spans.offsets[first] <= start and end <= spans.offsets[last]:
            token = next((i for i in range(first, last) if spans.tokens[i] == node.value), -1)
            if token >= 0 and spans.offsets[token] <= start and end <= spans.offsets[token + 1]:
                leaf = node
                break
    if leaf is None:
        return None
    offset = spans.offsets[token]
    value = leaf.value[:start - offset] + inserted + leaf.value[end - offset:]
    if type(leaf) is cst.Name and (keyword.iskeyword(value) or keyword.issoftkeyword(value)):
        return None
    try:
        alone = cst.parse_expression(value)
    except (cst.ParserSyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(alone, _LEAVES) or type(alone) is not type(leaf) or alone.value != value:  # one token, nothing around it
        return None
    path = _path(donor.module, leaf)
    if path is None:
        return None
    renamed: dict[cst.CSTNode, cst.CSTNode] = {}
    try:
        node = renamed[leaf] = leaf.with_changes(value=value)
        for parent, child in zip(reversed(path[:-1]), reversed(path[1:])):
            node = renamed[parent] = _replaced(parent, child, node)
    except (cst.CSTValidationError, ValueError):
        return None
    made = spans.replaced(token, value, renamed)
    if made.text != text:
        return None
    swap = {id(old): new for old, new in renamed.items()}
    events = {wanted: [swap.get(id(item), item) for item in recorded] for wanted, recorded in donor.events.items()}
    nodes = None if donor.nodes is None else frozenset(id(swap[i]) if i in swap else i for i in donor.nodes)
    return Chunk(cst.ensure_type(node, cst.Module), text, nodes, events, made)


def _path(root: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode] | None:
    """The nodes from `root` down to `target`, both included."""
    stack = [(root, 0)]
    path: list[cst.CSTNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node is target:
            return path
        stack.extend((child, depth + 1) for child in reversed(children(node)))
    return None


def _replaced(parent: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    for item in dataclasses.fields(parent):
        value = getattr(parent, item.name)
        if value is old:
            return parent.with_changes(**{item.name: new})
        if type(value) in (tuple, list) and any(v is old for v in value):
            return parent.with_changes(**{item.name: type(value)(new if v is old else v for v in value)})
    raise ValueError(f"{type(old).__name__} is not a child of {type(parent).__name__}")


class ChunkPool:
    """A document's parsed chunks, by text, kept across its versions (see DocumentState).
    Within an analysis a chunk is handed out once, so two equal statements are still two
    nodes (rules key facts by node identity)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.chunks: OrderedDict[tuple, list[Chunk]] = OrderedDict()
        self.owners: dict[int, Chunk] = {}  # node id -> chunk, for the chunks walked (see Parsed)
        self._keys: dict[int, tuple] = {}  # id of a cached chunk -> its pool's key
        self._taken: set[int] = set()
        self._free: dict[tuple, list[Chunk]] = {}  # pool key -> its chunks to hand out in this analysis, last first

    def begin(self) -> None:
        """A new analysis: every cached chunk may be handed out again."""
        self._taken.clear()
        self._free.clear()

    def chunk(self, text: str, config: cst.PartialParserConfig, donor: Chunk | None = None) -> Chunk:
        """A chunk of `text` not handed out yet in this analysis: cached, else made from
        `donor` (the chunk at its place in the previous version, see `patched`), else parsed."""
        key = _pool_key(text, config)
        pool = self.chunks.get(key)
        if pool is None:
            pool = self.chunks[key] = []
        else:
            self.chunks.move_to_end(key)
        free = self._free.get(key)
        if free is None:
            free = self._free[key] = pool[::-1]
        found = None
        while free and found is None:  # each chunk looked at once per analysis, however many share its text
            found = free.pop()
            if id(found) in self._taken or id(found) not in self._keys:  # reused or dropped since
                found = None
        if found is None:
            found = patched(donor, text) if donor is not None and id(donor) not in self._taken else None
            if found is None:
                found = Chunk(cst.parse_module(text, config), text)
            else:  # the donor's nodes now belong to this chunk: it is never handed out again
                assert donor is not None  # `found` was patched from it
                self._drop(donor)
                if found.nodes is not None:
                    self.owners.update(dict.fromkeys(found.nodes, found))
            pool.append(found)
            self._keys[id(found)] = key
            if len(self.chunks) > self.size:
                for old in self.chunks.popitem(last=False)[1]:
                    self._forget(old)
        self._taken.add(id(found))
        return found

    def _drop(self, chunk: Chunk) -> None:
        """Take a cached chunk out (the token patch gave its nodes to a new chunk)."""
        key = self._keys.get(id(chunk))
        pool = self.chunks.get(key, []) if key is not None else []
        if key is not None and chunk in pool:
            pool.remove(chunk)
            if not pool:
                del self.chunks[key]
        self._forget(chunk)

    def reuse(self, chunk: Chunk) -> bool:
        """Hand out `chunk` (a chunk of the previous version whose text is unchanged), if it
        is still cached and not handed out yet in this analysis."""
        key = self._keys.get(id(chunk))
        if key is None or id(chunk) in self._taken:
            return False
        self.chunks.move_to_end(key)
        self._taken.add(id(chunk))
        return True

    def _forget(self, chunk: Chunk) -> None:
        """Drop the owners entries of a chunk that leaves the cache."""
        self._keys.pop(id(chunk), None)
        for node_id in chunk.nodes or ():
            if self.owners.get(node_id) is chunk:
                del self.owners[node_id]


def _pool_key(text: str, config: cst.PartialParserConfig) -> tuple:
    return text, config.default_indent, config.default_newline


def _resplit(previous: Split, lines: list[str]) -> tuple[list[int], list[tuple[int, int]], int, int] | None:
    """The new split from the previous one, re-splitting only the edited region, its
    chunks' `_nesting`, and the lines shared at the start and at the end; None when the
    region must be judged with the whole unit."""
    old, starts = previous.lines, previous.starts
    if not starts or len(previous.nesting) != len(starts):
        return None
    prefix, suffix = common_ends(old, lines)
    if prefix == len(old) == len(lines):
        return list(starts), list(previous.nesting), prefix, suffix
    first = max(bisect.bisect_right(starts, min(prefix, len(old) - 1)) - 1, 0)
    last = max(first, bisect.bisect_right(starts, len(old) - suffix - 1) - 1)
    begin = starts[first]
    end_old = starts[last + 1] if last + 1 < len(starts) else len(old)
    end = end_old + len(lines) - len(old)
    region = "".join(lines[begin:end])
    if begin and "__future__" in region:
        return None
    try:
        middle, nesting = _starts(region, begin)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    shift = len(lines) - len(old)
    new = [*starts[:first], *middle, *(s + shift for s in starts[last + 1:])]
    if new:
        new[0] = 0  # the first chunk holds what comes before its statement
    return new, [*previous.nesting[:first], *nesting, *previous.nesting[last + 1:]], prefix, suffix


def _unchanged(previous: Split, lines: list[str], starts: list[int], prefix: int, suffix: int) -> dict[int, Chunk]:
    """Chunk index -> the previous version's chunk of the same lines, for the chunks that
    lie in the `prefix` lines or the `suffix` lines an edit left alone."""
    if len(previous.chunks) != len(previous.starts):
        return {}
    old = previous.lines
    shift = len(lines) - len(old)
    chunks = dict(zip(zip(previous.starts, [*previous.starts[1:], len(old)]), previous.chunks))
    kept = {}
    for index, (begin, end) in enumerate(zip(starts, [*starts[1:], len(lines)])):
        if end <= prefix:
            chunk = chunks.get((begin, end))
        elif begin >= len(lines) - suffix:
            chunk = chunks.get((begin - shift, end - shift))
        else:
            continue
        if chunk is not None:
            kept[index] = chunk
    return kept


def default_indent(lines: list[str]) -> str:
    """The indentation of the first indented line of code (four spaces if none)."""
    for line in lines:
        match = _INDENTED.match(line)
        if match:
            return match.group()
    return "    "


def _chunks(unit: Split, pool: ChunkPool) -> list[Chunk | None]:
    bounds = [*unit.starts, len(unit.lines)]
    donors = unit.previous if len(unit.previous) == len(unit.starts) else [None] * len(unit.starts)
    chunks: list[Chunk | None] = []
    for index, (begin, end, donor) in enumerate(zip(bounds, bounds[1:], donors)):
        kept = unit.kept.get(index)
        if index in unit.skipped:
            chunks.append(None)
        elif kept is not None and pool.reuse(kept):
            chunks.append(kept)  # its text is unchanged: no need to join and look it up
        else:
            try:
                chunks.append(pool.chunk("".join(unit.lines[begin:end]), unit.config, donor))
            except cst.ParserSyntaxError as err:  # Python accepts it, libcst does not (too deep, say)
                unit.skipped[index] = f"perf-lint's parser cannot read this statement ({err.message})"
                chunks.append(None)
    return chunks


def split(code: str, previous: Split | None = None) -> Split:
    """Vet and cut a unit (`previous`: its last split, to re-split only what an edit
    touched). Raises what `ast.parse` raises (SyntaxError...) when Python rejects the unit,
    and LongLine when it has too much in lines over MAX_LINE. A statement with such a line,
    too deep for `ast`, or too slow for libcst (`_too_costly`) is noted in `skipped`."""
    lines = lines_of(code)
    long = {}  # line -> its length, for those over MAX_LINE
    if len(code) > MAX_LINE and max(map(len, lines)) > MAX_LINE:
        lengths = (len(line.rstrip("\r\n")) for line in lines)
        long = {index: length for index, length in enumerate(lengths) if length > MAX_LINE}
        if sum(long.values()) > 100 * MAX_LINE:
            raise LongLine(*next(iter(long.items())))
    resplit = _resplit(previous, lines) if previous is not None and not previous.skipped else None
    skipped: dict[int, str] = {}
    try:
        starts, nesting = _starts(code, 0) if resplit is None else resplit[:2]
    except (RecursionError, MemoryError):  # too deep for `ast` as a whole: statement by statement
        found = _deep_starts(lines)
        if found is None:
            raise
        starts, skipped, nesting = found
    for index, length in long.items() if starts else ():
        why = f"a line of {length:,} characters, over the {MAX_LINE:,} perf-lint analyzes"
        skipped[bisect.bisect_right(starts, index) - 1] = why
    for index, why in _too_costly(nesting).items():
        skipped.setdefault(index, why)
    first_break = LINE_BREAK.search(code)  # libcst's default newline: the first one
    indent, newline = default_indent(lines), first_break.group() if first_break else "\n"
    same = previous if previous is not None and (  # the previous split, if its indent and newline are these
        previous.config.default_indent, previous.config.default_newline) == (indent, newline) else None
    config = same.config if same is not None else cst.PartialParserConfig(
        default_indent=indent, default_newline=newline)
    kept = _unchanged(same, lines, starts, *resplit[2:]) if same is not None and resplit is not None else {}
    made = Split(lines, starts, config, previous=same.chunks if same is not None else [], kept=kept, skipped=skipped,
                 nesting=nesting)
    return made


def parse(unit: Split, pool: ChunkPool, shallow: bool = False) -> Parsed:
    """The unit's chunks parsed by libcst (from `pool` where their text is there) and
    its module, without the chunks in `unit.skipped`: those too deep for `ast`, those
    libcst cannot read and, when `shallow`, those nested deeper than MAX_DEPTH."""
    vetted = bool(unit.skipped)  # statements `split` left out: the unit cannot be parsed whole
    chunks = _chunks(unit, pool)
    if unit.skipped and not vetted and len(unit.starts) > 1:  # a split `ast` misjudged? the unit whole
        starts, skipped, unit.starts, unit.kept, unit.skipped = unit.starts, unit.skipped, [0], {}, {}
        whole = _chunks(unit, pool)
        if unit.skipped:  # it does not read either: the statements libcst reads
            unit.starts, unit.skipped = starts, skipped
        else:
            chunks = whole
    for index, chunk in enumerate(chunks if shallow else ()):
        if chunk is not None:
            if chunk.depth < 0:
                chunk.depth = _depth(chunk.module)
            if chunk.depth > MAX_DEPTH:
                unit.skipped[index] = TOO_DEEP
    unit.chunks = chunks
    starts = unit.starts
    if unit.skipped:
        starts = [start for index, start in enumerate(starts) if index not in unit.skipped]
    read = [chunk for index, chunk in enumerate(chunks) if chunk is not None and index not in unit.skipped]
    body = [statement for chunk in read for statement in chunk.module.body]
    indent, newline = unit.config.default_indent, unit.config.default_newline
    assert isinstance(indent, str) and isinstance(newline, str)  # `split` sets both
    module = cst.Module(
        body=body,
        header=read[0].module.header if read else (),
        footer=read[-1].module.footer if read else (),
        default_indent=indent,
        default_newline=newline,
        has_trailing_newline=read[-1].module.has_trailing_newline if read else True,
    )
    return Parsed(module, read, starts, pool.owners)
