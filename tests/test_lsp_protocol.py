"""The protocol's errors, over a real server's stdio in raw bytes: each bad message gets its
JSON-RPC error code (or is skipped, with a ParseError, when it cannot be framed), and the
server keeps answering what follows; it exits soon after the client goes away."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from tests.lsp_client import timed
from tests.test_lsp_transport import _frame, _read

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, NOT_INITIALIZED = -32700, -32600, -32602, -32002
ROOT = Path(__file__).resolve().parents[1]
INFO = "perf-lint/serverInfo"


def request(msg_id, method: str, params=None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def hover(msg_id) -> dict:
    return request(msg_id, "textDocument/hover", {"textDocument": {"uri": "file:///x.py"},
                                                  "position": {"line": 0, "character": 0}})


class Server:
    """`python -m perf_lint server` on pipes; replies are kept by id until asked for."""

    def __init__(self, process, stderr: Path) -> None:
        self.process, self.stderr = process, stderr
        self.replies: dict = {}

    @classmethod
    async def start(cls, tmp_path: Path, initialize: bool = True) -> "Server":
        stderr = tmp_path / "stderr.txt"
        with stderr.open("wb") as sink:  # a file: the server never blocks on a full stderr pipe
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "perf_lint", "server", cwd=tmp_path, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=sink, limit=2**24)
        server = cls(process, stderr)
        if initialize:
            await server.initialize(1)
        return server

    async def initialize(self, msg_id) -> dict:
        self.send(request(msg_id, "initialize", {"processId": None, "capabilities": {}}))
        reply = await self.reply(msg_id)
        assert reply["result"]["serverInfo"]["name"] == "perf-lint", reply
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    def send(self, *messages: dict | bytes) -> None:
        for message in messages:
            self.process.stdin.write(message if isinstance(message, bytes) else _frame(message))

    async def reply(self, msg_id, timeout: float = 30) -> dict:
        """The next response with this id (None: an error for a message without one)."""
        await self.process.stdin.drain()

        async def wait() -> dict:
            while not self.replies.get(msg_id):
                message = await _read(self.process.stdout)
                if "method" not in message:
                    self.replies.setdefault(message.get("id"), []).append(message)
                elif "id" in message:  # a request to the client: answer null
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            return self.replies[msg_id].pop(0)

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no reply {msg_id!r}; stderr:\n{self.stderr.read_text()[-3000:]}") from None

    async def error(self, msg_id, code: int) -> dict:
        reply = await self.reply(msg_id)
        assert "id" in reply and reply["id"] == msg_id and reply["error"]["code"] == code, reply
        return reply

    async def serves(self, msg_id) -> dict:
        """A valid request still gets its answer."""
        self.send(request(msg_id, INFO))
        reply = await self.reply(msg_id)
        assert "result" in reply, reply
        return reply["result"]

    async def close(self) -> None:
        """Shutdown and exit: the server ends cleanly (0)."""
        try:
            self.send(request("bye", "shutdown"))
            assert (await self.reply("bye"))["result"] is None
            self.send({"jsonrpc": "2.0", "method": "exit"})
            await self.process.stdin.drain()
            assert await asyncio.wait_for(self.process.wait(), 30) == 0, self.stderr.read_text()[-3000:]
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()


@timed(120)
async def test_before_initialize(tmp_path):
    """A request before `initialize` gets ServerNotInitialized, a notification is dropped;
    an `initialize` whose params are wrong gets InvalidParams and a good one still works."""
    server = await Server.start(tmp_path, initialize=False)
    try:
        server.send(hover(1))
        await server.error(1, NOT_INITIALIZED)
        server.send(request(2, INFO))
        await server.error(2, NOT_INITIALIZED)
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (tmp_path / "a.py").as_uri(), "languageId": "python", "version": 1, "text": "x = 1\n"}}})
        server.send(request(3, "initialize", {"capabilities": 5}))
        await server.error(3, INVALID_PARAMS)
        await server.initialize(4)
        assert (await server.serves(5))["documents"] == 0  # the early didOpen was dropped
        await server.close()
    finally:
        if server.process.returncode is None:
            server.process.kill()


@timed(120)
async def test_bodies_that_are_not_json_rpc(tmp_path):
    """Not JSON (nor UTF-8): ParseError with id null; JSON that is no JSON-RPC 2.0 request:
    InvalidRequest, with the request's id where it has one."""
    server = await Server.start(tmp_path)
    try:
        cases = [(b'{"jsonrpc": "2.0", "id": 7, "meth', None, PARSE_ERROR),
                 (b'\xff\xfe{}', None, PARSE_ERROR),
                 (b'[1, 2]', None, INVALID_REQUEST),
                 (json.dumps({"jsonrpc": "1.0", "id": 8, "method": INFO}).encode(), 8, INVALID_REQUEST),
                 (json.dumps({"jsonrpc": "2.0", "id": [8], "method": INFO}).encode(), None, INVALID_REQUEST),
                 (json.dumps({"jsonrpc": "2.0", "id": 9, "method": 3}).encode(), 9, INVALID_REQUEST)]
        for number, (body, msg_id, code) in enumerate(cases):
            server.send(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await server.error(msg_id, code)
            await server.serves(100 + number)
        await server.close()
    finally:
        if server.process.returncode is None:
            server.process.kill()


@timed(120)
async def test_invalid_params(tmp_path):
    """A request whose params do not fit its method gets InvalidParams (pygls only logged
    it); a notification's bad params are dropped; a request may leave its params out."""
    server = await Server.start(tmp_path)
    try:
        server.send(request(2, "textDocument/hover", {"textDocument": 3}))
        reply = await server.error(2, INVALID_PARAMS)
        assert "position" in reply["error"]["message"]
        await server.serves(3)
        server.send(request(4, "textDocument/codeAction", None))
        await server.error(4, INVALID_PARAMS)
        await server.serves(5)
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 3}})
        assert (await server.serves(6))["documents"] == 0
        server.send({"jsonrpc": "2.0", "id": 7, "method": INFO})  # no params at all
        assert "result" in await server.reply(7)
        await server.close()
    finally:
        if server.process.returncode is None:
            server.process.kill()


