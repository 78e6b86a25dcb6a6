"""From the children's JSON to per-variant metrics and per-finding verdicts."""

from __future__ import annotations

import json
import os
from collections import Counter

from . import report
from .program import finding_place
from .verdict import compare, quantile, spread

_MS = "{:.3g} ms"


def samples(run: dict, on_gpu: bool) -> list[float]:
    """A run's active step times: CUDA-event intervals on a GPU, host clock otherwise."""
    result = run["result"]
    if on_gpu and result.get("active_event_ms"):
        return result["active_event_ms"]
    return result.get("active_host_ms") or []


def _per_step(profile: dict, value) -> float | None:
    steps = len(profile.get("steps_ms") or [])
    return None if value is None or not steps else value / steps


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return quantile(values, 0.5) if values else None


def variant_metrics(label: str, runs: list[dict], on_gpu: bool) -> dict:
    profiles = [r["result"].get("profile") for r in runs if r["result"].get("profile")]
    pooled = [x for r in runs for x in samples(r, on_gpu)]
    sync_ops: Counter = Counter()
    for profile in profiles:
        for name, count in profile["sync_ops"].items():
            sync_ops[name] += count / max(len(profile["steps_ms"]), 1) / len(profiles)
    last = runs[-1]["result"] if runs else {}
    window = last.get("compile_at_window")
    compiled = last.get("compile")
    metrics = {
        "label": label,
        "runs": len(runs),
        "step_ms": spread(pooled),
        "run_medians_ms": [quantile(samples(r, on_gpu), 0.5) for r in runs if samples(r, on_gpu)],
        "host_step_ms": spread([x for r in runs for x in r["result"].get("active_host_ms") or []]) if on_gpu else None,
        "dataloader_share": _median([p["dataloader_ms"] / sum(p["steps_ms"]) for p in profiles
                                     if p["dataloader_ms"] is not None and sum(p["steps_ms"]) > 0]),
        "syncs_per_step": _median([_per_step(p, p["syncs"]) for p in profiles]),
        "sync_ops_per_step": dict(sync_ops),
        "kernel_ms_per_step": _median([_per_step(p, p.get("kernel_ms")) for p in profiles]),
        "memcpy_ms_per_step": _median([_per_step(p, p.get("memcpy_ms")) for p in profiles]),
        "pageable_copies_per_step": _median([
            _per_step(p, sum(n for name, n in p["memcpy"].items() if "Pageable" in name)) for p in profiles
        ]) if on_gpu else None,
        "kernel_sets": len({p["kernel_digest"] for p in profiles if p.get("kernel_digest")}) if on_gpu else None,
        "top_kernels": profiles[0]["top_kernels"] if on_gpu and profiles else [],
        "peak_memory_mb": max((r["result"].get("cuda_peak_mb" if on_gpu else "peak_rss_mb") or 0 for r in runs), default=None),
        "memory_kind": "CUDA memory allocated" if on_gpu else "process RSS",
        "compile": compiled,
        "compiled_in_window": bool(window and compiled and compiled["frames"] > window["frames"]),
        "completed_runs": sum(1 for r in runs if r["result"].get("done")),
        "wall_s": [round(r["result"].get("wall_s", 0.0), 2) for r in runs],
    }
    return metrics


# -- timed regions (clock and magic probes) ---------------------------------------------------------
def _site(site: str) -> tuple:
    parts = site.split(":")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else (site,)


def region(runs: list[dict], place: tuple[int, int, int]) -> tuple | None:
    """The (start, end) clock sites of the timed region: consecutive reads going forward in
    the source, preferring those on the finding's lines, then the most frequent."""
    counts = Counter((iv["start"], iv["end"]) for r in runs for iv in r["result"].get("intervals") or [])
    if ("start", "end") in counts:
        return "start", "end"
    chunk, first, last = place

    def on_finding(site: tuple) -> int:
        return int(len(site) == 3 and site[0] == chunk and first <= site[1] <= last)

    forward = [key for key in counts if len(_site(key[0])) == 3 and _site(key[0])[0] == _site(key[1])[0]
               and _site(key[0])[1:] < _site(key[1])[1:]]
    if not forward:
        return None
    return max(forward, key=lambda k: (on_finding(_site(k[0])) + on_finding(_site(k[1])), counts[k]))


def interval_samples(runs: list[dict], key: tuple, field: str = "ms") -> list[list[float]]:
    return [[iv[field] for iv in r["result"].get("intervals") or []
             if (iv["start"], iv["end"]) == key and iv.get(field) is not None] for r in runs]


