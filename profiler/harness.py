"""`run_profile`: build variants A and B of the code around a finding, run them in
children (interleaved A B A B ...), and judge the difference.

The parent (this module) never imports torch nor the user's code: it reads the source,
picks the target and the measured loop, rewrites each variant with libcst, and hands the
child (`child.py`, run by path in the chosen interpreter) a JSON job.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any, Callable

from perf_lint.analyzers import ConfigError, Finding, Source, SourceError, analyze, fixed_text, load_config
from perf_lint.analyzers import notebook_source, python_source, read_source
from perf_lint.analyzers.config import KEEP_TRACES
from perf_lint.analyzers.findings import cell_label

from . import aggregate, sweep
from .instrument import clock_names, line_map, mark_magic, rewrite, timed_region, wrap_region
from .probes import Probe, probe_for
from .process import MAX_PROCESSES, compile_time, run_child, stack_of, tail
from .program import Segment, Program, Target, TargetError, segment_of_line, segments_of, find_target, finding_place, tree_of
from .request import ProfileRequest
from .result import ProfileResult
from .stats import MIN_PAIRS

SETUP_FAILURES = ("source", "config", "request", "no-finding", "interpreter", "no-torch", "runner", "output",
                  "internal")
CONTEXT_CAP = 3  # iterations of a heavy loop outside the measured steps
_DISTRIBUTED = re.compile(r"DistributedDataParallel|init_process_group|\bDDP\(")
_RUN_NAME = re.compile(r"\d{8}-\d{6}-")  # make_run_dir's names
_DATALOADER_RANGE = re.compile(rb'"cat":\s*"user_annotation",(\s*"name":\s*"enumerate\(DataLoader\)#)')


class SetupError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Variant:
    name: str  # "A" or "B"
    label: str
    segments: list[dict]  # the job's segments (filename, code, repeat)
    lines: dict  # filename -> (Segment, program line -> segment line of A)
    sync_clocks: bool = False


@dataclass
class Plan:
    path: str
    source: Source
    segments: list[Segment]
    findings: list[Finding]  # measured together
    skipped: list[Finding]  # at the target, but needing another probe
    probe: Probe | None
    target: Target | None
    measure_text: str
    variants: list[Variant]
    python: str
    distributed: bool
    notes: list[str]
    unmeasurable: str | None = None  # why nothing can run (the verdict's reason)
    sweep: sweep.Sweep | None = None  # --sweep: variants B1, B2, ... are its candidates


def run_profile(request: ProfileRequest, cancel: threading.Event | None = None,
                progress: Callable[[str], None] | None = None) -> ProfileResult:
    """Profile the finding(s) the request points at; never raises for user-code problems."""
    say = progress or (lambda message: None)
    result = ProfileResult(path=os.path.abspath(request.path), steps=request.schedule, repeats=request.repeats)
    try:
        say("preparing")
        plan = prepare(request)
    except SetupError as exc:
        result.failure, result.error = exc.kind, str(exc)
        return result
    except Exception:  # perf-lint's own bug: reported in the result, not raised at the editor
        result.failure, result.error = "internal", "perf-lint could not prepare the run:\n" + traceback.format_exc()
        return result
    result.python = plan.python
    assert plan.target is not None  # `prepare` picks one, measurable or not
    result.target = plan.target.description
    result.measure = plan.measure_text
    result.findings = [finding_dict(f) for f in plan.findings]
    result.skipped = [finding_dict(f) for f in plan.skipped]
    result.notes = list(plan.notes)
    if plan.unmeasurable:
        aggregate.finish(result, plan, [])
        return result
    runner = None
    if request.runner == "ray":
        from . import remote  # imports ray only when this runner is used

        say("connecting to the Ray cluster")
        try:
            runner = remote.RayRunner(request.address, request.num_gpus)
        except remote.RunnerError as exc:
            result.failure, result.error = "runner", str(exc)
            return result
        except Exception as exc:  # Ray's own failure while connecting or reading the cluster's resources
            result.failure = "runner"
            result.error = f"cannot use the Ray cluster at {remote.where(request.address)}: {type(exc).__name__}: {exc}"
            return result
        plan.python = result.python = runner.python
    try:
        run_dir = make_run_dir(request, plan)
    except OSError as exc:
        result.failure, result.error = "output", f"cannot write the traces: {exc}"
        return result
    result.trace_dir = run_dir
    runs = execute(request, plan, run_dir, cancel, say, result, runner)
    aggregate.finish(result, plan, runs)
    if result.failure != "cancelled":
        say("writing the report")
        result.report_path = aggregate.write_report(result, run_dir)
    return result


# -- preparing ---------------------------------------------------------------------------------------
def load(request: ProfileRequest):
    path = os.path.abspath(request.path)
    try:
        if request.text is not None:
            if path.endswith(".ipynb"):
                return notebook_source(request.text, path)
            return python_source(request.text, path)
        if not os.path.isfile(path):
            raise SetupError("source", f"no such file: {request.path}")
        return read_source(path)
    except SourceError as exc:
        raise SetupError("source", f"cannot read {request.path}: {exc}") from None
    except OSError as exc:
        raise SetupError("source", f"cannot read {request.path}: {exc.strerror}") from None


def interpreter(request: ProfileRequest) -> str:
    python = request.python or sys.executable
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise SetupError("interpreter", f"no Python interpreter at {python}")
    return python


def locate(request: ProfileRequest, source, segments: list[Segment]) -> tuple[int | None, int | None]:
    """The request's (segment, 0-based segment line), either possibly None."""
    notebook = source.kind == "notebook"
    if request.cell is not None:
        matching = [c for c in segments if c.cell == request.cell]
        if not matching:
            if notebook:
                cells = ", ".join(str(c.cell + 1) for c in segments if c.cell is not None) or "none"
                raise SetupError("request", f"{cell_label(request.cell)} is not a code cell of the notebook (code cells: {cells})")
            if not source.percent_cells:
                raise SetupError("request", "the file has no `# %%` cells; give a line instead")
            raise SetupError("request", f"no `# %%` {cell_label(request.cell)} (the file has {len(segments)})")
        segment = matching[0]
        if request.line is None:
            return segment.index, None
        line = request.line - 1 if notebook else request.line - 1 - segment.offset
        if not 0 <= line < len(segment.code.split("\n")):
            raise SetupError("request", f"line {request.line} is not in {segment.label}")
        return segment.index, line
    if request.line is None:
        return None, None
    if notebook:
        raise SetupError("request", "a line of a notebook needs its cell: give the cell index too")
    try:
        return segment_of_line(segments, request.line - 1)
    except TargetError as exc:
        raise SetupError("request", str(exc)) from None


