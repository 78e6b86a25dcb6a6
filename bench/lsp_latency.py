"""Edit-to-diagnostics latency of `perf-lint server` (pull mode), against a full analysis.

For generated training scripts of 200, 1,500 and 5,000 lines, opens the script in a real
server process (stdio), then repeats: one incremental `didChange` (a literal edited,
the text stays valid) followed by `textDocument/diagnostic`, timing the pair. Prints
p50/p95 per size, the server's RSS, and the time of one in-process `perf-lint
check`-equivalent analysis (read_source + analyze) of the same file for the ratio,
sampled in-process every 10 edits while the server is idle (same machine load); the
bench then collects that analysis's garbage at once, so that no collection of it in this
process lands inside a timed edit (it did: one edit in 20 took 25-55 ms more).

By default every pull gets the full report (every diagnostic serialized, sent and parsed).
With `--previous-result-id` each pull names the result id of the report before it, as
VS Code's language client does, so a server whose diagnostics did not change may answer
"unchanged" instead. `--client pygls` (the default) drives the server with pygls' own
client, which turns every answer into lsprotocol objects (~3 ms for 155 diagnostics);
`--client raw` only parses the JSON, as an editor's client in another language first does.

    .venv/bin/python bench/lsp_latency.py [--edits 200] [--sizes 200,1500,5000] [--previous-result-id] [--client raw]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from perf_lint.analyzers import analyze, read_source

HEADER = '''import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
'''

BLOCK = '''

class Images{i}(Dataset):
    """Synthetic images, block {i}."""

    def __init__(self, size={size}):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        image = torch.rand(3, 32, 32)
        return image * {scale}, index % 10


class Net{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.body(x))


def train_{i}(epochs=1, lr={lr}):
    model = Net{i}().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loader = DataLoader(Images{i}(), batch_size=64, shuffle=True)
    for epoch in range(epochs):
        start = time.time()
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {{epoch}}: {{time.time() - start:.2f}}s, loss {{loss.item():.3f}}")
    return model


def evaluate_{i}(model):
    loader = DataLoader(Images{i}(256), batch_size=128, num_workers=args.workers)
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images.to(device)).argmax(1).cpu() == labels).sum().item()
    return correct
'''


def training_script(lines: int) -> str:
    """A training script of about `lines` lines (whole blocks of ~55 lines)."""
    parts, i = [HEADER], 0
    while sum(part.count("\n") for part in parts) < lines:
        parts.append(BLOCK.format(i=i, size=1024 + i, scale=1.0 + i / 100, lr=0.01))
        i += 1
    return "".join(parts)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class PyglsSession:
    """pygls' own client: every message becomes lsprotocol objects (cattrs), as in a Python
    editor plugin; parsing a report of 155 diagnostics so costs the client ~3 ms."""

    async def start(self, root: Path) -> None:
        self.client = LanguageClient("lsp-latency-bench", "1")
        await self.client.start_io(sys.executable, "-m", "perf_lint.server.lsp")
        caps = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]))
        await self.client.initialize_async(types.InitializeParams(capabilities=caps, root_uri=root.as_uri()))
        self.client.initialized(types.InitializedParams())

    def open(self, uri: str, text: str) -> None:
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))

    def change(self, uri: str, version: int, line: int, col: int, new: str) -> None:
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, col), types.Position(line, col + 1)), text=new)]))

    async def pull(self, uri: str, previous: str | None) -> tuple[str, int, str | None]:
        """(kind, number of diagnostics, result id) of a textDocument/diagnostic answer."""
        report = await self.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous))
        return report.kind, len(getattr(report, "items", [])), report.result_id

    async def stop(self) -> dict:
        info = await self.client.protocol.send_request_async("perf-lint/serverInfo", None)
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        return {"rss_kb": info.rss_kb, "torch_loaded": info.torch_loaded}


class RawSession:
    """A bare JSON-RPC client over the server's stdio: a message is read and `json.loads`-ed,
    nothing more, as an editor's client written in another language does first (VS Code's,
    Neovim's); what it then makes of the diagnostics is its own cost."""

    async def start(self, root: Path) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "perf_lint.server.lsp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        self.ids = iter(range(1, 1 << 30))
        self.waiting: dict[int, asyncio.Future] = {}
        self.reader = asyncio.ensure_future(self._read())
        caps = {"textDocument": {"diagnostic": {}}, "general": {"positionEncodings": ["utf-16"]}}
        await self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps})
        self.notify("initialized", {})

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params) -> None:
        self._send({"method": method, "params": params})

    async def request(self, method: str, params):
        number = next(self.ids)
        self.waiting[number] = answer = asyncio.get_running_loop().create_future()
        self._send({"id": number, "method": method, "params": params})
        return await answer

    async def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = 0
            while (header := await stream.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not header:
                return
            message = json.loads(await stream.readexactly(length))
            if "method" in message and "id" in message:  # a request of the server's: not supported
                self._send({"id": message["id"], "error": {"code": -32601, "message": "not supported"}})
            elif "id" in message and message["id"] in self.waiting:
                answer = self.waiting.pop(message["id"])
                if "error" in message:
                    answer.set_exception(RuntimeError(message["error"]))
                else:
                    answer.set_result(message.get("result"))

    def open(self, uri: str, text: str) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})

    def change(self, uri: str, version: int, line: int, col: int, new: str) -> None:
        edit = {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}}, "text": new}
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]})

    async def pull(self, uri: str, previous: str | None) -> tuple[str, int, str | None]:
        params = {"textDocument": {"uri": uri}, **({"previousResultId": previous} if previous else {})}
        report = await self.request("textDocument/diagnostic", params)
        return report["kind"], len(report.get("items", [])), report.get("resultId")

    async def stop(self) -> dict:
        info = await self.request("perf-lint/serverInfo", None)
        await self.request("shutdown", None)
        self.notify("exit", None)
        await self.process.wait()
        self.reader.cancel()
        return {"rss_kb": info["rss_kb"], "torch_loaded": info["torch_loaded"]}


