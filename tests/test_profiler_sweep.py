"""`perf-lint profile --sweep`: the fix's count run with each candidate, the fastest offered
only when it is confirmed faster than the code as written.

Real runs on CPU. The loops rest on sleeps far beyond the noise of a busy machine: items that
sleep 3 ms each (workers overlap the sleeps), or a step that sleeps 30 ms next to items made
in microseconds (nothing a worker does can shorten it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

from perf_lint.analyzers import Edit, Fix, Range, analyze, load_config, python_source
from perf_lint.profiler import ProfileRequest, run_profile, sweep

from .test_profiler import SLOW_DATASET, TRAIN_LOOP
from .timeouts import timeout

CHEAP_ITEMS = '''\
import time
import torch
from torch.utils.data import DataLoader, Dataset


class Made(Dataset):
    def __len__(self):
        return 100_000

    def __getitem__(self, index):
        return torch.randn(16), torch.randn(1)


model = torch.nn.Linear(16, 1)
loader = DataLoader(Made(), batch_size=8)
for epoch in range(100):
    for x, y in loader:
        time.sleep(0.03)  # the device's work, which no DataLoader worker shortens
        model(x).sum().backward()
'''

def finding(text: str, code: str, tmp_path):
    source = python_source(text, str(tmp_path / "train.py"))
    return next(f for f in analyze(source, load_config(str(tmp_path))) if f.code == code)


def test_candidates_are_counts_up_to_the_cores():
    assert sweep.counts(1) == [1]
    assert sweep.counts(2) == [1, 2]
    assert sweep.counts(6) == [1, 2, 4, 6]
    assert sweep.counts(64) == [8, 16, 32, 64]


def test_each_candidate_is_the_fix_with_its_count(tmp_path):
    tpl101 = finding(SLOW_DATASET + TRAIN_LOOP, "TPL101", tmp_path)
    assert sweep.setting_of(tpl101.fix) == "num_workers"
    planned = sweep.plan([tpl101], 2)
    assert [(c.variant, c.value) for c in planned.candidates] == [("B1", 1), ("B2", 2)]
    (edit,) = planned.candidates[1].fix.edits
    assert edit.text == "DataLoader(Slow(), batch_size=8, num_workers=2, persistent_workers=True)"
    assert planned.candidates[1].fix.title == "Set num_workers=2, persistent_workers=True"
    winner = {"code": "TPL101", "cell": None, "line": tpl101.range.start_line + 1, "setting": "num_workers", "value": 2,
              "fix": [e.text for e in tpl101.fix.edits]}
    assert sweep.winning_fix(tpl101, winner) == planned.candidates[1].fix
    assert sweep.winning_fix(tpl101, {**winner, "line": 1}) is None  # another finding
    changed = finding((SLOW_DATASET + TRAIN_LOOP).replace("batch_size=8", "batch_size=16"), "TPL101", tmp_path)
    assert sweep.winning_fix(changed, winner) is None  # the loader measured is not this one


def test_the_count_a_fix_keeps_is_swept_and_a_fix_without_one_is_not(tmp_path):
    text = SLOW_DATASET.replace("batch_size=8)", "batch_size=8, num_workers=2)") + TRAIN_LOOP
    tpl104 = finding(text, "TPL104", tmp_path)  # its fix sets persistent_workers and keeps the count written
    assert sweep.setting_of(tpl104.fix) == "num_workers"
    assert sweep.with_value(tpl104.fix, "num_workers", 1).title == "Set persistent_workers=True, num_workers=1"
    synchronize = Fix("Synchronize", (Edit(None, Range(0, 0, 0, 1), "torch.cuda.synchronize()"),))
    assert sweep.setting_of(synchronize) is None and sweep.setting_of(None) is None
    assert sweep.plan([replace(tpl104, fix=synchronize)], 2) is None


@timeout(360)
def test_sweep_of_a_loader_bound_loop_picks_workers_and_applies_them(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)
    ran = subprocess.run([sys.executable, "-m", "perf_lint", "profile", str(script), "--rule", "TPL101", "--sweep",
                          "--apply", "--steps", "1,1,4", "--format", "json", "--out", str(tmp_path / "traces")],
                         capture_output=True, text=True, timeout=340)
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    found = data["sweep"]
    assert [row["value"] for row in found["candidates"]] == sweep.counts(os.cpu_count())
    assert set(data["variants"]) == {"A"} | {row["variant"] for row in found["candidates"]}
    best = found["winner"]
    assert best is not None, found
    assert best["verdict"] == "confirmed" and best["low"] > 1.05 and best["value"] >= 1
    assert best["ratio"] == max(row["ratio"] for row in found["candidates"] if row["verdict"] == "confirmed")
    assert f"applied to {script}: Set num_workers={best['value']}, persistent_workers=True" in ran.stderr
    assert f"DataLoader(Slow(), batch_size=8, num_workers={best['value']}, persistent_workers=True)" in script.read_text()
    assert data["summary"].endswith(f"; fastest: num_workers={best['value']}, persistent_workers=True "
                                    f"({best['ratio']:.2f}x)")
    (verdict,) = data["verdicts"]  # the finding's verdict: A against the winner
    assert verdict["verdict"] == "confirmed" and f"with the fix ({best['variant']})" in verdict["reason"]
    report = open(data["report_path"]).read()
    assert "## Sweep" in report and f"fastest: Set num_workers={best['value']}" in report


@timeout(360)
def test_sweep_offers_no_winner_when_workers_cannot_help(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(CHEAP_ITEMS)
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=(1, 1, 4), repeats=2, sweep=True,
                                        out_dir=str(tmp_path / "traces")))
    assert result.error is None, result.error
    assert len(result.sweep["candidates"]) == len(sweep.counts(os.cpu_count()))
    assert result.sweep["winner"] is None, result.sweep
    assert not any(row["verdict"] == "confirmed" for row in result.sweep["candidates"])
    assert "no winner: no candidate was confirmed faster than the code as written" in result.to_text()
    assert result.summary().endswith("; sweep: no winner")


def runs(*medians: float) -> list[dict]:
    """Runs of four timed steps around each median."""
    return [{"result": {"active_host_ms": [m * 0.98, m, m, m * 1.02]}} for m in medians]


def test_the_winner_is_confirmed_faster_than_as_written_never_noise(tmp_path):
    planned = sweep.plan([finding(SLOW_DATASET + TRAIN_LOOP, "TPL101", tmp_path)], 2)
    measured = SimpleNamespace(on_gpu=False, failure=None)
    as_written = runs(30, 31, 29)
    noisy = sweep.judged(measured, planned, {"A": as_written, "B1": runs(15, 45, 29), "B2": runs(30, 30.5, 29.5)})
    assert [row["verdict"] for row in noisy["candidates"]] == ["inconclusive", "not confirmed"]
    assert noisy["winner"] is None and noisy["versus"] in ("B1", "B2")
    clear = sweep.judged(measured, planned, {"A": as_written, "B1": runs(20, 21, 19), "B2": runs(15, 16, 14.5)})
    assert clear["winner"]["variant"] == "B2" and clear["winner"]["value"] == 2 and clear["versus"] == "B2"
    assert clear["winner"]["as_fast"] == [] and clear["winner"]["low"] > 1.05
    close = sweep.judged(measured, planned, {"A": as_written, "B1": runs(15.2, 16, 14.8), "B2": runs(15, 16, 14.5)})
    assert close["winner"]["as_fast"] == ["num_workers=1, persistent_workers=True"]
    failed = sweep.judged(SimpleNamespace(on_gpu=False, failure="timeout"), planned,
                          {"A": as_written, "B1": runs(20, 21, 19), "B2": runs(15, 16, 14.5)})
    assert failed["winner"] is None


def test_apply_needs_a_sweep(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_DATASET + TRAIN_LOOP)
    ran = subprocess.run([sys.executable, "-m", "perf_lint", "profile", str(script), "--apply"],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "--apply writes the winner of --sweep: give --sweep too" in ran.stderr
    assert script.read_text() == SLOW_DATASET + TRAIN_LOOP
