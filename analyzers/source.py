"""Source documents: a `.py` file, a notebook, or editor text, split into parse units.

A `.py` file is one unit (its `# %%` cells are recorded for the profiler and the
editor). A notebook is one unit per code cell, with IPython syntax masked so the
cell parses while keeping every line and column of the Python code in place. A `.py`
text that is jupyterlab-lsp's virtual document of a notebook (its magics rewritten) is
masked the same way, its cells as `blocks` (transclusion.py).
Coordinates everywhere are (unit, 0-based line, column in code points); the
fronts convert to 1-based lines or to LSP's UTF-16 columns with `utf16_column`.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import os
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field

LINE_BREAK = re.compile(r"\r\n|\r|\n")
PERCENT_CELL = re.compile(r"^#\s*%%")
_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<prefix>%%|%|!!|!)(?P<name>[A-Za-z_][\w.]*)?")
_HELP_END = re.compile(r"%{0,2}(?!\d)[\w*]+(?:\.(?!\d)[\w*]+|\[-?[0-9]+\])*\?\??$")  # IPython's `obj?`, `torch.*Tensor?`
# `x = %who_ls`, `x[0] = !ls` (a target without quotes: `'a=%d' % n` is a format string)
_ASSIGNED = re.compile(r"[ \t]*[^=\s'\"](?:[^='\"]*[^=!<>+\-*/%&|^@:\s'\"])?\s*=\s*(%\s*[^\W\d]|!)")
_PYTHON = re.compile(r"#|'''|\"\"\"|['\"()\[\]{}]")
_STATEMENT = re.compile(r"[ \t]*(?!#|pass[ \t]*$)\S")  # a line of code, not a comment nor a bare `pass`
_CLOSING = {quote: re.compile(r"(?:\\.|[^\\])*?" + quote) for quote in ("'", '"', "'''", '"""')}
_TIMEIT_VALUE_OPTIONS = {"-n", "-r", "-p"}
RUNS_CELL = {"capture", "time", "timeit", "prun"}  # cell magics that run their body as IPython input


class SourceError(Exception):
    """A document that cannot be read as Python or as a notebook."""


def common_length(a: Sequence, b: Sequence, from_end: bool = False) -> int:
    """Length of the common prefix (or suffix) of `a` and `b` (texts, or lists of lines):
    blocks of doubling size compared until one differs, then a binary search inside it,
    so that about the common length is copied and compared, whatever the lengths."""

    def same(low: int, high: int) -> bool:  # the items low..high from the start (or the end)
        if from_end:
            return a[len(a) - high:len(a) - low] == b[len(b) - high:len(b) - low]
        return a[low:high] == b[low:high]

    limit = min(len(a), len(b))
    low, step = 0, 256
    while low < limit:
        high = min(low + step, limit)
        if not same(low, high):
            break
        low, step = high, step * 2
    else:
        return limit
    while high - low > 1:  # the first `low` items are common, the first `high` are not
        middle = (low + high) // 2
        if same(low, middle):
            low = middle
        else:
            high = middle
    return low


def common_ends(old: Sequence, new: Sequence) -> tuple[int, int]:
    """The lengths shared at the start and at the end (not overlapping): what an edit
    turning `old` into `new` left alone."""
    prefix = common_length(old, new)
    return prefix, common_length(old[prefix:], new[prefix:], from_end=True)


def split_lines(text: str) -> list[str]:
    """Lines without their breaks; `\\r\\n`, `\\r` and `\\n` all end a line, as for Python."""
    return LINE_BREAK.split(text) if "\r" in text else text.split("\n")  # the same lines, 6x faster


@functools.lru_cache(maxsize=256)
def dominant_newline(text: str) -> str:
    """The most frequent line break of `text` (`\n` when it has none; ties go to the first
    of `\r\n`, `\n`, `\r`)."""
    crlf = text.count("\r\n")
    counts = {"\r\n": crlf, "\n": text.count("\n") - crlf, "\r": text.count("\r") - crlf}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else "\n"


