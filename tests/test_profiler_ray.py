"""`perf-lint profile --runner ray`: the A/B runs as tasks on a real local Ray cluster (CPU
only, `--num-gpus 0`), started once for the module with `ray start --head --block` and
stopped at the end with everything it started.

The cluster's processes get a PYTHONPATH whose `perf_lint` package refuses to import, and
the driver connects from a directory without perf-lint in it (Ray adds the driver's working
directory to the workers' sys.path): a task that needed perf-lint on the worker would fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from perf_lint.profiler import ProfileRequest, run_profile

from .lsp_client import timed
from .test_profiler import HANGS, SLOW_DATASET, SMALL, TRAIN_LOOP, alive, live_members, notebook
from .timeouts import timeout

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'perf-lint[ray]'), so the Ray runner "
                                        "cannot be tested")
from perf_lint.profiler import remote  # noqa: E402  (after the skip: it is only useful with ray)

FAILS = SLOW_DATASET + (
    "for step, (x, y) in enumerate(loader):\n"
    "    loss = model(x).sum()\n"
    "    if step == 2:\n"
    "        ratio = 1 / 0\n"
    "    loss.backward()\n"
)


def default_sigint() -> None:
    """In a child about to exec: Ctrl-C's default action. A test run as a background job of a
    non-interactive shell (`pytest &`) ignores SIGINT, and children inherit that: a Ray worker
    would then never get the KeyboardInterrupt of a graceful `ray.cancel` (`_thread.interrupt_main`
    does nothing for an ignored signal), nor `perf-lint profile` the Ctrl-C this module sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            tree.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry))
    return tree


