"""The private part of pygls the server relies on (server/pygls_private.py) is still there.

pygls writes every message through `JsonRPCProtocol._send_data(data)`; the server overrides
it to write full diagnostic reports from cached JSON. If a pygls release renames it or
writes responses another way, these tests fail here, by name, instead of the server
silently sending reports nobody splices (or none at all)."""

from __future__ import annotations

import inspect
import json

from lsprotocol import types
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.protocol.json_rpc import JsonRPCResponseMessage

from perf_lint.server.lsp import PerfLintServer
from perf_lint.server.pygls_private import SplicedReports


def test_pygls_writes_every_message_through_send_data():
    assert list(inspect.signature(JsonRPCProtocol._send_data).parameters) == ["self", "data"]
    for writer in (JsonRPCProtocol._send_response, JsonRPCProtocol.notify, JsonRPCProtocol.send_request):
        assert "self._send_data(" in inspect.getsource(writer), writer.__name__


class _Bytes:
    def __init__(self) -> None:
        self.out = b""

    def write(self, data: bytes) -> None:
        self.out += data

    def close(self) -> None:
        pass


def _report(protocol: SplicedReports, diagnostics: list) -> dict:
    sink = _Bytes()
    protocol.set_writer(sink)
    report = types.RelatedFullDocumentDiagnosticReport(items=diagnostics, result_id="7")
    protocol._send_response(3, report)  # the path pygls answers a pull by
    header, _, body = sink.out.partition(b"\r\n\r\n")
    assert int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0]) == len(body)
    return json.loads(body)


def test_a_pull_answer_is_spliced_and_equals_pygls_own_encoding():
    protocol = SplicedReports(PerfLintServer(), default_converter())
    spot = types.Range(start=types.Position(line=1, character=2), end=types.Position(line=1, character=9))
    diagnostics = [types.Diagnostic(range=spot, message=f"finding {i}", code="TPL101", source="perf-lint")
                   for i in range(3)]
    response = JsonRPCResponseMessage(id=3, jsonrpc="2.0", result=types.RelatedFullDocumentDiagnosticReport(
        items=diagnostics, result_id="7"))
    expected = json.loads(json.dumps(default_converter().unstructure(response)))
    assert _report(protocol, diagnostics) == expected
    assert protocol.spliced(response) is not None  # the spliced path is the one taken
    assert _report(protocol, diagnostics) == expected  # the second time from the cached texts