def finding_dict(finding: Finding) -> dict:
    data = finding.to_dict()
    data["probe"] = finding.probe
    return data


def prepare(request: ProfileRequest) -> Plan:
    problems = request.problems()
    if problems:
        raise SetupError("request", "; ".join(problems))
    source = load(request)
    python = interpreter(request)
    try:
        config = load_config(os.path.dirname(os.path.abspath(request.path)))
    except ConfigError as exc:
        raise SetupError("config", str(exc)) from None
    if request.rule:  # a rule asked for by name runs even when it is off by default (TPL301)
        config = config.with_selection(extend_select=(request.rule,), where="--rule")
    findings = analyze(source, config)
    broken = [f for f in findings if f.code == "TPL000"]
    if broken:
        where = "" if broken[0].cell is None else f"{cell_label(broken[0].cell)}, "
        raise SetupError("source", f"{where}line {broken[0].range.start_line + 1}: {broken[0].message}")
    segments = segments_of(source)
    cells = source.kind == "notebook" or bool(source.percent_cells)
    parsed = [tree_of(c.code) for c in segments]
    segment, line = locate(request, source, segments)
    selected, places = select(request, source, segments, parsed, findings, segment, line, cells)
    primary = selected[0]
    probe = probe_for(primary.code, primary.probe)
    group = [f for f in selected if probe_for(f.code, f.probe) == probe]
    skipped = [f for f in selected if f not in group]
    if segment is None or probe is None or probe.steps == "in-place":
        segment, first, _ = places[id(primary)]
        line = first if line is None or probe is None or probe.steps == "in-place" else line
    plan = Plan(os.path.abspath(request.path), source, segments, group, skipped, probe, None, "", [], python, False, [])
    if probe is None:
        plan.target = find_target(segments, parsed, segment, line, cells)
        plan.unmeasurable = (f"{primary.code} has no profiling probe: what it flags is not a difference that "
                             "profiling this code would show")
        return plan
    magic = timing_magic(segments[segment], places[id(primary)][1]) if probe.name == "timing" else None
    if magic is not None and magic.is_cell_magic and magic.line != first_code_line(segments[segment]):
        plan.target = Target("cell", segment, None, segment, segments[segment].label)
        plan.unmeasurable = (f"%%{magic.name} is not the first line of {segments[segment].label}: IPython refuses the "
                             "cell, so nothing runs and there is nothing to time")
        return plan
    if magic is not None:
        target = Target("cell", segment, None, segment, segments[segment].label)
    else:
        target = find_target(segments, parsed, segment, line, cells)
    program = Program(segments, parsed)
    if magic is not None:
        measure = program.measure_in_place(target)
    elif probe.steps == "in-place":
        region = timed_region(parsed[segment], places[id(primary)][1], clock_names(parsed))
        measure = program.measure_in_place(target, region)
    else:
        measure = program.measure(target, descend=probe.steps != "epochs")
    last = max(target.last_segment, measure.segment)
    program = Program(segments[: last + 1], parsed[: last + 1])
    build: dict[str, Any] = dict(program=program, measure=measure, clocks=probe.metric in ("interval", "warmup") and magic is None,
                 magic_line=places[id(primary)][1] if magic is not None else None, cap_inner=probe.steps == "epochs")
    plan.target, plan.measure_text = target, program.describe(measure)
    plan.distributed = probe.distributed or any(_DISTRIBUTED.search(c.code) for c in program.segments)
    plan.variants.append(build_variant("A", "as written", source, sync=False, **build))
    fixable = [f for f in group if f.fix is not None]
    plan.sweep = sweep.plan(fixable, os.cpu_count() or 1) if request.sweep and probe.metric in ("step", "epochs") else None
    if request.sweep and plan.sweep is None:
        plan.notes.append("nothing to sweep: no fix here writes a count (such as num_workers) that step times rank; "
                          "measured the fix as it is")
    if plan.sweep is not None:
        add_candidates(plan, source, build)
    elif fixable:
        titles = "; ".join(dict.fromkeys(f.fix.title for f in fixable))
        try:
            fixed, missed = apply_fixes(source, fixable, config)
            plan.notes += [f"the fix of {f.code} (line {f.range.start_line + 1}) could not be applied" for f in missed]
            plan.variants.append(build_variant("B", f"with the fix ({titles})", fixed, sync=False, **build))
        except Exception as exc:  # a fix that does not fit this code is the finding's result, not a crash
            plan.notes.append(f"the fix could not be applied for measurement: {exc}")
    elif probe.synthetic_b == "sync-clocks":
        plan.variants.append(build_variant("B", "clock read after torch.cuda.synchronize()", source, sync=True, **build))
    elif probe.metric in ("step", "epochs", "interval", "kernels", "memory"):
        plan.notes.append(f"{primary.code} has no automatic fix to compare with: only the code as written was measured")
    return plan


