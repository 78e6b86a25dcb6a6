"""Edit-to-diagnostics latency of `perf-lint server` (pull mode), against a full analysis.

For generated training scripts of 200, 1,500 and 5,000 lines, opens the script in a real
server process (stdio), then repeats: one incremental `didChange` (a literal edited,
the text stays valid) followed by `textDocument/diagnostic`, timing the pair. Prints
p50/p95 per size, the server's RSS, and the time of one in-process `perf-lint
check`-equivalent analysis (read_source + analyze) of the same file for the ratio,
sampled in-process every 10 edits while the server is idle (same machine load).

By default every pull gets the full report (every diagnostic serialized, sent and parsed).
With `--previous-result-id` each pull names the result id of the report before it, as
VS Code's language client does, so a server whose diagnostics did not change may answer
"unchanged" instead.

    .venv/bin/python bench/lsp_latency.py [--edits 200] [--sizes 200,1500,5000] [--previous-result-id]
"""

from __future__ import annotations

import argparse
import asyncio
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


async def measure(text: str, path: Path, edits: int, previous: bool = False, check_every: int = 10) -> dict:
    """Latencies of `edits` edit+pull pairs; every `check_every` edits, while the server is
    idle, one in-process full analysis is timed too, so both see the same machine load."""
    client = LanguageClient("lsp-latency-bench", "1")
    await client.start_io(sys.executable, "-m", "perf_lint.server.lsp")
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]))
    await client.initialize_async(types.InitializeParams(capabilities=caps, root_uri=path.parent.as_uri()))
    client.initialized(types.InitializedParams())
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    ident = types.TextDocumentIdentifier(uri=uri)
    first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
    findings = len(first.items)
    lines = text.splitlines()
    targets = [n for n, line in enumerate(lines) if "lr=0.01" in line]
    latencies, checks = [], []
    result_id = first.result_id
    for k in range(edits):
        if k % check_every == 0:
            checks.append(full_check(path))
        line = targets[k % len(targets)]  # one keystroke: a learning rate's last digit 1 -> 2 -> ... -> 9 -> 0
        col = lines[line].index("lr=0.0") + len("lr=0.0")
        new = str((int(lines[line][col]) + 1) % 10)
        lines[line] = lines[line][:col] + new + lines[line][col + 1:]
        started = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=k + 2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, col), types.Position(line, col + 1)), text=new)]))
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=ident, previous_result_id=result_id if previous else None))
        latencies.append(time.perf_counter() - started)
        if report.kind == "full":
            assert len(report.items) == findings, "the edits keep the findings"
        elif not previous:
            raise AssertionError("an unchanged report for a pull that named no previous result")
        result_id = report.result_id
    info = await client.protocol.send_request_async("perf-lint/serverInfo", None)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"findings": findings, "latencies": latencies, "checks": checks, "rss_kb": info.rss_kb,
            "torch_loaded": info.torch_loaded}


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
    options = parser.parse_args()
    reports = "previousResultId sent (as VS Code)" if options.previous_result_id else "full report every pull"
    print(f"perf-lint server, pull mode: didChange + textDocument/diagnostic, {options.edits} edits per size, "
          f"{reports} ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})")
    print(f"{'lines':>6} {'findings':>8} {'p50 ms':>8} {'p95 ms':>8} {'check ms':>9} {'p50/check':>9} {'RSS MB':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in options.sizes.split(",")):
            text = training_script(size)
            path = Path(folder) / f"train_{size}.py"
            path.write_text(text)
            result = await measure(text, path, options.edits, options.previous_result_id)
            check = statistics.median(result["checks"])
            p50 = statistics.median(result["latencies"])
            p95 = percentile(result["latencies"], 0.95)
            assert not result["torch_loaded"], "the server imported torch"
            print(f"{text.count(chr(10)):>6} {result['findings']:>8} {p50 * 1000:>8.1f} {p95 * 1000:>8.1f} "
                  f"{check * 1000:>9.1f} {p50 / check:>9.2f} {result['rss_kb'] / 1024:>7.1f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
