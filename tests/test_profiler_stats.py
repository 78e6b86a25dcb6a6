"""The profiler's statistics on made-up step times: the ratio's bootstrap interval over
interleaved pairs of runs, its verdicts, the busy-machine check, and the wording that
names the ratio (speed-up = A time / B time). The last test runs `perf-lint profile`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

from perf_lint.profiler.judge import verdict
from perf_lint.profiler.probes import probe_for
from perf_lint.profiler.stats import MARGIN, busy, compare, interval, spread

from .timeouts import timeout

SPEEDUP = "speed-up (A time / B time)"
SLOW = [[10.0, 10.5, 9.8], [10.4, 10.1, 10.6], [9.9, 10.3, 10.0]]  # run medians 10, 10.4, 10
FAST = [[5.0, 5.2, 4.9], [5.1, 5.0, 5.3], [4.8, 5.2, 5.0]]  # 5, 5.1, 5
NOISY = [[5.0, 15.0, 5.1], [14.0, 5.2, 13.0], [5.1, 14.5, 6.0]]  # 5.1, 13, 6: the first pair within the noise
INTERVAL = re.compile(r"95% interval \d+\.\d\d-\d+\.\d\dx")


def test_clearly_faster_is_confirmed_with_the_whole_interval_above_the_band():
    judged = compare(SLOW, FAST, SPEEDUP)
    assert judged.verdict == "confirmed" and 2.0 < judged.ratio < 2.04
    assert 1 + MARGIN < judged.low == 2.0 < judged.ratio < judged.high < 2.04  # 3 pairs: the interval spans them
    assert judged.reason.startswith("the whole interval is above the 5% noise band: speed-up (A time / B time) 2.01x")
    assert INTERVAL.search(judged.reason) and "from 3 interleaved pairs of runs" in judged.reason


def test_clearly_slower_is_the_opposite():
    judged = compare(FAST, SLOW, SPEEDUP)
    assert judged.verdict == "not confirmed" and judged.opposite and judged.high < 1
    assert judged.reason.startswith("the opposite: every pair and the whole interval below 1: speed-up")


def test_same_times_are_no_difference_within_the_band():
    judged = compare(SLOW, SLOW, SPEEDUP)
    assert judged.verdict == "not confirmed" and not judged.opposite
    assert judged.low == judged.ratio == judged.high == 1
    close = compare([[10.0, 10.2, 9.9], [10.3, 10.1, 10.2]], [[10.1, 10.0, 10.2], [10.0, 9.9, 10.0]], SPEEDUP)
    assert close.verdict == "not confirmed" and 1 - MARGIN <= close.low < 1 < close.high <= 1 + MARGIN


def test_noisy_overlapping_times_are_inconclusive_with_the_interval_shown():
    judged = compare(NOISY, FAST, SPEEDUP)
    assert judged.verdict == "inconclusive" and 1 < judged.low <= 1 + MARGIN < judged.high
    assert judged.reason.startswith("noise larger than the difference") and INTERVAL.search(judged.reason)
    # faster in one pair, slower in another: not said to be slower either
    mixed = compare([[4.0, 4.1, 4.0], [6.0, 6.1, 6.2]], [[5.0, 5.1, 5.0], [5.0, 5.2, 5.1]], SPEEDUP)
    assert mixed.verdict == "inconclusive" and mixed.low < 1 < mixed.high


def test_tiny_samples_decide_nothing():
    assert compare([[1.0]], [[1.0]], SPEEDUP).reason.startswith("too few measured steps (1 and 1")
    assert compare([[2.0, 2.0]], [[1.0, 1.0]], SPEEDUP).ratio is None
    one_pair = compare(SLOW[:1], FAST[:1], SPEEDUP)  # clear, but one pair shows no run-to-run noise
    assert one_pair.verdict == "inconclusive" and one_pair.ratio == 2.0
    assert one_pair.reason.startswith("one pair of runs cannot show the noise from run to run")
    assert compare([[1.0, 1.0, 1.0]] * 2, [[0.0, 0.0, 1.0]] * 2, SPEEDUP).reason.endswith("a value too small to compare")
    # an empty run (a failed repeat) drops its pair, and the pairs after it stay paired
    assert compare([[], *SLOW], [[1.0, 1.0, 1.0], *FAST], SPEEDUP).pairs == 3


def test_pairs_cancel_a_machine_that_slows_down_between_repeats():
    drift = [1.0, 1.6, 2.4]  # each repeat slower than the last, A and B alike
    a = [[3.0 * d, 3.1 * d, 2.9 * d] for d in drift]
    b = [[2.0 * d, 2.05 * d, 1.95 * d] for d in drift]
    judged = compare(a, b, SPEEDUP)
    assert judged.verdict == "confirmed" and 1.4 < judged.low < judged.high < 1.6
    assert spread([x for r in a for x in r])["q1"] < spread([x for r in b for x in r])["q3"]  # pooled, they overlap


def test_the_interval_is_the_same_every_time_and_narrows_with_more_pairs():
    ratios = [1.02, 1.3, 1.1, 1.25, 0.98, 1.15, 1.2, 1.08, 1.12, 1.18]
    assert interval(ratios) == interval(ratios)
    low, high = interval(ratios)
    assert min(ratios) < low < 1.1 < high < max(ratios)
    assert interval(ratios[:3]) == (min(ratios[:3]), max(ratios[:3]))


def test_busy_machine_is_named_by_load_or_by_repeats_that_disagree():
    steady = [FAST, FAST]
    assert busy([0.4, 1.2], 2, steady) is None
    assert busy([0.4, 3.5], 2, steady) == "busy machine (load 3.5 on 2 CPUs)"
    unsteady = [[[5.0, 5.1, 5.0], [9.0, 8.9, 9.2]], FAST]  # no load known, A's two repeats disagree
    assert busy([], None, unsteady) == "unsteady timings (repeats of the same code 80% apart)"
    assert busy([4.0], 2, [NOISY]).startswith("busy machine (load 4.0 on 2 CPUs), unsteady timings (")


def judged_step_times(a: list[list[float]], b: list[list[float]], loads: list[float], cpus: int = 2) -> dict:
    """judge.verdict of TPL101 (step time) on made-up runs, as on a CPU with this load."""
    variants = {"A": a, "B": b}
    runs = {name: [{"result": {"active_host_ms": steps}} for steps in v] for name, v in variants.items()}
    result = SimpleNamespace(
        failure=None, on_gpu=False, notes=[], repeats=len(a), machine={"cpus": cpus, "load_before": [loads[0], 0, 0]},
        runs=[{"load": [x, 0, 0]} for x in loads[1:]],
        variants={name: {"step_ms": spread([x for steps in v for x in steps])} for name, v in variants.items()})
    plan = SimpleNamespace(probe=probe_for("TPL101", "dataloader"), unmeasurable=None)
    return verdict(result, plan, SimpleNamespace(code="TPL101"), runs, None)


def test_verdict_sentences_name_the_speed_up_and_its_interval():
    faster = judged_step_times(SLOW, FAST, [0.5, 0.8])
    assert faster["verdict"] == "confirmed" and faster["ratio_name"] == SPEEDUP and faster["ratio"] == 2.013
    assert faster["ratio_interval"][0] > 1 + MARGIN
    assert faster["sentence"] == f"Profiled on CPU: confirmed, faster with the fix: {SPEEDUP} 2.01x, 95% interval 2.00-2.04x (n=9)."
    assert faster["summary"].endswith("(CPU, n=9)") and "busy" not in faster["reason"]
    assert "median step 10.1 ms as written (A), 5 ms with the fix (B)" in faster["reason"]
    slower = judged_step_times(FAST, SLOW, [0.5])
    assert slower["verdict"] == "not confirmed" and slower["ratio"] == 0.497
    assert slower["sentence"] == f"Profiled on CPU: not confirmed, slower with the fix: {SPEEDUP} 0.50x, 95% interval 0.49-0.50x (n=9)."
    same = judged_step_times(SLOW, SLOW, [0.5])
    assert same["sentence"].startswith("Profiled on CPU: not confirmed, no speed-up beyond the noise: speed-up")


def test_a_busy_machine_gets_advice_instead_of_a_coin_flip():
    noisy = judged_step_times(NOISY, FAST, [3.2, 3.9, 4.4])
    assert noisy["verdict"] == "inconclusive" and INTERVAL.search(noisy["sentence"])
    assert noisy["sentence"].startswith(f"Profiled on CPU: inconclusive, noise larger than the difference: {SPEEDUP} 1.46x")
    assert ("busy machine (load 4.4 on 2 CPUs), unsteady timings (repeats of the same code 155% apart): rerun on an "
            "idle machine, with more repeats (--repeats 6) or more warm-up and active steps (--steps)") in noisy["sentence"]
    clear = judged_step_times(SLOW, FAST, [3.2, 3.9, 4.4])  # a clear result stands, with the caution in its reason
    assert clear["verdict"] == "confirmed" and "busy" not in clear["sentence"] and "busy machine (load 4.4" in clear["reason"]


@timeout(300)
def test_profile_command_names_the_speed_up_and_its_interval(tmp_path):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    example = os.path.join(repo, "examples", "profile", "dataloader_sync.py")
    ran = subprocess.run([sys.executable, "-m", "perf_lint", "profile", example, "--rule", "TPL101", "--steps", "1,1,3",
                          "--repeats", "2", "--format", "json", "--out", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=280)
    assert ran.returncode == 0, ran.stderr
    (judged,) = json.loads(ran.stdout)["verdicts"]
    assert judged["code"] == "TPL101" and judged["ratio_name"] == SPEEDUP and len(judged["ratio_interval"]) == 2
    said = re.search(re.escape(SPEEDUP) + r" (\d+\.\d\d)x", judged["sentence"])  # (the JSON ratio is rounded to 3
    assert said and abs(float(said[1]) - judged["ratio"]) <= 0.0051, judged  # places, the sentence's from the exact one)
    assert INTERVAL.search(judged["sentence"]), judged
    report = open(os.path.join(json.loads(ran.stdout)["trace_dir"], "report.md")).read()
    assert SPEEDUP in report and INTERVAL.search(report)
