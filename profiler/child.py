"""perf-lint's profiling child: runs one variant of a program, timed, then under torch.profiler.

Executed by path in the user's interpreter (`python child.py job.json`) with the standard
library and torch only; it never imports perf_lint. The job (JSON) names the program's
segments (cells, or the whole script) already instrumented by the parent: the measured loop
calls `__perf_lint__.step()` at the top of each iteration, other heavy loops call
`__perf_lint__.tick(id)` so that setup never trains for real, clock reads of a timed region
go through `__perf_lint__.clock(...)`. The steps are: warm-up (until the DataLoader's
prefetch queue is drained and torch.compile stops compiling), `active` steps timed without
the profiler (perf_counter; CUDA events on a GPU), then steps under torch.profiler for the
breakdown and the traces. The child writes what it measured to the job's result file
(JSON), errors included; it exits 0 unless the harness itself broke. On SIGUSR2 (sent by the
harness before it kills a run past its timeout) it prints torch.compile's time so far, the
compilation in progress included, to its log (a COMPILE_MARK line).
"""

from __future__ import annotations

import functools
import hashlib
import json
import linecache
import os
import re
import resource
import signal
import socket
import sys
import time
import traceback
import types

# where the host waits for the GPU (a CPU tensor's .item() or .tolist() waits for nothing)
SYNC_OPS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")
SETTLE_MAX = 64  # warm-up steps added at most while the prefetch queue drains or torch.compile compiles
FRAME = re.compile(r"^(.*)\((\d+)\): ")  # an entry of a profiler event's Python stack
DATALOADER_PREFIX = "enumerate(DataLoader)#"
FACTORY_OPS = ("aten::randn", "aten::rand", "aten::randint", "aten::randperm", "aten::normal", "aten::zeros",
               "aten::ones", "aten::empty", "aten::full", "aten::tensor", "aten::arange", "aten::linspace",
               "aten::randn_like", "aten::rand_like", "aten::zeros_like", "aten::ones_like", "aten::empty_like",
               "aten::full_like", "aten::normal_", "aten::uniform_")


COMPILE_MARK = "perf-lint compile time: "  # a line of the log, JSON after it


class CompileClock:
    """torch.compile's time so far: compilations ended and the one in progress (dynamo's start
    and end callbacks, registered at the program's first torch.compile call)."""

    def __init__(self):
        self.done_s, self.since, self.compilations, self.watching = 0.0, None, 0, False

    def wrap(self, torch):
        real = torch.compile

        @functools.wraps(real)
        def compile(*args, **kwargs):
            self.watch()
            return real(*args, **kwargs)

        torch.compile = compile

    def watch(self):
        if self.watching:
            return
        try:
            from torch._dynamo.callback import callback_handler
        except Exception:  # a torch without compile callbacks: nothing to report
            return
        callback_handler.register_start_callback(self.started)
        callback_handler.register_end_callback(self.ended)
        self.watching = True

    def started(self, args):
        self.since = time.perf_counter()

    def ended(self, args):
        if self.since is not None:
            self.done_s += time.perf_counter() - self.since
            self.since, self.compilations = None, self.compilations + 1

    def report(self, signum, frame):
        now = time.perf_counter()
        compiling = self.since is not None
        total = self.done_s + (now - self.since if compiling else 0.0)
        sys.stdout.write(COMPILE_MARK + json.dumps({"watching": self.watching, "seconds": round(total, 3),
                                                    "compilations": self.compilations, "compiling": compiling}) + "\n")
        sys.stdout.flush()


class Stop(BaseException):
    """Raised once the measured steps are done: ends the program (finally blocks still run)."""


class InertProfiler:
    """Stands in for the program's own torch.profiler.profile: only one profiler can run."""

    used = False

    def __init__(self, *args, **kwargs):
        InertProfiler.used = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def start(self):
        pass

    def stop(self):
        pass

    def step(self):
        pass

    def export_chrome_trace(self, path):
        pass

    def export_stacks(self, *args, **kwargs):
        pass

    def key_averages(self, *args, **kwargs):
        from torch.autograd.profiler_util import EventList

        return EventList([])

    def events(self):
        from torch.autograd.profiler_util import EventList

        return EventList([])


