"""The server under load: 1,000 open documents and a burst of 10,000 didChange events on
one of them. A request issued after the burst is answered in bounded time with the
final version's diagnostics, and memory comes back after the documents close."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

from .test_lsp_client_gone import message

DOCUMENTS = 1_000
EDITS = 10_000


class Client:
    """A minimal JSON-RPC client over the server's stdio (pull-diagnostics capabilities)."""

    def __init__(self, cwd: pathlib.Path) -> None:
        self.server = subprocess.Popen([sys.executable, "-m", "perf_lint.server.lsp"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
        self.responses: dict[int, dict] = {}
        self.arrived = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.server.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            payload = json.loads(stream.read(length))
            if "id" in payload and "method" not in payload:
                with self.arrived:
                    self.responses[payload["id"]] = payload
                    self.arrived.notify_all()
            elif "id" in payload:  # a server->client request (registration, configuration...)
                self.send({"jsonrpc": "2.0", "id": payload["id"], "result": None}, flush=True)

    def send(self, payload: dict, flush: bool = False) -> None:
        self.server.stdin.write(message(payload))
        if flush:
            self.server.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict, timeout: float) -> dict:
        self.next_id += 1
        ident = self.next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}, flush=True)
        deadline = time.monotonic() + timeout
        with self.arrived:
            while ident not in self.responses:
                left = deadline - time.monotonic()
                assert left > 0, f"no answer to {method} within {timeout} s"
                self.arrived.wait(left)
        return self.responses.pop(ident)

    def rss_kb(self) -> int:
        return self.request("perf-lint/serverInfo", {}, 60)["result"]["rss_kb"]


def test_burst_and_many_documents(tmp_path):
    client = Client(tmp_path)
    try:
        capabilities = {"textDocument": {"diagnostic": {"dynamicRegistration": False}}}
        client.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": capabilities}, 60)
        client.notify("initialized", {})
        uris = [(tmp_path / f"doc{i}.py").as_uri() for i in range(DOCUMENTS)]

        def open_all():
            for i, uri in enumerate(uris):
                text = f"from torch.utils.data import DataLoader\nloader{i} = DataLoader(ds, num_workers={i % 2})\n"
                client.notify("textDocument/didOpen",
                              {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
            client.server.stdin.flush()

        def close_all():
            for uri in uris:
                client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            client.server.stdin.flush()

        open_all()  # warm up: every code path and cache the real run will use
        close_all()
        before = client.rss_kb()
        open_all()
        target = uris[0]
        for version in range(2, EDITS + 2):
            workers = version % 7  # ends with a value whose findings differ from version 1's
            text = f"from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers={workers})\n"
            client.notify("textDocument/didChange", {"textDocument": {"uri": target, "version": version},
                                                     "contentChanges": [{"text": text}]})
        started = time.monotonic()
        answer = client.request("textDocument/diagnostic", {"textDocument": {"uri": target}}, 120)
        waited = time.monotonic() - started
        final_workers = (EDITS + 1) % 7
        codes = [d["code"] for d in answer["result"]["items"]]
        assert codes == ([] if final_workers else ["TPL101"]), (final_workers, codes)
        assert waited < 60
        close_all()
        after = client.rss_kb()
        assert after <= before * 1.10, (before, after)
        client.request("shutdown", None, 60)
        client.notify("exit", {})
        client.server.stdin.flush()
        assert client.server.wait(timeout=30) == 0
    finally:
        if client.server.poll() is None:
            client.server.kill()
