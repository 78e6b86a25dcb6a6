"""Hover: over a diagnostic, its message and a summary of its rule with a link to the rule's
documentation; over a code in `# noqa: TPL...`, the rule's summary and link."""

from __future__ import annotations

import functools
import re

from lsprotocol import types

from perf_lint.analyzers import rule_by_code

from .diagnostics import DOCS_URL, message as shown_message
from .documents import client_column

_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
_WHAT = re.compile(r"^## What it does\n(?P<text>.*?)(?=^#|\Z)", re.MULTILINE | re.DOTALL)
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z`(])")
_SHORT = 200  # a summary takes a second sentence only while it stays this short


@functools.lru_cache(maxsize=None)
def summary(rule) -> str:
    """The first sentence of the rule's "What it does" (its doc's first paragraph if it has
    none), and the second if both are short; line breaks and code spans kept whole."""
    docs = rule.docs()
    found = _WHAT.search(docs)
    text = found.group("text") if found else docs.split("\n\n", 1)[-1]
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    ends = [m.end() for m in _SENTENCE_END.finditer(paragraph) if paragraph.count("`", 0, m.start()) % 2 == 0]
    ends.append(len(paragraph))
    end = ends[1] if len(ends) > 1 and ends[1] <= _SHORT else ends[0]
    return paragraph[:end]


def describe(rule, message: str | None, markdown: bool) -> str:
    """One rule's hover text: its code and name, the finding's message, its summary, its docs' link."""
    url = DOCS_URL.format(code=rule.code)
    parts = [f"**{rule.code}** {rule.name}" if markdown else f"{rule.code} {rule.name}"]
    if message:
        parts.append(message)
    parts.append(summary(rule))
    parts.append(f"[{rule.code} documentation]({url})" if markdown else f"Documentation: {url}")
    return "\n\n".join(parts)


def hover(server, params: types.HoverParams) -> types.Hover | None:
    documents = server.documents
    uri = params.text_document.uri
    doc = documents.text_doc(uri)
    target = documents.target_of(uri)
    if doc is None or target is None:
        return None
    line, col = doc.position(params.position, documents.encoding)
    found: dict[str, tuple[tuple[int, int, int, int], str | None]] = {}  # code -> (range, message)
    state = server.diagnostics.states.get(target)
    for entry in state.shown.get(uri, []) if state else []:
        finding, r = entry.finding, entry.finding.range
        if (r.start_line, r.start_col) <= (line, col) <= (r.end_line, r.end_col) and finding.code not in found:
            message = shown_message(finding, server.diagnostics.note(uri, finding))
            found[finding.code] = ((r.start_line, r.start_col, r.end_line, r.end_col), message)
    text = doc.line(line)
    for match in _NOQA.finditer(text):
        for code in _CODE.finditer(match.group("codes")):
            start, end = match.start("codes") + code.start(), match.start("codes") + code.end()
            if start <= col <= end:
                found.setdefault(code.group().upper(), ((line, start, line, end), None))
    named = [(rule_by_code(code), message) for code, (_, message) in found.items()]
    rules = [(rule, message) for rule, message in named if rule is not None]
    if not rules:
        return None
    sl, sc, el, ec = found[rules[0][0].code][0]
    markdown = types.MarkupKind.Markdown in server.client.hover_formats
    body = ("\n\n---\n\n" if markdown else "\n\n").join(describe(rule, message, markdown) for rule, message in rules)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText, value=body),
        range=types.Range(
            types.Position(sl, client_column(doc.line(sl), sc, documents.encoding)),
            types.Position(el, client_column(doc.line(el), ec, documents.encoding)),
        ),
    )