class Harness:
    """The `__perf_lint__` object the instrumented program calls."""

    def __init__(self, job, torch):
        self.job = job
        self.torch = torch
        self.wait, self.warmup, self.active = job["steps"]
        self.profiled = job.get("profile_steps", self.active)
        self.cap = job.get("cap", 3)
        self.epochs = bool(job.get("epochs"))  # a step is an epoch: its inner loops run whole
        self.budget = job.get("epoch_budget_s", 30.0)  # ... up to this long, then the epoch is cut
        self.settle_compile = job.get("settle_compile", True)
        self.sync_clocks = bool(job.get("sync_clocks"))
        self.all_reads = bool(job.get("all_reads"))  # clock reads before the window too (first runs)
        self.cuda = torch.cuda.is_available()
        self.files = {segment["filename"] for segment in job.get("segments", ())}
        self.pid = os.getpid()
        self.phase = "warm-up"  # then "timed" (no profiler), "profiled", "done"
        self.calls = 0
        self.step_start = 0.0
        self.marks = []  # (perf_counter, CUDA event) at the boundaries of the timed steps
        self.window_at = None  # the step the timed window opened at
        self.event_ms = None
        self.truncated = set()  # epoch steps cut at the budget
        self.settling = {}  # why the warm-up went on: "prefetch" (batches), "compile"
        self.frames = frames_so_far()
        self.loaders = []  # one record per epoch of a DataLoader of this process
        self.profile_calls = 0
        self.counts = {}
        self.reads = []
        self.prof = None
        self.profile = None
        self.trace_files = []
        self.compile_at_window = None
        self.compile_after_window = None
        self.cuda_peak_mb = None
        self.notes = []
        self._real_profile = torch.profiler.profile

    @property
    def done(self):
        return self.phase == "done"

    # -- hooks called by the instrumented program ------------------------------------------
    def step(self):
        """Top of each iteration of the measured loop: True once the measured steps are done."""
        if self.done:
            return True
        now = time.perf_counter()
        k, self.calls = self.calls, self.calls + 1
        if self.phase == "warm-up" and self._settled(k):
            self._window_opens(k)
        if self.phase == "timed":
            self._mark(now)
            if len(self.marks) > self.active:
                self._window_closes()
        if self.phase == "profiled":
            self._profile_step()
        self.step_start = time.perf_counter()
        return self.done

    def finish(self):
        """After the measured loop: stop the program once the steps are done."""
        if self.done:
            raise Stop()

    def enter(self, loop):
        self.counts[loop] = 0

    def tick(self, loop, always=False):
        """Top of each iteration of a capped loop: True (break) after `cap` iterations,
        except while the measured steps run (unless `always`: a loop inside an epoch step,
        which runs whole, up to the epoch budget), and never in other processes (DataLoader
        workers)."""
        if os.getpid() != self.pid or (self.calls > 0 and not self.done and not always):
            return False
        if always and not self.done:
            if time.perf_counter() - self.step_start <= self.budget:
                return False
            self.truncated.add(self.calls - 1)
            return True
        count = self.counts.get(loop, 0) + 1
        self.counts[loop] = count
        return count > self.cap

    def clock(self, site, fn, *args, **kwargs):
        """A clock read of the program, recorded in the active window; with `sync_clocks`,
        pending GPU work is waited for first (what the fix for unsynchronized timing does)."""
        if self.sync_clocks and self.cuda:
            self.torch.cuda.synchronize()
        value = fn(*args, **kwargs)
        measuring = self.phase == "timed"
        if measuring or self.all_reads and self.phase == "warm-up":
            now, event = time.perf_counter(), None
            if self.cuda:
                event = self.torch.cuda.Event(enable_timing=True)
                event.record()
            self.reads.append((site, now, event, measuring))
        return value

    def mark(self, site):
        """A timed region's boundary where the program has no clock call (IPython magics)."""
        self.clock(site, time.perf_counter)

    def repeated(self, fn):
        """Decorator for a measured function without a loop: its first call runs it as steps."""

        @functools.wraps(fn)
        def run(*args, **kwargs):
            result = None
            while not self.step():
                result = fn(*args, **kwargs)
            self.finish()
            return result

        return run

    def loader_epoch(self, start, workers, drain):
        """A new epoch of a DataLoader (`iter(loader)` at `start`): its record."""
        record = {"start": start, "first": None, "end": None, "clean": False, "batches": 0, "at": None,
                  "workers": workers, "drain": drain, "where": "window" if self.phase == "timed" else None}
        self.loaders.append(record)
        return record

    # -- the timed window ------------------------------------------------------------------------
    def _settled(self, k):
        """Whether the timed window may open at step k: after the warm-up steps, once the
        DataLoader's prefetch queue is drained and the last step compiled nothing."""
        frames, self.frames = self.frames, frames_so_far()
        if k < self.wait + self.warmup:
            return False
        why = {}
        if self.settle_compile and self.frames != frames:
            why["compile"] = True
        feeding = [r for r in self.loaders if r["at"] == k and r["end"] is None and r["batches"] <= r["drain"]]
        if feeding and not self.epochs:
            why["prefetch"] = feeding[-1]["drain"]
        if why and k < self.wait + self.warmup + SETTLE_MAX:
            self.settling.update(why)
            return False
        if why:
            self.notes.append("still %s after %d extra warm-up steps: timed anyway" % (
                " and ".join("compiling" if w == "compile" else "filling the prefetch queue" for w in why), SETTLE_MAX))
        return True

    def _window_opens(self, k):
        self.phase, self.window_at = "timed", k
        self.compile_at_window = compile_counters()
        for record in self.loaders:
            if record["at"] == k and record["end"] is None:
                record["where"] = "around"  # the epoch that gave this step its batch
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats()

    def _mark(self, now):
        event = None
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
        self.marks.append((now, event))

    def _timed_events(self):
        """The timed steps in CUDA-event milliseconds (waits for the GPU once, at the end)."""
        if self.cuda and self.event_ms is None and len(self.marks) > 1:
            self.torch.cuda.synchronize()
            self.event_ms = [a.elapsed_time(b) for (_, a), (_, b) in zip(self.marks, self.marks[1:])]
        return self.event_ms

    def _window_closes(self):
        self.compile_after_window = compile_counters()
        self._timed_events()
        self.phase = "profiled" if self.profiled else "done"

    # -- profiler ------------------------------------------------------------------------------
    def _profile_step(self):
        """One warm-up and `profiled` recorded steps under torch.profiler (breakdown, traces)."""
        if self.prof is None:
            self._start_profiler()
            return
        self.prof.step()
        self.profile_calls += 1
        if self.profile_calls > self.profiled:
            self._stop_profiler()
            self.phase = "done"

    def _start_profiler(self):
        torch = self.torch
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.prof = self._real_profile(
            activities=activities,
            schedule=torch.profiler.schedule(wait=0, warmup=1, active=self.profiled, repeat=1),
            on_trace_ready=self._trace_ready,
            profile_memory=bool(self.job.get("profile_memory")),
            with_stack=self.cuda,  # the user's line of each host-device sync
        )
        self.prof.start()

    def _trace_ready(self, prof):
        if self.cuda:
            self.torch.cuda.synchronize()
            self.cuda_peak_mb = self.torch.cuda.max_memory_allocated() / 2**20
        before = set(os.listdir(self.job["trace_dir"])) if os.path.isdir(self.job["trace_dir"]) else set()
        handler = self.torch.profiler.tensorboard_trace_handler(self.job["trace_dir"], worker_name=self.job["worker"])
        handler(prof)
        after = set(os.listdir(self.job["trace_dir"]))
        self.trace_files = sorted(os.path.join(self.job["trace_dir"], name) for name in after - before)
        self.profile = summarize_events(prof.events(), self.cuda, self.files)
        if self.job.get("profile_memory") and self.trace_files:
            self.profile["memory_peaks_mb"] = memory_peaks(self.trace_files[0], self.cuda)

    def _stop_profiler(self):
        if self.prof is not None:
            prof, self.prof = self.prof, None
            prof.stop()

    def close(self):
        """Stop a profiler still running (the program ended or failed inside the steps)."""
        try:
            self._stop_profiler()
        except Exception as exc:  # a partial window can fail to export; keep the rest
            self.notes.append("the profiler could not stop cleanly: %s" % exc)

    # -- results ---------------------------------------------------------------------------------
    def results(self):
        starts = [now for now, _ in self.marks]
        host_ms = [(b - a) * 1e3 for a, b in zip(starts, starts[1:])]
        return {
            "calls": self.calls,
            "done": self.done,
            "warmup_steps": self.window_at,
            "settled_for": self.settling,
            "active_host_ms": host_ms,
            "active_event_ms": self._timed_events(),
            "active_truncated": [self.window_at + i in self.truncated for i in range(len(host_ms))],
            "epoch_budget_s": self.budget if self.epochs else None,
            "loader_epochs": [epoch_summary(r) for r in self.loaders if r["where"]],
            "profile": self.profile,
            "trace_files": self.trace_files,
            "intervals": self._intervals(),
            "cuda_peak_mb": self.cuda_peak_mb,
            "compile_at_window": self.compile_at_window,
            "compile_after_window": self.compile_after_window,
        }

    def _intervals(self):
        if self.cuda and self.reads:
            self.torch.cuda.synchronize()
        out = []
        for (site_a, t_a, ev_a, in_a), (site_b, t_b, ev_b, in_b) in zip(self.reads, self.reads[1:]):
            event_ms = ev_a.elapsed_time(ev_b) if ev_a is not None and ev_b is not None else None
            out.append({"start": site_a, "end": site_b, "ms": (t_b - t_a) * 1e3, "event_ms": event_ms,
                        "window": in_a and in_b})
        return out