# -- verdicts --------------------------------------------------------------------------------------------------
def finish(result, plan, runs: list[dict]) -> None:
    """Fill `result.device/variants/runs/verdicts/notes` from the runs."""
    devices = [r["result"].get("device") for r in runs if r["result"].get("device")]
    result.device = devices[0] if devices else None
    on_gpu = result.on_gpu
    by_variant = {v.name: [r for r in runs if r["variant"] == v.name] for v in plan.variants}
    labels = {v.name: v.label for v in plan.variants}
    for name, variant_runs in by_variant.items():
        if variant_runs:
            result.variants[name] = variant_metrics(labels[name], variant_runs, on_gpu)
    result.runs = [run_summary(r, on_gpu) for r in runs]
    for run in runs:
        for note in run["result"].get("notes") or []:
            if note not in result.notes:
                result.notes.append(note)
    notebook = plan.source.kind == "notebook"
    key = None
    if plan.probe.metric == "interval":
        key = region(by_variant.get("A", []), finding_place(plan.findings[0], plan.chunks, notebook))
        for name, variant_runs in by_variant.items():
            if name in result.variants and key is not None:
                result.variants[name]["interval_ms"] = spread([x for run in interval_samples(variant_runs, key) for x in run])
                if on_gpu:
                    events = [x for run in interval_samples(variant_runs, key, "event_ms") for x in run]
                    result.variants[name]["interval_event_ms"] = spread(events)
    _notes(result, plan)
    result.verdicts = [verdict(result, plan, finding, by_variant, key, on_gpu) for finding in plan.findings]


def _notes(result, plan) -> None:
    for name, metrics in result.variants.items():
        if metrics["compiled_in_window"]:
            result.notes.append(f"variant {name}: torch.compile compiled during the measured steps; give more warm-up steps")
        wanted = result.steps[2] * metrics["runs"] if result.steps else 0
        got = metrics["step_ms"]["n"] if metrics["step_ms"] else 0
        if metrics["runs"] and got < wanted and result.failure is None:
            result.notes.append(f"variant {name}: {got} of {wanted} active steps ran (the loop ended early)")


def verdict(result, plan, finding, by_variant: dict, key, on_gpu: bool) -> dict:
    code = finding.code
    probe = plan.probe
    a, b = by_variant.get("A", []), by_variant.get("B", [])
    device = "GPU" if on_gpu else "CPU"
    out = {"code": code, "verdict": "inconclusive", "ratio": None, "reason": "", "metric": probe.metric, "n": 0}

    def done(short: str) -> dict:
        n = f", n={out['n']}" if out["n"] else ""
        out["summary"] = f"{code} {out['verdict']}: {short} ({device}{n})"
        return out

    if plan.unmeasurable:
        out["reason"] = plan.unmeasurable
        return done("nothing runs")
    if result.failure:
        what = {"exception": "the code failed", "oom": "out of memory", "timeout": "timed out", "cancelled": "cancelled",
                "crash": "the run crashed", "no-torch": "no torch in the interpreter", "internal": "harness failure"}
        out["reason"] = result.error.splitlines()[0] if result.error else result.failure
        return done(what.get(result.failure, result.failure))
    if probe.metric == "syncs":
        return done(sync_verdict(out, result, a, probe, on_gpu))
    if not b:
        out["reason"] = next((n for n in result.notes if "fix" in n), "nothing to compare the code with")
        return done("no fix or probe to compare with")
    if probe.metric == "interval":
        if key is None:
            out["reason"] = "the timed region's clock reads did not run during the measured steps"
            return done("timed region not reached")
        judged = compare(interval_samples(b, key), interval_samples(a, key), "the timed interval")
        a_ms, b_ms = result.variants["A"]["interval_ms"], result.variants["B"]["interval_ms"]
        out["n"] = min(a_ms["n"], b_ms["n"]) if a_ms and b_ms else 0
        shown = (f"the code's clock shows {_MS.format(a_ms['median'])}, {_MS.format(b_ms['median'])} after synchronize"
                 if a_ms and b_ms else "")
    else:
        judged = compare([samples(r, on_gpu) for r in a], [samples(r, on_gpu) for r in b], "step time")
        steps_a, steps_b = result.variants["A"]["step_ms"], result.variants["B"]["step_ms"]
        out["n"] = min(steps_a["n"], steps_b["n"]) if steps_a and steps_b else 0
        shown = (f"{_MS.format(steps_a['median'])} -> {_MS.format(steps_b['median'])} per step"
                 if steps_a and steps_b else "")
    if probe.distributed:
        shown = f"{shown}; {compile_text(result)}"
    out["ratio"] = round(judged.ratio, 3) if judged.ratio is not None else None
    if probe.needs_gpu(code) and not on_gpu:
        out["reason"] = f"no GPU: {probe.cpu_gap}" + (f"; measured on CPU: {shown}" if shown else "")
        return done("no GPU")
    if probe.metric == "kernels":
        return done(kernel_verdict(out, result, judged))
    out["verdict"], out["reason"] = judged.verdict, judged.reason + (f"; {shown}" if shown else "")
    if judged.verdict == "confirmed":
        if probe.metric == "interval":
            return done(f"{shown} ({judged.ratio:.1f}x under-reported)")
        return done(f"{judged.ratio:.1f}x faster with the fix")
    if judged.verdict == "not confirmed":
        if probe.metric == "interval":
            return done(f"{shown}: no under-reporting")
        return done(f"{judged.ratio:.2f}x with the fix, no speed-up beyond the noise")
    return done("noise larger than the difference" if judged.ratio is not None else judged.reason)