def add_candidates(plan: Plan, source, build: dict) -> None:
    """Variants B1, B2, ...: the swept finding's fix with each candidate count."""
    swept = plan.sweep
    assert swept is not None  # the plan sweeps
    others = [f.code for f in plan.findings if f is not swept.finding and f.fix is not None]
    if others:
        plan.notes.append(f"the sweep varies the fix of {swept.finding.code}; the fixes of "
                          f"{', '.join(dict.fromkeys(others))} are not applied to its candidates")
    for candidate in swept.candidates:
        fixed = fixed_text(source, [replace(swept.finding, fix=candidate.fix)])
        plan.variants.append(build_variant(candidate.variant, candidate.label, fixed, sync=False, **build))


def apply_fixes(source, findings: list[Finding], config) -> tuple[object, list[Finding]]:
    """The source with these findings' fixes, one finding at a time: fixes of the same
    statement overlap (TPL101 and TPL102 both rewrite one DataLoader call), so each round
    finds the finding again in the text fixed so far. Returns the fixes that found no match."""
    current, missed = source, []
    for finding in findings:
        before, after = source.unit(finding.cell).text, current.unit(finding.cell).text
        line = line_map(after, before)[finding.range.start_line]  # the finding's line in the fixed text
        again = [f for f in analyze(current, config)
                 if f.code == finding.code and f.cell == finding.cell and f.fix is not None and f.range.start_line == line]
        if again:
            current = fixed_text(current, again[:1])
        else:
            missed.append(finding)
    return current, missed