def summarize_events(events, cuda, files=()):
    """What the profiled steps' events say: step and DataLoader times, GPU time, and on a GPU
    the host-device syncs (stream/device waits, DtoH copies) and the program lines (in
    `files`) they come from; on a CPU nothing waits for a device (`syncs` is None)."""
    steps, dataloader_us, dataloader_events = [], 0.0, 0
    kernel_us, memcpy_us, memcpy = 0.0, 0.0, {}
    kernels = {}
    sync_spans, factory_spans, stacked = [], [], []
    for event in events:
        name = event.name
        start, end = event.time_range.start, event.time_range.end
        on_device = str(event.device_type).endswith("CUDA")
        if on_device:
            if getattr(event, "is_user_annotation", False) or name.startswith("ProfilerStep"):
                continue  # a record_function range shown on the GPU timeline, not work
            if name.startswith("Memcpy") or name.startswith("Memset"):
                memcpy_us += end - start
                memcpy[name] = memcpy.get(name, 0) + 1
            else:
                kernel_us += end - start
                kernels[name] = kernels.get(name, 0.0) + (end - start)
            continue
        if name.startswith("ProfilerStep"):
            steps.append((end - start) / 1e3)
        elif name.startswith(DATALOADER_PREFIX):
            dataloader_us += end - start
            dataloader_events += 1
        elif cuda and name in SYNC_OPS:
            sync_spans.append((event.thread, start, end, name, event))
        elif name in FACTORY_OPS:
            factory_spans.append((event.thread, start, end, name))
        site = user_frame([name, *(getattr(event, "stack", None) or ())], files) if cuda else None
        if site:
            stacked.append((event.thread, start, end, site))
    syncs = outermost(sync_spans)
    sites = {}
    for span in syncs:
        site = sync_site(span, stacked, files)
        sites[site] = sites.get(site, 0) + 1
    names = sorted(kernels)
    top = sorted(kernels.items(), key=lambda item: -item[1])[:8]
    return {
        "steps_ms": steps,
        "dataloader_ms": dataloader_us / 1e3 if dataloader_events else None,
        "syncs": len(syncs) if cuda else None,
        "sync_ops": tally(syncs),
        "sync_sites": sorted([site, n] for site, n in sites.items()),  # pairs: a Ray run maps paths in values
        "sync_ms": sum(s[2] - s[1] for s in syncs) / 1e3,
        "dtoh": sum(n for name, n in memcpy.items() if "DtoH" in name) if cuda else None,
        "factory_ms": sum(s[2] - s[1] for s in outermost(factory_spans)) / 1e3,
        "kernel_ms": kernel_us / 1e3 if cuda else None,
        "memcpy_ms": memcpy_us / 1e3 if cuda else None,
        "memcpy": memcpy,
        "kernel_count": len(names),
        "kernel_digest": hashlib.sha1("\n".join(names).encode()).hexdigest()[:12] if names else None,
        "top_kernels": [[name, us / 1e3] for name, us in top],
    }


