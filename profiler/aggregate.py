"""From the children's JSON to per-variant metrics and per-finding verdicts."""

from __future__ import annotations

import json
import os
import re
from collections import Counter

from . import judge, report, sweep
from .judge import first_batches, interval_samples, samples
from .program import finding_place
from .stats import quantile, spread


def _per_step(profile: dict, value) -> float | None:
    steps = len(profile.get("steps_ms") or [])
    return None if value is None or not steps else value / steps


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return quantile(values, 0.5) if values else None


def _per_step_counts(profiles: list[dict], key: str, name=lambda k: k) -> dict:
    """A profile's counts by name (sync ops, sync sites), per step, averaged over runs."""
    out: Counter = Counter()
    for profile in profiles:
        for key_, count in dict(profile.get(key) or {}).items():
            out[name(key_)] += count / max(len(profile["steps_ms"]), 1) / len(profiles)
    return dict(out)


def variant_metrics(label: str, runs: list[dict], on_gpu: bool, where=lambda site: site) -> dict:
    """A variant's numbers; `where` names a sync's program line ("file:line") for people."""
    profiles = [r["result"].get("profile") for r in runs if r["result"].get("profile")]
    pooled = [x for r in runs for x in samples(r, on_gpu)]
    last = runs[-1]["result"] if runs else {}
    window = last.get("compile_at_window")
    compiled = last.get("compile")
    after = last.get("compile_after_window") or compiled
    loader_epochs = [e for r in runs for e in r["result"].get("loader_epochs") or []]
    metrics = {
        "label": label,
        "runs": len(runs),
        "step_ms": spread(pooled),
        "run_medians_ms": [quantile(samples(r, on_gpu), 0.5) for r in runs if samples(r, on_gpu)],
        "host_step_ms": spread([x for r in runs for x in r["result"].get("active_host_ms") or []]) if on_gpu else None,
        "dataloader_share": _median([p["dataloader_ms"] / sum(p["steps_ms"]) for p in profiles
                                     if p["dataloader_ms"] is not None and sum(p["steps_ms"]) > 0]),
        "syncs_per_step": _median([_per_step(p, p["syncs"]) for p in profiles]),
        "sync_ops_per_step": _per_step_counts(profiles, "sync_ops"),
        "sync_lines_per_step": _per_step_counts(profiles, "sync_sites", where),
        "dtoh_per_step": _median([_per_step(p, p.get("dtoh")) for p in profiles]),
        "first_batch_ms": spread([x for r in runs for x in first_batches(r)]),
        "epoch_ms": spread([e["epoch_ms"] for e in loader_epochs if e["epoch_ms"] is not None]),
        "warmup_steps": [r["result"].get("warmup_steps") for r in runs],
        "timed_steps": sum(len(r["result"].get("active_host_ms") or []) for r in runs),
        "cut_epochs": sum(sum(r["result"].get("active_truncated") or []) for r in runs),
        "settled_for": {k: v for r in runs for k, v in (r["result"].get("settled_for") or {}).items()},
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
        "compiled_in_window": bool(window and after and after["frames"] > window["frames"]),
        "memory_peak_mb": spread([x for p in profiles for x in p.get("memory_peaks_mb") or []]),
        "creation_share": _median([p["factory_ms"] / sum(p["steps_ms"]) for p in profiles if sum(p["steps_ms"]) > 0]),
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
    segment, first, last = place

    def on_finding(site: tuple) -> int:
        return int(len(site) == 3 and site[0] == segment and first <= site[1] <= last)

    forward = [key for key in counts if len(_site(key[0])) == 3 and _site(key[0])[0] == _site(key[1])[0]
               and _site(key[0])[1:] < _site(key[1])[1:]]
    if not forward:
        return None
    return max(forward, key=lambda k: (on_finding(_site(k[0])) + on_finding(_site(k[1])), counts[k]))


# -- verdicts --------------------------------------------------------------------------------------------------
def finish(result, plan, runs: list[dict]) -> None:
    """Fill `result.device/variants/runs/verdicts/notes` from the runs."""
    devices = [r["result"].get("device") for r in runs if r["result"].get("device")]
    result.device = devices[0] if devices else None
    on_gpu = result.on_gpu
    by_variant = {v.name: [r for r in runs if r["variant"] == v.name] for v in plan.variants}
    variants = {v.name: v for v in plan.variants}
    for name, variant_runs in by_variant.items():
        if variant_runs:
            result.variants[name] = variant_metrics(variants[name].label, variant_runs, on_gpu,
                                                    lambda site, v=variants[name]: _user_line(plan, v, site))
    result.runs = [run_summary(r, on_gpu) for r in runs]
    if runs and plan.probe is not None:
        result.notes.append(step_note(result, plan))
    for run in runs:
        for note in run["result"].get("notes") or []:
            if note not in result.notes:
                result.notes.append(note)
    notebook = plan.source.kind == "notebook"
    key = None
    if plan.probe is not None and plan.probe.metric in ("interval", "warmup"):
        key = region(by_variant.get("A", []), finding_place(plan.findings[0], plan.segments, notebook))
        for name, variant_runs in by_variant.items():
            if name in result.variants and key is not None:
                result.variants[name]["interval_ms"] = spread([x for run in interval_samples(variant_runs, key) for x in run])
                if on_gpu:
                    events = [x for run in interval_samples(variant_runs, key, "event_ms") for x in run]
                    result.variants[name]["interval_event_ms"] = spread(events)
                if plan.probe.metric == "warmup":
                    firsts = [run[0] for run in interval_samples(variant_runs, key, window=False) if run]
                    result.variants[name]["first_interval_ms"] = spread(firsts)
    _notes(result, plan)
    versus = "B"
    if plan.sweep is not None and runs:
        result.sweep = sweep.judged(result, plan.sweep, by_variant)
        versus = result.sweep["versus"] or versus
    unique = {f.code: f for f in reversed(plan.findings)}  # one verdict per rule (same measurement)
    result.verdicts = [judge.verdict(result, plan, unique[code], by_variant, key, versus) for code in dict.fromkeys(
        f.code for f in plan.findings)]


def _user_line(plan, variant, site: str) -> str:
    """"line 12" (or "cell 3, line 4") of the user's code for a program site "file:line"."""
    from .harness import map_frames  # harness imports this module

    filename, _, line = site.rpartition(":")
    where = map_frames(plan, variant, [[filename, int(line), ""]])[1] if line.isdigit() else None
    return where["label"] if where else "an unknown line"


def step_note(result, plan) -> str:
    """What a step is, and when its timing began, for the report."""
    what = ("a whole epoch (its inner loops run to their end, up to a time budget per epoch; a cut epoch is "
            "not timed as a step)" if plan.probe.steps == "epochs" else
            re.sub(r"^(iteration|repeated call|repeated run)s", lambda m: "one " + m[1].replace("repeated ", ""),
                   plan.measure_text))
    warm = []
    for name, metrics in result.variants.items():
        counts = sorted({n for n in metrics["warmup_steps"] if n is not None})
        why = metrics["settled_for"]
        until = [f"the DataLoader's prefetch queue ({why['prefetch']} batches) was drained"] if "prefetch" in why else []
        until += ["torch.compile stopped compiling"] if "compile" in why else []
        warm.append(f"{'/'.join(map(str, counts)) or '-'} ({name}{': until ' + ' and '.join(until) if until else ''})")
    clock = "CUDA events" if result.on_gpu else "perf_counter"
    return (f"a step is {what}; steps are timed without the profiler ({clock}) after warm-up steps: "
            f"{', '.join(warm)}; torch.profiler ran on later steps, for the breakdown and the traces only")


def _notes(result, plan) -> None:
    for name, metrics in result.variants.items():
        if metrics["compiled_in_window"] and plan.probe.metric != "compiles":
            result.notes.append(f"variant {name}: torch.compile compiled during the measured steps; give more warm-up steps")
        wanted = result.steps[2] * metrics["runs"] if result.steps else 0
        got, cut = metrics["timed_steps"], metrics["cut_epochs"]
        if metrics["runs"] and got < wanted and result.failure is None:
            result.notes.append(f"variant {name}: {got} of {wanted} active steps ran (the loop ended early)")
        if cut:
            result.notes.append(f"variant {name}: {cut} of {got} timed epochs ran past the budget per epoch and were cut")


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
