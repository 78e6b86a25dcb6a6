"""Hover: a rule's documentation over its diagnostic, or over a code in `# noqa: TPL...`."""

from __future__ import annotations

import re

from lsprotocol import types

from perf_lint.analyzers import rule_by_code

from .documents import client_column

_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


def hover(server, params: types.HoverParams) -> types.Hover | None:
    documents = server.documents
    uri = params.text_document.uri
    doc = documents.text_doc(uri)
    target = documents.target_of(uri)
    if doc is None or target is None:
        return None
    line, col = doc.position(params.position, documents.encoding)
    found: dict[str, tuple[int, int, int, int]] = {}
    state = server.diagnostics.states.get(target)
    for entry in state.shown.get(uri, []) if state else []:
        r = entry.finding.range
        if (r.start_line, r.start_col) <= (line, col) <= (r.end_line, r.end_col):
            found.setdefault(entry.finding.code, (r.start_line, r.start_col, r.end_line, r.end_col))
    text = doc.line(line)
    for match in _NOQA.finditer(text):
        for code in _CODE.finditer(match.group("codes")):
            start, end = match.start("codes") + code.start(), match.start("codes") + code.end()
            if start <= col <= end:
                found.setdefault(code.group().upper(), (line, start, line, end))
    docs = [(code, rule_by_code(code)) for code in found]
    docs = [(code, rule) for code, rule in docs if rule is not None]
    if not docs:
        return None
    code, _ = docs[0]
    sl, sc, el, ec = found[code]
    markdown = types.MarkupKind.Markdown in server.client.hover_formats
    body = "\n\n---\n\n".join(rule.docs() for _, rule in docs)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText, value=body),
        range=types.Range(
            types.Position(sl, client_column(doc.line(sl), sc, documents.encoding)),
            types.Position(el, client_column(doc.line(el), ec, documents.encoding)),
        ),
    )
