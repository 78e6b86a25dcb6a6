"""Open documents as the editor has them: `.py` files and notebooks (code cells in order).

The server keeps its own copy of every open text, updated from LSP changes with LSP's
line breaks (`\\r\\n`, `\\r`, `\\n` only; pygls' store also splits at form feeds and
U+2028, which Python code may contain). A *target* is what gets analyzed: a `.py`
document or a whole notebook, named by its URI; each change bumps its revision. A
*unit URI* is where diagnostics go: the `.py` document itself or one notebook cell.
Positions: the engine counts code points, the client counts in the negotiated
position encoding (UTF-16 unless the client offered UTF-8/UTF-32).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.uris import to_fs_path

from perf_lint.analyzers import Source, notebook_source, python_source
from perf_lint.analyzers.source import LINE_BREAK, codepoint_column, common_ends, split_lines, utf16_column

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def client_column(line: str, column: int, encoding: str) -> int:
    """A code-point column of `line` in the client's position encoding."""
    column = min(column, len(line))
    if encoding == UTF16:
        return utf16_column(line, column)
    if encoding == UTF8:
        return len(line[:column].encode("utf-8", "surrogatepass"))
    return column


def server_column(line: str, units: int, encoding: str) -> int:
    """Inverse of `client_column` (positions past the end of the line clamp to it)."""
    if encoding == UTF16:
        return codepoint_column(line, units)
    if encoding == UTF8:
        count = 0
        for index, ch in enumerate(line):
            if count >= units:
                return index
            count += len(ch.encode("utf-8", "surrogatepass"))
        return len(line)
    return min(units, len(line))


def uri_path(uri: str) -> str:
    """A file system path for a URI (the URI's path part for other schemes)."""
    path = to_fs_path(uri)
    return path if path else unquote(urlparse(uri).path) or uri


