"""Code actions: quick fixes, `# noqa` suppressions, fix-all (file, cell, notebook), the
winner of a profiling sweep (its measured speed-up in the title), and the `perf-lint.fixAll` command.

Actions are listed cheaply; their edits are computed by `codeAction/resolve` (or at once
for clients that cannot resolve edits), on the analysis of the document's current text.
Every edit is checked before it is offered: the result must parse, and a suppression
must land in a real comment that the engine honours.
"""

from __future__ import annotations

import ast
import asyncio
import io
import re
import tokenize
from dataclasses import replace

from lsprotocol import types

from perf_lint.analyzers import Edit, Finding, Range, Source, apply_edits, fix_source, fixed_text, mask_ipython, python_source
from perf_lint.analyzers.engine import suppressed
from perf_lint.analyzers.fixes import parses
from perf_lint.analyzers.source import LINE_BREAK, Unit, common_ends, dominant_newline

from .diagnostics import Analysis, TargetState, to_diagnostic
from .documents import client_column
from .profiling import profile_command, sweepable, winner_action

FIX_ALL = "source.fixAll.perf-lint"
NOTEBOOK_FIX_ALL = "notebook.source.fixAll.perf-lint"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL, NOTEBOOK_FIX_ALL]
_NOQA_CODES = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


def _wanted(kind: str, only: list[str] | None) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def _overlaps(finding: Finding, start: tuple[int, int], end: tuple[int, int]) -> bool:
    r = finding.range
    return (r.start_line, r.start_col) <= end and start <= (r.end_line, r.end_col)


async def code_actions(server, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    documents = server.documents
    target = documents.target_of(uri)
    doc = documents.text_doc(uri)
    if target is None or doc is None:
        return None
    state = await server.diagnostics.current(target, timeout=5.0)
    if state is None:
        return None
    only = [str(k) for k in params.context.only] if params.context.only else None
    start = doc.position(params.range.start, documents.encoding)
    end = doc.position(params.range.end, documents.encoding)
    editor = server.settings.editor_for(target)
    actions: list[types.CodeAction] = []
    for entry in state.shown.get(uri, []):
        finding = entry.finding
        if not _overlaps(finding, start, end):
            continue
        diagnostic = to_diagnostic(finding, uri, doc.lines, documents.encoding, server.diagnostics.note(uri, finding))
        key = {"uri": uri, "code": finding.code, "range": list(_tuple(finding.range))}
        measured = winner_action(target, finding) if entry.fresh else None
        if measured is not None and _wanted(types.CodeActionKind.QuickFix, only):
            actions.append(types.CodeAction(
                title=measured[0], kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=True,
                data={"action": "winner", **key}))
        if _wanted(types.CodeActionKind.QuickFix, only):
            if finding.fix is not None and entry.fresh:
                actions.append(types.CodeAction(
                    title=f"{finding.fix.title} ({finding.code})", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], is_preferred=measured is None, data={"action": "fix", **key}))
            actions.append(types.CodeAction(
                title=f"Suppress {finding.code} for this line", kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic], data={"action": "suppress", **key}))
        if only is None and editor.profiling_enabled:
            actions.append(types.CodeAction(
                title=f"Profile this cell ({finding.code})", diagnostics=[diagnostic],
                command=profile_command(server, uri, finding.code, line=finding.range.start_line)))
            if finding.fix is not None and sweepable(finding):
                actions.append(types.CodeAction(
                    title=f"Profile this cell, sweeping the fix's settings ({finding.code})", diagnostics=[diagnostic],
                    command=profile_command(server, uri, finding.code, line=finding.range.start_line, sweep=True)))
    fixable = any(e.fresh and e.finding.fix is not None for e in state.shown.get(uri, []))
    if fixable and _wanted(FIX_ALL, only):
        title = "Fix all perf-lint problems in this cell" if doc.notebook else "Fix all perf-lint problems"
        actions.append(types.CodeAction(title=title, kind=FIX_ALL, data={"action": "fixAll", "uri": uri}))
    if doc.notebook and _wanted(NOTEBOOK_FIX_ALL, only) and any(
        e.fresh and e.finding.fix is not None for entries in state.shown.values() for e in entries
    ):
        actions.append(types.CodeAction(title="Fix all perf-lint problems in this notebook", kind=NOTEBOOK_FIX_ALL,
                                        data={"action": "notebookFixAll", "uri": uri}))
    if not server.client.resolve_edit:
        for action in actions:
            if action.data is not None:
                await resolve(server, action)
    return actions