@timed(120)
async def test_after_shutdown(tmp_path):
    """After `shutdown` a request gets InvalidRequest; `exit` still ends the server with 0."""
    server = await Server.start(tmp_path)
    try:
        server.send(request(2, "shutdown"))
        assert (await server.reply(2))["result"] is None
        server.send(hover(3))
        await server.error(3, INVALID_REQUEST)
        server.send(request(4, INFO))
        await server.error(4, INVALID_REQUEST)
        server.send({"jsonrpc": "2.0", "method": "exit"})
        await server.process.stdin.drain()
        assert await asyncio.wait_for(server.process.wait(), 30) == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()


@timed(180)
async def test_framing_errors(tmp_path):
    """A header line over 64 KiB, a Content-Length that is negative, not a number, huge or
    over the body limit, and none at all: a ParseError with id null, nothing allocated for
    the bogus length, and the next message is read (also one glued to the skipped body)."""
    server = await Server.start(tmp_path)
    try:
        junk = b"a" * 100_000
        cases = [b"X-Junk: " + junk + b"\r\n" + _frame(request("in", INFO)),  # the long line is dropped
                 junk + _frame(request("in", INFO)),  # a long line ending in the next message's header
                 b"Content-Length: -5\r\n\r\n{}",
                 b"Content-Length: abc\r\n\r\n{}",
                 b"Content-Length: 99999999999999999999999\r\n\r\n{}",
                 b"Content-Length: %d\r\n\r\n{}" % (300 * 2**20),
                 b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}"]
        before = (await server.serves(0))["rss_kb"]
        for number, bad in enumerate(cases):
            server.send(bad)
            await server.error(None, PARSE_ERROR)
            if b'"in"' in bad:
                assert "result" in await server.reply("in")
            assert not server.replies.get(None), server.replies[None]  # one error per bad message
            await server.serves(number + 1)
        assert (await server.serves(99))["rss_kb"] - before < 100_000  # nothing like 300 MiB was held
        await server.close()
    finally:
        if server.process.returncode is None:
            server.process.kill()


def test_framing_errors_on_a_file_stdin(tmp_path):
    """A stdin the loop cannot watch (read in a thread) recovers the same way."""
    messages = tmp_path / "messages"
    messages.write_bytes(b"".join([
        _frame(request(1, "initialize", {"processId": None, "capabilities": {}})),
        b"X-Junk: " + b"a" * 100_000 + b"\r\n" + _frame(request(2, INFO)),
        b"Content-Length: -5\r\n\r\n{}",
        _frame(request(3, INFO)),
        _frame(request(4, "shutdown")),
        _frame({"jsonrpc": "2.0", "method": "exit"})]))
    with messages.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "perf_lint", "server"], stdin=stdin, capture_output=True,
                              cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    replies = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in done.stdout.split(b"Content-Length: ")[1:]]
    replies = [reply for reply in replies if "method" not in reply]
    assert [(reply["id"], "result" in reply or reply["error"]["code"]) for reply in replies] == [
        (1, True), (None, PARSE_ERROR), (2, True), (None, PARSE_ERROR), (3, True), (4, True)]


@timed(180)
async def test_exits_soon_when_the_client_goes_away_mid_analysis(tmp_path):
    """stdin closed while a very large document (~90,000 lines) is being analysed: the
    server exits within a few seconds, not once the analysis is done (~15 s here)."""
    block = (ROOT / "examples" / "train.py").read_text()
    text = "\n".join(block.replace("def main", f"def main{i}") for i in range(1200))
    server = await Server.start(tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (tmp_path / "big.py").as_uri(), "languageId": "python", "version": 1, "text": text}}})
        assert (await server.serves(2))["documents"] == 1  # the document is open, its analysis due
        await asyncio.sleep(1.0)  # past the debounce: analysing
        start = time.monotonic()
        server.process.stdin.close()
        code = await asyncio.wait_for(server.process.wait(), 60)
        took = time.monotonic() - start
        stderr = server.stderr.read_text()
        assert code == 1 and "Traceback" not in stderr, stderr[-3000:]  # LSP: gone without shutdown
        assert took < 10, f"exited {took:.1f} s after its client"
    finally:
        if server.process.returncode is None:
            server.process.kill()
            await server.process.wait()