def utf16_column(line: str, column: int) -> int:
    """LSP column (UTF-16 code units) of a code-point column in `line`."""
    prefix = line[:column]
    return len(prefix) + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def codepoint_column(line: str, utf16: int) -> int:
    """Inverse of `utf16_column`."""
    units = 0
    for index, ch in enumerate(line):
        if units >= utf16:
            return index
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


@dataclass(frozen=True)
class Magic:
    """An IPython line of a notebook cell: `%line`, `%%cell` magic, `!shell`, `?help` or `/auto call`."""

    line: int  # 0-based line in the cell
    prefix: str  # "%", "%%", "!", "!!", "?", or "/", "," or ";" (auto-call)
    name: str  # magic name ("time", "timeit", ...) or auto-called name, "" for shell and help
    text: str  # the whole original line
    statement: str | None = None  # for %time/%timeit: the timed Python statement
    statement_column: int = 0  # where `statement` starts in `text`
    text_end: int | None = None  # where `text` ends on the unit's line, if not at len(text) (a rewritten form)

    @property
    def is_cell_magic(self) -> bool:
        return self.prefix == "%%"

    @property
    def end(self) -> int:
        """The column of the unit's text line where the magic's own text ends (what is
        appended to the magic goes there)."""
        return len(self.text) if self.text_end is None else self.text_end


@dataclass(frozen=True)
class Block:
    """A notebook cell inside a unit: lines [start, end), its cell magic (if any) first;
    `tail` is the (line, column) of the unit's text where the cell's code ends. `shifted`:
    the cell's second line shares the first (jupyterlab-lsp's `run_cell_magic` form)."""

    start: int
    end: int
    tail: tuple[int, int]
    shifted: bool = False


@dataclass(frozen=True)
class Unit:
    """A piece of Python parsed on its own: a whole `.py` file or one notebook code cell."""

    cell: int | None  # index in the notebook's `cells` array; None for `.py` text
    text: str  # the original text (what fixes edit)
    code: str  # the text that is parsed: `text` with IPython syntax masked
    magics: tuple[Magic, ...] = ()
    blocks: tuple[Block, ...] | None = None  # jupyterlab-lsp's virtual document: the cells it rewrote a cell magic of
    lines: list[str] = field(default_factory=list, compare=False, repr=False)

    def line(self, index: int) -> str:
        if not self.lines:
            self.lines.extend(split_lines(self.text))
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    @property
    def line_count(self) -> int:
        self.line(0)
        return len(self.lines)

    @property
    def notebook(self) -> bool:
        """A notebook's cell, or jupyterlab-lsp's virtual document of a notebook."""
        return self.cell is not None or self.blocks is not None

    @property
    def cells(self) -> tuple[Block, ...]:
        """The notebook cells of the unit: the unit itself, or `blocks` in a virtual document."""
        if self.blocks is not None:
            return self.blocks
        last = self.line_count - 1
        return (Block(0, last + 1, (last, len(self.line(last)))),)

    def block_of(self, magic: Magic) -> Block | None:
        return next((block for block in self.cells if block.start <= magic.line < block.end), None)

    @property
    def cell_magic(self) -> Magic | None:
        """The cell magic on the cell's first non-blank line, if any (what IPython runs)."""
        return self._head(self.cells[0]) if self.magics and self.blocks is None else None

    def heads(self) -> list[tuple[Magic, Block]]:
        """Each cell's cell magic on its first non-blank line, with the cell."""
        found = [(self._head(block), block) for block in self.cells] if self.magics else []
        return [(magic, block) for magic, block in found if magic is not None]

    def _head(self, block: Block) -> Magic | None:
        for magic in self.magics:
            if block.start <= magic.line < block.end and magic.is_cell_magic:
                return None if any(self.line(i).strip() for i in range(block.start, magic.line)) else magic
        return None

    def _honoured(self, block: Block) -> list[Magic]:
        first = self._head(block)
        if first is None:
            return []
        by_line = {magic.line: magic for magic in self.magics}
        honoured = [first]
        while honoured[-1].name in RUNS_CELL and not block.shifted:  # (IPython drops the blank lines above a cell)
            below = by_line.get(next((i for i in range(honoured[-1].line + 1, block.end) if self.line(i).strip()), -1))
            if below is None or not below.is_cell_magic:
                break
            honoured.append(below)
        return honoured

    @property
    def honoured_cell_magics(self) -> list[Magic]:
        """The cell magics IPython runs: the first line's, and those stacked under a magic
        that runs the rest of the cell as a new cell (`%%capture` then `%%time`)."""
        return [magic for block in self.cells for magic in self._honoured(block)] if self.magics else []

    @property
    def misplaced_cell_magics(self) -> list[Magic]:
        """Cell magics IPython refuses (UsageError): below code in a cell that is IPython input.
        Outside the blocks of a virtual document, only those right below a line of their cell."""
        if not self.magics:
            return []
        found = []
        for block in self.cells:
            honoured = self._honoured(block)
            if not honoured or honoured[-1].name in RUNS_CELL:  # else the rest is the magic's text (a file, a script)
                found += [m for m in self.magics if m.is_cell_magic and block.start <= m.line < block.end and m not in honoured]
        if self.blocks is not None:  # cells are 2 blank lines apart there: a line above is the same cell's
            found += [m for m in self.magics if m.is_cell_magic and self.block_of(m) is None and self.line(m.line - 1).strip()]
        return sorted(found, key=lambda magic: magic.line)


