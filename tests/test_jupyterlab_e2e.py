"""perf-lint in a real JupyterLab: jupyter-lsp runs `python -m perf_lint server`, jupyterlab-lsp
sends it the notebook's virtual document, and headless Chromium (tests/jupyterlab/run.mjs)
waits for the diagnostic in the notebook and in jupyterlab-lsp's diagnostics panel.

`editor-client/e2e/setup.sh --browser` installs playwright-core and Chromium first (as the VS
Code test's setup does); the test is skipped only where they cannot be installed (exit 77)
or without Node.
Screenshots, the browser console, JupyterLab's log and the LSP traffic read go to
tests/jupyterlab/test-artifacts/.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from perf_lint.analyzers import Config, analyze, python_source
from tests.jupyterlab.virtual_document import virtual_document
from tests.timeouts import timeout

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "tests" / "jupyterlab"
ARTIFACTS = HERE / "test-artifacts"
CLIENT = ROOT / "editor-client"
PLAYWRIGHT = CLIENT / "node_modules" / "playwright-core"
CHROMIUM = os.environ.get("PERF_LINT_CHROMIUM", "/usr/bin/chromium")
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


@pytest.fixture(scope="module", autouse=True)
def browser():
    """playwright-core and Chromium, installed if missing (exit 77: they cannot be here)."""
    setup = subprocess.run(["bash", str(CLIENT / "e2e" / "setup.sh"), "--browser"], capture_output=True, text=True,
                           timeout=900, stdin=subprocess.DEVNULL)
    if setup.returncode == 77:
        pytest.skip(setup.stderr.strip().splitlines()[-1])
    assert setup.returncode == 0, f"setup.sh --browser exited {setup.returncode}:\n{setup.stderr}"

# (cell type, source): a %%time and a %timeit cell of CUDA work (TPL202, which jupyterlab-lsp
# does not show: it drops diagnostics on the lines it rewrote), and a perf_counter interval (TPL201).
CELLS = [
    ("markdown", "# Timing a matmul on the GPU"),
    ("code", 'import time\nimport torch\n\nx = torch.randn(4096, 4096, device="cuda")'),
    ("code", "%%time\ny = torch.mm(x, x)"),
    ("code", "%timeit -n 10 torch.mm(x, x)"),
    ("code", "start = time.perf_counter()\ny = torch.mm(x, x)\nelapsed = time.perf_counter() - start"),
]


def _notebook() -> dict:
    cells = [{"cell_type": kind, "source": text, "metadata": {}, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
             for kind, text in CELLS]
    kernel = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return {"cells": cells, "metadata": {"kernelspec": kernel, "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _configure(home: Path) -> dict:
    """JupyterLab's environment, all of it under `home`: jupyter-lsp runs this checkout's
    server for Python notebooks only; no news to fetch."""
    config = home / "config"
    config.mkdir()
    server = {"version": 2, "argv": [sys.executable, "-m", "perf_lint", "server"], "languages": ["python"],
              "mime_types": ["text/x-python", "text/x-ipython", "text/python"], "display_name": "perf-lint"}
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"LanguageServerManager": {"autodetect": False, "language_servers": {"perf-lint": server}}}))
    notifications = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notifications.parent.mkdir(parents=True)
    notifications.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    dirs = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data", "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTERLAB_SETTINGS_DIR": "settings", "JUPYTERLAB_WORKSPACES_DIR": "workspaces", "IPYTHONDIR": "ipython"}
    return {**os.environ, **{name: str(home / sub) for name, sub in dirs.items()}}


def _wait_until_up(lab: subprocess.Popen, url: str, log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if lab.poll() is not None:
            pytest.fail(f"jupyter lab exited {lab.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail(f"jupyter lab did not answer within {seconds:.0f} s:\n{log.read_text()[-4000:]}")


def _stop(lab: subprocess.Popen) -> None:
    """Stop JupyterLab (it stops its kernel and language server), then anything left in its group."""
    if lab.poll() is None:
        lab.terminate()
        try:
            lab.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(lab.pid, 9)  # its own process group (start_new_session): only what it started
    except ProcessLookupError:
        pass
    lab.wait(timeout=30)


@timeout(1200)
def test_jupyterlab_shows_perf_lint_diagnostics(tmp_path):
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    root = tmp_path / "notebooks"
    root.mkdir()
    (root / "timing.ipynb").write_text(json.dumps(_notebook(), indent=1))
    env = _configure(tmp_path)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = ARTIFACTS / "jupyterlab.log"
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password=",
               f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True"]
    with open(log, "w") as output:
        lab = subprocess.Popen(command, cwd=root, env=env, stdout=output, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_until_up(lab, url, log, seconds=240)
        run = subprocess.run(
            [NODE, str(HERE / "run.mjs"), url, "timing.ipynb", str(ARTIFACTS), "TPL201"], capture_output=True, text=True,
            timeout=600, env={**os.environ, "PERF_LINT_PLAYWRIGHT": str(PLAYWRIGHT), "PERF_LINT_CHROMIUM": CHROMIUM,
                              "PERF_LINT_E2E_TIMEOUT_MS": "240000"})
    finally:
        _stop(lab)
    assert run.returncode == 0, f"run.mjs exited {run.returncode}:\n{run.stderr[-4000:]}\n(artifacts: {ARTIFACTS})"
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    (ARTIFACTS / "lsp.json").write_text(json.dumps(seen, indent=1))

    # The panel: TPL201 from perf-lint, in the perf_counter cell (5th, counting the markdown one), on its 3rd line.
    row = next(r for r in seen["rows"] if r["Code"] == "TPL201")
    assert (row["Source"], row["Cell"], row["Line:Ch"]) == ("perf-lint", "5", "2:0"), row
    assert "without synchronizing" in seen["tooltip"] and (ARTIFACTS / "jupyterlab-diagnostics.png").stat().st_size > 0

    # What the server got is the port's virtual document, and it published the rewritten magics' TPL202 too.
    text, starts = virtual_document([source if kind == "code" else None for kind, source in CELLS])
    assert seen["text"] == text
    published = sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["character"])
                       for d in seen["diagnostics"])
    expected = sorted((f.code, f.range.start_line, f.range.start_col, f.range.end_col)
                      for f in analyze(python_source(text, "timing.ipynb"), Config()))
    assert published == expected
    assert [p for p in published if p[0] in ("TPL201", "TPL202")] == [
        ("TPL201", starts[4] + 2, 0, 37), ("TPL202", starts[2], 0, len("%%time")), ("TPL202", starts[3], 0, len(CELLS[3][1]))]
