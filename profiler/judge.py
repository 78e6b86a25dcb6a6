"""A verdict per finding from the runs' numbers, by the probe's metric, then by device:
an effect that needs a GPU is inconclusive on a CPU whatever the CPU numbers say."""

from __future__ import annotations

from .stats import MIN_PAIRS, busy, compare, ms, quantile

CREATION_SHARE = 0.10  # tensor creation above this share of a timed step distorts it
TIMED = ("step", "epochs", "interval", "warmup", "kernels")  # metrics a busy machine distorts
SPEEDUP = "speed-up (A time / B time)"


def samples(run: dict, on_gpu: bool) -> list[float]:
    """A run's timed steps (without the profiler): CUDA-event intervals on a GPU, host clock
    otherwise; an epoch step cut at the budget is not a step and is left out."""
    result = run["result"]
    times = result["active_event_ms"] if on_gpu and result.get("active_event_ms") else result.get("active_host_ms") or []
    cut = result.get("active_truncated") or []
    return [t for i, t in enumerate(times) if not (i < len(cut) and cut[i])]


def truncated(runs: list[dict]) -> bool:
    return any(any(r["result"].get("active_truncated") or []) for r in runs)


def first_batches(run: dict) -> list[float]:
    """A run's times to the first batch of a DataLoader epoch (ms): the epochs that began in the
    timed steps, else the one they are part of."""
    epochs = run["result"].get("loader_epochs") or []
    for where in ("window", "around"):
        found = [e["first_ms"] for e in epochs if e["where"] == where and e["first_ms"] is not None]
        if found:
            return found
    return []


def interval_samples(runs: list[dict], key: tuple, field: str = "ms", window: bool = True) -> list[list[float]]:
    """Per run, the timed region's intervals: those of the measured steps, or (window=False)
    every one from the program's start."""
    return [[iv[field] for iv in r["result"].get("intervals") or []
             if (iv["start"], iv["end"]) == key and iv.get(field) is not None and (iv.get("window", True) or not window)]
            for r in runs]


class Conclusion:
    """What a metric concludes: verdict, reason, the short text of the summary, ratio, n, what
    the ratio is, and its interval (low, high)."""

    def __init__(self, verdict: str, reason: str, short: str, ratio: float | None = None, n: int = 0,
                 name: str = "", interval: tuple | None = None) -> None:
        self.verdict, self.reason, self.short, self.ratio, self.n = verdict, reason, short, ratio, n
        self.name, self.interval = name, interval

    def but(self, verdict: str, reason: str, short: str) -> Conclusion:
        """Another conclusion from the same numbers."""
        return Conclusion(verdict, reason, short, self.ratio, self.n, self.name, self.interval)