def outermost(spans):
    """The spans (thread, start, end, name, ...) not nested in an earlier one of the same thread."""
    kept, last_end = [], {}
    for span in sorted(spans, key=lambda s: (s[0], s[1], -s[2])):
        if span[1] >= last_end.get(span[0], float("-inf")):
            last_end[span[0]] = span[2]
            kept.append(span)
    return kept


def tally(spans):
    counted = {}
    for span in spans:
        counted[span[3]] = counted.get(span[3], 0) + 1
    return counted


def user_frame(stack, files):
    """"file:line" of the innermost entry of a profiler stack ("file(line): name") in `files`."""
    for entry in stack:
        match = FRAME.match(entry)
        if match and match.group(1) in files:
            return "%s:%s" % match.groups()
    return None


def sync_site(span, stacked, files):
    """The program line a sync (thread, start, end, name, event) comes from: that of the closest
    enclosing op with a stack or Python frame of the program (its profiler parents, else the
    events around it in time). Python tracer frames give their function's first line."""
    parent = getattr(span[4], "cpu_parent", None)
    while parent is not None:
        site = user_frame([parent.name, *(getattr(parent, "stack", None) or ())], files)
        if site:
            return site
        parent = getattr(parent, "cpu_parent", None)
    around = [(start, site) for thread, start, end, site in stacked
              if thread == span[0] and start <= span[1] and span[2] <= end]
    return max(around)[1] if around else "unknown"


