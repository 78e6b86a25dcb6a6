"""The client disappears (stdin closed) mid-analysis or mid-profile: the server exits on
its own, without a traceback, and leaves no child process behind."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def descendants(pid: int) -> set[int]:
    """Processes whose parent chain leads to `pid` (from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_and_open(tmp_path: pathlib.Path, text: str):
    path = tmp_path / "train.py"
    path.write_text(text)
    server = subprocess.Popen([sys.executable, "-m", "perf_lint.server.lsp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    uri = path.as_uri()
    for payload in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}},
    ):
        server.stdin.write(message(payload))
    server.stdin.flush()
    return server, uri


def finish(server: subprocess.Popen, seen_children: set[int]) -> None:
    server.stdin.close()  # the client is gone: it neither writes nor reads (an unread pipe would block
    server.stdout.close()  # the server's next message, not a client gone, once its 64 KB buffer filled)
    server.wait(timeout=30)
    stderr = server.stderr.read().decode(errors="replace")
    server.stderr.close()
    assert "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in seen_children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in seen_children)


def test_client_gone_mid_analysis(tmp_path):
    block = (ROOT / "examples" / "train.py").read_text()
    text = "\n".join(block.replace("def main", f"def main{i}") for i in range(40))
    server, _ = start_and_open(tmp_path, text)
    time.sleep(0.5)  # inside the debounce or the analysis of a ~3,000-line file
    finish(server, descendants(server.pid))


def test_client_gone_mid_profile(tmp_path):
    text = (
        "import time\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n"
        "class Slow(Dataset):\n"
        "    def __len__(self):\n        return 10**6\n"
        "    def __getitem__(self, i):\n        time.sleep(0.05)\n        return torch.ones(4)\n\n"
        "loader = DataLoader(Slow(), batch_size=4)\n"
        "for x in loader:\n    y = x * 2\n"
    )
    server, uri = start_and_open(tmp_path, text)
    line = text.splitlines().index("loader = DataLoader(Slow(), batch_size=4)")  # 0-based, a TPL101 finding
    server.stdin.write(message({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                                "params": {"command": "perf-lint.profile", "arguments": [uri, {"line": line}, "TPL101"]}}))
    server.stdin.flush()
    deadline, children = time.monotonic() + 60, set()
    while time.monotonic() < deadline and not children:
        children = descendants(server.pid)
        time.sleep(0.2)
    assert children, "the profile never started a child"
    finish(server, children)