def verdict(result, plan, finding, by_variant: dict, key, versus: str = "B") -> dict:
    """The finding's verdict: A against variant `versus` (the fix; a sweep's winner or best candidate)."""
    probe, on_gpu = plan.probe, result.on_gpu
    out = {"code": finding.code, "verdict": "inconclusive", "ratio": None, "reason": "",
           "metric": probe.metric if probe else None, "n": 0}
    a, b = by_variant.get("A", []), by_variant.get(versus, [])
    if plan.unmeasurable:
        outcome = Conclusion("inconclusive", plan.unmeasurable, "nothing to measure")
    elif result.failure:
        what = {"exception": "the code failed", "oom": "out of memory", "timeout": "timed out", "cancelled": "cancelled",
                "crash": "the run crashed", "processes": "too many processes", "no-torch": "no torch in the interpreter", "internal": "harness failure"}
        reason = result.error.splitlines()[0] if result.error else result.failure
        outcome = Conclusion("inconclusive", reason, what.get(result.failure, result.failure))
    elif probe.metric == "syncs" and not on_gpu:
        outcome = Conclusion("inconclusive", f"not measurable on CPU: {probe.cpu_gap}", "not measurable on CPU")
    elif probe.metric in ALONE:
        outcome = ALONE[probe.metric](result, a, key, on_gpu)
    elif not b:
        reason = next((n for n in result.notes if "fix" in n), "nothing to compare the code with")
        outcome = Conclusion("inconclusive", reason, "no fix or probe to compare with")
    else:
        outcome = COMPARED[probe.metric](result, a, b, key, on_gpu, versus)
    eager = eager_fix(result) if probe is not None and probe.distributed and b and not result.failure else None
    if eager:
        gap = "" if on_gpu else f"; no GPU either: {probe.cpu_gap}"
        outcome = Conclusion("inconclusive", f"{eager}; {compile_text(result)}{gap}", "the fix compiled nothing (B ran eagerly)")
    elif probe is not None and probe.distributed and not result.failure:
        outcome.reason += "; " + compile_text(result)
    if probe is not None and probe.metric in TIMED and outcome.interval and not result.failure:
        caution(result, outcome, [[samples(r, on_gpu) for r in runs] for runs in (a, b)])
    if probe is not None and not on_gpu and not (result.failure or plan.unmeasurable or eager or probe.metric == "syncs"):
        if probe.needs_gpu(finding.code):
            outcome = outcome.but("inconclusive", f"no GPU: {probe.cpu_gap}; measured on CPU: {outcome.reason}", "no GPU")
        elif probe.cpu_confirms and outcome.verdict != "confirmed":
            outcome = outcome.but("inconclusive", f"not shown on CPU: {probe.cpu_gap}; measured on CPU: {outcome.reason}",
                                  "not shown on CPU (no GPU)")
    out.update(verdict=outcome.verdict, reason=outcome.reason, n=outcome.n, ratio_name=outcome.name or None,
               ratio=None if outcome.ratio is None else round(outcome.ratio, 3),
               ratio_interval=None if outcome.interval is None else [round(x, 3) for x in outcome.interval])
    device = "GPU" if on_gpu else "CPU"
    n = f", n={outcome.n}" if outcome.n else ""
    out["summary"] = f"{finding.code} {outcome.verdict}: {outcome.short} ({device}{n})"
    out["sentence"] = f"Profiled on {device}: {outcome.verdict}, {outcome.short}{f' (n={outcome.n})' if outcome.n else ''}."
    return out


def caution(result, outcome: Conclusion, runs: list) -> None:
    """Say so, with advice, when the machine was busy before or during the runs (load, or
    repeats that disagree): in the reason, and in the short text of an inconclusive verdict."""
    machine = result.machine or {}
    loads = [x[0] for x in [machine.get("load_before")] + [r.get("load") for r in result.runs] if x]
    note = busy(loads, machine.get("cpus"), runs)
    if note:
        advice = (f"{note}: rerun on an idle machine, with more repeats (--repeats {max(2 * result.repeats, MIN_PAIRS)}) "
                  "or more warm-up and active steps (--steps)")
        outcome.reason += "; " + advice
        if outcome.verdict == "inconclusive":
            outcome.short += "; " + advice


# -- A against B ----------------------------------------------------------------------------------------------
def _from(judged, shown: str, confirmed: str, refuted: str, opposite: str, n: int) -> Conclusion:
    """The outcome of `compare`, its short text led by the label of its verdict."""
    if judged.ratio is None:
        return Conclusion(judged.verdict, judged.reason + (f"; {shown}" if shown else ""), judged.reason, None, n)
    label = {"confirmed": confirmed, "not confirmed": opposite if judged.opposite else refuted}.get(
        judged.verdict, "noise larger than the difference" if judged.pairs >= MIN_PAIRS else "one pair of runs only")
    reason = judged.reason + (f"; {shown}" if shown else "")
    return Conclusion(judged.verdict, reason, f"{label}: {judged.text}", judged.ratio, n, judged.name, (judged.low, judged.high))