def select(request, source, segments, parsed, findings, segment, line, cells):
    """The findings the request points at, and where each is: those on the line (or in the
    function/loop around it), in the cell (or, for a cell with none, the fixable findings
    of earlier cells whose effect shows in step times), or in the whole file."""
    notebook = source.kind == "notebook"
    rule = request.rule.upper() if request.rule else None
    candidates = [f for f in findings if rule is None or f.code == rule]
    places = {id(f): finding_place(f, segments, notebook) for f in candidates}

    def inside(f: Finding, first: int, last: int) -> bool:
        c, a, b = places[id(f)]
        return c == segment and a <= last and b >= first

    if segment is None:
        selected = candidates
    elif line is None:
        selected = [f for f in candidates if places[id(f)][0] == segment]
        if not selected:  # a cell that runs code set up earlier (its DataLoader, its model...)
            selected = [f for f in candidates if places[id(f)][0] < segment and f.fix is not None
                        and probe_for(f.code, f.probe).metric in ("step", "epochs")]
    else:
        selected = [f for f in candidates if inside(f, line, line)]
        if not selected:
            span = find_target(segments, parsed, segment, line, cells)
            if span.kind in ("loop", "function"):
                tree = parsed[segment]
                node = tree.loop_at(span.line) if span.kind == "loop" else tree.def_at(span.line)
                selected = [f for f in candidates if inside(f, tree.start(node), tree.end(node))]
    if not selected:
        if segment is None:
            where = "the file"
        elif segments[segment].cell is None:
            where = f"line {request.line}"
        else:
            where = segments[segment].label + ("" if line is None else f", line {request.line}")
        raise SetupError("no-finding", f"no {rule + ' ' if rule else ''}finding at {where} of {request.path}")
    return selected, places


def first_code_line(segment: Segment) -> int | None:
    lines = segment.code.split("\n")
    return next((i for i, text in enumerate(lines) if text.strip()), None)


def timing_magic(segment: Segment, line: int):
    """The %time/%timeit/%%time/%%timeit magic on `line` of a notebook cell, if any."""
    return next((m for m in segment.magics if m.line == line and m.name in ("time", "timeit")), None)


def build_variant(name: str, label: str, source, *, program: Program, measure, clocks: bool, magic_line: int | None,
                  cap_inner: bool, sync: bool) -> Variant:
    """The job segments of one variant (`source` is the code as written or fixed); lines of
    the rewritten program map back to the code as written."""
    segments_v = segments_of(source)
    if len(segments_v) < len(program.segments):
        raise ValueError("the fix changed the cells")
    trees_v = [tree_of(c.code) for c in segments_v[: len(program.segments)]]
    names = clock_names(trees_v) if clocks else None
    jobs, lines = [], {}
    for index, segment_a in enumerate(program.segments):
        code, tree = segments_v[index].code, trees_v[index]
        to_variant = line_map(code, segment_a.code)  # line as written -> line of this variant
        here = index == measure.segment
        measured = to_variant[measure.line] if here and measure.how == "loop" else None
        if here and magic_line is not None:
            code = mark_magic(code, segments_v[index].magics, to_variant[magic_line])
            tree, to_variant = tree_of(code), line_map(code, segment_a.code)
        if here and measure.region is not None:
            code = wrap_region(code, to_variant[measure.region[0]], to_variant[measure.region[1]])
            tree = tree_of(code)
        rewritten = rewrite(
            code, tree,
            measured_line=measured,
            repeated_line=to_variant[measure.line] if here and measure.how == "repeat-function" else None,
            clocks=names, segment=index, cap_inner=cap_inner, original=segment_a.code,
        )
        job_name = f"{name}-{segment_name(segment_a)}.py"
        jobs.append({"name": job_name, "code": rewritten.code, "repeat": here and measure.how == "repeat-segment"})
        lines[job_name] = (segment_a, rewritten.lines)
    return Variant(name, label, jobs, lines, sync)


