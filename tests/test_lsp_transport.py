"""`perf-lint server` as users start it: the CLI on stdio, and `--tcp HOST:PORT`."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.lsp_client import SAMPLE, capabilities, codes, make_client, open_py, pushed, timed


@timed(60)
async def test_cli_server_on_stdio(tmp_path):
    config = ClientServerConfig(server_command=[sys.executable, "-m", "perf_lint", "server"], client_factory=make_client)
    client = await config.start()
    try:
        result = await client.initialize_session(types.InitializeParams(
            capabilities=capabilities("visual-studio-code"), root_uri=tmp_path.as_uri()))
        assert result.server_info.name == "perf-lint"
        client.texts, client.versions, client.init_result = {}, {}, result
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]
        await client.shutdown_session()
        assert client._server.returncode == 0
    finally:
        if client._server.returncode is None:
            client._server.kill()
        await client.stop()


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def _read(reader: asyncio.StreamReader) -> dict:
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(await reader.readexactly(length))


def _listening(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* writes them) listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                found.add(local.rsplit(":", 1)[0])
    return found


@pytest.mark.parametrize("address", ["PORT", "127.0.0.1:PORT"])
@timed(60)
async def test_tcp_server(tmp_path, address):
    """`--tcp PORT` listens on loopback only (anyone who can connect can run code through it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "perf_lint", "server", "--tcp", address.replace("PORT", str(port)), cwd=tmp_path,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                assert process.returncode is None, (await process.stderr.read()).decode()
                await asyncio.sleep(0.1)
        if os.path.exists("/proc/net/tcp"):
            assert _listening(port) == {"0100007F"}  # 127.0.0.1, nothing else
        writer.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
        await writer.drain()
        response = await _read(reader)
        assert response["id"] == 1 and response["result"]["serverInfo"]["name"] == "perf-lint"
        assert response["result"]["capabilities"]["codeActionProvider"]["resolveProvider"] is True
        writer.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        uri = (tmp_path / "train.py").as_uri()
        writer.write(_frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": SAMPLE}}}))
        await writer.drain()
        while True:
            message = await _read(reader)
            if message.get("method") == "textDocument/publishDiagnostics":
                break
            if "id" in message and "method" in message:  # a request to the client: answer null
                writer.write(_frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        assert [d["code"] for d in message["params"]["diagnostics"]] == ["TPL101"]
        writer.close()
    finally:
        process.kill()
        await process.wait()


@timed(60)
async def test_stdio_pipe_messages_in_pieces_and_large(tmp_path):
    """On a stdin pipe the event loop reads the messages itself: a message that arrives in
    pieces (header split, body in parts) and a body far over the stream's line limit are
    read whole."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "perf_lint", "server", cwd=tmp_path,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        initialize = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(),
            "capabilities": {"textDocument": {"diagnostic": {}}}}})
        for piece in (initialize[:9], initialize[9:30], initialize[30:]):
            process.stdin.write(piece)
            await process.stdin.drain()
            await asyncio.sleep(0.05)
        assert (await _read(process.stdout))["id"] == 1
        uri = (tmp_path / "train.py").as_uri()
        text = SAMPLE + "".join(f"x{i} = {i}  # {'padding ' * 8}\n" for i in range(3000))  # ~240 kB
        did_open = _frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}}})
        assert len(did_open) > 200_000
        process.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}) + did_open[:100_000])
        await process.stdin.drain()
        await asyncio.sleep(0.05)
        process.stdin.write(did_open[100_000:])
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic",
                                    "params": {"textDocument": {"uri": uri}}}))
        await process.stdin.drain()
        while (message := await _read(process.stdout)).get("id") != 2:
            if "id" in message and "method" in message:  # a request to the client: answer null
                process.stdin.write(_frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        assert [d["code"] for d in message["result"]["items"]] == ["TPL101"]
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
        assert (await _read(process.stdout))["id"] == 3
        process.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        await process.stdin.drain()
        assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_stdio_from_a_file(tmp_path):
    """A stdin the event loop cannot watch (a regular file) is read as pygls reads it."""
    import subprocess

    messages = tmp_path / "messages"
    messages.write_bytes(b"".join(_frame(message) for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    )))
    with messages.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "perf_lint", "server"], stdin=stdin, capture_output=True,
                              cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in done.stdout.split(b"Content-Length: ")[1:]]
    assert [answer.get("id") for answer in answers if "result" in answer] == [1, 2]


def test_full_report_is_written_as_pygls_would():
    """A pull's answer written from each diagnostic's JSON text (made once per diagnostic)
    is byte for byte what pygls' own encoding writes, again when reports share diagnostics."""
    from lsprotocol import types
    from pygls.protocol import LanguageServerProtocol

    from perf_lint.server.lsp import create_server

    protocol = create_server().protocol
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            pass

    protocol.set_writer(Writer())

    def diagnostic(line: int, message: str, data=None) -> types.Diagnostic:
        return types.Diagnostic(
            range=types.Range(types.Position(line, 0), types.Position(line, 4)), message=message,
            severity=types.DiagnosticSeverity.Warning, code="TPL101", source="perf-lint", data=data)

    shared = [diagnostic(1, "`num_workers=0`: naïve loader — \"quoted\""),
              diagnostic(2, "fix", {"fix": {"title": "t", "edits": [{"text": "x\n\ty"}]}})]
    reports = [types.RelatedFullDocumentDiagnosticReport(items=shared, result_id="1"),
               types.RelatedFullDocumentDiagnosticReport(items=[*shared, diagnostic(3, "new")], result_id="2"),
               types.RelatedFullDocumentDiagnosticReport(items=[]),
               types.RelatedUnchangedDocumentDiagnosticReport(result_id="2")]
    for number, report in enumerate(reports):
        message = types.DocumentDiagnosticResponse(id=number, result=report)
        protocol._send_data(message)
        LanguageServerProtocol._send_data(protocol, message)
        ours, theirs = written[-2:]
        assert ours == theirs
    assert len(written) == 2 * len(reports)
    assert len(protocol._known) >= 3  # the shared diagnostics' JSON was made once and reused
