"""`perf-lint server`: the language server (pygls 2), on stdio or TCP.

Areas live in their own modules: documents (sync, positions), settings, diagnostics,
actions (quick fixes, suppressions, fix-all), hover, profiling (command and lenses).
This module wires them to LSP methods. `python -m perf_lint.server.lsp` serves stdio.
Bad messages get the protocol's error codes and the server reads on (`_read_messages`,
`_Protocol.handle_body`, `_Protocol.handle_message`); it ends soon after stdin closes.

Editor settings (section `perfLint`; also accepted as `initializationOptions`):
`select`, `ignore`, `extendSelect` (rule codes), `debounceMs` (150),
`showSyntaxErrors` (false), `configurationPreference` ("editorFirst" | "filesystemFirst" | "editorOnly"),
`profiling.enabled` (true), `profiling.python`, `profiling.steps`, `profiling.timeoutS`.
Commands: `perf-lint.fixAll [uri]`, `perf-lint.profile [uri, where, rule]`.
Custom request `perf-lint/serverInfo` -> `{torch_loaded, rss_kb, documents}`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from cattrs import ClassValidationError, transform_error
from lsprotocol import types
from pygls.exceptions import (FeatureRequestError, JsonRpcException, JsonRpcInvalidParams,
                               JsonRpcInvalidRequest, JsonRpcParseError, JsonRpcServerNotInitialized)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from perf_lint import __version__

from . import actions, hover, profiling
from .diagnostics import Diagnostics
from .pygls_private import SplicedReports
from .documents import Documents
from .settings import SECTION, Settings

logger = logging.getLogger(__name__)

SERVER_INFO = "perf-lint/serverInfo"
FIX_ALL_COMMAND = "perf-lint.fixAll"


@dataclass
class ClientFeatures:
    """What the client said it can do (read once from `initialize`)."""

    pull: bool = False
    refresh: bool = False
    resolve_edit: bool = False
    document_changes: bool = False
    show_document: bool = False
    progress: bool = False
    configuration: bool = False
    watch_files: bool = False
    register_configuration: bool = False
    lens_refresh: bool = False
    hover_formats: list = field(default_factory=lambda: [types.MarkupKind.Markdown])

    @classmethod
    def of(cls, caps: types.ClientCapabilities) -> "ClientFeatures":
        text = caps.text_document or types.TextDocumentClientCapabilities()
        ws = caps.workspace or types.WorkspaceClientCapabilities()
        window = caps.window or types.WindowClientCapabilities()
        resolve = text.code_action.resolve_support if text.code_action else None
        return cls(
            pull=text.diagnostic is not None,
            refresh=bool(ws.diagnostics and ws.diagnostics.refresh_support),
            resolve_edit=bool(resolve and "edit" in resolve.properties),
            document_changes=bool(ws.workspace_edit and ws.workspace_edit.document_changes),
            show_document=bool(window.show_document and window.show_document.support),
            progress=bool(window.work_done_progress),
            configuration=bool(ws.configuration),
            watch_files=bool(ws.did_change_watched_files and ws.did_change_watched_files.dynamic_registration),
            register_configuration=bool(ws.did_change_configuration and ws.did_change_configuration.dynamic_registration),
            lens_refresh=bool(ws.code_lens and ws.code_lens.refresh_support),
            hover_formats=list(text.hover.content_format) if text.hover and text.hover.content_format
            else [types.MarkupKind.Markdown],
        )


class _Protocol(SplicedReports):
    """pygls' protocol, with document sync done by our own store (see documents.py),
    `$/cancelRequest` also reaching handlers that pygls runs behind a builtin (commands),
    and each diagnostic turned into JSON once (pygls_private.py)."""

    _server: PerfLintServer  # pygls' attribute: the server made with protocol_cls=_Protocol

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_seen = False
        self.shut_down = False  # a `shutdown` request came

    # -- the protocol's errors: pygls drops these messages unanswered or answers null ----------
    def reply_error(self, msg_id, error: JsonRpcException) -> None:
        """An error response; written as a dict because pygls leaves out an id of None."""
        self.send({"jsonrpc": self.VERSION, "id": msg_id,
                         "error": {"code": error.code, "message": error.message}})

    def frame_error(self, problem: str) -> None:
        """A message the reader could not frame: a ParseError with id null, and a log line."""
        logger.error("unreadable message from the client: %s", problem)
        self.reply_error(None, JsonRpcParseError(problem))

    def handle_body(self, body: bytes) -> None:
        """One message's body, as pygls' reader handles it, except that what it would only log
        is answered: not JSON (ParseError, id null), not a JSON-RPC 2.0 message (InvalidRequest),
        a request whose params do not fit its method (InvalidParams, its id)."""
        try:
            data = json.loads(body)
        except ValueError as error:  # also bytes that are not UTF-8
            logger.error("unreadable message from the client: %s", error)
            self.reply_error(None, JsonRpcParseError(f"Parse error: {error}"))
            return
        data = data if isinstance(data, dict) else {}
        msg_id, method = data.get("id"), data.get("method")
        if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
            msg_id = None
        request, notification = "method" in data and "id" in data, "method" in data and "id" not in data
        response = "method" not in data and ("result" in data or "error" in data)
        if data.get("jsonrpc") != self.VERSION or not isinstance(method, str) and not response \
                or (request or response) and msg_id is None:
            logger.error("not a JSON-RPC 2.0 message: %.200r", body)
            if not (notification or response):  # a request, or nothing one can tell
                self.reply_error(msg_id, JsonRpcInvalidRequest("Invalid request: not a JSON-RPC 2.0 message"))
            return
        if not response:
            data.setdefault("params", None)  # JSON-RPC lets a request leave them out; pygls' own type does not
        try:
            message = self.structure_message(data)
        except Exception as error:  # pygls logged the details
            if request:
                cause = error.__cause__ or error
                detail = "; ".join(transform_error(cause)) if isinstance(cause, ClassValidationError) else cause
                self.reply_error(msg_id, JsonRpcInvalidParams(f"Invalid params for {method}: {detail}"))
            else:
                self._server.report_server_error(error, JsonRpcException)
            return
        try:
            self.handle_message(message)
        except Exception as error:
            logger.exception("Unable to handle message")
            self._server.report_server_error(error, JsonRpcException)

    def handle_message(self, message) -> None:
        """pygls' dispatch, with the LSP's rules at the session's ends: before `initialize`,
        a request gets ServerNotInitialized and a notification other than `exit` is dropped;
        after `shutdown`, a request gets InvalidRequest (pygls drops it unanswered)."""
        method = getattr(message, "method", None)
        request = method is not None and hasattr(message, "id")
        if method == types.INITIALIZE:
            self._initialize_seen = True
        elif method is not None and method != types.EXIT and not self._initialize_seen:
            if request:
                self.reply_error(message.id, JsonRpcServerNotInitialized("Server not initialized"))
            return
        if request and self.shut_down:
            self.reply_error(message.id, JsonRpcInvalidRequest("Invalid request: the server was shut down"))
            return
        if method == types.CANCEL_REQUEST:
            profiling.cancel_request(getattr(message.params, "id", None))
        elif method == types.SHUTDOWN and request:
            self.shut_down = True
        super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._server.did_open(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._server.did_change(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._server.did_close(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def lsp_notebook_document__did_open(self, params: types.DidOpenNotebookDocumentParams) -> None:
        self._server.did_open_notebook(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams) -> None:
        self._server.did_change_notebook(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def lsp_notebook_document__did_close(self, params: types.DidCloseNotebookDocumentParams) -> None:
        self._server.did_close_notebook(params)


HEADER_LIMIT = 64 * 1024  # longest header line read; a longer one is dropped (its last bytes kept)
BODY_LIMIT = 256 * 1024 * 1024  # largest Content-Length accepted: nothing bigger is allocated


class _LoopReader:
    """The client's messages read by the event loop itself, when stdin is a pipe or socket.

    pygls' reader hands every header line and body to a thread and back: six thread round
    trips for a keystroke's didChange and pull. Any other stdin (a file, a terminal, whose
    mode the loop would change) and any stdin off POSIX is read in a thread, as pygls does.
    Either way a header line holds at most `HEADER_LIMIT` bytes in memory."""

    def __init__(self, stdin, executor) -> None:
        self.stdin = stdin
        self.executor = executor
        self.stream: asyncio.StreamReader | None = None
        self.checked = False

    async def _source(self) -> asyncio.StreamReader | None:
        if not self.checked:
            self.checked = True
            try:
                mode = os.fstat(self.stdin.fileno()).st_mode if os.name == "posix" else 0
                if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                    stream = asyncio.StreamReader(limit=HEADER_LIMIT)
                    await asyncio.get_running_loop().connect_read_pipe(
                        lambda: asyncio.StreamReaderProtocol(stream), self.stdin)
                    self.stream = stream
            except (OSError, ValueError, NotImplementedError) as error:  # no file descriptor, say
                logger.warning("reading stdin in a thread: %s", error)
        return self.stream

    async def _piece(self) -> bytes:
        """A line, or the next part of a line over the limit (no b"\\n" then), b"" at the end."""
        stream = await self._source()
        if stream is None:
            return await asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.readline, HEADER_LIMIT)
        try:
            return await stream.readuntil(b"\n")
        except asyncio.LimitOverrunError as error:  # the line so far stays buffered: take it
            return await stream.read(error.consumed)
        except asyncio.IncompleteReadError as error:  # the client went away mid-line
            return error.partial

    async def line(self) -> tuple[bytes, bool]:
        """The next line (b"" at the end) and whether it was over `HEADER_LIMIT`: then only
        its last 100 bytes come back, where the next message's header may sit after a body
        whose Content-Length was wrong."""
        line = await self._piece()
        too_long = False
        while line and not line.endswith(b"\n"):
            more = await self._piece()
            if not more:
                break
            line, too_long = (line + more)[-100:], True
        return line, too_long

    async def readexactly(self, n: int) -> bytes:
        """`n` bytes, fewer if the client went away mid-message."""
        stream = await self._source()
        if stream is None:
            return await asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.read, n)
        try:
            return await stream.readexactly(n)
        except asyncio.IncompleteReadError as error:
            return error.partial


async def _read_messages(reader: _LoopReader, protocol: "_Protocol", stop_event: threading.Event) -> None:
    """pygls' `run_async` loop, recovering from bad framing: a block of header lines without
    a usable Content-Length (none, not a number, over `BODY_LIMIT`) is answered with a
    ParseError and skipped, the reader resynchronising on the next Content-Length line,
    also one glued to the end of a body that was longer than said; a header line over
    `HEADER_LIMIT` is answered the same way and dropped, its message read if it has a length."""
    while not stop_event.is_set():
        length, problems, seen = None, [], False
        while True:
            line, too_long = await reader.line()
            if not line:
                return  # the client went away
            if too_long:
                problems.append(f"a header line over {HEADER_LIMIT} bytes")
                seen = True
            if not line.strip():
                if seen:
                    break
                continue  # blank lines between messages
            seen = True
            at = line.lower().rfind(b"content-length:")
            if at >= 0:
                value = line[at + len(b"content-length:"):].strip()
                if value.isdigit() and len(value) <= 10 and int(value) <= BODY_LIMIT:
                    length = int(value)
                else:
                    problems.append(f"Content-Length {value[:20].decode(errors='replace')!r} is not "
                                    f"a length up to {BODY_LIMIT} bytes")
        if length is None and not problems:
            problems.append("a message without a Content-Length header")
        if problems:
            protocol.frame_error("; ".join(problems) + (" (message skipped)" if length is None else ""))
        if length is None:
            continue
        body = await reader.readexactly(length)
        if len(body) < length:
            return  # the client went away mid-message
        protocol.handle_body(body)


class PerfLintServer(LanguageServer):
    protocol: _Protocol  # made from protocol_cls

    def __init__(self) -> None:
        super().__init__(
            "perf-lint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    notebook="*", cells=[types.NotebookCellLanguage(language="python")])],
            ),
            protocol_cls=_Protocol,
        )
        self.client = ClientFeatures()
        self.documents = Documents()
        self.settings = Settings(self._config_problem)
        self.diagnostics = Diagnostics(self)
        self.stop_event = threading.Event()  # set on shutdown: the reader stops
        self.on_stop: Callable[[], None] | None = None  # called as soon as the client is gone, before anything waits on work in flight
        self._ready = asyncio.Event()
        self._errors: set[str] = set()

    def shutdown(self) -> None:
        """Stop reading, profiles and analyses, then pygls' own shutdown (also when the client vanishes)."""
        self.stop_event.set()
        profiling.cancel_all()
        self.diagnostics.shutdown()
        super().shutdown()

    def start_io(self, stdin=None, stdout=None) -> None:
        """pygls' asynchronous stdio server, reading with `_LoopReader` and `_read_messages`."""
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = _LoopReader(stdin or sys.stdin.buffer, self.thread_pool)

        async def run() -> None:
            try:
                await _read_messages(reader, self.protocol, self.stop_event)
            finally:
                if self.on_stop is not None:  # (asyncio.run then waits for an analysis still running)
                    self.on_stop()

        try:
            asyncio.run(run())
        except BrokenPipeError:
            logger.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    # -- messages --------------------------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.log(message, kind)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def _config_problem(self, message: str) -> None:
        self.log(f"perf-lint configuration: {message}", types.MessageType.Error)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                         message=f"perf-lint configuration: {message}"))

    def report_server_error(self, error: Exception, source) -> None:
        """Unexpected errors go to the client's log once each, never a popup per keystroke."""
        if source is FeatureRequestError:
            return  # the error already went back in the response
        message = f"perf-lint server error ({getattr(source, '__name__', source)}): {error}"
        logger.error("%s", message)
        if message not in self._errors:
            self._errors.add(message)
            try:
                self.log(message, types.MessageType.Error)
            except Exception:  # the connection itself is broken
                pass

    # -- settings --------------------------------------------------------------------------
    async def settings_ready(self) -> None:
        try:
            await asyncio.wait_for(self._ready.wait(), 2.0)
        except asyncio.TimeoutError:
            self._ready.set()  # a client that never answers gets the defaults

    async def fetch_settings(self, pushed: object = None) -> None:
        """Editor settings from `workspace/configuration`, or those the client pushed."""
        if not self.client.configuration:
            if isinstance(pushed, dict):
                self.settings.set_editor({"": pushed.get(SECTION, pushed)})
            return
        scopes = [""] + sorted(folder.uri for folder in self.protocol.workspace.folders.values())
        items = [types.ConfigurationItem(section=SECTION, scope_uri=scope or None) for scope in scopes]
        try:
            values = await asyncio.wait_for(self.workspace_configuration_async(types.ConfigurationParams(items=items)), 5.0)
        except Exception as exc:  # the client could not answer: keep what we have
            self.log(f"perf-lint: could not read the editor settings ({exc}); keeping the current ones")
            return
        self.settings.set_editor({scope: value for scope, value in zip(scopes, values or [])})

    # -- document sync ---------------------------------------------------------------------
    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        target = self.documents.open_text(params.text_document)
        if target is not None:
            self.diagnostics.opened(target)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        target, changes = self.documents.change_text(params)
        if target is not None:
            self.diagnostics.changed(target, {params.text_document.uri: changes})

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        target = self.documents.close_text(params.text_document.uri)
        if target is not None:
            self.diagnostics.closed(target, [target])

    def did_open_notebook(self, params: types.DidOpenNotebookDocumentParams) -> None:
        self.diagnostics.opened(self.documents.open_notebook(params))

    def did_change_notebook(self, params: types.DidChangeNotebookDocumentParams) -> None:
        target, changes, closed = self.documents.change_notebook(params)
        if target is not None:
            self.diagnostics.changed(target, changes, closed)

    def did_close_notebook(self, params: types.DidCloseNotebookDocumentParams) -> None:
        target, cells = self.documents.close_notebook(params)
        self.diagnostics.closed(target, cells)