@dataclass(frozen=True)
class Change:
    """One edit of a unit's text in code points: [start, end) of the old text -> `text`."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str

    @property
    def new_end(self) -> tuple[int, int]:
        lines = split_lines(self.text)
        if len(lines) == 1:
            return self.start[0], self.start[1] + len(self.text)
        return self.start[0] + len(lines) - 1, len(lines[-1])


@dataclass
class TextDoc:
    """An open text document: a `.py` file, or a notebook cell (`notebook` is its owner)."""

    uri: str
    text: str
    version: int
    language_id: str
    notebook: str | None = None
    _lines: list[str] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def line(self, index: int) -> str:
        lines = self.lines
        return lines[index] if 0 <= index < len(lines) else ""

    def position(self, position: types.Position, encoding: str) -> tuple[int, int]:
        """An LSP position as (line, code-point column), clamped to the text."""
        lines = self.lines
        if position.line >= len(lines):
            return len(lines) - 1, len(lines[-1])
        return position.line, server_column(lines[position.line], position.character, encoding)

    def apply(self, change: types.TextDocumentContentChangeEvent, encoding: str) -> Change:
        """Apply one LSP content change; returns it in code points."""
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = self.position(change.range.start, encoding)
            end = max(start, self.position(change.range.end, encoding))
            edit = Change(start, end, change.text)
        else:
            edit = _whole_text_change(self.text, change.text)
        if "\r" not in self.text and "\r" not in edit.text:  # only \n breaks: update the lines too
            lines = self.lines
            (first, first_col), (last, last_col) = edit.start, edit.end
            a = sum(map(len, lines[:first])) + first + first_col
            b = a - first_col + sum(map(len, lines[first:last])) + last - first + last_col
            self.text = self.text[:a] + edit.text + self.text[b:]
            self._lines = [*lines[:first], *(lines[first][:first_col] + edit.text + lines[last][last_col:]).split("\n"),
                           *lines[last + 1:]]
            return edit
        starts = [0] + [m.end() for m in LINE_BREAK.finditer(self.text)]
        a = starts[edit.start[0]] + edit.start[1]
        b = starts[edit.end[0]] + edit.end[1]
        old, self.text = self.text, self.text[:a] + edit.text + self.text[b:]
        self._lines = None
        # A "\r" and a "\n" that meet at the edge of the edit become one line break: widen the
        # change over them so that it describes how the lines moved.
        stop = a + len(edit.text)  # the end of the inserted text
        if 0 < a and self.text[a - 1: a + 1] == "\r\n" and edit.start[1] == 0:
            previous = starts[edit.start[0]] - starts[edit.start[0] - 1] - 1
            edit = Change((edit.start[0] - 1, previous), edit.end, "\r" + edit.text)
        if stop < len(self.text) and self.text[stop - 1: stop + 1] == "\r\n" and old[b: b + 1] == "\n":
            edit = Change(edit.start, (edit.end[0] + 1, 0), edit.text + "\n")
        return edit


def _whole_text_change(old: str, new: str) -> Change:
    """The smallest single change turning `old` into `new` (for full-text sync)."""
    prefix, suffix = common_ends(old, new)
    end = len(old) - suffix
    if 0 < prefix < len(old) and old[prefix - 1: prefix + 1] == "\r\n":
        prefix -= 1  # never split a \r\n line break
    if 0 < end < len(old) and old[end - 1: end + 1] == "\r\n":
        end += 1
        suffix -= 1

    def at(offset: int) -> tuple[int, int]:
        lines = split_lines(old[:offset])
        return len(lines) - 1, len(lines[-1])

    return Change(at(prefix), at(end), new[prefix: len(new) - suffix])




@dataclass
class Notebook:
    uri: str
    notebook_type: str
    version: int
    cells: list[tuple[int, str]]  # (NotebookCellKind, cell URI) in notebook order


@dataclass(frozen=True)
class Unit:
    """One unit of a snapshot: where its diagnostics go and the text they refer to."""

    uri: str
    text: str
    version: int
    cell: int | None  # index in the notebook's cell array; None for a .py document
    lines: list[str] | None = field(default=None, compare=False, repr=False)  # split_lines(text), if known


@dataclass(frozen=True)
class Snapshot:
    """An immutable copy of a target at one revision, safe to analyze in another thread."""

    target: str
    revision: int
    path: str
    kind: str  # "python" or "notebook"
    units: tuple[Unit, ...]
    cell_kinds: tuple[int, ...] = ()  # notebooks: the kind of every cell, code or not

    def source(self) -> Source:
        """The engine's Source: the `.py` text, or the code cells via `notebook_source`."""
        if self.kind == "python":
            return python_source(self.units[0].text, self.path, lines=self.units[0].lines)
        texts = {unit.cell: unit.text for unit in self.units}
        cells: list[dict[str, object]] = [
            {"cell_type": "code", "source": texts.get(index, ""), "metadata": {}, "outputs": [],
             "execution_count": None}
            if kind == types.NotebookCellKind.Code and index in texts
            else {"cell_type": "markdown", "source": "", "metadata": {}}
            for index, kind in enumerate(self.cell_kinds)
        ]
        data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        return notebook_source(data, self.path)

    def unit(self, uri: str) -> Unit | None:
        return next((unit for unit in self.units if unit.uri == uri), None)

    def unit_for_cell(self, cell: int | None) -> Unit | None:
        return next((unit for unit in self.units if unit.cell == cell), None)


