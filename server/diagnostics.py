"""Diagnostics: debounced analysis off the event loop, pushed or pulled, never stale.

Each target (a `.py` document or a notebook) is analyzed in a worker thread on a
snapshot of one revision; a result is used only if the target is still at that
revision, and a newer revision supersedes a pending or running analysis. Edits move
the diagnostics shown so far (or drop those whose text changed). While a unit does not
parse (TPL000), nothing flickers: it keeps those moved diagnostics, and those of the
statement being typed (on the line of the syntax error) stay too, stretched over the
edit, until it parses again; the other units of a notebook keep theirs beside the fresh
ones; the syntax error shows only with `showSyntaxErrors`. Clients that pull
(`textDocument/diagnostic`) get nothing pushed, so no diagnostic is ever shown twice, but
a profiling verdict on its own when they cannot be asked to pull again (see `annotate`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from perf_lint.analyzers import Finding, Range, Source, analyze
from perf_lint.analyzers import importers
from perf_lint.analyzers.document import DocumentState
from perf_lint.analyzers.engine import suppressed
from perf_lint.analyzers.project import recording

from . import memory
from .documents import Change, Snapshot, client_column
from .settings import Resolved
from .workers import PriorityWorkers

logger = logging.getLogger(__name__)

SOURCE = "perf-lint"
DOCS_URL = "https://github.com/perf-lint/perf-lint/blob/main/docs/rules/{code}.md"
_SERVER_CANCELLED = -32802
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


class Entry(NamedTuple):
    """A finding as shown now: its range is in the unit's current text (a tuple: every
    finding gets one per analysis and per edit)."""

    finding: Finding
    fresh: bool  # from an analysis of the current text, so its fix applies as is

    def stale(self) -> Entry:
        """This entry once the text changed: its fix may no longer apply."""
        return Entry(self.finding, False) if self.fresh else self


def shift(entries: list[Entry], change: Change) -> tuple[list[Entry], list[Entry]]:
    """Entries after one edit: moved if after it, kept if before it; and, apart, those it
    touched, stretched to span the edit (see `Diagnostics._apply` for what becomes of them)."""
    (end_line, end_col), (new_line, new_col) = change.end, change.new_end

    def moved(line: int, col: int) -> tuple[int, int]:
        if line == end_line:
            return new_line, col - end_col + new_col
        return line + new_line - end_line, col

    out, touched = [], []
    for entry in entries:
        r = entry.finding.range
        start, end = (r.start_line, r.start_col), (r.end_line, r.end_col)
        if end <= change.start:
            out.append(entry.stale())
        elif start >= change.end:
            new_start, new_end = moved(*start), moved(*end)
            if (new_start, new_end) == (start, end):  # the edit moved nothing after it
                out.append(entry.stale())
            else:
                out.append(Entry(replace(entry.finding, range=Range(*new_start, *new_end)), False))
        else:
            new_end = moved(*end) if end >= change.end else change.new_end
            touched.append(Entry(replace(entry.finding, range=Range(*min(start, change.start), *new_end)), False))
    return out, touched


def _order(entry: Entry) -> tuple:
    return entry.finding.sort_key()


def _same(entry: Entry) -> tuple:
    """What tells two entries of one unit apart on screen (not their fixes)."""
    return entry.finding.code, entry.finding.range, entry.finding.message


def message(finding: Finding, note: str | None) -> str:
    """A finding's message as shown, with its profiling verdict if it has one."""
    return finding.message if note is None else f"{finding.message} {note}"