def segment_name(segment: Segment) -> str:
    return "script" if segment.cell is None else cell_label(segment.cell).replace(" ", "")


def make_run_dir(request: ProfileRequest, plan: Plan) -> str:
    """A new folder for the run, under `--out` or `.perf-lint/traces` next to the file. The
    latter must be real folders: a link there (a repository may ship one) is refused (OSError)."""
    base = request.out_dir or os.path.join(os.path.dirname(plan.path), ".perf-lint", "traces")
    for part in (os.path.dirname(base), base) if request.out_dir is None else ():
        if os.path.islink(part) or os.path.lexists(part) and not os.path.isdir(part):
            what = "a symbolic link" if os.path.islink(part) else "not a folder"
            raise OSError(f"{part} is {what}: not writing through it (remove it, or pass --out DIR)")
    stem = re.sub(r"[^\w.-]", "_", os.path.splitext(os.path.basename(plan.path))[0])
    codes = "-".join(dict.fromkeys(f.code for f in plan.findings))
    run = f"{time.strftime('%Y%m%d-%H%M%S')}-{stem}-{codes}"
    try:
        keep = request.keep_traces or load_config(os.path.dirname(plan.path)).keep_traces
    except ConfigError:  # it loaded a moment ago in prepare(); changed since
        keep = KEEP_TRACES
    prune_runs(base, keep - 1)
    path = os.path.join(os.path.abspath(base), run)
    suffix = 1
    while os.path.lexists(path):
        suffix += 1
        path = os.path.join(os.path.abspath(base), f"{run}-{suffix}")
    os.makedirs(os.path.join(path, "programs"))
    if request.out_dir is None:
        ignore = os.path.join(os.path.dirname(os.path.dirname(path)), ".gitignore")
        if not os.path.lexists(ignore):
            with open(ignore, "x") as handle:  # "x": never through a link planted there
                handle.write("*\n")
    return path


def prune_runs(base: str, keep: int) -> None:
    """Delete all but the `keep` newest run folders in `base` (folders named like a run, with
    a `programs` folder; nothing else there, and no link, is touched)."""
    if not os.path.isdir(base):
        return
    runs = sorted(name for name in os.listdir(base) if _RUN_NAME.match(name) and not os.path.islink(os.path.join(base, name))
                  and os.path.isdir(os.path.join(base, name, "programs")))
    for name in runs[: max(len(runs) - keep, 0)]:
        shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def trace_folder(run_dir: str, variant: str) -> str:
    """Where a variant's traces go: one folder per variant, so that torch-tb-profiler shows A and B
    as two runs, each repeat a span of one worker (not 2 x repeats workers of one distributed run)."""
    return os.path.join(run_dir, variant)


def tensorboard_ready(traces: list[str]) -> None:
    """Mark the DataLoader's ranges in the traces as operators (`cpu_op`, as torch 1.x wrote them):
    torch-tb-profiler skips other user annotations, and its DataLoader share would be 0."""
    for path in traces:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            fixed = _DATALOADER_RANGE.sub(rb'"cat": "cpu_op",\1', data)
            if fixed != data:
                with open(path + ".tmp", "wb") as handle:
                    handle.write(fixed)
                os.replace(path + ".tmp", path)
        except OSError:
            continue