def memory_peaks(trace_file, cuda):
    """Per active step, the peak of memory allocated (MB) that the trace's `[memory]` events
    report: on the GPU the caching allocator's total, on the CPU the net allocations since
    profiling began."""
    with open(trace_file) as handle:
        events = json.load(handle).get("traceEvents", [])
    device = 1 if cuda else 0
    steps = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in events
             if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    memory = sorted((e["ts"], e["args"].get("Total Allocated", 0)) for e in events
                    if e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == device)
    peaks = []
    for start, end in sorted(steps):
        inside = [total for ts, total in memory if start <= ts <= end]
        before = [total for ts, total in memory if ts < start]
        peaks.append(max(inside + before[-1:] or [0]) / 2**20)
    return peaks


def epoch_summary(record):
    """A DataLoader epoch's time to first batch and, if it ran to its end before the
    profiler started, its whole time (ms)."""
    first, end = record["first"], record["end"] if record["clean"] else None
    return {"where": record["where"], "workers": record["workers"], "batches": record["batches"],
            "first_ms": None if first is None else (first - record["start"]) * 1e3,
            "epoch_ms": None if end is None else (end - record["start"]) * 1e3}


def watch_loaders(torch, harness):
    """Record each epoch of the program's DataLoaders (from `iter(loader)` to the first batch
    and to the end) in `harness.loaders`, in this process only (not in workers)."""
    from torch.utils.data import dataloader

    real_iter, real_next = dataloader.DataLoader.__iter__, dataloader._BaseDataLoaderIter.__next__

    def __iter__(self):
        start = time.perf_counter()
        iterator = real_iter(self)
        if os.getpid() == harness.pid:
            workers = self.num_workers
            iterator._perf_lint_epoch = harness.loader_epoch(start, workers, workers * (self.prefetch_factor or 2)
                                                             if workers else 0)
        return iterator

    def __next__(self):
        record = getattr(self, "_perf_lint_epoch", None)
        try:
            batch = real_next(self)
        except StopIteration:
            if record is not None and record["end"] is None:
                record["end"], record["clean"] = time.perf_counter(), harness.phase in ("warm-up", "timed")
            raise
        if record is not None:
            record["batches"] += 1
            record["at"] = harness.calls
            if record["first"] is None:
                record["first"] = time.perf_counter()
        return batch

    dataloader.DataLoader.__iter__ = __iter__
    dataloader._BaseDataLoaderIter.__next__ = __next__


def frames_so_far():
    """Frames torch.compile has converted so far (0 while torch._dynamo is not imported)."""
    utils = sys.modules.get("torch._dynamo.utils")
    return int(utils.counters["frames"].get("total", 0)) if utils is not None else 0


def compile_counters():
    """torch.compile's counters so far: graphs compiled, graph breaks, recompiles, frames."""
    try:
        from torch._dynamo import utils
    except Exception:
        return None
    counters = utils.counters
    failures = getattr(utils, "guard_failures", {})
    reasons = sorted(counters["graph_break"].items(), key=lambda item: -item[1])[:3]
    return {
        "graphs": int(counters["stats"].get("unique_graphs", 0)),
        "graph_breaks": int(sum(counters["graph_break"].values())),
        "break_reasons": [reason.strip().splitlines()[0][:200] for reason, _ in reasons],
        "recompiles": int(sum(len(v) for v in failures.values())),
        "frames": int(counters["frames"].get("total", 0)),
    }


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_process_group(torch, notes):
    """A one-process group (gloo on CPU, nccl on GPU) on a free port of 127.0.0.1; the
    program's own init_process_group becomes a no-op while it exists."""
    import torch.distributed as dist

    port = free_port()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1",
                      LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if torch.cuda.is_available():
        torch.cuda.set_device(0)
    dist.init_process_group(backend, init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=1)
    real_init = dist.init_process_group

    def init_process_group(*args, **kwargs):
        if dist.is_initialized():
            return None
        return real_init(*args, **kwargs)

    dist.init_process_group = init_process_group
    notes.append("ran on a one-process %s process group on 127.0.0.1" % backend)
    return dist