CLIENTS = {"pygls": PyglsSession, "raw": RawSession}


async def measure(text: str, path: Path, edits: int, previous: bool = False, client: str = "pygls",
                  check_every: int = 10) -> dict:
    """Latencies of `edits` edit+pull pairs; every `check_every` edits, while the server is
    idle, one in-process full analysis is timed too, so both see the same machine load."""
    session = CLIENTS[client]()
    await session.start(path.parent)
    uri = path.as_uri()
    session.open(uri, text)
    _, findings, result_id = await session.pull(uri, None)
    lines = text.splitlines()
    targets = [n for n, line in enumerate(lines) if "lr=0.01" in line]
    latencies, checks = [], []
    for k in range(edits):
        if k % check_every == 0:
            checks.append(full_check(path))
            gc.collect()  # the check's garbage, now: not by a collection in the middle of a timed edit
        line = targets[k % len(targets)]  # one keystroke: a learning rate's last digit 1 -> 2 -> ... -> 9 -> 0
        col = lines[line].index("lr=0.0") + len("lr=0.0")
        new = str((int(lines[line][col]) + 1) % 10)
        lines[line] = lines[line][:col] + new + lines[line][col + 1:]
        started = time.perf_counter()
        session.change(uri, k + 2, line, col, new)
        kind, items, result_id = await session.pull(uri, result_id if previous else None)
        latencies.append(time.perf_counter() - started)
        if kind == "full":
            assert items == findings, "the edits keep the findings"
        elif not previous:
            raise AssertionError("an unchanged report for a pull that named no previous result")
    return {"findings": findings, "latencies": latencies, "checks": checks, **await session.stop()}


def full_check(path: Path) -> float:
    """Seconds for one `perf-lint check`-equivalent analysis: read the file, analyze it."""
    started = time.perf_counter()
    analyze(read_source(str(path)))
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--sizes", default="200,1500,5000")
    parser.add_argument("--previous-result-id", action="store_true",
                        help="name the previous report's result id in each pull, as VS Code does")
    parser.add_argument("--client", choices=sorted(CLIENTS), default="pygls",
                        help="pygls: pygls' client (messages become lsprotocol objects); raw: JSON parsing only")
    options = parser.parse_args()
    reports = "previousResultId sent (as VS Code)" if options.previous_result_id else "full report every pull"
    print(f"perf-lint server, pull mode: didChange + textDocument/diagnostic, {options.edits} edits per size, "
          f"{reports}, {options.client} client ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})")
    print(f"{'lines':>6} {'findings':>8} {'p50 ms':>8} {'p95 ms':>8} {'check ms':>9} {'p50/check':>9} {'RSS MB':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in options.sizes.split(",")):
            text = training_script(size)
            path = Path(folder) / f"train_{size}.py"
            path.write_text(text)
            result = await measure(text, path, options.edits, options.previous_result_id, options.client)
            check = statistics.median(result["checks"])
            p50 = statistics.median(result["latencies"])
            p95 = percentile(result["latencies"], 0.95)
            assert not result["torch_loaded"], "the server imported torch"
            print(f"{text.count(chr(10)):>6} {result['findings']:>8} {p50 * 1000:>8.1f} {p95 * 1000:>8.1f} "
                  f"{check * 1000:>9.1f} {p50 / check:>9.2f} {result['rss_kb'] / 1024:>7.1f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
