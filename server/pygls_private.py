"""The one place perf-lint relies on a private part of pygls: `JsonRPCProtocol._send_data`.

Every message pygls writes goes through `_send_data(data)`, which encodes it whole. A pull's
full diagnostic report is most of what the server writes per keystroke, and most of its
diagnostics are the same objects as in the report before (`Diagnostics._publish`); encoding
each one once and splicing the cached texts into the report saves ~1.3 ms of the ~40 ms
per keystroke on a 1,500-line file (155 diagnostics; measured beside the plain encoding).
pygls has no public hook for the encoding, so `SplicedReports` overrides that method, and
`tests/test_pygls_private.py` fails loudly when pygls no longer routes its responses
through it. Everything else the server takes from pygls is public API.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging

import attrs
from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)

_ITEMS = '"items": []'  # where a full report's diagnostics go in its JSON
_KNOWN_LIMIT = 50_000  # diagnostics remembered before the memo starts over


class SplicedReports(LanguageServerProtocol):
    """pygls' protocol, writing a full diagnostic report from each diagnostic's JSON text,
    made once per diagnostic object. `headers` says whether the writer frames messages
    (pygls' `set_writer(include_headers=...)`); unframed writers get pygls' own path."""

    def __init__(self, server, converter: Converter) -> None:
        super().__init__(server, converter)
        self.converter = converter
        self.headers = False
        self.gone = False  # a write found the client's end closed
        self._known: dict[int, list] = {}  # id -> [diagnostic, its JSON shape, its JSON text or None]
        plain = converter.get_unstructure_hook(types.Diagnostic)

        def diagnostic(item: types.Diagnostic) -> dict:
            """A diagnostic's JSON shape, made once: the server hands out the same
            Diagnostic objects for the findings an edit did not move."""
            found = self._known.get(id(item))
            if found is None or found[0] is not item:
                if len(self._known) > _KNOWN_LIMIT:
                    self._known.clear()
                found = self._known[id(item)] = [item, plain(item), None]
            return found[1]

        self._diagnostic = diagnostic
        converter.register_unstructure_hook(types.Diagnostic, diagnostic)

    def set_writer(self, writer, include_headers: bool = True) -> None:
        super().set_writer(writer, include_headers)
        self.headers = include_headers

    def send(self, data) -> None:
        """Write a message (an lsprotocol object or a plain dict) as pygls writes its own."""
        self._send_data(data)

    def _send_data(self, data) -> None:  # pygls' private method, see the module's docstring
        if self.gone:
            return  # (the client closed its end: nothing more reaches it)
        try:
            self._write(data)
        except BrokenPipeError:  # the client is gone (the session ends when its stdin closes)
            self.gone = True
            logger.info("the client closed its end of the connection")

    def _write(self, data) -> None:
        body = self.spliced(data)
        if body is None:
            super()._send_data(data)
            return
        assert self.writer is not None  # `spliced` is None without one
        header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        try:  # as pygls writes: a broken pipe ends the session, other errors are reported
            written = self.writer.write((header + body).encode(self.CHARSET))
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)
        except BrokenPipeError:
            raise
        except Exception as error:
            logger.exception("Error sending data")
            self._server.report_server_error(error, JsonRpcInternalError)

    def spliced(self, data) -> str | None:
        """The JSON of a response carrying a full report with diagnostics, from the cached
        texts; None for any other message (and for a writer without framing)."""
        report = getattr(data, "result", None)
        if type(report) is not types.RelatedFullDocumentDiagnosticReport or not report.items \
                or report.related_documents or self.writer is None or not self.headers:
            return None
        shell = json.dumps(self.converter.unstructure(attrs.evolve(data, result=attrs.evolve(report, items=[]))))
        if shell.count(_ITEMS) != 1:
            return None
        return shell.replace(_ITEMS, f'"items": [{", ".join(map(self._json, report.items))}]')

    def _json(self, item: types.Diagnostic) -> str:
        self._diagnostic(item)
        found = self._known[id(item)]
        if found[2] is None:
            found[2] = json.dumps(found[1])
        return found[2]
