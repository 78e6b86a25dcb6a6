"""A profile result as text, Markdown (with a table) and an SVG bar chart (no dependencies)."""

from __future__ import annotations

import math
import os
import textwrap
from xml.sax.saxutils import escape as xml

from .stats import ms

CPU_GAP_TITLE = "What a CPU run cannot show"


def escape(text: str) -> str:
    """Text safe inside Markdown (tables included): no HTML, no cell breaks."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def _num(value: float) -> str:
    """3 significant digits, whole numbers from 100 (never 1.23e+03)."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _range(s: dict | None, low: str, high: str) -> str:
    return f"{_num(s[low])}-{_num(s[high])} ms" if s else "-"


def _rows(result) -> list[tuple[str, list[str]]]:
    """(label, one cell per variant) for every measurement some variant has."""
    names = list(result.variants)
    get = lambda key: [result.variants[n].get(key) for n in names]  # noqa: E731
    rows = []
    steps = get("step_ms")
    step_label = "step time (CUDA events)" if result.on_gpu else "step time"
    rows.append((f"{step_label}, median", [ms(s and s["median"]) for s in steps]))
    rows.append(("  quartiles", [_range(s, "q1", "q3") for s in steps]))
    rows.append(("  min-max", [_range(s, "min", "max") for s in steps]))
    rows.append(("  steps (n)", [str(s["n"]) if s else "0" for s in steps]))
    rows.append(("  run medians", [", ".join(map(_num, m)) + " ms" if m else "-" for m in get("run_medians_ms")]))
    if any(get("host_step_ms")):
        rows.append(("host step time, median", [ms(s and s["median"]) for s in get("host_step_ms")]))
    if any(get("interval_ms")):
        rows.append(("timed interval, median", [ms(s and s["median"]) for s in get("interval_ms")]))
        rows.append(("  quartiles", [_range(s, "q1", "q3") for s in get("interval_ms")]))
    if any(get("first_interval_ms")):
        rows.append(("first timed run (cold)", [ms(s and s["median"]) for s in get("first_interval_ms")]))
    if any(get("interval_event_ms")):
        rows.append(("timed interval, CUDA events", [ms(s and s["median"]) for s in get("interval_event_ms")]))
    if any(get("first_batch_ms")):
        rows.append(("time to first batch, median", [ms(s and s["median"]) for s in get("first_batch_ms")]))
    share = get("dataloader_share")
    if any(v is not None for v in share):
        rows.append(("DataLoader wait share", ["-" if v is None else f"{v:.0%}" for v in share]))
    syncs = get("syncs_per_step")
    if any(v is not None for v in syncs):
        rows.append(("host-device syncs per step", ["-" if v is None else _num(v) for v in syncs]))
    for key, label in (("kernel_ms_per_step", "GPU kernel time per step"), ("memcpy_ms_per_step", "memcpy time per step")):
        if any(v is not None for v in get(key)):
            rows.append((label, [ms(v) for v in get(key)]))
    if any(v is not None for v in get("pageable_copies_per_step")):
        rows.append(("pageable copies per step", ["-" if v is None else _num(v) for v in get("pageable_copies_per_step")]))
    if any(v is not None for v in get("kernel_sets")):
        rows.append(("distinct kernel sets over runs", [str(v) for v in get("kernel_sets")]))
    if any(get("memory_peak_mb")):
        rows.append(("peak memory per step (allocated)", [f"{_num(s['median'])} MB" if s else "-" for s in get("memory_peak_mb")]))
    if any(v is not None and v >= 0.05 for v in get("creation_share")):
        rows.append(("tensor creation share", ["-" if v is None else f"{v:.0%}" for v in get("creation_share")]))
    memory = get("peak_memory_mb")
    if any(memory):
        kind = result.variants[names[0]]["memory_kind"]
        rows.append((f"peak memory ({kind})", ["-" if not v else f"{v:.0f} MB" for v in memory]))
    compiled = get("compile")
    if any(c and (c["graphs"] or c["frames"]) for c in compiled):
        rows.append(("compile: graphs / breaks / recompiles",
                     [f"{c['graphs']} / {c['graph_breaks']} / {c['recompiles']}" if c else "-" for c in compiled]))
    return rows


def _context_lines(result) -> list[tuple[str, str]]:
    machine = result.machine or {}
    load = ""
    if machine.get("load_before"):
        before, after = machine["load_before"][0], (machine.get("load_after") or [None])[0]
        load = f", load {before:.2f}" + (f" -> {after:.2f}" if after is not None else "")
    lines = [("file", result.path)]
    if result.target:
        lines.append(("target", result.target))
    if result.measure:
        lines.append(("steps", result.measure))
    if result.device:
        threads, cpus = machine.get("threads", "?"), machine.get("cpus", "?")
        lines.append(("device", f"{result.device} ({threads} thread(s), {cpus} CPUs{load})"))
    if result.steps and result.runs:
        wait, warmup, active = result.steps
        lines.append(("schedule", f"wait {wait}, warm-up {warmup}, active {active}; {result.repeats} repeat(s) per "
                                  f"variant, interleaved {' '.join(list(result.variants or 'AB') * 2)}"))
    return lines