def step_times(result, a, b, key, on_gpu, versus: str = "B", name: str = SPEEDUP, step: str = "step") -> Conclusion:
    judged = compare([samples(r, on_gpu) for r in a], [samples(r, on_gpu) for r in b], name)
    sa, sb = result.variants["A"]["step_ms"], result.variants[versus]["step_ms"]
    n = min(sa["n"], sb["n"]) if sa and sb else 0
    shown = f"median {step} {ms(sa['median'])} as written (A), {ms(sb['median'])} with the fix ({versus})" if sa and sb else ""
    shown += startup_text(result, versus, whole=step == "step")
    return _from(judged, shown, "faster with the fix", "no speed-up beyond the noise", "slower with the fix", n)


def epochs(result, a, b, key, on_gpu, versus: str = "B") -> Conclusion:
    """Whole epochs A/B; when epochs ran past the budget and were cut, the time to each
    epoch's first batch (the workers' start-up) instead: a cut epoch is not a step."""
    if not truncated(a + b):
        return step_times(result, a, b, key, on_gpu, versus, "whole-epoch speed-up (A epoch / B epoch)", "whole epoch")
    budget = next((r["result"].get("epoch_budget_s") for r in a + b if r["result"].get("epoch_budget_s")), None)
    judged = compare([first_batches(r) for r in a], [first_batches(r) for r in b],
                     "start-up speed-up (A / B time to an epoch's first batch)")
    cut = (f"epochs ran past the {budget:.3g} s budget per epoch and were cut, so no whole-epoch time is given "
           "(raise --timeout); compared instead: the time to each epoch's first batch") if budget else "epochs were cut"
    n = min(sum(len(first_batches(r)) for r in a), sum(len(first_batches(r)) for r in b))
    return _from(judged, cut + startup_text(result, versus), "the first batch of an epoch comes sooner with the fix",
                 "no start-up difference beyond the noise", "the first batch comes later with the fix", n)


def startup_text(result, versus: str = "B", whole: bool = False) -> str:
    """The workers' start-up (time to an epoch's first batch) and, with `whole`, whole DataLoader
    epochs, of A and variant `versus`, or nothing without a DataLoader."""
    va, vb = result.variants.get("A") or {}, result.variants.get(versus) or {}
    fa, fb = va.get("first_batch_ms"), vb.get("first_batch_ms")
    if not (fa or fb):
        return ""
    text = f"; time to an epoch's first batch (workers' start-up) {ms(fa and fa['median'])} (A), {ms(fb and fb['median'])} ({versus})"
    if not whole:
        return text
    ea, eb = va.get("epoch_ms"), vb.get("epoch_ms")
    if ea and eb:
        return text + f", whole DataLoader epochs {ms(ea['median'])} (A), {ms(eb['median'])} ({versus})"
    return text + "; no DataLoader epoch ran whole in the timed steps"


def intervals(result, a, b, key, on_gpu, versus: str = "B") -> Conclusion:
    if key is None:
        return Conclusion("inconclusive", "the timed region's clock reads did not run during the measured steps",
                       "timed region not reached")
    judged = compare(interval_samples(b, key), interval_samples(a, key), "under-reporting (B interval / A interval)")
    ia, ib = result.variants["A"].get("interval_ms"), result.variants[versus].get("interval_ms")
    n = min(ia["n"], ib["n"]) if ia and ib else 0
    shown = (f"the code's clock shows {ms(ia['median'])} (A), {ms(ib['median'])} after synchronize (B)"
             if ia and ib else "")
    return _from(judged, shown, "the code's clock under-reports", "no under-reporting", "no under-reporting", n)


def memory(result, a, b, key, on_gpu, versus: str = "B") -> Conclusion:
    peaks = lambda runs: [(r["result"].get("profile") or {}).get("memory_peaks_mb") or [] for r in runs]  # noqa: E731
    judged = compare(peaks(a), peaks(b), "memory saving (A peak / B peak)")
    ma, mb = result.variants["A"]["memory_peak_mb"], result.variants[versus]["memory_peak_mb"]
    sa, sb = result.variants["A"]["step_ms"], result.variants[versus]["step_ms"]
    n = min(ma["n"], mb["n"]) if ma and mb else 0
    shown = f"peak per step {ma['median']:.3g} MB as written (A), {mb['median']:.3g} MB with the fix (B)" if ma and mb else ""
    if sa and sb:
        shown += f"; median step {ms(sa['median'])} (A), {ms(sb['median'])} (B)"
    return _from(judged, shown, "less memory per step with the fix", "no memory saving beyond the noise",
                 "more memory per step with the fix", n)