def to_diagnostic(finding: Finding, uri: str, lines: list[str], encoding: str, note: str | None = None) -> types.Diagnostic:
    """The diagnostic of a finding shown in the unit `uri` (a file, or a notebook's cell)."""
    r = finding.range

    def position(line: int, col: int) -> types.Position:
        text = lines[line] if 0 <= line < len(lines) else ""
        return types.Position(line, client_column(text, col, encoding))

    return types.Diagnostic(
        range=types.Range(position(r.start_line, r.start_col), position(r.end_line, r.end_col)),
        message=message(finding, note),
        severity=SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=DOCS_URL.format(code=finding.code)),
        source=SOURCE,
        related_information=[
            types.DiagnosticRelatedInformation(
                types.Location(uri if r.path is None else pathlib.Path(r.path).as_uri(),
                               types.Range(types.Position(r.line, 0), types.Position(r.line, 0))),
                r.message,
            )
            for r in finding.related
        ] or None,
    )


@dataclass
class Analysis:
    """The engine's answer for one snapshot, split by unit URI."""

    snapshot: Snapshot
    source: Source | None
    resolved: Resolved
    findings: dict[str, list[Finding]]
    broken: dict[str, Finding]  # unit URI -> its TPL000
    reads: dict = field(default_factory=dict)  # other files of the project it read: {path: (size, mtime_ns)}


def run_analysis(snapshot: Snapshot, resolved: Resolved, kept: DocumentState) -> Analysis:
    """Analyze a snapshot (runs in a worker thread), reusing the statements of the
    target's previous versions that `kept` holds."""
    with memory.ANALYSES_RUNNING:
        return _run_analysis(snapshot, resolved, kept)


def _run_analysis(snapshot: Snapshot, resolved: Resolved, kept: DocumentState) -> Analysis:
    findings: dict[str, list[Finding]] = {unit.uri: [] for unit in snapshot.units}
    broken: dict[str, Finding] = {}
    if resolved.excluded:
        return Analysis(snapshot, None, resolved, findings, broken)
    source = snapshot.source()
    with recording() as reads:
        found = analyze(source, resolved.engine, kept)
    for finding in found:
        unit = snapshot.unit_for_cell(finding.cell)
        if unit is None:
            continue
        if finding.code == "TPL000" and not finding.extra.get("statement"):  # not one statement left out
            broken[unit.uri] = finding
        else:
            findings[unit.uri].append(finding)
    return Analysis(snapshot, source, resolved, findings, broken, reads)


@dataclass
class TargetState:
    target: str
    shown: dict[str, list[Entry]] = field(default_factory=dict)
    held: dict[str, list[Entry]] = field(default_factory=dict)  # unit URI -> entries edits touched, until _apply
    syntax: dict[str, Finding] = field(default_factory=dict)
    analysis: Analysis | None = None  # of revision `settled`, if it succeeded
    wanted: int = -1  # newest revision someone asked to have analyzed
    attempted: int = -1  # newest revision whose analysis was started
    settled: int = -1  # newest revision analyzed (or given up on)
    urgent: int = 0  # requests waiting for this target's result
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    items: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    result_ids: dict[str, str] = field(default_factory=dict)
    pushed: dict[str, tuple] = field(default_factory=dict)  # unit URI -> (version, result id) last pushed, or verdicts
    kept: DocumentState = field(default_factory=DocumentState)  # what its analyses keep between versions
    converted: dict = field(default_factory=dict)  # (finding, note, encoding, its lines) -> Diagnostic