def _tuple(r: Range) -> tuple[int, int, int, int]:
    return r.start_line, r.start_col, r.end_line, r.end_col


async def resolve(server, action: types.CodeAction) -> types.CodeAction:
    """Fill in the action's edit for the document's current text."""
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    target = server.documents.target_of(uri) if isinstance(uri, str) else None
    state = await server.diagnostics.current(target, timeout=10.0) if target else None
    if not _current(server, state):
        server.log(f"perf-lint: '{action.title}' is not available: the document is closed or still changing")
        return action
    assert state is not None and state.analysis is not None and isinstance(uri, str)  # `_current` found them
    analysis = state.analysis
    kind = data.get("action")
    if kind in ("fix", "suppress", "winner"):
        entry = next((e for e in state.shown.get(uri, []) if e.finding.code == data.get("code")
                      and list(_tuple(e.finding.range)) == data.get("range")), None)
        measured = winner_action(target, entry.finding) if entry is not None and kind == "winner" else None
        if entry is None or (kind != "suppress" and not entry.fresh) or (kind == "winner" and measured is None):
            server.log(f"perf-lint: '{action.title}' no longer applies: the code changed; ask for the action again")
            return action
        if kind == "suppress":
            edits = _suppress_edits(analysis, entry.finding, uri)
        else:  # "fix", or "winner" with what was measured
            finding = entry.finding if measured is None else replace(entry.finding, fix=measured[1])
            edits = _fix_edits(analysis, finding)
    elif kind in ("fixAll", "notebookFixAll"):
        edits = await _fix_all_edits(server, analysis, uri if kind == "fixAll" else None)
    else:
        return action
    if edits is None:
        server.log(f"perf-lint: '{action.title}' was not applied: the result would not be valid Python")
        return action
    action.edit = workspace_edit(server, state, edits)
    return action


def _current(server, state: TargetState | None) -> bool:
    """Whether the state holds a successful analysis of the target's current revision."""
    return (state is not None and state.analysis is not None and state.analysis.source is not None
            and state.analysis.snapshot.revision == server.documents.revision(state.target))


def _unit_uri(analysis: Analysis, cell: int | None) -> str | None:
    unit = analysis.snapshot.unit_for_cell(cell)
    return unit.uri if unit else None


def _fix_edits(analysis: Analysis, finding: Finding) -> dict[str, list[Edit]] | None:
    assert analysis.source is not None  # a current analysis (see `_current`)
    if not parses(fixed_text(analysis.source, [finding])):
        return None
    assert finding.fix is not None  # a fix action's finding has one
    edits: dict[str, list[Edit]] = {}
    for edit in finding.fix.edits:
        uri = _unit_uri(analysis, edit.cell)
        if uri is None:
            return None
        edits.setdefault(uri, []).append(edit)
    return edits


def _suppress_edits(analysis: Analysis, finding: Finding, uri: str) -> dict[str, list[Edit]] | None:
    assert analysis.source is not None  # a current analysis (see `_current`)
    unit = analysis.source.unit(finding.cell)
    edit = suppression_edit(unit, finding, analysis.source)
    return None if edit is None else {uri: [edit]}


