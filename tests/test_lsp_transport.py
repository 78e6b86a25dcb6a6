"""`perf-lint server` as users start it: the CLI on stdio, and `--tcp HOST:PORT`."""

from __future__ import annotations

import asyncio
import json
import socket
import sys

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


@timed(60)
async def test_tcp_server(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "perf_lint", "server", "--tcp", f"127.0.0.1:{port}", cwd=tmp_path,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                assert process.returncode is None, (await process.stderr.read()).decode()
                await asyncio.sleep(0.1)
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
