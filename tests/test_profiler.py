"""`perf-lint profile` end to end: real torch (CPU) in real child processes.

Runs are kept small (tiny models, few steps, one thread per child); the one timing
assertion (TPL101 confirmed) rests on an effect far beyond the noise of a busy machine:
a dataset that sleeps per item, read without workers (A) or with four (B).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import xml.dom.minidom

from perf_lint.profiler import ProfileRequest, run_profile

from .timeouts import timeout


SMALL = (1, 1, 3)

SLOW_DATASET = '''\
import time
import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 100_000

    def __getitem__(self, index):
        time.sleep(0.003)
        return torch.randn(16), torch.randn(1)


model = torch.nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Slow(), batch_size=8)
'''

TRAIN_LOOP = '''\
for epoch in range(100):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''


def notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": text, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
            for kind, text in cells
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


def live_members(pgid: int) -> list[int]:
    """Processes of a process group that are still running (zombies excluded), from /proc."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry))
    return alive


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@timeout(240)
def test_sync_dataloader_is_confirmed_and_waits_less_with_workers(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=(1, 1, 4), repeats=3))
    assert result.error is None, result.error
    assert [v["code"] for v in result.verdicts] == ["TPL101"]
    verdict = result.verdicts[0]
    assert verdict["verdict"] == "confirmed", verdict
    assert verdict["ratio"] > 1.5
    assert result.summary().startswith("TPL101 confirmed: ") and "(CPU, n=12)" in result.summary()
    a, b = result.variants["A"], result.variants["B"]
    assert a["dataloader_share"] > 0.6
    assert b["dataloader_share"] < a["dataloader_share"]
    assert a["step_ms"]["n"] == b["step_ms"]["n"] == 12
    assert result.device == "cpu" and result.target == "the script from line 17"
    assert result.measure == "iterations of the loop at line 19"
    assert [(r["variant"], r["repeat"]) for r in result.runs] == [("A", 1), ("B", 1), ("A", 2), ("B", 2), ("A", 3), ("B", 3)]
    # traces: the layout tensorboard_trace_handler writes, Chrome trace JSON with the active steps
    traces = [t for run in result.runs for t in run["traces"]]
    assert len(traces) == 6 and all(os.path.dirname(t) == os.path.join(result.trace_dir, run["variant"])
                                    for run in result.runs for t in run["traces"])
    assert result.trace_dir.startswith(str(tmp_path / ".perf-lint" / "traces"))
    events = json.load(open(traces[0]))["traceEvents"]
    names = {e.get("name", "") for e in events}
    assert sum(1 for n in names if n.startswith("ProfilerStep#")) == 4
    assert "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" in names
    assert any(n.startswith("enumerate(DataLoader)#_MultiProcessingDataLoaderIter") for t in traces[1:2]
               for n in {e.get("name", "") for e in json.load(open(t))["traceEvents"]})
    # the report: Markdown with a table and the SVG chart, and the JSON result
    report = open(result.report_path).read()
    assert "| step time, median |" in report and "![A vs B](steps.svg)" in report
    assert "## What a CPU run cannot show" in report
    xml.dom.minidom.parse(os.path.join(result.trace_dir, "steps.svg"))
    saved = json.load(open(os.path.join(result.trace_dir, "result.json")))
    assert saved["verdicts"][0]["verdict"] == "confirmed" and saved == json.loads(json.dumps(result.to_dict()))
    assert "TPL101 confirmed" in result.to_text()