def kernels(result, a, b, key, on_gpu, versus: str = "B") -> Conclusion:
    va, vb = result.variants["A"], result.variants[versus]
    runs = min(va["runs"], vb["runs"])
    step = step_times(result, a, b, key, on_gpu, versus)
    if va["kernel_sets"] is None or vb["kernel_sets"] is None:
        return step.but("inconclusive", f"no GPU kernels were recorded; {step.reason}", "no GPU kernels")
    if runs < 2:
        return Conclusion("inconclusive", "comparing kernel choices needs at least 2 runs per variant", "too few runs")
    sets_a, sets_b = va["kernel_sets"], vb["kernel_sets"]
    if sets_a > 1 and sets_b <= 1:
        return step.but("confirmed", f"as written, {sets_a} different kernel sets in {va['runs']} runs; with the fix, "
                                     f"the same kernels every run; {step.reason}",
                        f"kernel choice changed between runs ({sets_a} sets in {va['runs']} runs)")
    if sets_a <= 1:
        return step.but("not confirmed", f"the same kernels in all {va['runs']} runs as written: the profile was "
                                         f"reproducible here; {step.reason}", "same kernels in every run")
    return Conclusion("inconclusive", f"kernel sets differ with the fix too ({sets_b} in {vb['runs']} runs)",
                   "kernels vary either way", step.ratio, step.n)


COMPARED = {"step": step_times, "epochs": epochs, "interval": intervals, "memory": memory, "kernels": kernels}


# -- the code as written alone --------------------------------------------------------------------------------------
def _profiles(runs: list[dict]) -> list[dict]:
    return [r["result"]["profile"] for r in runs if r["result"].get("profile") and r["result"]["profile"]["steps_ms"]]


def syncs(result, a, key, on_gpu) -> Conclusion:
    profiles = _profiles(a)
    if not profiles:
        return Conclusion("inconclusive", "no measured steps", "nothing measured")
    per_run = [p["syncs"] / len(p["steps_ms"]) for p in profiles]
    metrics = result.variants["A"]
    ops = ", ".join(f"{name} {n:.3g}" for name, n in sorted(metrics["sync_ops_per_step"].items())) or "none"
    per_step = metrics["syncs_per_step"]
    lines = ", ".join(f"{line}: {n:.3g}" for line, n in sorted(metrics["sync_lines_per_step"].items(), key=lambda x: -x[1]))
    where = f"; by source (a line, or its function's first line): {lines}" if lines else ""
    shown = (f"{per_step:.3g} host-device sync(s) per step ({ops}{where}), "
             f"{metrics['dtoh_per_step'] or 0:.3g} device-to-host copies per step")
    n = sum(len(p["steps_ms"]) for p in profiles)
    waited = [p["sync_ms"] / sum(p["steps_ms"]) for p in profiles if sum(p["steps_ms"]) > 0]
    if min(per_run) >= 1:
        wait = f"; the host waited in them {quantile(waited, 0.5):.0%} of the step" if waited else ""
        return Conclusion("confirmed", f"{shown} in every run{wait}", f"{per_step:.3g} host-device sync(s) per step", per_step, n,
                       "syncs per step")
    return Conclusion("not confirmed", f"fewer than one sync per step in some run: {shown}", "no sync on every step", per_step, n,
                   "syncs per step")