class Documents:
    """Every open document and notebook, with a revision per target."""

    def __init__(self) -> None:
        self.texts: dict[str, TextDoc] = {}
        self.notebooks: dict[str, Notebook] = {}
        self.revisions: dict[str, int] = {}
        self._counter = 0
        self.encoding = UTF16

    # -- queries -------------------------------------------------------------------------
    def target_of(self, uri: str) -> str | None:
        """The target a URI belongs to (a cell's notebook), or None if it is not analyzed."""
        if uri in self.notebooks:
            return uri
        doc = self.texts.get(uri)
        if doc is None:
            return None
        if doc.notebook is not None:
            return doc.notebook
        return uri if is_python(doc) else None

    def revision(self, target: str) -> int:
        return self.revisions.get(target, -1)

    def text_doc(self, uri: str) -> TextDoc | None:
        return self.texts.get(uri)

    def unit_uris(self, target: str) -> list[str]:
        notebook = self.notebooks.get(target)
        if notebook is None:
            return [target] if target in self.texts else []
        return [uri for kind, uri in notebook.cells if kind == types.NotebookCellKind.Code and uri in self.texts]

    def cell_index(self, uri: str) -> int | None:
        doc = self.texts.get(uri)
        if doc is None or doc.notebook is None:
            return None
        cells = self.notebooks[doc.notebook].cells
        return next((i for i, (_, cell_uri) in enumerate(cells) if cell_uri == doc.uri), None)

    def snapshot(self, target: str) -> Snapshot:
        notebook = self.notebooks.get(target)
        if notebook is None:
            doc = self.texts[target]
            return Snapshot(target, self.revision(target), uri_path(target), "python",
                            (Unit(doc.uri, doc.text, doc.version, None, doc.lines),))
        units = []
        for index, (kind, uri) in enumerate(notebook.cells):
            cell = self.texts.get(uri)
            if kind == types.NotebookCellKind.Code and cell is not None:
                units.append(Unit(uri, cell.text, cell.version, index))
        return Snapshot(target, self.revision(target), uri_path(target), "notebook", tuple(units),
                        tuple(kind for kind, _ in notebook.cells))

    def __len__(self) -> int:
        return len(self.revisions)

    # -- text documents ------------------------------------------------------------------
    def open_text(self, item: types.TextDocumentItem) -> str | None:
        doc = TextDoc(item.uri, item.text, item.version, item.language_id)
        self.texts[doc.uri] = doc
        if is_python(doc):
            self._bump(doc.uri)
            return doc.uri
        return None

    def change_text(self, params: types.DidChangeTextDocumentParams) -> tuple[str | None, list[Change]]:
        doc = self.texts.get(params.text_document.uri)
        if doc is None:
            return None, []
        changes = [doc.apply(change, self.encoding) for change in params.content_changes]
        doc.version = params.text_document.version
        target = self.target_of(doc.uri)
        if target is not None:
            self._bump(target)
        return target, changes

    def close_text(self, uri: str) -> str | None:
        doc = self.texts.pop(uri, None)
        if doc is None or doc.notebook is not None:
            return None
        self.revisions.pop(doc.uri, None)
        return doc.uri if is_python(doc) else None

    # -- notebooks -----------------------------------------------------------------------
    def open_notebook(self, params: types.DidOpenNotebookDocumentParams) -> str:
        nb = params.notebook_document
        uri = nb.uri
        self.notebooks[uri] = Notebook(uri, nb.notebook_type, nb.version,
                                       [(cell.kind, cell.document) for cell in nb.cells])
        for item in params.cell_text_documents:
            self.texts[item.uri] = TextDoc(item.uri, item.text, item.version, item.language_id, uri)
        self._bump(uri)
        return uri

    def change_notebook(self, params: types.DidChangeNotebookDocumentParams) -> tuple[str | None, dict[str, list[Change]], list[str]]:
        """Apply a notebook change: (target, code-point changes per cell URI, closed cell URIs)."""
        uri = params.notebook_document.uri
        notebook = self.notebooks.get(uri)
        if notebook is None:
            return None, {}, []
        notebook.version = params.notebook_document.version
        cells = params.change.cells
        changes: dict[str, list[Change]] = {}
        closed: list[str] = []
        if cells is not None:
            for data in cells.data or ():
                for i, (_, cell_uri) in enumerate(notebook.cells):
                    if cell_uri == data.document:
                        notebook.cells[i] = (data.kind, cell_uri)
            if cells.structure is not None:
                array = cells.structure.array
                new = [(cell.kind, cell.document) for cell in array.cells or ()]
                notebook.cells[array.start: array.start + array.delete_count] = new
                for item in cells.structure.did_open or ():
                    self.texts[item.uri] = TextDoc(item.uri, item.text, item.version, item.language_id, uri)
                for ident in cells.structure.did_close or ():
                    self.texts.pop(ident.uri, None)
                    closed.append(ident.uri)
            for content in cells.text_content or ():
                doc = self.texts.get(content.document.uri)
                if doc is None:
                    continue
                changes.setdefault(doc.uri, []).extend(doc.apply(c, self.encoding) for c in content.changes)
                doc.version = content.document.version
        self._bump(uri)
        return uri, changes, closed

    def close_notebook(self, params: types.DidCloseNotebookDocumentParams) -> tuple[str, list[str]]:
        uri = params.notebook_document.uri
        notebook = self.notebooks.pop(uri, None)
        cells = [cell_uri for _, cell_uri in notebook.cells] if notebook else []
        for ident in params.cell_text_documents:
            cells.append(ident.uri)
        for cell_uri in cells:
            self.texts.pop(cell_uri, None)
        self.revisions.pop(uri, None)
        return uri, sorted(set(cells))

    def touch(self, target: str) -> None:
        """A new revision without a text change (the configuration changed)."""
        if target in self.revisions:
            self._bump(target)

    def _bump(self, target: str) -> None:
        self._counter += 1
        self.revisions[target] = self._counter


def is_python(doc: TextDoc) -> bool:
    return doc.language_id == "python" or os.path.splitext(urlparse(doc.uri).path)[1] == ".py"