def descendants(pid: int) -> set[int]:
    tree, found, todo = children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        stat = handle.read()
    return int(stat[stat.rindex(")") + 2:].split()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The address of a one-node Ray cluster with 2 CPUs and no GPU."""
    temp = tempfile.mkdtemp(prefix="plray-", dir="/tmp")  # Ray's socket paths must stay short
    blocker = tmp_path_factory.mktemp("no-perf-lint")
    (blocker / "perf_lint").mkdir()
    (blocker / "perf_lint" / "__init__.py").write_text("raise ImportError('a Ray worker must not need perf_lint')\n")
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env.update(PYTHONPATH=str(blocker), RAY_USAGE_STATS_ENABLED="0")
    port = free_port()
    command = os.path.join(os.path.dirname(sys.executable), "ray")
    start = [command] if os.path.exists(command) else [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
    log_path = os.path.join(temp, "head.log")
    with open(log_path, "wb") as log:
        head = subprocess.Popen(
            [*start, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--num-gpus=0",
             "--include-dashboard=false", f"--temp-dir={temp}", "--object-store-memory=200000000",
             "--disable-usage-stats"],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=default_sigint)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while b"Ray runtime started" not in open(log_path, "rb").read():
            assert head.poll() is None and time.monotonic() < deadline, open(log_path, errors="replace").read()
            time.sleep(0.2)
        here = os.getcwd()
        os.chdir(tmp_path_factory.mktemp("driver"))  # no perf_lint in the directory Ray gives the workers
        try:
            remote.connect(address)
        finally:
            os.chdir(here)
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        started = descendants(head.pid) | {head.pid}
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops the node and its workers
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [pid for pid in started if alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        head.wait(10)
        shutil.rmtree(temp, ignore_errors=True)
        assert not left, f"Ray processes still running 30 s after SIGTERM: {left}"


def ray_request(script, address, **options) -> ProfileRequest:
    options = {"rule": "TPL101", "steps": SMALL, "repeats": 1, **options}
    return ProfileRequest(str(script), runner="ray", address=address, num_gpus=0, **options)


def shape(result) -> dict:
    """What must not depend on where the runs happened."""
    files = []
    for folder, _, names in os.walk(result.trace_dir):
        for name in names:
            relative = os.path.relpath(os.path.join(folder, name), result.trace_dir)
            files.append(re.sub(r"\.\d+\.pt\.trace\.json$", ".<ts>.pt.trace.json", relative))
    return {
        "keys": sorted(result.to_dict()),
        "codes": [v["code"] for v in result.verdicts],
        "verdict keys": [sorted(v) for v in result.verdicts],
        "variants": {name: sorted(metrics) for name, metrics in result.variants.items()},
        "runs": [(r["variant"], r["repeat"], r["status"], len(r["traces"]), len(r["steps_ms"])) for r in result.runs],
        "steps": [m["step_ms"]["n"] for m in result.variants.values()],
        "where": (result.device, result.target, result.measure, result.failure),
        "files": sorted(files),
    }


@timeout(180)
def test_remote_run_has_the_structure_of_a_local_run(cluster, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)
    local = run_profile(ProfileRequest(str(script), rule="TPL101", steps=SMALL, repeats=1, out_dir=str(tmp_path / "local")))
    said = []
    result = run_profile(ray_request(script, cluster, out_dir=str(tmp_path / "ray")), progress=said.append)
    assert local.error is None and result.error is None, (local.error, result.error)
    assert shape(result) == shape(local)
    assert result.verdicts[0]["verdict"] in ("confirmed", "not confirmed", "inconclusive")
    assert "connecting to the Ray cluster" in said
    # traces: in the run's directory, in tensorboard_trace_handler's layout, with the active steps
    traces = [t for run in result.runs for t in run["traces"]]
    assert len(traces) == 2 and all(os.path.dirname(t) == os.path.join(result.trace_dir, run["variant"]) and os.path.isfile(t)
                                    for run in result.runs for t in run["traces"])
    events = json.load(open(traces[0]))["traceEvents"]
    assert sum(1 for e in events if str(e.get("name", "")).startswith("ProfilerStep#")) == 3
    # no path of the task's temporary directory is left; the runner and the worker are named
    saved = json.load(open(os.path.join(result.trace_dir, "result.json")))
    assert saved == json.loads(json.dumps(result.to_dict()))
    assert "perf-lint-ray-" not in json.dumps(saved)
    assert "perf-lint-ray-" not in open(os.path.join(result.trace_dir, "programs", "A-1.result.json")).read()
    assert result.machine["runner"] == f"ray: {cluster}" and result.machine["node"] == socket.gethostname()
    assert result.python == result.machine["python"] and os.path.isfile(result.python)
    assert any(note.startswith(f"ran as Ray tasks (0 GPU each) on the cluster at {cluster}") for note in result.notes)
    assert "ray:" not in json.dumps(local.machine)
    for run in result.runs:
        assert live_members(run["pgid"]) == []


@timeout(180)
def test_profile_command_on_ray(cluster, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)

    def perf_lint(*args, env=None):
        started = time.monotonic()
        ran = subprocess.run([sys.executable, "-m", "perf_lint", "profile", "train.py", *args], cwd=tmp_path,
                             capture_output=True, text=True, timeout=150, env=env)
        return ran, time.monotonic() - started

    ran, _ = perf_lint("--rule", "TPL101", "--runner", "ray", "--address", cluster, "--num-gpus", "0",
                       "--steps", "1,1,2", "--repeats", "1", "--format", "json", "--out", str(tmp_path / "out"))
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)  # nothing of Ray's on stdout
    assert data["verdicts"][0]["code"] == "TPL101" and data["failure"] is None
    assert data["machine"]["runner"] == f"ray: {cluster}" and data["device"] == "cpu"
    assert data["trace_dir"].startswith(str(tmp_path / "out"))
    assert "perf-lint profile: connecting to the Ray cluster" in ran.stderr
    assert "perf-lint profile: run 2/2: B" in ran.stderr

    closed = free_port()
    unreachable, took = perf_lint("--runner", "ray", "--address", f"127.0.0.1:{closed}", "--num-gpus", "0")
    assert unreachable.returncode == 2, unreachable.stderr
    assert f"perf-lint: error: cannot reach the Ray cluster at 127.0.0.1:{closed}: Connection refused" in unreachable.stderr
    assert took < 30
    no_gpu, _ = perf_lint("--runner", "ray", "--address", cluster)  # --num-gpus 1 by default
    assert no_gpu.returncode == 2, no_gpu.stderr
    assert f"perf-lint: error: the Ray cluster at {cluster} has no GPU (1 node(s), 2 CPUs, 0 GPUs)" in no_gpu.stderr
    assert "run with --num-gpus 0" in no_gpu.stderr
    assert not (tmp_path / ".perf-lint").exists()  # nothing ran, no run directory
    address_alone, _ = perf_lint("--address", cluster)
    assert address_alone.returncode == 2 and "a Ray address is for the ray runner" in address_alone.stderr
    python, _ = perf_lint("--runner", "ray", "--address", cluster, "--python", sys.executable)
    assert python.returncode == 2 and "a Ray task runs in the Python of the cluster's workers" in python.stderr
    assert perf_lint("--runner", "ray", "--num-gpus", "-1")[0].returncode == 2
    no_ray = tmp_path / "no-ray"
    (no_ray / "ray").mkdir(parents=True)
    (no_ray / "ray" / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    missing, _ = perf_lint("--runner", "ray", "--address", cluster, env={**os.environ, "PYTHONPATH": str(no_ray)})
    assert missing.returncode == 2, missing.stderr
    assert "the ray runner needs Ray installed next to perf-lint" in missing.stderr
    assert "pip install 'perf-lint[ray]'" in missing.stderr


@timeout(180)
def test_error_on_ray_maps_to_the_users_line(cluster, tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(FAILS)
    result = run_profile(ray_request(script, cluster, repeats=2))
    assert result.failure == "exception", result.error
    assert result.error_location == {"path": str(script), "cell": None, "line": 21, "label": "line 21"}
    assert result.error.startswith("the code as written raised ZeroDivisionError at line 21")
    assert f'File "{script}", line 21, in <module>\n    ratio = 1 / 0' in result.error
    assert "child.py" not in result.error and "perf-lint-ray-" not in result.error
    assert len(result.runs) == 1

    path = tmp_path / "fails.ipynb"
    path.write_text(notebook(
        ("code", SLOW_DATASET),
        ("code", "def check(x):\n    assert x.shape[0] == 3, 'wrong batch'\n"),
        ("code", "for x, y in loader:\n    model(x).sum().backward()\n    check(x)\n"),
        ("code", 'device = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)\n'),  # (no GPU ever: a CPU session, no TPL101)
    ))
    result = run_profile(ray_request(path, cluster, cell=2, rule=None))
    assert result.failure == "exception", result.error
    assert result.error_location["cell"] == 1 and result.error_location["line"] == 2
    assert f'File "{path}", cell 3, line 3, in <module>\n    check(x)' in result.error
    assert "AssertionError: wrong batch" in result.error


@timeout(120)
def test_endless_cell_on_ray_is_killed_at_the_timeout(cluster, tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    started = time.monotonic()
    result = run_profile(ray_request(script, cluster, repeats=3, timeout_s=10))
    elapsed = time.monotonic() - started
    assert result.failure == "timeout", result.error
    assert "10 s timeout" in result.error and "killed with its whole process group" in result.error
    assert 10 <= elapsed < 40
    assert len(result.runs) == 1
    helper = int((tmp_path / "helper.pid").read_text())  # the worker ran in the script's directory
    assert not alive(helper)
    assert live_members(result.runs[0]["pgid"]) == []


def start_hanging_run(script, cluster, cancel=None) -> tuple[threading.Thread, dict, int, int]:
    """A Ray run of HANGS in a thread; returns it once the child has started its helper,
    with the helper's pid and the child's process group."""
    holder: dict = {}
    thread = threading.Thread(target=lambda: holder.update(result=run_profile(
        ray_request(script, cluster, timeout_s=100), cancel=cancel)))
    thread.start()
    pid_file = script.parent / "helper.pid"
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    helper = int(pid_file.read_text())
    return thread, holder, helper, os.getpgid(helper)


@timeout(120)
def test_cancel_on_ray_stops_the_task_at_once(cluster, tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    cancel = threading.Event()
    thread, holder, helper, group = start_hanging_run(script, cluster, cancel)
    cancelled = time.monotonic()
    cancel.set()
    thread.join(60)
    assert not thread.is_alive()
    assert time.monotonic() - cancelled < 30  # not the run's 100 s timeout (a graceful cancel takes seconds, a forced one 5 s more)
    assert holder["result"].failure == "cancelled"
    assert not alive(helper)
    assert live_members(group) == []


@timeout(120)
def test_worker_killed_mid_run_takes_the_run_with_it(cluster, tmp_path):
    """A worker killed from outside (the memory monitor, a forced cancel): the run is a
    clear crash and nothing it started keeps running on the node."""
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    thread, holder, helper, group = start_hanging_run(script, cluster)
    worker = parent(group)  # the child leads its group; its parent is the Ray worker
    os.kill(worker, signal.SIGKILL)
    thread.join(30)
    assert not thread.is_alive()
    result = holder["result"]
    assert result.failure == "crash", result.error
    assert "the Ray task on" in result.error and "worker died" in result.error
    assert "\x1b[" not in result.error
    deadline = time.monotonic() + 5
    while (alive(helper) or live_members(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(helper) and live_members(group) == []


@timeout(120)
def test_ctrl_c_in_the_command_cancels_the_task(cluster, tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    command = subprocess.Popen(
        [sys.executable, "-m", "perf_lint", "profile", "hangs.py", "--rule", "TPL101", "--runner", "ray",
         "--address", cluster, "--num-gpus", "0", "--steps", "1,1,3", "--repeats", "1"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        pid_file = tmp_path / "helper.pid"
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        helper = int(pid_file.read_text())
        group = os.getpgid(helper)
        command.send_signal(signal.SIGINT)
        _, stderr = command.communicate(timeout=60)
    finally:  # (a command that did not stop would keep its task running on the cluster)
        if command.poll() is None:
            command.kill()
            command.communicate()
    assert command.returncode == 130, stderr
    assert "perf-lint profile: interrupted" in stderr
    deadline = time.monotonic() + 5
    while (alive(helper) or live_members(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(helper) and live_members(group) == []


@timed(240)
async def test_editor_settings_choose_the_ray_runner(cluster, tmp_path):
    from lsprotocol import types

    from .lsp_client import VSCODE, codes, open_py, pushed, session
    from .test_lsp_profile import TRAIN, profile_action

    ray_settings = {"steps": [0, 1, 2], "timeoutS": 120, "runner": "ray", "rayAddress": cluster}
    for settings, failure in (({**ray_settings, "numGpus": 0}, None), (ray_settings, "runner")):
        async with session(VSCODE, tmp_path, settings={"profiling": settings}) as client:
            uri = open_py(client, tmp_path / "train.py", TRAIN)
            assert codes(await pushed(client, uri, 1)) == ["TPL101"]
            action = await profile_action(client, uri)
            result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
                command=action.command.command, arguments=action.command.arguments)), 200)
            assert result["failure"] == failure, result["error"]
            if failure is None:  # ran on the cluster, and nothing of Ray's broke the protocol on stdout
                assert result["machine"]["runner"] == f"ray: {cluster}" and result["verdicts"][0]["code"] == "TPL101"
            else:
                assert any("has no GPU" in m.message and "--num-gpus 0" in m.message for m in client.messages)