def sweep_lines(result) -> list[str]:
    """The sweep: each candidate's median and its speed-up over A with the interval, then the
    winner (confirmed faster than the code as written) or why there is none."""
    found = result.sweep
    if not found:
        return []
    head = (f"sweep of {found['setting']} in the fix of {found['code']}: each candidate against the code as written "
            f"(A, median {found['measure']} {ms(found['as_written_ms'])})")
    lines = [head]
    for row in found["candidates"]:
        speed = ("-" if row["ratio"] is None
                 else f"speed-up {row['ratio']:.2f}x, 95% interval {row['low']:.2f}-{row['high']:.2f}x")
        lines.append(f"  {row['variant']} {row['label']}: median {ms(row['median_ms'])}, {speed}: {row['verdict']}")
    best = found["winner"]
    if best:
        tied = f"; as fast within the noise: {', '.join(best['as_fast'])}" if best["as_fast"] else ""
        lines.append(f"fastest: {best['title']} ({best['variant']}, {best['ratio']:.2f}x faster than as written, "
                     f"95% interval {best['low']:.2f}-{best['high']:.2f}x{tied})")
    else:
        lines.append("no winner: no candidate was confirmed faster than the code as written")
    return lines


def text(result) -> str:
    out = [f"perf-lint profile: {result.summary()}"]
    out += [f"  {name:<9}{value}" for name, value in _context_lines(result)]
    if result.variants:
        out.append("")
        names = list(result.variants)
        for name in names:
            out.append(f"  {name}: {result.variants[name]['label']}")
        rows = [("", names)] + _rows(result)
        widths = [max(len(row[i]) for row in [[label] + cells for label, cells in rows]) + 2
                  for i in range(len(names) + 1)]
        for label, cells in rows:
            out.append("  " + "".join(f"{c:<{w}}" for c, w in zip([label] + cells, widths)).rstrip())
    if result.verdicts:
        out.append("")
        for v in result.verdicts:
            out.append(f"  {v['summary']}")
            if v["reason"]:
                out.append(f"      {v['reason']}")
    if result.sweep:
        out.append("")
        out += [f"  {line}" for line in sweep_lines(result)]
    if result.skipped:
        out.append("")
        out.append("  not measured in this run (profile them with --rule): "
                   + ", ".join(f"{f['code']} line {f['line']}" for f in result.skipped))
    if result.notes:
        out.append("")
        out += [f"  note: {n}" for n in result.notes]
    if result.error and (result.failure not in (None,) or not result.verdicts):
        out.append("")
        out += ["  " + line for line in result.error.splitlines()]
    if result.report_path:
        out.append("")
        out.append(f"  report: {result.report_path}")
    if result.trace_dir:
        out.append(f"  traces: {result.trace_dir}")
    return "\n".join(out) + "\n"


def markdown(result, svg_file: str | None = None) -> str:
    from .result import CPU_LIMITS

    out = [f"# perf-lint profile: {escape(result.summary())}", ""]
    out += [f"- **{name}**: {'`' + value + '`' if name == 'file' else escape(str(value))}" for name, value in _context_lines(result)]
    if result.variants:
        names = list(result.variants)
        out += ["", "| | " + " | ".join(f"{n}: {escape(result.variants[n]['label'])}" for n in names) + " |",
                "|---|" + "---|" * len(names)]
        for label, cells in _rows(result):
            out.append(f"| {label.strip()} | " + " | ".join(cells) + " |")
        if svg_file:
            out += ["", f"![A vs B]({svg_file})"]
    if result.verdicts:
        out += ["", "## Verdicts", ""]
        for v in result.verdicts:
            # a ratio with an interval is named in the reason; other numbers are named here
            ratio = ("" if v["ratio"] is None or v.get("ratio_interval")
                     else f" ({v.get('ratio_name') or 'ratio'} {v['ratio']:.3g})")
            out.append(f"- **{v['code']} {v['verdict']}**{ratio}: {escape(v['reason'])}")
    if result.sweep:
        lines = sweep_lines(result)
        out += ["", "## Sweep", "", escape(lines[0]), ""] + [f"- {escape(line.strip())}" for line in lines[1:-1]]
        out += ["", f"**{escape(lines[-1])}**"]
    if result.skipped:
        out += ["", "Not measured in this run: " + ", ".join(f"{f['code']} (line {f['line']})" for f in result.skipped)]
    if result.device and not result.on_gpu:
        out += ["", f"## {CPU_GAP_TITLE}", "", "This run had no GPU, so it cannot show:", ""]
        out += [f"- {item}" for item in CPU_LIMITS]
    if result.notes:
        out += ["", "## Notes", ""] + [f"- {escape(n)}" for n in result.notes]
    if result.error:
        out += ["", "## Error", "", "```text", result.error, "```"]
    traces = [(run, t) for run in result.runs for t in run.get("traces", [])]
    if traces:
        out += ["", "## Traces", "",
                f"TensorBoard with torch-tb-profiler: `tensorboard --logdir {result.trace_dir}` shows runs A and B, a span "
                "per repeat (its DataLoader share is the table's; on a GPU it counts only the wait while the GPU is idle). "
                "Perfetto: open a file below in https://ui.perfetto.dev (Chrome trace JSON).", ""]
        out += [f"- {run['variant']}, repeat {run['repeat']}: `{os.path.relpath(t, result.trace_dir)}`" for run, t in traces]
    return "\n".join(out) + "\n"