class Diagnostics:
    """Schedules analyses and hands their results to the client."""

    def __init__(self, server) -> None:
        self.server = server
        self.collector = memory.IdleCollector()
        self.states: dict[str, TargetState] = {}
        self.workers = PriorityWorkers(max(1, min(2, os.cpu_count() or 1)))
        self.notes: dict[tuple[str, str], tuple[tuple[int, int] | None, str]] = {}  # profiling verdicts
        self._failures: set[str] = set()
        self._ids = itertools.count(1)

    # -- events ----------------------------------------------------------------------------
    def opened(self, target: str) -> None:
        self.states[target] = TargetState(target)
        self._request(self.states[target], self.server.documents.revision(target))

    def changed(self, target: str, changes: dict[str, list[Change]], closed_units: Sequence[str] = ()) -> None:
        state = self.states.get(target)
        if state is None:
            return
        for uri, unit_changes in changes.items():
            entries, held = state.shown.get(uri, []), state.held.get(uri, [])
            for change in unit_changes:
                entries, touched = shift(entries, change)
                if held or touched:
                    held, again = shift(held, change)
                    held = [*held, *again, *touched]
            state.shown[uri] = entries
            if held:
                state.held[uri] = held
            state.syntax.pop(uri, None)  # the next analysis says whether it still fails
        for uri in [uri for uri in state.shown if uri not in changes]:  # the shifted ones are stale already
            state.shown[uri] = [e.stale() for e in state.shown[uri]]
        for uri in closed_units:
            state.shown.pop(uri, None)
            state.held.pop(uri, None)
            state.syntax.pop(uri, None)
        if self.server.client.pull:
            return  # the client asks when it wants them
        if state.timer is not None:
            state.timer.cancel()
        delay = self.server.settings.editor_for(target).debounce_ms / 1000
        state.timer = asyncio.get_running_loop().call_later(delay, self._fire, state)

    def closed(self, target: str, unit_uris: list[str]) -> None:
        state = self.states.pop(target, None)
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        if state.task is not None:
            state.task.cancel()
        state.done.set()
        for key in [k for k in self.notes if k[0] in unit_uris or k[0] == target]:
            del self.notes[key]
        for uri in sorted(set(state.pushed) if self.server.client.pull else set(state.pushed) | set(unit_uris)):
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def relint_all(self) -> None:
        """Analyze every open target again (settings changed): push, or ask pullers to pull."""
        for target, state in self.states.items():
            self.server.documents.touch(target)
            if not self.server.client.pull:
                self._request(state, self.server.documents.revision(target))
        self.refresh()

    def files_changed(self, paths: set[str]) -> None:
        """Analyze again the open targets whose last analysis read one of `paths` (files of
        the project saved, created or deleted: a module they import, or one that may import
        them from a folder they listed)."""
        paths = {os.path.normpath(os.path.abspath(path)) for path in paths if path}
        importers.forget()
        paths |= {os.path.dirname(path) for path in paths}
        stale = [state for state in self.states.values()
                 if state.analysis is not None and not paths.isdisjoint(state.analysis.reads)]
        for state in stale:
            self.server.documents.touch(state.target)
            if not self.server.client.pull:
                self._request(state, self.server.documents.revision(state.target))
        if stale:
            self.refresh()

    def refresh(self) -> None:
        """Make pulling clients pull again (when what they were told may have changed)."""
        if self.server.client.pull and self.server.client.refresh:
            self.server.workspace_diagnostic_refresh(None)

    def annotate(self, unit_uri: str, code: str, span: tuple[int, int] | None, note: str) -> None:
        """Append a profiling verdict to the messages of `code` findings in a unit (or a line span):
        pushed to push clients, pulled again by those that can be asked to, and pushed on its
        own to the pull clients that cannot (`_push_verdicts`)."""
        self.notes[(unit_uri, code)] = (span, note)
        target = self.server.documents.target_of(unit_uri)
        state = self.states.get(target) if target else None
        if state is None:
            return
        self._publish(state)
        if self.server.client.pull and not self.server.client.refresh:
            self._push_verdicts(state, unit_uri)
        self.refresh()

    def _push_verdicts(self, state: TargetState, uri: str) -> None:
        """A pull client that cannot be asked to pull again (a Neovim without
        `workspace/diagnostic/refresh` pulls only after its own edits) gets the unit's verdicts
        pushed, as diagnostics of their own beside the findings it pulled, until its next pull
        of the unit brings them in the messages (`pull`)."""
        doc = self.server.documents.text_doc(uri)
        lines, encoding = (doc.lines if doc else []), self.server.documents.encoding
        items = []
        for entry in state.shown.get(uri, []):
            note = self.note(uri, entry.finding)
            if note is not None:
                items.append(attrs.evolve(to_diagnostic(entry.finding, uri, lines, encoding), message=note,
                                          severity=types.DiagnosticSeverity.Information))
        if items:
            version = doc.version if doc else None
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))
            state.pushed[uri] = (version, None)

    # -- results ---------------------------------------------------------------------------
    async def current(self, target: str, timeout: float = 10.0) -> TargetState | None:
        """The target's state once its current revision is analyzed (or `timeout` passed)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        state = self.states.get(target)
        if state is None:
            return None
        state.urgent += 1
        try:
            while self.states.get(target) is state:
                revision = self.server.documents.revision(target)
                if state.settled >= revision:
                    break
                self._request(state, revision)
                event = state.done
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(event.wait(), remaining)
                except asyncio.TimeoutError:
                    break
        finally:
            state.urgent -= 1
        return state

    async def pull(self, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        target = self.server.documents.target_of(uri)
        state = await self.current(target, timeout=120.0) if target else None
        if state is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        if state.settled < self.server.documents.revision(target):
            raise JsonRpcException("perf-lint is still analyzing this document", code=_SERVER_CANCELLED,
                                   data={"retriggerRequest": True})
        if self.server.client.pull and state.pushed.pop(uri, None) is not None:  # this answer has the verdicts
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        result_id = state.result_ids.get(uri)
        if result_id is not None and params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=state.items.get(uri, []), result_id=result_id)

    # -- scheduling ------------------------------------------------------------------------
    def _fire(self, state: TargetState) -> None:
        state.timer = None
        if self.states.get(state.target) is state:
            self._request(state, self.server.documents.revision(state.target))

    def _request(self, state: TargetState, revision: int) -> None:
        state.wanted = max(state.wanted, revision)
        if state.task is None and state.wanted > state.attempted:
            state.task = asyncio.ensure_future(self._run(state))

    async def _run(self, state: TargetState) -> None:
        documents = self.server.documents
        try:
            await self.server.settings_ready()
            while state.wanted > state.attempted and self.states.get(state.target) is state:
                snapshot = documents.snapshot(state.target)
                state.attempted = snapshot.revision
                path = snapshot.path
                if not os.path.isabs(path):  # an untitled buffer: configured like the workspace root
                    path = os.path.join(self.server.protocol.workspace.root_path or os.getcwd(), os.path.basename(path))
                try:
                    resolved = self.server.settings.resolve(path, state.target)
                    analysis = await self.workers.run(state, run_analysis, snapshot, resolved, state.kept)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # an engine bug: say so once, keep what is shown
                    logger.exception("analysis of %s failed", snapshot.path)
                    key = f"{type(exc).__name__}: {exc}"
                    if key not in self._failures:
                        self._failures.add(key)
                        self.server.log(f"perf-lint could not analyze {snapshot.path} ({key}); "
                                        "keeping its previous diagnostics", types.MessageType.Error)
                    if documents.revision(state.target) == snapshot.revision:
                        self._settle(state, snapshot.revision)
                    continue
                if documents.revision(state.target) != snapshot.revision or self.states.get(state.target) is not state:
                    continue  # superseded while it ran: never shown
                self._apply(state, analysis)
                self._settle(state, snapshot.revision)
        finally:
            state.task = None

    def _settle(self, state: TargetState, revision: int) -> None:
        self.collector.busy()
        state.settled = revision
        state.done.set()
        state.done = asyncio.Event()

    def _apply(self, state: TargetState, analysis: Analysis) -> None:
        """Show the analysis. A unit that does not parse keeps what it showed, and the entries
        edits touched on the line of its syntax error (the statement being typed); while one
        does, the other units (notebook cells) keep what they showed beside their fresh findings,
        which may miss what the broken unit would have told them. After a target's first
        analysis, clients that can are asked for code lenses again (they go where findings are,
        and the editor may have asked before there were any)."""
        first, state.analysis = state.analysis is None, analysis
        units = {unit.uri for unit in analysis.snapshot.units}
        held, state.held = state.held, {}
        for uri in units:
            broken = analysis.broken.get(uri)
            if broken is not None:
                state.syntax[uri] = broken
                line = broken.range.start_line
                typed = [e for e in held.get(uri, ()) if e.finding.range.start_line <= line <= e.finding.range.end_line]
                entries = self._kept(analysis, uri, [*state.shown.get(uri, []), *typed])
                state.shown[uri] = sorted(entries, key=_order) if typed else entries
                continue
            state.syntax.pop(uri, None)
            entries = [Entry(f, True) for f in analysis.findings.get(uri, [])]
            if analysis.broken and state.shown.get(uri):
                known = {_same(e) for e in entries}
                before = [e for e in state.shown[uri] if _same(e) not in known]
                entries = sorted([*entries, *self._kept(analysis, uri, before)], key=_order)
            state.shown[uri] = entries
        for uri in set(state.shown) - units:
            del state.shown[uri]
        for uri in set(state.syntax) - units:
            del state.syntax[uri]
        self._publish(state)
        if first and self.server.client.lens_refresh:
            self.server.workspace_code_lens_refresh(None)

    @staticmethod
    def _kept(analysis: Analysis, uri: str, entries: list[Entry]) -> list[Entry]:
        """Entries of earlier analyses that still apply: not suppressed by a new `# noqa`, nor
        disabled by the settings this analysis used."""
        unit, source = analysis.snapshot.unit(uri), analysis.source
        assert unit is not None and source is not None  # a unit of the snapshot; analyzed, since one is broken
        cell, path, config = unit.cell, analysis.snapshot.path, analysis.resolved.config
        return [e for e in entries if config.enabled(e.finding.code, path)
                and not suppressed(source, replace(e.finding, cell=cell))]

    def _publish(self, state: TargetState) -> None:
        """Recompute the diagnostics of every unit; push those that changed (push clients)."""
        documents = self.server.documents
        encoding = documents.encoding
        analysis = state.analysis
        resolved = analysis.resolved if analysis else None
        show_syntax = (analysis is not None and resolved is not None and resolved.editor.show_syntax_errors
                       and resolved.config.enabled("TPL000", analysis.snapshot.path))
        current = set(documents.unit_uris(state.target))
        converted: dict = {}
        for uri in current:
            doc = documents.text_doc(uri)
            lines = doc.lines if doc else []
            findings = [e.finding for e in state.shown.get(uri, [])]
            if show_syntax and uri in state.syntax:
                findings.append(state.syntax[uri])
            items = []
            for finding in findings:  # reuse the diagnostics of findings an edit did not move
                r = finding.range
                key = (finding, self.note(uri, finding), encoding,
                       lines[r.start_line] if r.start_line < len(lines) else "",
                       lines[r.end_line] if r.end_line < len(lines) else "")
                item = state.converted.get(key) or to_diagnostic(finding, uri, lines, encoding, key[1])
                converted[key] = item
                items.append(item)
            if state.items.get(uri) != items or uri not in state.result_ids:
                state.items[uri] = items
                state.result_ids[uri] = str(next(self._ids))
            version = doc.version if doc else None
            if not self.server.client.pull and state.pushed.get(uri) != (version, state.result_ids[uri]):
                self.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))
                state.pushed[uri] = (version, state.result_ids[uri])
        state.converted = converted
        for uri in set(state.items) - current:
            del state.items[uri]
            state.result_ids.pop(uri, None)
            if state.pushed.pop(uri, None) is not None:
                self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def note(self, uri: str, finding: Finding) -> str | None:
        """The profiling verdict to append to this finding's message, if any."""
        found = self.notes.get((uri, finding.code))
        if found is None:
            return None
        span, note = found
        if span is not None and not span[0] <= finding.range.start_line < span[1]:
            return None
        return note

    def shutdown(self) -> None:
        self.workers.shutdown()
