"""What `perf-lint profile` measures: steps timed without the profiler once warm, epochs
whole (or not presented as steps), worker start-up as time to first batch, host-device
syncs only where a device waits, and a fix variant that compiles nothing said as such.

Real runs on CPU are small, and their timing assertions rest on sleeps far beyond the noise
of a busy machine (a worker that takes 0.2 s to open its data); the GPU paths are checked
on fake profiler events.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from perf_lint.profiler import ProfileRequest, child, harness, judge, run_profile
from perf_lint.profiler.aggregate import _user_line
from perf_lint.profiler.stats import ms

from .test_profiler import SLOW_DATASET
from .timeouts import timeout

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKERS = os.path.join(REPO, "examples", "profile", "workers_respawned.py")
START_UP_MS = 200  # each worker of that example sleeps 0.2 s before its first item


@timeout(240)
def test_respawned_workers_are_timed_over_whole_epochs(tmp_path):
    ran = subprocess.run([sys.executable, "-m", "perf_lint", "profile", WORKERS, "--rule", "TPL104", "--steps", "1,1,3",
                          "--repeats", "2", "--format", "json", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=220)
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    (verdict,) = data["verdicts"]
    assert verdict["ratio_name"] == "whole-epoch speed-up (A epoch / B epoch)"
    assert verdict["verdict"] == "confirmed", verdict
    a, b = data["variants"]["A"], data["variants"]["B"]
    assert a["step_ms"]["n"] == b["step_ms"]["n"] == 6
    assert a["step_ms"]["min"] >= START_UP_MS  # a whole epoch, start-up included, not 3 batches of it
    assert a["first_batch_ms"]["min"] >= START_UP_MS and b["first_batch_ms"]["median"] < a["first_batch_ms"]["median"]
    assert "time to an epoch's first batch (workers' start-up)" in verdict["reason"]
    first = f"| time to first batch, median | {ms(a['first_batch_ms']['median'])} | {ms(b['first_batch_ms']['median'])} |"
    assert first in open(data["report_path"]).read()
    assert a["syncs_per_step"] is None  # the DataLoader's seed .item() is on a CPU tensor: no sync
    assert any(n.startswith("a step is a whole epoch") for n in data["notes"])
    assert not any("were cut" in n for n in data["notes"])
    assert all(run["traces"] for run in data["runs"])  # the profiler still ran, after the timed epochs


@timeout(180)
def test_epochs_cut_at_the_budget_are_not_steps(tmp_path, monkeypatch):
    real = harness.measurement
    monkeypatch.setattr(harness, "measurement", lambda request, plan: {**real(request, plan), "epoch_budget_s": 0.05})
    result = run_profile(ProfileRequest(WORKERS, rule="TPL104", steps=(1, 1, 3), repeats=2, out_dir=str(tmp_path)))
    assert result.error is None, result.error
    (verdict,) = result.verdicts
    assert verdict["ratio_name"] == "start-up speed-up (A / B time to an epoch's first batch)"
    assert "epochs ran past the 0.05 s budget per epoch and were cut, so no whole-epoch time" in verdict["reason"]
    assert verdict["verdict"] == "confirmed", verdict
    assert result.variants["A"]["step_ms"] is None  # no cut epoch is shown as a step
    assert "variant A: 6 of 6 timed epochs ran past the budget per epoch and were cut" in result.notes


@timeout(150)
def test_steps_are_timed_without_the_profiler_after_compilation(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text(
        "import json\nimport torch\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "model = torch.compile(torch.nn.Linear(8, 1).to(device), backend='eager')\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "total, seen = 0.0, []\n"
        "try:\n"
        "    for step in range(100):\n"
        "        seen.append(torch._C._autograd._profiler_enabled())\n"
        "        x = torch.randn(4 + min(step, 2), 8, device=device)  # new shapes: compiled again\n"
        "        loss = model(x).sum()\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        total += loss.item()\n"
        "finally:\n"
        "    json.dump(seen, open('seen.json', 'w'))\n"
    )
    result = run_profile(ProfileRequest(str(script), rule="TPL203", steps=(0, 1, 3), repeats=1))
    assert result.error is None, result.error
    a = result.variants["A"]
    (warm,) = a["warmup_steps"]
    assert warm >= 2 and a["settled_for"] == {"compile": True}  # the warm-up waited for the recompilation
    assert not a["compiled_in_window"]
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert not any(seen[:warm + 3]) and any(seen[warm + 3:])  # profiler off while timed, on afterwards
    assert any("torch.compile stopped compiling" in n for n in result.notes)
    (verdict,) = result.verdicts
    assert verdict["reason"].startswith("not measurable on CPU") and verdict["ratio"] is None


@timeout(150)
def test_timing_starts_once_the_prefetch_queue_is_drained(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + "for x, y in loader:\n    model(x).sum().backward()\n    optimizer.step()\n")
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=(0, 1, 2), repeats=1))
    assert result.error is None, result.error
    a, b = result.variants["A"], result.variants["B"]  # B: the fix's num_workers=4 (prefetch_factor 2)
    assert a["warmup_steps"] == [1] and a["settled_for"] == {}
    assert b["warmup_steps"][0] >= 8 and b["settled_for"] == {"prefetch": 8}
    assert a["step_ms"]["n"] == b["step_ms"]["n"] == 2
    assert b["first_batch_ms"]["n"] == 1  # the workers' start-up: once, for the epoch the steps are in
    assert any("prefetch queue (8 batches) was drained" in n for n in result.notes)


def _event(name, start, end, thread=1, device="DeviceType.CPU", stack=(), parent=None):
    return SimpleNamespace(name=name, time_range=SimpleNamespace(start=start, end=end), device_type=device,
                           thread=thread, stack=list(stack), is_user_annotation=False, cpu_parent=parent)


def test_syncs_on_a_gpu_are_device_waits_at_the_users_line():
    program = "/run/programs/A-script.py"
    item = _event("aten::item", 100, 400, stack=[f"{program}(12): <module>"])  # .item() of a CUDA tensor
    frame = _event(f"{program}(30): train_step", 600, 900)  # torch's Python tracer: a frame, its first line
    events = [
        _event("ProfilerStep#1", 0, 1000), item,
        _event("aten::_local_scalar_dense", 110, 390, parent=item),
        _event("cudaMemcpyAsync", 120, 150),
        _event("cudaStreamSynchronize", 150, 380),  # no parent recorded: found around it in time
        _event("Memcpy DtoH (Device -> Pageable)", 300, 310, device="DeviceType.CUDA"),
        _event("aten::item", 500, 510, stack=[f"{program}(20): <module>"]),  # a CPU tensor's: no wait
        _event("aten::_local_scalar_dense", 501, 509), frame,
        _event("cudaDeviceSynchronize", 700, 800, parent=_event("aten::copy_", 650, 850, parent=frame)),
    ]
    gpu = child.summarize_events(events, True, {program})
    assert gpu["syncs"] == 2 and gpu["dtoh"] == 1
    assert gpu["sync_ops"] == {"cudaStreamSynchronize": 1, "cudaDeviceSynchronize": 1}
    assert gpu["sync_sites"] == [[f"{program}:12", 1], [f"{program}:30", 1]]
    cpu = child.summarize_events(events, False, {program})
    assert cpu["syncs"] is None and cpu["sync_ops"] == {} and cpu["dtoh"] is None


def test_a_sync_is_traced_to_the_programs_frame_with_torchs_profiler(tmp_path):
    torch = pytest.importorskip("torch")
    program = tmp_path / "step.py"
    program.write_text("def train_step(x):\n    y = (x * 2).sum()\n    return y.item()\n")
    namespace = {}
    exec(compile(program.read_text(), str(program), "exec"), namespace)
    with torch.profiler.profile(with_stack=True) as prof:
        namespace["train_step"](torch.randn(4))
    (event,) = [e for e in prof.events() if e.name == "aten::_local_scalar_dense"]
    span = (event.thread, event.time_range.start, event.time_range.end, event.name, event)
    assert child.sync_site(span, [], {str(program)}) == f"{program}:1"  # train_step, by its first line


def test_a_sync_site_maps_to_the_line_as_written(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                      "model = torch.nn.Linear(4, 1).to(device)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                      "for step in range(10):\n    loss = model(torch.randn(2, 4, device=device)).sum()\n"
                      "    loss.backward()\n    opt.step()\n    print(loss.item())\n")
    plan = harness.prepare(ProfileRequest(str(script), rule="TPL203"))
    variant = plan.variants[0]
    code = variant.segments[0]["code"].split("\n")
    program_line = next(i for i, text in enumerate(code) if ".item()" in text) + 1
    assert program_line != 9  # the instrumented program has lines of its own
    assert _user_line(plan, variant, f"{variant.segments[0]['name']}:{program_line}") == "line 9"
    assert _user_line(plan, variant, "unknown") == "an unknown line"


def test_a_fix_that_compiles_nothing_is_said_so():
    counters = lambda graphs: {"graphs": graphs, "frames": 52, "graph_breaks": 3, "recompiles": 0}  # noqa: E731
    result = SimpleNamespace(variants={"A": {"compile": counters(1)}, "B": {"compile": counters(0)}})
    assert judge.eager_fix(result).startswith("the fix variant (B) compiled nothing: dynamo captured 0 graphs in B")
    result.variants["B"]["compile"] = counters(2)
    assert judge.eager_fix(result) is None