@dataclass(frozen=True)
class PercentCell:
    """A `# %%` cell of a `.py` file: lines [start, end) of the file, 0-based."""

    index: int
    start: int
    end: int


@dataclass
class Source:
    """A document to analyze."""

    path: str
    units: list[Unit]
    kind: str = "python"  # "python" or "notebook"
    encoding: str = "utf-8"
    notebook: dict | None = None  # the parsed notebook JSON, kept whole for --fix
    percent_cells: list[PercentCell] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The whole text of a `.py` source (notebooks: the code cells joined)."""
        return "\n".join(unit.text for unit in self.units)

    def unit(self, cell: int | None) -> Unit:
        for unit in self.units:
            if unit.cell == cell:
                return unit
        raise KeyError(cell)

    def percent_cell_at(self, line: int) -> PercentCell | None:
        for cell in self.percent_cells:
            if cell.start <= line < cell.end:
                return cell
        return None


def python_source(text: str, path: str = "<stdin>", encoding: str = "utf-8", lines: list[str] | None = None) -> Source:
    """A `.py` text as one unit (`lines`: its `split_lines`, when the caller has them)."""
    lines = split_lines(text) if lines is None else lines
    starts = [i for i, line in enumerate(lines) if PERCENT_CELL.match(line)] if "%%" in text else []
    percent = []
    if starts:
        bounds = ([0] if starts[0] != 0 else []) + starts + [len(lines)]
        percent = [PercentCell(i, a, b) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    unit = None
    if "get_ipython()" in text or "# START_CELL_MAGIC(" in text:
        from .transclusion import virtual_unit  # jupyterlab-lsp's rewritten IPython

        unit = virtual_unit(text, lines)
    return Source(path, [unit or Unit(None, text, text, lines=lines)], "python", encoding, None, percent)


def cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def notebook_source(data: str | dict, path: str = "<notebook>") -> Source:
    """A notebook (nbformat v4 JSON) as one unit per code cell."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SourceError(f"not a notebook: invalid JSON at line {exc.lineno}: {exc.msg}") from None
        except RecursionError:
            raise SourceError("not a notebook: its JSON is nested too deeply") from None
        except ValueError as exc:  # a number too long to convert
            raise SourceError(f"not a notebook: {str(exc).split(';')[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise SourceError("not a notebook: no 'cells' list (nbformat 4 expected)")
    units = []
    for index, cell in enumerate(data["cells"]):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            units.append(mask_ipython(cell_text(cell), index))
    return Source(path, units, "notebook", "utf-8", data)


def mask_ipython(text: str, cell: int | None = None) -> Unit:
    """A cell's unit: IPython lines replaced by `pass` (same indentation, same line count).

    As for IPython, only a line that starts a logical line of Python can be IPython's (not
    one in brackets, a string or after a `\\`), and its `\\` continuation lines go with it.
    `%time stmt` / `%timeit stmt` keep `stmt` at its column behind a `pass;` prefix
    when that parses, so rules see the timed code. A cell magic other than
    `%%time`/`%%timeit`/`%%capture`/`%%prun` on the cell's first line (or under one of
    those) makes the rest of the cell non-Python. A cell IPython dedents: see `_dedent`.
    """
    lines = split_lines(text)
    magics: list[Magic] = []
    masked = list(lines)
    head = _first_code(lines, 0)  # where a cell magic is one
    depth, quote, joined, start = 0, "", False, 0
    i = 0
    while i < len(lines):
        line = lines[i]
        magic = None if depth or quote or joined else _classify(line, i)
        if magic is None:
            start = start if depth or quote or joined else i  # of the logical line
            depth, quote, end = _scan(line, depth, quote)
            joined = not quote and end == len(line) and line.endswith("\\")
            help_end = end == len(line) and not quote and _asks_help(line)
            if help_end and (not depth or _first_code(lines, i + 1) == len(lines)):  # (IPython: also in brackets at the end)
                magics.append(Magic(start, "?", "", lines[start]))  # `f(a,\n  b) + obj?`: help on `obj`, nothing else runs
                masked[start:i + 1] = [mask_line(lines[start], magics[-1])] + [""] * (i - start)
                depth = 0
            i += 1
            continue
        magics.append(magic)
        if magic.is_cell_magic and i == head:  # `pass` at the cell's top level; below it, its cell
            masked[i] = "pass"
            if magic.name not in RUNS_CELL:
                masked[i + 1:] = [""] * (len(lines) - i - 1)
                break
            head = _first_code(lines, i + 1)
            i += 1
            continue
        last = i
        while lines[last].endswith("\\") and last + 1 < len(lines):
            last += 1
        masked[i:last + 1] = [mask_line(line, magic)] + [""] * (last - i)
        i = last + 1
    _dedent(lines, masked, head)
    return Unit(cell, text, "\n".join(masked), tuple(magics))


def _first_code(lines: list[str], start: int) -> int:
    return next((i for i in range(start, len(lines)) if lines[i].strip()), len(lines))


def _dedent(lines: list[str], masked: list[str], start: int) -> None:
    """IPython runs a cell (a `%%time` cell: its lines from `start`) dedented. When those
    share leading whitespace, `with None:` on the line above the first statement (a blank
    line, a comment, a magic) makes them a block in place, every column kept."""
    if start == len(lines) or lines[start][0] not in " \t":  # (`start`: the first line that is not blank)
        return
    prefix = os.path.commonprefix([line[:len(line) - len(line.lstrip())] for line in lines[start:] if line.strip()])
    if not prefix:
        return
    if _STATEMENT.match(masked[0]):
        if masked[0] == lines[0]:
            return  # indented code on the first line: no line to put `with None:` on
        masked[0] = "pass"  # `pass; stmt` there: the timed statement cannot keep its column
    first = next((i for i, line in enumerate(masked) if _STATEMENT.match(line)), None)
    stop = len(masked) if first is None else first - 1
    masked[:stop] = [line.strip() for line in masked[:stop]]
    if first is not None:
        masked[stop] = "with None:"


def mask_line(line: str, magic: Magic) -> str:
    """An IPython line as `pass` at its indentation, or for `%time stmt` as `pass; stmt`
    with `stmt` at its column, when that parses."""
    indent = line[: len(line) - len(line.lstrip())]
    if magic.statement is not None and magic.statement_column >= len(indent) + 5:
        pad = magic.statement_column - len(indent) - 5
        candidate = indent + "pass;" + " " * pad + magic.statement
        if _parses(candidate.strip()):
            return candidate
    return indent + "pass"


def _classify(line: str, index: int) -> Magic | None:
    """The IPython of a line that starts a logical line, if any."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    if stripped[0] == "?" or (_asks_help(line) and _scan(line) == (0, "", len(line))):
        return Magic(index, "?", "", line)
    called = stripped[1:].partition(" ")[0]  # auto-call: `/f x` is `f(x)`, `,f a b` `f("a", "b")`, `;f a b` `f("a b")`
    if stripped[0] in ",;" or (stripped[0] == "/" and called):
        return Magic(index, stripped[0], called, line)
    match = _MAGIC.match(line)
    if match is None:
        assigned = _ASSIGNED.match(line)
        return Magic(index, assigned.group(1)[0], "", line) if assigned else None
    prefix, name = match.group("prefix"), match.group("name") or ""
    if prefix.startswith("!"):
        name = ""
    statement, column = None, 0
    if prefix == "%" and name in ("time", "timeit"):
        statement, column = _timed_statement(line, match.end())
    return Magic(index, prefix, name, line, statement, column)


def _asks_help(line: str) -> bool:
    """Whether `line` ends in IPython's `obj?` (looked for in its last 300 characters: the
    search is quadratic)."""
    return line[-1:] == "?" and _HELP_END.search(line, max(len(line) - 300, 0)) is not None


def _timed_statement(line: str, start: int) -> tuple[str | None, int]:
    """The statement of `%timeit -n 10 -r 3 stmt`: (text, column), or (None, 0)."""
    expect_value = False
    for token in re.finditer(r"\S+", line[start:]):
        word = token.group()
        if expect_value:
            expect_value = False
            continue
        if word.startswith("-") and len(word) > 1 and word[1].isalpha():
            expect_value = word in _TIMEIT_VALUE_OPTIONS
            continue
        statement = line[start + token.start():]
        return (statement, start + token.start()) if statement.strip() else (None, 0)
    return None, 0


def _scan(line: str, depth: int = 0, quote: str = "") -> tuple[int, str, int]:
    """After a line of Python (`depth` brackets and the triple-quoted string `quote` open
    before it): the brackets open, the triple-quoted string open ("" if none), and where
    the line's comment starts (its length if none)."""
    at = 0
    while True:
        if quote:
            closed = _CLOSING[quote].match(line, at)
            if closed is None:
                return depth, quote if len(quote) == 3 else "", len(line)
            at, quote = closed.end(), ""
        found = _PYTHON.search(line, at)
        if found is None:
            return depth, "", len(line)
        token, at = found.group(), found.end()
        if token == "#":
            return depth, "", found.start()
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(depth - 1, 0)
        else:
            quote = token


def _parses(code: str) -> bool:
    """Whether Python parses `code` (nested too deeply for its parser: no)."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def decode(data: bytes) -> tuple[str, str]:
    """Text and encoding of Python source bytes (PEP 263 cookie, BOM -> `utf-8-sig`)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(str(exc)) from None
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None


def read_source(path: str, data: bytes | None = None) -> Source:
    """Read a `.py` or `.ipynb` file (or its bytes) into a Source."""
    if data is None:
        with open(path, "rb") as handle:
            data = handle.read()
    if path.endswith(".ipynb"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SourceError(f"notebook is not UTF-8: {exc}") from None
        return notebook_source(text, path)
    text, encoding = decode(data)
    return python_source(text, path, encoding)
