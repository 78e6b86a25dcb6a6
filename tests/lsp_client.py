"""Shared helpers for the language-server tests: a pytest-lsp client that talks to
`python -m perf_lint.server.lsp` over stdio, with VS Code's or Neovim's capabilities,
and a client-side model of the open texts that applies the server's edits itself
(positions decoded independently of the server's code)."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import itertools
import re
import sys
from pathlib import Path
from typing import Union

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES

from perf_lint.analyzers import mask_ipython

SERVER = [sys.executable, "-m", "perf_lint.server.lsp"]
VSCODE, NEOVIM = "visual-studio-code", "neovim"  # push client, pull client
SAMPLE = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
FIXED = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True)\n"
_BREAK = re.compile(r"\r\n|\r|\n")
CODE, MARKUP = types.NotebookCellKind.Code, types.NotebookCellKind.Markup


def timed(seconds: float):
    """Run an async test under `asyncio.wait_for` (every test has a timeout)."""

    def wrap(test):
        @functools.wraps(test)
        async def run(*args, **kwargs):
            await asyncio.wait_for(test(*args, **kwargs), seconds)

        return run

    return wrap


def capabilities(kind: str) -> types.ClientCapabilities:
    """A real client's capabilities, plus notebook sync (none of the recorded ones has it)."""
    caps = pytest_lsp.client_capabilities(kind)
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=False))
    return caps


def make_client() -> LanguageClient:
    converter = default_converter()
    client = LanguageClient(converter_factory=lambda: converter)
    for method, handler in DEFAULT_CLIENT_FEATURES.items():
        if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            client.feature(method)(handler)
    client.published = []  # every publishDiagnostics, in order
    client.applied_edits = []
    client.registrations = []

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(ls: LanguageClient, params: types.PublishDiagnosticsParams):
        ls.published.append(params)
        ls.diagnostics[params.uri] = params.diagnostics

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(ls: LanguageClient, params: types.ApplyWorkspaceEditParams):
        ls.applied_edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(ls: LanguageClient, params: types.RegistrationParams):
        ls.registrations.extend(params.registrations)

    def command_or_action(obj, _):  # lsprotocol would turn every CodeAction with a command into a Command
        return converter.structure(obj, types.Command if isinstance(obj.get("command"), str) else types.CodeAction)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)
    return client


@contextlib.asynccontextmanager
async def session(kind: str = VSCODE, root: Path | None = None, settings: dict | None = None,
                  init_options: dict | None = None, adjust=None):
    """A started, initialized server and its client; `settings` answer workspace/configuration,
    `adjust(capabilities)` may change what the client claims."""
    config = ClientServerConfig(server_command=SERVER, client_factory=make_client)
    client = await asyncio.wait_for(config.start(), 30)
    clean = False
    try:
        if settings is not None:
            client.set_configuration({"perfLint": settings})
        folders = [types.WorkspaceFolder(uri=root.as_uri(), name=root.name)] if root else None
        caps = capabilities(kind)
        if adjust is not None:
            adjust(caps)
        result = await asyncio.wait_for(client.initialize_session(types.InitializeParams(
            capabilities=caps, root_uri=root.as_uri() if root else None,
            workspace_folders=folders, initialization_options=init_options)), 30)
        client.texts = {}
        client.versions = {}
        client.init_result = result
        yield client
        await asyncio.wait_for(client.shutdown_session(), 30)
        clean = True
    finally:
        server = client._server
        if not clean and server is not None and server.returncode is None:
            server.kill()  # a failed test must not wait for a server that was never told to exit
        await asyncio.wait_for(client.stop(), 30)


def encoding(client: LanguageClient) -> str:
    return str(client.init_result.capabilities.position_encoding or "utf-16")


# -- documents ---------------------------------------------------------------------------
def open_py(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.texts[uri] = text
    client.versions[uri] = 1
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


def replace_all(client: LanguageClient, uri: str, text: str) -> int:
    """A full-text change; returns the new version."""
    client.versions[uri] += 1
    client.texts[uri] = text
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=client.versions[uri]),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    return client.versions[uri]


def edit(client: LanguageClient, uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> int:
    """An incremental change, positions in the negotiated encoding; returns the new version."""
    rng = types.Range(types.Position(*start), types.Position(*end))
    client.texts[uri] = apply_text_edits(client.texts[uri], [types.TextEdit(range=rng, new_text=text)], encoding(client))
    client.versions[uri] += 1
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=client.versions[uri]),
        content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)]))
    return client.versions[uri]


def close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