@timeout(120)
def test_item_every_step_is_one_sync_per_step(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text(
        "import torch\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "model = torch.nn.Linear(8, 1).to(device)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x, y = torch.randn(16, 8, device=device), torch.randn(16, 1, device=device)\n"
        "total = 0.0\n"
        "for step in range(1000):\n"
        "    loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    total += loss.item()\n"
    )
    result = run_profile(ProfileRequest(str(script), line=12, steps=SMALL, repeats=2))
    assert result.error is None, result.error
    (verdict,) = result.verdicts
    assert verdict["code"] == "TPL203" and verdict["metric"] == "syncs"
    assert result.variants["A"]["syncs_per_step"] is None  # a CPU tensor's .item() waits for no device
    assert list(result.variants) == ["A"]  # no fix: the code as written is counted
    assert verdict["verdict"] == "inconclusive" and verdict["reason"].startswith("not measurable on CPU")
    assert verdict["ratio"] is None


@timeout(120)
def test_notebook_cell_runs_after_its_preceding_cells_only(tmp_path):
    path = tmp_path / "train.ipynb"
    path.write_text(notebook(
        ("code", "!pip install nothing-at-all\n%matplotlib inline\n" + SLOW_DATASET),
        ("markdown", "## training"),
        ("code", "steps_seen = 0\n"),
        ("code", "for x, y in loader:\n    steps_seen += 1\n    model(x).sum().backward()\n    optimizer.step()\n"),
        ("code", "raise RuntimeError('a later cell must not run')\n"),
        ("code", 'device = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)\n'),  # (no GPU ever: a CPU session, no TPL101)
    ))
    result = run_profile(ProfileRequest(str(path), cell=3, rule="TPL101", steps=SMALL, repeats=1))
    assert result.error is None, result.error
    assert result.target == "cell 4" and result.measure == "iterations of the loop at line 1 of cell 4"
    assert set(result.variants) == {"A", "B"}
    assert result.variants["A"]["step_ms"]["n"] == 3 and result.variants["B"]["step_ms"]["n"] == 3
    assert result.verdicts[0]["code"] == "TPL101"
    programs = os.listdir(os.path.join(result.trace_dir, "programs"))
    assert {"A-cell1.py", "A-cell3.py", "A-cell4.py", "B-cell1.py"} <= set(programs)  # named as people count cells
    assert "A-cell5.py" not in programs


@timeout(120)
def test_percent_cell_of_a_script(tmp_path):
    script = tmp_path / "cells.py"
    script.write_text("# %%\n" + SLOW_DATASET + "\n# %%\n" + TRAIN_LOOP + "\n# %%\nraise RuntimeError('not this cell')\n")
    result = run_profile(ProfileRequest(str(script), cell=1, steps=SMALL, repeats=1))
    assert result.error is None, result.error
    assert result.target == "cell 2"
    assert result.measure == "iterations of the loop at line 22 of cell 2"  # lines count in the file
    assert result.verdicts[0]["code"] == "TPL101"


@timeout(120)
def test_error_in_the_cell_maps_to_the_users_line(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(SLOW_DATASET + (
        "for step, (x, y) in enumerate(loader):\n"
        "    loss = model(x).sum()\n"
        "    if step == 2:\n"
        "        ratio = 1 / 0\n"
        "    loss.backward()\n"
    ))
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=SMALL, repeats=3))
    assert result.failure == "exception"
    assert result.error_location == {"path": str(script), "cell": None, "line": 21, "label": "line 21"}
    assert result.error.startswith("the code as written raised ZeroDivisionError at line 21")
    assert f'File "{script}", line 21, in <module>\n    ratio = 1 / 0' in result.error
    assert "child.py" not in result.error
    assert len(result.runs) == 1  # no point repeating a failing cell
    assert result.verdicts[0]["verdict"] == "inconclusive"
    assert os.path.exists(result.report_path) and "ZeroDivisionError" in open(result.report_path).read()

    path = tmp_path / "fails.ipynb"
    path.write_text(notebook(
        ("code", SLOW_DATASET),
        ("code", "def check(x):\n    assert x.shape[0] == 3, 'wrong batch'\n"),
        ("code", "for x, y in loader:\n    model(x).sum().backward()\n    check(x)\n"),
        ("code", 'device = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)\n'),  # (no GPU ever: a CPU session, no TPL101)
    ))
    result = run_profile(ProfileRequest(str(path), cell=2, steps=SMALL, repeats=1))
    assert result.failure == "exception"
    assert result.error_location["cell"] == 1 and result.error_location["line"] == 2
    assert f'File "{path}", cell 3, line 3, in <module>\n    check(x)' in result.error
    assert "AssertionError: wrong batch" in result.error


@timeout(90)
def test_out_of_memory_is_reported_clearly(tmp_path):
    script = tmp_path / "big.py"
    script.write_text(SLOW_DATASET + "for x, y in loader:\n    huge = torch.empty(2 ** 50)\n")
    result = run_profile(ProfileRequest(str(script), steps=SMALL, repeats=2))
    assert result.failure == "oom"
    assert result.error.startswith("out of memory in the code as written at line 19\n")
    assert "huge = torch.empty(2 ** 50)" in result.error
    assert result.summary() == "TPL101 inconclusive: out of memory (CPU)"


