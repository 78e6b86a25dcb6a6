"""Profiling from the editor: the `perf-lint.profile` command, its code lenses and actions.

Only this command ever runs the user's code, in the profiler's child process (never in
the server). It runs with work-done progress; cancelling the progress or the request
stops the profiler. The verdict is appended to the finding's diagnostic and the
Markdown report is opened with `window/showDocument`. `profiling.enabled = false`
removes the lenses and actions and refuses the command.

Arguments: `[uri, where, rule, options]`: `uri` a `.py` document, a notebook or a notebook cell;
`where` `{"cell": index}` (a notebook cell: its position in the notebook's cell array;
a `.py`: the index of a `# %%` cell) or `{"line": n}` (0-based line of a `.py`; the
profiler gets it 1-based) or null;
`rule` a code such as "TPL101" or null for every finding of the cell; `options` (optional)
`{"sweep": true}` runs the fix with each candidate count (see perf_lint.profiler.sweep). A
sweep's winner is kept per document and offered as a quick fix with its measured speed-up
(`winner_action`) while its finding stays where it was measured.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from perf_lint.analyzers import python_source

from .documents import uri_path

COMMAND = "perf-lint.profile"
_REQUEST_FAILED, _INVALID_PARAMS, _CANCELLED = -32803, -32602, -32800
_runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perf-lint-profile")  # one measurement at a time
_running: dict[object, threading.Event] = {}  # request id -> its profile's cancel event
_winners: dict[str, dict] = {}  # target URI -> the last sweep's winner there


def cancel_request(msg_id) -> None:
    """`$/cancelRequest` for a running profile: the profiler kills its child. (pygls cancels
    only the builtin executeCommand wrapper, not the command's own handler.)"""
    event = _running.get(msg_id)
    if event is not None:
        event.set()


def cancel_all() -> None:
    """Stop every profile (the server is going away)."""
    for event in list(_running.values()):
        event.set()


def profile_command(server, uri: str, code: str | None = None, line: int | None = None,
                    cell: int | None = None, sweep: bool = False) -> types.Command:
    """The command that profiles a cell: a notebook cell URI's own cell, the `# %%` cell
    `cell` of a `.py`, or the code around `line` (0-based) of a `.py`; with `sweep`, the
    fix's count is swept."""
    notebook_cell = server.documents.cell_index(uri)
    where: dict[str, int] | None
    if notebook_cell is not None:
        where = {"cell": notebook_cell}
    elif cell is not None:
        where = {"cell": cell}
    else:
        where = {"line": line} if line is not None else None
    if sweep:
        return types.Command(title=f"Profile this cell, sweeping the fix's settings ({code})", command=COMMAND,
                             arguments=[uri, where, code, {"sweep": True}])
    title = f"Profile this cell ({code})" if code else "Profile this cell"
    return types.Command(title=title, command=COMMAND, arguments=[uri, where, code])


def sweepable(finding) -> bool:
    """Whether a sweep can measure this finding's fix (it writes a count); False without the profiler."""
    try:
        from perf_lint.profiler.sweep import setting_of
    except ImportError:
        return False
    return setting_of(finding.fix) is not None


def winner_action(target: str | None, finding):
    """(title, fix) of the last sweep's winner for this finding as it is now, or None."""
    winner = _winners.get(target) if target else None
    if winner is None:
        return None
    from perf_lint.profiler.sweep import winning_fix  # a winner came from the profiler: it is installed

    fix = winning_fix(finding, winner)
    if fix is None:
        return None
    return f"{fix.title}: measured {winner['ratio']:.2f}x faster ({finding.code})", fix


async def code_lenses(server, params: types.CodeLensParams) -> list[types.CodeLens]:
    """"Profile this cell" on each notebook code cell and `# %%` cell of a `.py` that has a
    finding (TPL000 aside): only there is there something to measure."""
    uri = params.text_document.uri
    doc = server.documents.text_doc(uri)
    target = server.documents.target_of(uri)
    if doc is None or target is None or not server.settings.editor_for(target).profiling_enabled:
        return []
    state = await server.diagnostics.current(target, timeout=5.0)
    lines = {entry.finding.range.start_line for entry in (state.shown.get(uri, []) if state else [])
             if entry.finding.code != "TPL000"}
    if not lines:
        return []
    if doc.notebook is not None:
        at = types.Range(types.Position(0, 0), types.Position(0, 0))
        return [types.CodeLens(range=at, command=profile_command(server, uri))]
    return [
        types.CodeLens(range=types.Range(types.Position(cell.start, 0), types.Position(cell.start, 0)),
                       command=profile_command(server, uri, cell=cell.index))
        for cell in python_source(doc.text, uri_path(uri)).percent_cells
        if any(cell.start <= line < cell.end for line in lines)
    ]


_USAGE = f"{COMMAND} expects [uri, {{\"cell\": n}} | {{\"line\": n}} | null, rule | null, {{\"sweep\": bool}}?]"


def _arguments(args: tuple) -> tuple[str, int | None, int | None, str | None, bool]:
    """(uri, cell, line, rule, sweep) from the command's arguments; raises invalid params on malformed ones."""
    if not args or not isinstance(args[0], str) or not args[0] or len(args) > 4:
        raise JsonRpcException(_USAGE, code=_INVALID_PARAMS)
    uri = args[0]
    where = args[1] if len(args) > 1 else None
    rule = args[2] if len(args) > 2 else None
    options = args[3] if len(args) > 3 and args[3] is not None else {}
    if not isinstance(options, dict) or set(options) - {"sweep"} or not isinstance(options.get("sweep", False), bool):
        raise JsonRpcException(f"{COMMAND}: the options must be {{\"sweep\": true|false}}, got {options!r}",
                               code=_INVALID_PARAMS)
    cell = line = None
    if isinstance(where, dict) and len(where) == 1 and set(where) <= {"cell", "line"}:
        cell, line = where.get("cell"), where.get("line")
    elif isinstance(where, int) and not isinstance(where, bool):
        line = where
    elif where is not None:
        raise JsonRpcException(f"{COMMAND}: the location must be {{\"cell\": n}}, {{\"line\": n}} or null, "
                               f"got {where!r}", code=_INVALID_PARAMS)
    for name, value in (("cell", cell), ("line", line)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise JsonRpcException(f"{COMMAND}: '{name}' must be a non-negative integer, got {value!r}", code=_INVALID_PARAMS)
    if rule is not None and not isinstance(rule, str):
        raise JsonRpcException(f"{COMMAND}: the rule must be a code such as \"TPL101\", got {rule!r}", code=_INVALID_PARAMS)
    return uri, cell, line, rule, options.get("sweep", False)


def _inside(path: str, folders: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(os.path.commonpath([real, root]) == root for root in map(os.path.realpath, folders))


def workspace_file(server, uri: str, target: str | None) -> str:
    """The path to profile: a document open in the editor, or a file inside a workspace
    folder (after symlinks); anything else is refused, and nothing runs."""
    path = uri_path(target or uri)
    if target is not None:
        return path
    workspace = server.workspace
    folders = [uri_path(folder.uri) for folder in workspace.folders.values()]
    if not folders and workspace.root_path:
        folders = [workspace.root_path]
    if not (os.path.isabs(path) and os.path.isfile(path) and _inside(path, folders)):
        where = ", ".join(folders) if folders else "none"
        raise JsonRpcException(f"perf-lint: refusing to profile {path}: only files open in the editor or inside the "
                               f"workspace folders ({where}) are profiled", code=_REQUEST_FAILED)
    return path


async def profile(server, *args) -> dict:
    uri, cell, line, rule, sweep = _arguments(args)
    documents = server.documents
    target = documents.target_of(uri)
    editor = server.settings.editor_for(target or uri)
    if not editor.profiling_enabled:
        raise JsonRpcException("perf-lint: profiling is disabled (setting perfLint.profiling.enabled = false)",
                               code=_REQUEST_FAILED)
    path, text = workspace_file(server, uri, target), None
    try:
        from perf_lint.profiler import ProfileRequest, run_profile
    except ImportError as exc:
        message = f"perf-lint: the profiler is not available in this installation ({exc})"
        server.show(message, types.MessageType.Error)
        raise JsonRpcException(message, code=_REQUEST_FAILED) from None

    if target is not None:
        snapshot = documents.snapshot(target)
        if snapshot.kind == "notebook":
            text = json.dumps(snapshot.source().notebook)
            if cell is None:
                cell = documents.cell_index(uri)
        else:
            text = snapshot.units[0].text
    options = {"steps": editor.profiling_steps, "timeout_s": editor.profiling_timeout_s,
               "runner": editor.profiling_runner}
    if editor.profiling_runner == "ray":  # the workers' own Python runs the code there
        options.update(address=editor.profiling_ray_address, num_gpus=editor.profiling_num_gpus)
    else:
        options["python"] = editor.profiling_python
    request = ProfileRequest(path=path, text=text, cell=cell, line=None if line is None else line + 1, rule=rule,
                             sweep=sweep, **{key: value for key, value in options.items() if value is not None})
    cancel = threading.Event()
    progress = await _Progress.start(server, f"perf-lint: profiling {rule or 'cell'}", cancel)
    request_id = server.protocol.msg_id or object()
    _running[request_id] = cancel
    job = asyncio.get_running_loop().run_in_executor(
        _runner, lambda: run_profile(request, cancel=cancel, progress=progress.report_threadsafe))
    try:
        result = await asyncio.shield(job)
    except asyncio.CancelledError:  # $/cancelRequest: the profiler stops its child
        cancel.set()
        progress.end("cancelled")
        raise
    except Exception as exc:  # a profiler bug: it promises not to raise for user-code problems
        progress.end("failed")
        message = f"perf-lint profile failed: {exc}"
        server.show(message, types.MessageType.Error)
        raise JsonRpcException(message, code=_REQUEST_FAILED) from None
    finally:
        _running.pop(request_id, None)
    if cancel.is_set() or result.failure == "cancelled":
        progress.end("cancelled")
        raise JsonRpcException("perf-lint profile was cancelled", code=_CANCELLED)
    summary = result.summary()
    progress.end(summary)
    if result.sweep is not None:
        _winners.pop(target or uri, None)
        if result.sweep["winner"]:
            _winners[target or uri] = result.sweep["winner"]
    _annotate(server, uri, target, cell, line, result)
    server.show(summary, types.MessageType.Error if result.failure else types.MessageType.Info)
    if result.report_path:
        if server.client.show_document:
            await server.window_show_document_async(
                types.ShowDocumentParams(uri=from_fs_path(str(result.report_path)), take_focus=True))
        else:
            server.log(f"perf-lint profile report: {result.report_path}", types.MessageType.Info)
    return result.to_dict()


def _annotate(server, uri: str, target: str | None, cell: int | None, line: int | None, result) -> None:
    """Append each verdict to the messages of its rule's findings in the profiled cell."""
    documents = server.documents
    unit_uri, span = uri, None
    if target is not None and documents.snapshot(target).kind == "notebook":
        unit = documents.snapshot(target).unit_for_cell(cell)
        if unit is None:
            return
        unit_uri = unit.uri
    elif target is not None:
        source = python_source(documents.text_doc(target).text, uri_path(target))
        percent = (source.percent_cell_at(line) if line is not None
                   else next((c for c in source.percent_cells if c.index == cell), None))
        span = (percent.start, percent.end) if percent else None
    for verdict in result.verdicts:
        code = verdict.get("code")
        if not code:
            continue
        note = str(verdict.get("sentence") or f"Profiled: {verdict.get('verdict') or 'measured'}.")
        server.diagnostics.annotate(unit_uri, code, span, note)


class _Progress:
    """Server-initiated work-done progress; a client's cancel sets the profiler's event."""

    def __init__(self, server, token: str | None, loop: asyncio.AbstractEventLoop) -> None:
        self.server, self.token, self.loop = server, token, loop

    @classmethod
    async def start(cls, server, title: str, cancel: threading.Event) -> "_Progress":
        loop = asyncio.get_running_loop()
        if not server.client.progress:
            return cls(server, None, loop)
        token = f"perf-lint-profile-{uuid.uuid4()}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception:  # the client refused: run without a progress bar
            return cls(server, None, loop)
        server.work_done_progress.tokens[token].add_done_callback(lambda _: cancel.set())
        server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=True,
                                                                           message="starting"))
        return cls(server, token, loop)

    def report_threadsafe(self, message: str) -> None:
        """The profiler's progress callback (called from its thread)."""
        self.loop.call_soon_threadsafe(self._report, str(message))

    def _report(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.server.work_done_progress.tokens.pop(self.token, None)
            self.token = None