def suppression_edit(unit: Unit, finding: Finding, source: Source) -> Edit | None:
    """`# noqa: CODE` for a finding: merged into the line's `# noqa: X`, appended to its first
    (or last) line, or on a comment line above a multi-line finding; None if no place works.
    The comment must be a real comment (not inside a string) that the engine honours, and
    a unit that parses must still parse."""
    r, code = finding.range, finding.code
    candidates: list[tuple[Edit, int]] = []
    for index in dict.fromkeys((r.start_line, r.end_line)):
        line = unit.line(index)
        match = _NOQA_CODES.search(line)
        if match:
            at = match.end("codes")
            candidates.append((Edit(unit.cell, Range(index, at, index, at), f", {code}"), 0))
        else:
            end = len(line.rstrip())
            candidates.append((Edit(unit.cell, Range(index, end, index, len(line)), f"  # noqa: {code}"), 0))
    if r.end_line > r.start_line:
        line = unit.line(r.start_line)
        indent = line[: len(line) - len(line.lstrip())]
        newline = dominant_newline(unit.text)
        candidates.append((Edit(unit.cell, Range(r.start_line, 0, r.start_line, 0), f"{indent}# noqa: {code}{newline}"), 1))
    parsed = _parses(unit.code)  # a unit that does not parse yet only has to stay as it is
    for edit, moved in candidates:
        text = apply_edits(unit.text, [edit])
        if source.kind == "notebook":
            new_unit = mask_ipython(text, unit.cell)
            new_source = Source(source.path, [new_unit], "notebook")
        else:
            new_source = python_source(text, source.path)
            new_unit = new_source.units[0]
        shifted = replace(finding, range=Range(r.start_line + moved, r.start_col, r.end_line + moved, r.end_col))
        edited = edit.range.start_line
        if ((_parses(new_unit.code) or not parsed) and edited in _noqa_comment_lines(new_unit.code)
                and suppressed(new_source, shifted)):
            return edit
    return None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _noqa_comment_lines(code: str) -> set[int]:
    """0-based lines holding a real `# noqa` comment (not text inside a string)."""
    lines = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT and "noqa" in token.string.lower():
                lines.add(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


async def _fix_all_edits(server, analysis: Analysis, only_uri: str | None) -> dict[str, list[Edit]] | None:
    """Edits that apply every fix (in one unit, or in the whole target)."""
    assert analysis.source is not None  # a current analysis (see `_current`)
    result = await asyncio.to_thread(fix_source, analysis.source, analysis.resolved.config)
    if result.rejected:
        codes = ", ".join(sorted({f.code for f in result.rejected}))
        server.log(f"perf-lint: {len(result.rejected)} fix(es) skipped ({codes}): they would leave code that does not parse",
                   types.MessageType.Info)
    edits: dict[str, list[Edit]] = {}
    for before in analysis.source.units:
        uri = _unit_uri(analysis, before.cell)
        if uri is None or (only_uri is not None and uri != only_uri):
            continue
        after = result.source.unit(before.cell).text
        if after != before.text:
            edits[uri] = [_minimal_edit(before.cell, before.text, after)]
    return edits


def _minimal_edit(cell: int | None, old: str, new: str) -> Edit:
    """One edit replacing only the lines that differ between `old` and `new`."""
    old_lines, new_lines = _lines_with_breaks(old), _lines_with_breaks(new)
    prefix, suffix = common_ends(old_lines, new_lines)
    old_end = len(old_lines) - suffix
    end = (old_end, 0) if old_end < len(old_lines) else (len(old_lines) - 1, len(old_lines[-1]))
    replacement = "".join(new_lines[prefix: len(new_lines) - suffix])
    return Edit(cell, Range(prefix, 0, *end), replacement)


def _lines_with_breaks(text: str) -> list[str]:
    """Lines with their breaks; the last one (possibly empty) has none."""
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def workspace_edit(server, state: TargetState, edits: dict[str, list[Edit]]) -> types.WorkspaceEdit:
    """Engine edits (code points, per unit URI) as an LSP WorkspaceEdit for the current texts."""
    documents = server.documents
    encoding = documents.encoding
    per_uri: dict[str, list[types.TextEdit]] = {}
    for uri, unit_edits in edits.items():
        doc = documents.text_doc(uri)
        lines = doc.lines if doc else []

        def position(line: int, col: int) -> types.Position:
            text = lines[line] if 0 <= line < len(lines) else ""
            return types.Position(line, client_column(text, col, encoding))

        per_uri[uri] = [
            types.TextEdit(range=types.Range(position(e.range.start_line, e.range.start_col),
                                             position(e.range.end_line, e.range.end_col)), new_text=e.text)
            for e in sorted(unit_edits, key=lambda e: e.range)
        ]
    if server.client.document_changes:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=documents.text_doc(uri).version if documents.text_doc(uri) else None),
                edits=text_edits)
            for uri, text_edits in per_uri.items()
        ])
    return types.WorkspaceEdit(changes=per_uri)


async def fix_all_command(server, uri: str) -> dict:
    """`perf-lint.fixAll [uri]`: apply every fix in the document (or notebook) via workspace/applyEdit."""
    target = server.documents.target_of(uri)
    state = await server.diagnostics.current(target, timeout=10.0) if target else None
    if not _current(server, state):
        return {"applied": False, "reason": f"{uri} is not an open Python document or notebook, or is still changing"}
    assert state is not None and state.analysis is not None  # `_current` found them
    edits = await _fix_all_edits(server, state.analysis, None)
    if not edits:
        return {"applied": False, "reason": "nothing to fix"}
    result = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=workspace_edit(server, state, edits), label="perf-lint: fix all"))
    return {"applied": bool(result and result.applied), "documents": sorted(edits)}