HANGS = SLOW_DATASET + '''\
import subprocess

helper = subprocess.Popen(["sleep", "300"])
open("helper.pid", "w").write(str(helper.pid))
for x, y in loader:
    time.sleep(3600)
'''


@timeout(120)
def test_endless_cell_is_killed_at_the_timeout_with_its_process_group(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    started = time.monotonic()
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=SMALL, repeats=3, timeout_s=20))
    elapsed = time.monotonic() - started
    assert result.failure == "timeout"
    assert "20 s timeout" in result.error and "killed with its whole process group" in result.error
    assert 20 <= elapsed < 60
    assert len(result.runs) == 1
    helper = int((tmp_path / "helper.pid").read_text())
    assert not alive(helper)
    assert live_members(result.runs[0]["pgid"]) == []
    assert result.summary() == "TPL101 inconclusive: timed out (CPU)" or result.summary().startswith("TPL101 inconclusive")


@timeout(120)
def test_cancel_kills_the_run_at_once(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    cancel = threading.Event()
    holder = {}
    thread = threading.Thread(target=lambda: holder.update(result=run_profile(
        ProfileRequest(str(script), rule="TPL101", steps=SMALL, timeout_s=100), cancel=cancel)))
    thread.start()
    deadline = time.monotonic() + 60
    while not (tmp_path / "helper.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    helper = int((tmp_path / "helper.pid").read_text())
    cancelled = time.monotonic()
    cancel.set()
    thread.join(30)
    assert not thread.is_alive()
    assert time.monotonic() - cancelled < 5
    result = holder["result"]
    assert result.failure == "cancelled"
    assert not alive(helper)
    assert live_members(result.runs[0]["pgid"]) == []


@timeout(60)
def test_interpreter_without_torch_is_named(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=50)
    python = str(venv / "bin" / "python")
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)
    result = run_profile(ProfileRequest(str(script), python=python, steps=SMALL, repeats=1))
    assert result.failure == "no-torch"
    assert result.error.startswith(f"torch is not installed in {python} (ModuleNotFoundError")
    assert result.summary().startswith("profile failed: torch is not installed in ") or "no torch" in result.summary()


@timeout(120)
def test_unsynchronized_timing_compares_clock_intervals(tmp_path):
    script = tmp_path / "timing.py"
    script.write_text(
        "import time\nimport torch\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "x = torch.randn(128, 128, device=device)\n"
        "timings = []\n"
        "for trial in range(100):\n"
        "    start = time.perf_counter()\n"
        "    y = torch.mm(x, x)\n"
        "    timings.append(time.perf_counter() - start)\n"
    )
    result = run_profile(ProfileRequest(str(script), rule="TPL201", steps=SMALL, repeats=1))
    assert result.error is None, result.error
    assert result.variants["B"]["label"] == "with the fix (Synchronize CUDA before reading the clock)"
    for name in "AB":
        interval = result.variants[name]["interval_ms"]
        assert interval["n"] == 3 and interval["median"] < result.variants[name]["step_ms"]["median"]
    (verdict,) = result.verdicts
    assert verdict["metric"] == "interval" and verdict["verdict"] == "inconclusive"
    assert verdict["reason"].startswith("no GPU: CPU operations finish before they return")


@timeout(120)
def test_timing_magic_cell_is_timed_between_marks(tmp_path):
    path = tmp_path / "timing.ipynb"
    path.write_text(notebook(
        ("code", "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\nx = torch.randn(64, 64, device=device)\n"),
        ("code", "%%time\ny = torch.mm(x, x)\n"),
    ))
    result = run_profile(ProfileRequest(str(path), cell=1, steps=SMALL, repeats=1))
    assert result.error is None, result.error
    assert result.measure == "repeated runs of cell 2"
    assert result.variants["A"]["interval_ms"]["n"] == 3 and result.variants["B"]["interval_ms"]["n"] == 3
    assert result.verdicts[0]["code"] == "TPL202" and "no GPU" in result.verdicts[0]["reason"]


@timeout(150)
def test_compile_before_ddp_runs_on_a_one_process_group(tmp_path):
    script = tmp_path / "ddp.py"
    script.write_text(
        "import torch\nimport torch.distributed as dist\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "dist.init_process_group('nccl')\n"
        "model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))\n"
        "model = torch.compile(model, backend='eager')\n"
        "model = DDP(model)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 8)\n"
        "for step in range(100):\n"
        "    model(x).sum().backward()\n"
        "    opt.step()\n"
    )
    result = run_profile(ProfileRequest(str(script), rule="TPL301", steps=SMALL, repeats=1))
    assert result.error is None, result.error
    assert "ran on a one-process gloo process group on 127.0.0.1" in result.notes
    assert result.variants["A"]["compile"]["graphs"] >= 1
    (verdict,) = result.verdicts  # DDP first, then compile: on this one-process gloo group dynamo captures nothing
    assert verdict["verdict"] == "inconclusive" and verdict["reason"].startswith("the fix variant (B) compiled nothing")
    assert "no GPU either: DDP's bucketed all-reduce" in verdict["reason"] and "A: 1 graphs" in verdict["reason"]
    assert verdict["ratio"] is None  # compiled A is not compared with eager B


@timeout(120)
def test_cudnn_benchmark_under_the_programs_own_profiler(tmp_path):
    script = tmp_path / "prof.py"
    script.write_text(
        "import torch\n"
        "torch.backends.cudnn.benchmark = True\n"
        "conv = torch.nn.Conv2d(3, 4, 3)\n"
        "with torch.profiler.profile() as prof:\n"
        "    for step in range(50):\n"
        "        conv(torch.randn(2, 3, 8, 8)).sum().backward()\n"
        "        prof.step()\n"
        "print(prof.key_averages().table())\n"
    )
    result = run_profile(ProfileRequest(str(script), steps=SMALL, repeats=2))
    assert result.error is None, result.error
    assert "the program's own torch.profiler.profile was replaced by perf-lint's" in result.notes
    assert result.verdicts[0]["code"] == "TPL401" and result.verdicts[0]["reason"].startswith("no GPU: cuDNN")
    assert open(os.path.join(result.trace_dir, "programs", "B-script.py")).read().count(
        "torch.backends.cudnn.benchmark = False") == 1


@timeout(120)
def test_profile_command(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)

    def perf_lint(*args):
        return subprocess.run([sys.executable, "-m", "perf_lint", "profile", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=100)

    ran = perf_lint("train.py", "--line", "17", "--steps", "1,1,2", "--repeats", "1", "--format", "json",
                    "--out", str(tmp_path / "out"))
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["verdicts"][0]["code"] == "TPL101" and data["steps"] == [1, 1, 2]
    assert data["trace_dir"].startswith(str(tmp_path / "out"))
    assert "perf-lint profile: run 2/2: B" in ran.stderr
    missing = perf_lint("train.py", "--line", "3")
    assert missing.returncode == 2 and "no finding at line 3" in missing.stderr
    bad = perf_lint("train.py", "--python", str(tmp_path / "nope"))
    assert bad.returncode == 2 and "no Python interpreter at" in bad.stderr
    assert perf_lint("train.py", "--steps", "1,2").returncode == 2


@timeout(120)
def test_first_timed_run_of_a_compiled_model_is_the_cold_one(tmp_path):
    script = tmp_path / "warm.py"
    script.write_text(
        "import time\nimport torch\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "model = torch.compile(torch.nn.Linear(8, 8).to(device), backend='eager')\n"
        "x = torch.randn(4, 8, device=device)\n"
        "start = time.perf_counter()\n"
        "model(x)\n"
        "elapsed = time.perf_counter() - start\n"
    )
    result = run_profile(ProfileRequest(str(script), rule="TPL204", steps=SMALL, repeats=3))
    assert result.error is None, result.error
    assert result.measure == "repeated runs of the timed lines 6-8"  # the region, not the whole script
    (verdict,) = result.verdicts
    assert verdict["metric"] == "warmup" and verdict["verdict"] == "confirmed", verdict  # compiling shows on CPU too
    a = result.variants["A"]
    assert a["first_interval_ms"]["n"] == 3 and a["first_interval_ms"]["min"] > a["interval_ms"]["max"]


@timeout(120)
def test_compile_inside_the_loop_is_counted(tmp_path):
    script = tmp_path / "percall.py"
    script.write_text(
        "import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for n in range(2, 100):\n"
        "    compiled = torch.compile(model, backend='eager', dynamic=False)\n"
        "    compiled(torch.randn(n, 4)).sum().backward()\n"
        "    opt.step()\n"
    )
    result = run_profile(ProfileRequest(str(script), rule="TPL302", steps=SMALL, repeats=1))
    assert result.error is None, result.error
    (verdict,) = result.verdicts  # two TPL302 findings on that line: one verdict
    assert verdict["metric"] == "compiles" and verdict["verdict"] == "confirmed"
    assert verdict["summary"] == "TPL302 confirmed: 3 compilation(s) during 3 measured steps (CPU, n=1)"
    assert verdict["sentence"] == "Profiled on CPU: confirmed, 3 compilation(s) during 3 measured steps (n=1)."


@timeout(120)
def test_evaluation_with_gradients_uses_more_memory(tmp_path):
    script = tmp_path / "evaluate.py"
    script.write_text(
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(128, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))\n"
        "batches = [torch.randn(128, 128) for _ in range(20)]\n"
        "def validate(model, batches):\n"
        "    model.eval()\n"
        "    correct = 0\n"
        "    for x in batches:\n"
        "        out = model(x)\n"
        "        correct += int((out.argmax(1) == 0).sum())\n"
        "    return correct\n"
        "validate(model, batches)\n"
    )
    result = run_profile(ProfileRequest(str(script), steps=SMALL, repeats=2))
    assert result.error is None, result.error
    (verdict,) = result.verdicts
    assert verdict["code"] == "TPL502" and verdict["metric"] == "memory"
    assert verdict["verdict"] == "confirmed", verdict
    assert result.variants["A"]["memory_peak_mb"]["median"] > result.variants["B"]["memory_peak_mb"]["median"]


@timeout(30)
def test_rule_without_a_probe_runs_nothing(tmp_path):
    script = tmp_path / "save.py"
    script.write_text("import torch\nmodel = torch.compile(torch.nn.Linear(2, 2))\ntorch.save(model.state_dict(), 'm.pt')\n")
    result = run_profile(ProfileRequest(str(script)))
    assert result.summary() == "TPL303 inconclusive: nothing to measure (CPU)" or result.verdicts[0]["verdict"] == "inconclusive"
    assert "has no profiling probe" in result.verdicts[0]["reason"] and result.runs == []
    assert not (tmp_path / "m.pt").exists()


@timeout(120)
def test_unsaved_editor_text_is_what_runs(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('the saved file has no finding')\n")
    result = run_profile(ProfileRequest(str(script), text=SLOW_DATASET + TRAIN_LOOP, line=17, steps=SMALL, repeats=1))
    assert result.error is None, result.error
    assert result.verdicts[0]["code"] == "TPL101" and result.variants["A"]["step_ms"]["n"] == 3


@timeout(150)
def test_gpu_check_runs_from_the_source_tree_without_perf_lint_installed(tmp_path):
    import libcst
    import yaml

    wheels = tmp_path / "wheels"  # what the GPU machine has: libcst and its dependencies, no perf-lint
    wheels.mkdir()
    for module in (libcst, yaml):
        os.symlink(os.path.dirname(module.__file__), wheels / module.__name__)
    import typing_extensions

    os.symlink(typing_extensions.__file__, wheels / "typing_extensions.py")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "gpu.json"
    done = subprocess.run(
        [sys.executable, "-S", os.path.join(repo, "bench", "gpu_check.py"), str(out), "--rules", "TPL203",
         "--traces", str(tmp_path / "traces")],
        env={**os.environ, "PYTHONPATH": str(wheels)}, cwd=tmp_path, capture_output=True, text=True, timeout=140)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    (scenario,) = report["scenarios"]
    assert scenario["rule"] == "TPL203" and scenario["result"]["verdicts"][0]["code"] == "TPL203"
    if not report["machine"]["cuda"]:
        assert scenario["summary"].startswith("TPL203 inconclusive: not measurable on CPU")
    assert scenario["result"]["path"] == os.path.join(repo, "examples", "profile", "item_every_step.py")