def frames_of(exc, child_file):
    """The traceback as [filename, line, function] without the harness's own frames."""
    frames = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == child_file:
            continue
        frames.append([frame.filename, frame.lineno, frame.name])
    return frames


def classify(exc, torch):
    oom_types = tuple(t for t in (getattr(torch.cuda, "OutOfMemoryError", None), MemoryError) if t)
    text = str(exc)
    if isinstance(exc, oom_types) or "out of memory" in text.lower() or "can't allocate memory" in text:
        return "oom"
    return "exception"


def machine():
    load = os.getloadavg()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"load": [round(x, 2) for x in load], "cpus": os.cpu_count(), "usable_cpus": usable}


def run(job):
    result = {"ok": False, "python": sys.version.split()[0], "executable": sys.executable,
              "machine_before": machine()}
    child_file = os.path.abspath(__file__)
    clock = CompileClock()
    signal.signal(signal.SIGUSR2, clock.report)  # before the import: a default SIGUSR2 would end the child
    try:
        import torch
    except Exception as exc:
        result["error"] = {"kind": "no-torch", "type": type(exc).__name__, "message": str(exc)}
        return result
    clock.wrap(torch)
    threads = job.get("threads", 1)
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    cuda = torch.cuda.is_available()
    result.update(torch=torch.__version__, threads=threads,
                  device="cuda: " + torch.cuda.get_device_name(0) if cuda else "cpu")
    harness = Harness(job, torch)
    watch_loaders(torch, harness)
    torch.profiler.profile = InertProfiler
    if not cuda:  # a fix's torch.cuda.synchronize() has nothing to wait for on a CPU
        torch.cuda.synchronize = lambda device=None: None
    module = types.ModuleType("__main__")
    module.__dict__.update(__builtins__=__builtins__, __perf_lint__=harness)
    if job.get("file"):
        module.__file__ = job["file"]
    saved_main = sys.modules.get("__main__")
    sys.path[0] = job.get("path0") or os.getcwd()  # the program's directory, not the harness's
    sys.modules["__main__"] = module
    sys.argv = list(job.get("argv") or [job.get("file") or ""])
    dist = None
    started = time.perf_counter()
    try:
        if job.get("distributed"):
            dist = start_process_group(torch, harness.notes)
        for segment in job["segments"]:
            text = segment["code"]
            linecache.cache[segment["filename"]] = (len(text), None, text.splitlines(True), segment["filename"])
            code = compile(text, segment["filename"], "exec")
            if segment.get("repeat"):
                while not harness.step():
                    exec(code, module.__dict__)
                harness.finish()
            else:
                exec(code, module.__dict__)
        result["ok"] = True
    except Stop:
        result["ok"] = True
    except SystemExit as exc:
        if exc.code in (None, 0):
            result["ok"] = True
        else:
            result["error"] = {"kind": "exit", "type": "SystemExit", "message": "the program called sys.exit(%r)" % (exc.code,),
                               "frames": frames_of(exc, child_file)}
    except BaseException as exc:  # the program's own failure, reported with its traceback
        result["error"] = {"kind": classify(exc, torch), "type": type(exc).__name__, "message": str(exc),
                           "frames": frames_of(exc, child_file)}
    finally:
        result["wall_s"] = time.perf_counter() - started
        harness.close()
        sys.modules["__main__"] = saved_main
    result.update(harness.results())
    result["compile"] = compile_counters()
    result["cudnn_benchmark"] = bool(torch.backends.cudnn.benchmark)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    result["machine_after"] = machine()
    if InertProfiler.used:
        harness.notes.append("the program's own torch.profiler.profile was replaced by perf-lint's")
    result["notes"] = harness.notes
    if dist is not None and dist.is_initialized():
        dist.destroy_process_group()
    return result


def main(argv):
    with open(argv[1]) as handle:
        job = json.load(handle)
    try:
        result = run(job)
    except BaseException:
        result = {"ok": False, "error": {"kind": "internal", "type": "HarnessError",
                                         "message": traceback.format_exc()}}
    tmp = job["result"] + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(result, handle)
    os.replace(tmp, job["result"])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # DataLoader workers and atexit hooks of the program must not outlive the result


if __name__ == "__main__":
    main(sys.argv)