def _tick(top: float) -> float:
    """A round axis step (1, 2 or 5 times a power of ten) giving at most 5 intervals up to `top`."""
    magnitude = 10 ** math.floor(math.log10(top / 5))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= top / 5)


def svg(result) -> str | None:
    """Horizontal bars of each variant's median (step time, or the timed interval) with the
    quartiles as a whisker and each run's median as a dot, on an axis in ms, with a legend and
    the verdicts. Red and green only when a verdict confirms the fix's speed-up; grey otherwise."""
    key = "interval_ms" if any(v.get("interval_ms") for v in result.variants.values()) else "step_ms"
    bars = [(name, v[key], v["run_medians_ms"] if key == "step_ms" else []) for name, v in result.variants.items() if v.get(key)]
    if not bars:
        return None
    top = max(max(s["q3"], s["median"], *(runs or [0])) for _, s, runs in bars) or 1.0
    step = _tick(top)
    end = step * math.ceil(top / step - 1e-9)
    width, left, right, row = 640, 40, 90, 34
    scale = (width - left - right) / end
    sped_up = key == "step_ms" and any(v["verdict"] == "confirmed" and v.get("metric") == "step" for v in result.verdicts)
    colors = {"A": "#d9534f", "B": "#5cb85c"} if sped_up else {"A": "#a6a6a6", "B": "#6f8ea8"}
    verdicts = [line for v in result.verdicts for line in textwrap.wrap(v["summary"], 95)]
    axis = 28 + row * len(bars)
    legend = axis + 40
    height = legend + 24 + 16 * len(verdicts)
    title = "timed interval per variant (ms)" if key == "interval_ms" else "step time per variant (ms)"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{left}" y="16" font-weight="bold">{xml(title)}</text>',
    ]
    for i, (name, s, runs) in enumerate(bars):
        y = 28 + i * row
        w = max(s["median"] * scale, 1)
        parts.append(f'<text x="8" y="{y + 16}">{xml(name)}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="22" fill="{colors.get(name, "#a6a6a6")}"/>')
        q1, q3 = left + s["q1"] * scale, left + s["q3"] * scale
        parts.append(f'<line x1="{q1:.1f}" y1="{y + 11}" x2="{q3:.1f}" y2="{y + 11}" stroke="#222" stroke-width="2"/>')
        for r in runs:
            parts.append(f'<circle cx="{left + r * scale:.1f}" cy="{y + 11}" r="3" fill="#222"/>')
        parts.append(f'<text x="{left + max(w, q3 - left) + 8:.1f}" y="{y + 16}">{xml(ms(s["median"]))}</text>')
    parts.append(f'<line x1="{left}" y1="{axis}" x2="{width - right}" y2="{axis}" stroke="#222"/>')
    for k in range(round(end / step) + 1):
        x = left + k * step * scale
        parts.append(f'<line x1="{x:.1f}" y1="{axis}" x2="{x:.1f}" y2="{axis + 5}" stroke="#222"/>')
        parts.append(f'<text x="{x:.1f}" y="{axis + 18}" text-anchor="middle">{k * step:g}</text>')
    parts.append(f'<text x="{width - right + 22}" y="{axis + 18}">ms</text>')
    parts += [
        f'<rect x="{left}" y="{legend - 9}" width="14" height="10" fill="#a6a6a6"/>',
        f'<text x="{left + 20}" y="{legend}">bar: median</text>',
        f'<line x1="{left + 100}" y1="{legend - 4}" x2="{left + 120}" y2="{legend - 4}" stroke="#222" stroke-width="2"/>',
        f'<text x="{left + 126}" y="{legend}">quartiles (25-75%)</text>',
    ]
    if any(runs for _, _, runs in bars):
        parts += [f'<circle cx="{left + 260}" cy="{legend - 4}" r="3" fill="#222"/>',
                  f'<text x="{left + 268}" y="{legend}">median of each run</text>']
    for i, line in enumerate(verdicts):
        parts.append(f'<text x="8" y="{legend + 24 + 16 * i}">{xml(line)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