class Notebook:
    """A client-side notebook: cells with their own text documents, synced to the server."""

    _ids = itertools.count()

    def __init__(self, client, path, cells: list[tuple[int, str]]) -> None:
        self.client, self.uri, self.version = client, path.as_uri(), 1
        self.path = path
        self.cells = [(kind, self._cell_uri(), text) for kind, text in cells]
        client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=self.uri, notebook_type="jupyter-notebook", version=1,
                cells=[types.NotebookCell(kind=kind, document=uri) for kind, uri, _ in self.cells]),
            cell_text_documents=[self._item(kind, uri, text) for kind, uri, text in self.cells]))
        for _, uri, text in self.cells:
            client.texts[uri] = text
            client.versions[uri] = 1

    def _cell_uri(self) -> str:
        return f"vscode-notebook-cell:{self.path}#W{next(self._ids)}sZmlsZQ%3D%3D"

    @staticmethod
    def _item(kind, uri, text):
        return types.TextDocumentItem(uri=uri, language_id="python" if kind == CODE else "markdown", version=1, text=text)

    def uri_of(self, index: int) -> str:
        return self.cells[index][1]

    def _change(self, cells: types.NotebookDocumentCellChanges) -> None:
        self.version += 1
        self.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=self.uri, version=self.version),
            change=types.NotebookDocumentChangeEvent(cells=cells)))

    def set_text(self, index: int, text: str) -> int:
        _, uri, _ = self.cells[index]
        self.client.versions[uri] += 1
        self.client.texts[uri] = text
        self.cells[index] = (self.cells[index][0], uri, text)
        self._change(types.NotebookDocumentCellChanges(text_content=[types.NotebookDocumentCellContentChanges(
            document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.client.versions[uri]),
            changes=[types.TextDocumentContentChangeWholeDocument(text=text)])]))
        return self.client.versions[uri]

    def insert(self, index: int, kind: int, text: str) -> str:
        uri = self._cell_uri()
        self.cells.insert(index, (kind, uri, text))
        self.client.texts[uri], self.client.versions[uri] = text, 1
        self._change(types.NotebookDocumentCellChanges(structure=types.NotebookDocumentCellChangeStructure(
            array=types.NotebookCellArrayChange(start=index, delete_count=0,
                                                cells=[types.NotebookCell(kind=kind, document=uri)]),
            did_open=[self._item(kind, uri, text)])))
        return uri

    def remove(self, index: int) -> str:
        _, uri, _ = self.cells.pop(index)
        self._change(types.NotebookDocumentCellChanges(structure=types.NotebookDocumentCellChangeStructure(
            array=types.NotebookCellArrayChange(start=index, delete_count=1),
            did_close=[types.TextDocumentIdentifier(uri=uri)])))
        return uri

    def close(self) -> None:
        self.client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=self.uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for _, uri, _ in self.cells]))


# -- positions and edits, decoded here (not with the server's code) -----------------------
def units(text: str, enc: str) -> int:
    if enc == "utf-8":
        return len(text.encode("utf-8"))
    if enc == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def offset(text: str, position: types.Position, enc: str) -> int:
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    if position.line >= len(starts):
        return len(text)
    line_start = starts[position.line]
    line_end = _BREAK.search(text, line_start)
    line = text[line_start: line_end.start() if line_end else len(text)]
    for index in range(len(line) + 1):
        if units(line[:index], enc) >= position.character:
            return line_start + index
    return line_start + len(line)


def apply_text_edits(text: str, edits, enc: str) -> str:
    spans = sorted(((offset(text, e.range.start, enc), offset(text, e.range.end, enc), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def apply_workspace_edit(client: LanguageClient, edit: types.WorkspaceEdit) -> dict[str, str]:
    """Apply to the client's texts; returns {uri: new text} for the documents it changed."""
    per_uri: dict[str, list] = {}
    for change in edit.document_changes or ():
        per_uri.setdefault(change.text_document.uri, []).extend(change.edits)
    for uri, edits in (edit.changes or {}).items():
        per_uri.setdefault(uri, []).extend(edits)
    for uri, edits in per_uri.items():
        client.texts[uri] = apply_text_edits(client.texts[uri], edits, encoding(client))
    return {uri: client.texts[uri] for uri in per_uri}


def assert_parses(text: str, notebook_cell: bool = False) -> None:
    ast.parse(mask_ipython(text).code if notebook_cell else text)


# -- diagnostics -------------------------------------------------------------------------
async def pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await asyncio.wait_for(client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))), 30)
    return list(report.items)


async def pushed(client: LanguageClient, uri: str, version: int | None = None, predicate=None,
                 timeout: float = 20) -> list[types.Diagnostic]:
    """The newest diagnostics pushed for `uri` (for `version`, matching `predicate`), polled."""
    async def wait():
        while True:
            for params in reversed(client.published):
                if params.uri == uri and (version is None or params.version == version):
                    if predicate is None or predicate(params.diagnostics):
                        return list(params.diagnostics)
                    break
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(wait(), timeout)


async def diagnostics(client: LanguageClient, kind: str, uri: str, version: int | None = None,
                      predicate=None) -> list[types.Diagnostic]:
    """What the editor shows for `uri` now: pulled (Neovim) or pushed (VS Code)."""
    if kind == NEOVIM:
        return await pull(client, uri)
    return await pushed(client, uri, version, predicate)


async def server_info(client: LanguageClient) -> dict:
    result = await asyncio.wait_for(client.protocol.send_request_async("perf-lint/serverInfo", None), 30)
    return {"torch_loaded": result.torch_loaded, "rss_kb": result.rss_kb, "documents": result.documents}


def codes(diags) -> list[str]:
    return [d.code for d in diags]