# -- running ---------------------------------------------------------------------------------------------
def threads_for(cpus: int) -> int:
    """Intra-op threads per child: 1 on small machines (DataLoader workers need the cores)."""
    return max(1, cpus // 4)


def measurement(request: ProfileRequest, plan: Plan) -> dict:
    """How the child measures: epoch steps run whole up to a budget (a share of the timeout),
    the warm-up waits for compilation unless compilations are what is counted, and fewer
    (cut) epochs go under the profiler."""
    probe = plan.probe
    assert probe is not None  # a plan that runs has its probe
    epochs = probe.steps == "epochs"
    active = request.schedule[2]
    return {"epochs": epochs, "epoch_budget_s": request.timeout_s / (3 * sum(request.schedule)),
            "settle_compile": probe.metric != "compiles", "profile_steps": min(active, 2) if epochs else active}


def execute(request: ProfileRequest, plan: Plan, run_dir: str, cancel, say, result: ProfileResult,
            runner=None) -> list[dict]:
    """The runs, interleaved A B A B ...; stops at the first failure, timeout or cancel. `runner`
    (remote.RayRunner) runs each child as a Ray task instead of a local process."""
    probe = plan.probe
    assert probe is not None  # a plan that runs has its probe
    programs = os.path.join(run_dir, "programs")
    for variant in plan.variants:
        for segment in variant.segments:
            segment["filename"] = os.path.join(programs, segment.pop("name"))
            with open(segment["filename"], "w", encoding="utf-8") as handle:
                handle.write(segment["code"])
        variant.lines = {os.path.join(programs, name): value for name, value in variant.lines.items()}
    threads = threads_for(os.cpu_count() or 1)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
    cwd = os.path.dirname(plan.path) if os.path.isdir(os.path.dirname(plan.path)) else os.getcwd()
    result.machine = {"cpus": os.cpu_count(), "threads": threads, "load_before": list(os.getloadavg())}
    runs: list[dict] = []
    start = run_child if runner is None else runner.run
    order = [(r, v) for r in range(1, request.repeats + 1) for v in plan.variants]
    started = time.monotonic()
    for number, (repeat, variant) in enumerate(order, 1):
        if cancel is not None and cancel.is_set():
            result.failure, result.error = "cancelled", "cancelled"
            break
        if over_budget(plan, repeat, variant, time.monotonic() - started):
            result.notes.append(f"the sweep stopped after {repeat - 1} of {request.repeats} repeats: another would "
                                f"end past its {sweep.BUDGET_S:g} s budget")
            break
        worker = f"{variant.name}-{repeat}"
        say(f"run {number}/{len(order)}: {variant.name} ({variant.label}), repeat {repeat}")
        job = {
            "steps": list(request.schedule), "cap": CONTEXT_CAP, "threads": threads, "sync_clocks": variant.sync_clocks,
            "trace_dir": trace_folder(run_dir, variant.name), "worker": variant.name,  # repeats: spans of one worker
            "result": os.path.join(programs, f"{worker}.result.json"),
            "file": plan.path if plan.source.kind == "python" else None, "argv": [plan.path],
            "path0": cwd, "distributed": plan.distributed, "segments": variant.segments,
            "all_reads": probe.metric == "warmup", "profile_memory": probe.profile_memory,
            **measurement(request, plan),
        }
        outcome = start(plan.python, job, os.path.join(programs, f"{worker}.job.json"),
                        os.path.join(programs, f"{worker}.log"), cwd, env, request.timeout_s, cancel)
        run: dict[str, Any] = {"variant": variant.name, "repeat": repeat, "worker": worker, "status": outcome.status,
               "returncode": outcome.returncode, "pgid": outcome.pgid, "log": os.path.join(programs, f"{worker}.log"),
               "result": outcome.result or {}}
        runs.append(run)
        tensorboard_ready(run["result"].get("trace_files") or [])
        if outcome.status == "cancelled":
            result.failure, result.error = "cancelled", "cancelled: the run was stopped"
            break
        if outcome.status == "timeout":
            result.failure = "timeout"
            result.error = (f"variant {variant.name} ({variant.label}) ran past the {request.timeout_s:g} s timeout and was "
                            "killed with its whole process group" + stopped_at(result, plan, variant, run["log"]))
            break
        if outcome.status == "processes":
            result.failure = "processes"
            result.error = (f"variant {variant.name} ({variant.label}) started more than {MAX_PROCESSES} processes "
                            "(a fork bomb?) and was killed with its whole process group")
            break
        if outcome.status == "crashed":
            result.failure = "crash"
            result.error = (f"variant {variant.name} ({variant.label}) ended without a result (exit status "
                            f"{outcome.returncode}{', killed: out of memory?' if outcome.returncode == -9 else ''})"
                            + (f"\n{outcome.log_tail.strip()}" if outcome.log_tail.strip() else ""))
            break
        assert outcome.result is not None  # "done": the child wrote its result
        error = outcome.result.get("error")
        if error:
            describe_error(result, plan, variant, error)
            break
    result.machine["load_after"] = list(os.getloadavg())
    if runner is not None:
        runner.finish(result)
    return runs


def over_budget(plan: Plan, repeat: int, variant: Variant, spent_s: float) -> bool:
    """A sweep starts no repeat that would end past its budget (at the pace of the repeats so
    far) once the repeats a verdict needs have run."""
    return (plan.sweep is not None and variant is plan.variants[0] and repeat > MIN_PAIRS
            and spent_s * repeat / (repeat - 1) > sweep.BUDGET_S)


def stopped_at(result: ProfileResult, plan: Plan, variant: Variant, log_path: str) -> str:
    """Where a timed-out run was: the stack its child wrote to the log, mapped to the user's lines."""
    log = tail(log_path, 1 << 16)
    frames = stack_of(log)
    if not frames:
        return compiled_for(log)
    ours = [i for i, frame in enumerate(frames) if frame[0] in variant.lines]
    frames = frames[ours[0]:] if ours else frames  # from the program's first frame (not child.py's)
    lines, where = map_frames(plan, variant, frames)
    result.error_location = where
    compiling = any(re.search(r"torch[/\\]_(dynamo|inductor)[/\\]", frame[0]) for frame in frames)
    return ("; it was " + (f"at {where['label']}" if where else "outside the program")
            + (", inside torch.compile (compiling)" if compiling else "") + compiled_for(log)
            + "\nTraceback of the child when stopped (most recent call last):\n" + "\n".join(lines))


def compiled_for(log: str) -> str:
    """How long torch.compile had compiled when the run was stopped (what the child printed), or ""."""
    found = compile_time(log)
    if not found or not found.get("watching"):
        return ""
    count = found["compilations"]
    now = " and was compiling when stopped" if found["compiling"] else ""
    return (f"; torch.compile had compiled for {found['seconds']:.1f} s ({count} compilation{'s' * (count != 1)} "
            f"finished){now}")


def describe_error(result: ProfileResult, plan: Plan, variant: Variant, error: dict) -> None:
    kind = error.get("kind")
    if kind == "no-torch":
        result.failure = "no-torch"
        result.error = f"torch is not installed in {plan.python} ({error.get('type')}: {error.get('message')})"
        return
    if kind == "internal":
        result.failure, result.error = "internal", "perf-lint's profiling harness failed:\n" + error.get("message", "")
        return
    result.failure = "oom" if kind == "oom" else "exception"
    which = "the code as written" if variant.name == "A" else f"variant {variant.name} ({variant.label})"
    head = f"out of memory in {which}" if kind == "oom" else f"{which} raised {error.get('type')}"
    frames, where = map_frames(plan, variant, error.get("frames") or [])
    result.error_location = where
    text = ["Traceback (most recent call last):", *frames, f"{error.get('type')}: {error.get('message')}"]
    result.error = head + (f" at {where['label']}" if where else "") + "\n" + "\n".join(text)


def map_frames(plan: Plan, variant: Variant, frames: list) -> tuple[list[str], dict | None]:
    """Traceback lines with the program's frames mapped to the user's file, cell and line."""
    out, innermost = [], None
    for filename, lineno, name in frames:
        mapped = variant.lines.get(filename)
        if mapped is None:
            out.append(f'  File "{filename}", line {lineno}, in {name}')
            continue
        segment, lines = mapped
        segment_line = lines[min(max(lineno - 1, 0), len(lines) - 1)]
        user_line = segment.user_line(segment_line)
        cell = "" if plan.source.kind != "notebook" else f", {cell_label(segment.cell)}"
        out.append(f'  File "{plan.path}"{cell}, line {user_line}, in {name}')
        code = segment.code.split("\n")[segment_line].strip() if segment_line < len(segment.code.split("\n")) else ""
        if code:
            out.append(f"    {code}")
        label = (f"{cell_label(segment.cell)}, line {user_line}" if plan.source.kind == "notebook" else f"line {user_line}")
        innermost = {"path": plan.path, "cell": segment.cell if plan.source.kind == "notebook" else None,
                     "line": user_line, "label": label}
    return out, innermost
