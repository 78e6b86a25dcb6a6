"""perf-lint's profiling child: runs one variant of a program under torch.profiler.

Executed by path in the user's interpreter (`python child.py job.json`) with the standard
library and torch only; it never imports perf_lint. The job (JSON) names the program's
chunks (cells, or the whole script) already instrumented by the parent: the measured loop
calls `__perf_lint__.step()` at the top of each iteration, other heavy loops call
`__perf_lint__.tick(id)` so that setup never trains for real, clock reads of a timed region
go through `__perf_lint__.clock(...)`. The child writes what it measured to the job's
result file (JSON), errors included; it exits 0 unless the harness itself broke.
"""

from __future__ import annotations

import functools
import hashlib
import json
import linecache
import os
import resource
import socket
import sys
import time
import traceback
import types

SYNC_OPS = ("aten::_local_scalar_dense", "aten::item", "cudaStreamSynchronize", "cudaDeviceSynchronize",
            "cudaEventSynchronize")
DATALOADER_PREFIX = "enumerate(DataLoader)#"
FACTORY_OPS = ("aten::randn", "aten::rand", "aten::randint", "aten::randperm", "aten::normal", "aten::zeros",
               "aten::ones", "aten::empty", "aten::full", "aten::tensor", "aten::arange", "aten::linspace",
               "aten::randn_like", "aten::rand_like", "aten::zeros_like", "aten::ones_like", "aten::empty_like",
               "aten::full_like", "aten::normal_", "aten::uniform_")


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
        self.total = self.wait + self.warmup + self.active
        self.cap = job.get("cap", 3)
        self.sync_clocks = bool(job.get("sync_clocks"))
        self.all_reads = bool(job.get("all_reads"))  # clock reads before the window too (first runs)
        self.cuda = torch.cuda.is_available()
        self.pid = os.getpid()
        self.calls = 0
        self.done = False
        self.step_start = 0.0
        self.host_ms = []
        self.events = []
        self.counts = {}
        self.reads = []
        self.prof = None
        self.profile = None
        self.trace_files = []
        self.compile_at_window = None
        self.cuda_peak_mb = None
        self.notes = []
        self._real_profile = torch.profiler.profile

    # -- hooks called by the instrumented program ------------------------------------------
    def step(self):
        """Top of each iteration of the measured loop: True once the measured steps are done."""
        if self.done:
            return True
        now = time.perf_counter()
        self._record_event()
        k = self.calls
        if k == 0:
            self._start_profiler()
        else:
            self.host_ms.append((now - self.step_start) * 1e3)
            self.prof.step()
        if k == self.wait + self.warmup:
            self._window_opens()
        self.calls += 1
        if k == self.total:
            self._stop_profiler()
            self.done = True
            return True
        self.step_start = time.perf_counter()
        return False

    def finish(self):
        """After the measured loop: stop the program once the steps are done."""
        if self.done:
            raise Stop()

    def enter(self, loop):
        self.counts[loop] = 0

    def tick(self, loop, always=False):
        """Top of each iteration of a capped loop: True (break) after `cap` iterations,
        except while the measured steps run (unless `always`: a loop inside the measured
        one), and never in other processes (DataLoader workers)."""
        if os.getpid() != self.pid or (self.calls > 0 and not self.done and not always):
            return False
        count = self.counts.get(loop, 0) + 1
        self.counts[loop] = count
        return count > self.cap

    def clock(self, site, fn, *args, **kwargs):
        """A clock read of the program, recorded in the active window; with `sync_clocks`,
        pending GPU work is waited for first (what the fix for unsynchronized timing does)."""
        if self.sync_clocks and self.cuda:
            self.torch.cuda.synchronize()
        value = fn(*args, **kwargs)
        measuring = self._measuring()
        if measuring or self.all_reads:
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

    # -- profiler ------------------------------------------------------------------------------
    def _measuring(self):
        return self.wait + self.warmup < self.calls and not self.done

    def _record_event(self):
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            self.events.append(event)

    def _start_profiler(self):
        torch = self.torch
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.prof = self._real_profile(
            activities=activities,
            schedule=torch.profiler.schedule(wait=self.wait, warmup=self.warmup, active=self.active, repeat=1),
            on_trace_ready=self._trace_ready,
            profile_memory=bool(self.job.get("profile_memory")),
        )
        self.prof.start()

    def _window_opens(self):
        self.compile_at_window = compile_counters()
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats()

    def _trace_ready(self, prof):
        if self.cuda:
            self.torch.cuda.synchronize()
            self.cuda_peak_mb = self.torch.cuda.max_memory_allocated() / 2**20
        before = set(os.listdir(self.job["trace_dir"])) if os.path.isdir(self.job["trace_dir"]) else set()
        handler = self.torch.profiler.tensorboard_trace_handler(self.job["trace_dir"], worker_name=self.job["worker"])
        handler(prof)
        after = set(os.listdir(self.job["trace_dir"]))
        self.trace_files = sorted(os.path.join(self.job["trace_dir"], name) for name in after - before)
        self.profile = summarize_events(prof.events(), self.cuda)
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
        first = self.wait + self.warmup
        event_ms = None
        if self.cuda and len(self.events) > 1:
            self.torch.cuda.synchronize()
            event_ms = [a.elapsed_time(b) for a, b in zip(self.events, self.events[1:])]
        return {
            "calls": self.calls,
            "done": self.done,
            "host_ms": self.host_ms,
            "event_ms": event_ms,
            "active_host_ms": self.host_ms[first:first + self.active],
            "active_event_ms": None if event_ms is None else event_ms[first:first + self.active],
            "profile": self.profile,
            "trace_files": self.trace_files,
            "intervals": self._intervals(),
            "cuda_peak_mb": self.cuda_peak_mb,
            "compile_at_window": self.compile_at_window,
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


def summarize_events(events, cuda):
    """What the active window's events say: step and DataLoader times, syncs, GPU time."""
    steps, dataloader_us, dataloader_events = [], 0.0, 0
    kernel_us, memcpy_us, memcpy = 0.0, 0.0, {}
    kernels = {}
    sync_spans, factory_spans = [], []
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
        elif name in SYNC_OPS:
            sync_spans.append((event.thread, start, end, name))
        elif name in FACTORY_OPS:
            factory_spans.append((event.thread, start, end, name))
    # a sync nested in another (aten::item -> _local_scalar_dense -> cudaStreamSynchronize) counts once
    counted, sync_us = outermost(sync_spans)
    names = sorted(kernels)
    top = sorted(kernels.items(), key=lambda item: -item[1])[:8]
    return {
        "steps_ms": steps,
        "dataloader_ms": dataloader_us / 1e3 if dataloader_events else None,
        "syncs": sum(counted.values()),
        "sync_ops": counted,
        "sync_ms": sync_us / 1e3,
        "factory_ms": outermost(factory_spans)[1] / 1e3,
        "kernel_ms": kernel_us / 1e3 if cuda else None,
        "memcpy_ms": memcpy_us / 1e3 if cuda else None,
        "memcpy": memcpy,
        "kernel_count": len(names),
        "kernel_digest": hashlib.sha1("\n".join(names).encode()).hexdigest()[:12] if names else None,
        "top_kernels": [[name, us / 1e3] for name, us in top],
    }


def outermost(spans):
    """Per name, the count of spans (thread, start, end, name) not nested in an earlier
    one of the same thread, and their total duration."""
    counted, total, last_end = {}, 0.0, {}
    for thread, start, end, name in sorted(spans, key=lambda s: (s[0], s[1], -s[2])):
        if start < last_end.get(thread, float("-inf")):
            continue
        last_end[thread] = end
        counted[name] = counted.get(name, 0) + 1
        total += end - start
    return counted, total


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
    try:
        import torch
    except Exception as exc:
        result["error"] = {"kind": "no-torch", "type": type(exc).__name__, "message": str(exc)}
        return result
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
        for chunk in job["chunks"]:
            text = chunk["code"]
            linecache.cache[chunk["filename"]] = (len(text), None, text.splitlines(True), chunk["filename"])
            code = compile(text, chunk["filename"], "exec")
            if chunk.get("repeat"):
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