def create_server() -> PerfLintServer:
    server = PerfLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: PerfLintServer, params: types.InitializeParams) -> None:
        ls.client = ClientFeatures.of(params.capabilities)
        ls.documents.encoding = str(getattr(ls.protocol.workspace.position_encoding, "value",
                                            ls.protocol.workspace.position_encoding or "utf-16"))
        options = params.initialization_options
        if isinstance(options, dict):
            ls.settings.set_editor({"": options.get(SECTION, options)})

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PerfLintServer, params: types.InitializedParams) -> None:
        registrations = []
        if ls.client.watch_files:
            registrations.append(types.Registration(
                id="perf-lint-pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                              types.FileSystemWatcher(glob_pattern="**/*.py")])))
        if ls.client.register_configuration:
            registrations.append(types.Registration(
                id="perf-lint-configuration", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION)))
        if registrations:
            try:
                await asyncio.wait_for(ls.client_register_capability_async(
                    types.RegistrationParams(registrations=registrations)), 5.0)
            except Exception as exc:
                logger.info("client did not accept registrations: %s", exc)
        await ls.fetch_settings()
        ls._ready.set()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: PerfLintServer, params: types.DidChangeConfigurationParams) -> None:
        await ls.fetch_settings(params.settings)
        ls.diagnostics.relint_all()
        if ls.client.lens_refresh:  # profiling.enabled may have changed
            ls.workspace_code_lens_refresh(None)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: PerfLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("pyproject.toml") for change in params.changes):
            ls.settings.invalidate()
            ls.diagnostics.relint_all()
        else:
            ls.diagnostics.files_changed({to_fs_path(change.uri) or "" for change in params.changes})

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PerfLintServer, params: types.DidSaveTextDocumentParams) -> None:
        """A saved module may change the findings of the open files that import it."""
        ls.diagnostics.files_changed({to_fs_path(params.text_document.uri) or ""})

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier="perf-lint", inter_file_dependencies=True, workspace_diagnostics=False))
    async def pull_diagnostics(ls: PerfLintServer, params: types.DocumentDiagnosticParams):
        return await ls.diagnostics.pull(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        resolve_provider=True, code_action_kinds=actions.KINDS))
    async def code_action(ls: PerfLintServer, params: types.CodeActionParams):
        return await actions.code_actions(ls, params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: PerfLintServer, action: types.CodeAction) -> types.CodeAction:
        return await actions.resolve(ls, action)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: PerfLintServer, params: types.HoverParams):
        return hover.hover(ls, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: PerfLintServer, params: types.CodeLensParams):
        return await profiling.code_lenses(ls, params)

    @server.command(FIX_ALL_COMMAND)
    async def fix_all(ls: PerfLintServer, *args):
        if not args or not isinstance(args[0], str):
            return {"applied": False, "reason": f"{FIX_ALL_COMMAND} expects [uri]"}
        return await actions.fix_all_command(ls, args[0])

    @server.command(profiling.COMMAND)
    async def profile(ls: PerfLintServer, *args):
        return await profiling.profile(ls, *args)

    @server.feature(SERVER_INFO)
    def server_info(ls: PerfLintServer, params) -> dict:
        return {"torch_loaded": "torch" in sys.modules, "rss_kb": rss_kb(), "documents": len(ls.documents)}

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PerfLintServer, params) -> None:
        profiling.cancel_all()

    return server


def rss_kb() -> int:
    """Resident memory of this process in KiB."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak // 1024 if sys.platform == "darwin" else peak


class _ClientGone(logging.Filter):
    """When the client goes away, asyncio cancels the handlers still running (a profile)
    and pygls's done-callback re-raises their CancelledError, and pygls logs the write that
    found the client's end closed (BrokenPipeError): that is shutdown, not an error worth a
    traceback on the client's stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, (asyncio.CancelledError, BrokenPipeError))


def serve(tcp: tuple[str, int] | None = None) -> int:
    """Run the server until the client exits: on stdio, or on `tcp = (host, port)`."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="perf-lint server: %(levelname)s %(message)s")
    for name in ("asyncio", "pygls.protocol.json_rpc"):
        logging.getLogger(name).addFilter(_ClientGone())
    server = create_server()
    if tcp is not None:
        server.start_tcp(*tcp)
        return 0
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol stream

    def code() -> int:
        return 0 if server.protocol.shut_down else 1  # LSP: exit without shutdown is 1

    server.on_stop = lambda: _exit_soon(code)
    try:
        server.start_io(stdin, stdout)
    finally:
        profiling.cancel_all()  # their children die before this process ends
    return code()


EXIT_GRACE_S = 2.0  # how long the interpreter's own exit may take once the client is gone
CHILDREN_GRACE_S = 15.0  # and longer while a child process (a profile being killed) is still there


def _exit_soon(code) -> None:
    """Make sure the process ends soon once the client is gone: asyncio's and the
    interpreter's exits wait for every pool thread, an analysis of a huge document still
    running included (seconds for 30,000 lines, more on a busy machine), so a daemon thread
    ends the process with `code()` if that takes over `EXIT_GRACE_S`, once no child process
    is left (profiles kill theirs on `cancel_all`; see CHILDREN_GRACE_S)."""

    def watch() -> None:
        time.sleep(EXIT_GRACE_S)
        deadline = time.monotonic() + CHILDREN_GRACE_S
        while _has_children() and time.monotonic() < deadline:
            time.sleep(0.1)
        logging.shutdown()
        sys.stderr.flush()
        os._exit(code())

    threading.Thread(target=watch, name="perf-lint-exit", daemon=True).start()


def _has_children() -> bool:
    """Whether this process has a child process, reaped or not (POSIX; elsewhere, False)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # leaves an exited child to its owner
    except (AttributeError, OSError):  # ChildProcessError: none; or no waitid here
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(serve())