def sync_verdict(out: dict, result, runs: list[dict], probe, on_gpu: bool) -> str:
    """Syncs of the code as written: at least one per step in every run?"""
    per_run = []
    for run in runs:
        profile = run["result"].get("profile")
        if profile and profile["steps_ms"]:
            per_run.append(profile["syncs"] / len(profile["steps_ms"]))
    if not per_run:
        out["reason"] = "no measured steps"
        return "nothing measured"
    metrics = result.variants["A"]
    ops = ", ".join(f"{name} {n:.3g}" for name, n in sorted(metrics["sync_ops_per_step"].items())) or "none"
    shown = f"{metrics['syncs_per_step']:.3g} host-device sync(s) per step ({ops})"
    out["ratio"] = round(metrics["syncs_per_step"], 3)
    out["n"] = metrics["step_ms"]["n"] if metrics["step_ms"] else 0
    if not on_gpu:
        out["reason"] = f"no GPU: {probe.cpu_gap}; counted on CPU: {shown}"
        return f"no GPU; counted {metrics['syncs_per_step']:.3g} sync(s) per step"
    waited = _median([
        (run["result"]["profile"]["sync_ms"] / sum(run["result"]["profile"]["steps_ms"]))
        for run in runs if run["result"].get("profile") and sum(run["result"]["profile"]["steps_ms"]) > 0
    ])
    if min(per_run) >= 1:
        out["verdict"] = "confirmed"
        out["reason"] = f"{shown} in every run" + (f"; the host waited in them {waited:.0%} of the step" if waited is not None else "")
        return f"{metrics['syncs_per_step']:.3g} host-device sync(s) per step"
    out["verdict"] = "not confirmed"
    out["reason"] = f"fewer than one sync per step in some run: {shown}"
    return "no sync on every step"


def kernel_verdict(out: dict, result, judged) -> str:
    a, b = result.variants["A"], result.variants["B"]
    runs = min(a["runs"], b["runs"])
    if runs < 2:
        out["reason"] = "comparing kernel choices needs at least 2 runs per variant"
        return "too few runs"
    if a["kernel_sets"] > 1 and b["kernel_sets"] == 1:
        out["verdict"] = "confirmed"
        out["reason"] = (f"as written, the runs used {a['kernel_sets']} different kernel sets in {a['runs']} runs; with "
                         f"the fix, the same kernels every run")
        return f"kernel choice changed between runs ({a['kernel_sets']} sets in {a['runs']} runs)"
    if a["kernel_sets"] <= 1:
        out["verdict"] = "not confirmed"
        out["reason"] = f"the same kernels in all {a['runs']} runs as written: the profile was reproducible here"
        return "same kernels in every run"
    out["reason"] = f"kernel sets differ with the fix too ({b['kernel_sets']} in {b['runs']} runs)"
    return "kernels vary either way"


def compile_text(result) -> str:
    parts = []
    for name, metrics in result.variants.items():
        c = metrics.get("compile")
        if c:
            reasons = f" ({'; '.join(c['break_reasons'])})" if c.get("break_reasons") else ""
            parts.append(f"{name}: {c['graphs']} graphs, {c['graph_breaks']} graph breaks{reasons}, "
                         f"{c['recompiles']} recompiles")
    return "; ".join(parts) or "no compile counters"


def run_summary(run: dict, on_gpu: bool) -> dict:
    result = run["result"]
    profile = result.get("profile") or {}
    return {
        "variant": run["variant"], "repeat": run["repeat"], "status": run["status"], "pgid": run["pgid"],
        "steps_ms": samples(run, on_gpu), "dataloader_ms": profile.get("dataloader_ms"),
        "syncs": profile.get("syncs"), "traces": result.get("trace_files") or [], "log": run["log"],
        "load": (result.get("machine_before") or {}).get("load"), "wall_s": result.get("wall_s"),
    }


def write_report(result, run_dir: str) -> str:
    """report.md, steps.svg and result.json in the run's directory; returns report.md's path."""
    path = os.path.join(run_dir, "report.md")
    result.report_path = path
    svg = report.svg(result)
    if svg:
        with open(os.path.join(run_dir, "steps.svg"), "w", encoding="utf-8") as handle:
            handle.write(svg)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(report.markdown(result, svg_file="steps.svg" if svg else None))
    with open(os.path.join(run_dir, "result.json"), "w", encoding="utf-8") as handle:
        json.dump(result.to_dict(), handle, indent=1)
    return path