def compiles(result, a, key, on_gpu) -> Conclusion:
    counts = []
    for run in a:
        window = run["result"].get("compile_at_window")
        end = run["result"].get("compile_after_window") or run["result"].get("compile")
        if window and end:
            counts.append((end["frames"] - window["frames"], end["recompiles"] - window["recompiles"]))
    if not counts:
        return Conclusion("inconclusive", "torch.compile's counters were not available", "no compile counters")
    steps = result.steps[2]
    frames = [c[0] for c in counts]
    shown = (f"frames compiled during the {steps} measured steps: {', '.join(map(str, frames))} per run; recompiles: "
             f"{', '.join(str(c[1]) for c in counts)}; {compile_text(result)}")
    if min(frames) > 0:
        return Conclusion("confirmed", shown, f"{quantile(frames, 0.5):.0f} compilation(s) during {steps} measured steps",
                       float(quantile(frames, 0.5)), len(counts), "compilations per run")
    if max(frames) == 0:
        return Conclusion("not confirmed", shown + " (the compiled code was reused; left: the wrapper's guard checks)",
                       "nothing compiled during the measured steps", 0.0, len(counts), "compilations per run")
    return Conclusion("inconclusive", shown, "compiled in some runs only", None, len(counts))


def warmup(result, a, key, on_gpu) -> Conclusion:
    if key is None:
        return Conclusion("inconclusive", "the timed region's clock reads did not run", "timed region not reached")
    firsts = [run[:1] for run in interval_samples(a, key, window=False)]
    later = interval_samples(a, key)
    judged = compare(firsts, later, "warm-up cost (first timed run / later ones)")
    first, warm = result.variants["A"].get("first_interval_ms"), result.variants["A"].get("interval_ms")
    shown = f"first timed run {ms(first['median'])}, later runs {ms(warm['median'])}" if first and warm else ""
    return _from(judged, shown, "the first timed run is the slow one", "no warm-up cost", "no warm-up cost",
                 sum(1 for run in firsts if run))


def creation(result, a, key, on_gpu) -> Conclusion:
    profiles = _profiles(a)
    if not profiles:
        return Conclusion("inconclusive", "no measured steps", "nothing measured")
    shares = [p["factory_ms"] / sum(p["steps_ms"]) for p in profiles if sum(p["steps_ms"]) > 0]
    share = quantile(shares, 0.5)
    shown = (f"creating tensors (randn, zeros, empty, ...) took {share:.0%} of each timed step "
             f"({', '.join(f'{s:.0%}' for s in shares)} per run)")
    n = result.variants["A"]["step_ms"]["n"] if result.variants["A"]["step_ms"] else 0
    name = "share of the step creating tensors"
    if min(shares) >= CREATION_SHARE:
        return Conclusion("confirmed", shown, f"tensor creation is {share:.0%} of the timed step", share, n, name)
    if max(shares) < CREATION_SHARE:
        return Conclusion("not confirmed", shown + f" (under {CREATION_SHARE:.0%})",
                       f"tensor creation is only {share:.0%} of the timed step", share, n, name)
    return Conclusion("inconclusive", shown, "runs disagree", share, n, name)


ALONE = {"syncs": syncs, "compiles": compiles, "warmup": warmup, "alloc-share": creation}


def eager_fix(result) -> str | None:
    """Why B is no compiled variant, when dynamo captured no graph in it (and some in A)."""
    ca, cb = (result.variants.get(name, {}).get("compile") for name in ("A", "B"))
    if not ca or not cb or cb["graphs"] or not ca["graphs"]:
        return None
    return (f"the fix variant (B) compiled nothing: dynamo captured 0 graphs in B ({cb['frames']} frames tried, "
            f"{cb['graph_breaks']} graph breaks) against {ca['graphs']} in A, so B ran eagerly and comparing it with "
            "compiled A says nothing about compiling after DDP")


def compile_text(result) -> str:
    parts = []
    for name, metrics in result.variants.items():
        c = metrics.get("compile")
        if c:
            reasons = f" ({'; '.join(c['break_reasons'])})" if c.get("break_reasons") else ""
            parts.append(f"{name}: {c['graphs']} graphs, {c['graph_breaks']} graph breaks{reasons}, "
                         f"{c['recompiles']} recompiles")
    return "; ".join(parts) or "no compile counters"
