"""The Ray task that runs one profiling child on a cluster node (see remote.py).

Standard library only, like `process.py` whose `run_child` it calls: `remote.py`
registers both modules with Ray's cloudpickle to be pickled by value, so a worker needs
ray and torch and nothing of perf-lint. `run_job` gets `child.py`'s source and the job
(the program segments' code included), writes them to a temporary directory, runs
`python child.py job.json` there with `process.run_child`, exactly as a local run
(timeout, fork-bomb count, the whole process group killed at the end) plus a watcher
that kills the group if the worker dies, and returns the result, the log's tail and
every trace file.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

from .process import run_child

# Kills the run's process group if the worker dies first (a force-cancelled task, a worker
# killed for memory): it is the worker's child, so its parent changes when the worker dies.
_REAPER = """
import os, signal, sys, time
worker, pgid = int(sys.argv[1]), int(sys.argv[2])
while True:
    time.sleep(0.1)
    if os.getppid() != worker:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
        break
"""


def _reaper(pgid):
    """Start the watcher that kills group `pgid` if this worker dies; returns its stop."""
    reaper = subprocess.Popen([sys.executable, "-I", "-c", _REAPER, str(os.getpid()), str(pgid)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)

    def stop():
        reaper.kill()
        reaper.wait()

    return stop


def _tail(path, limit):
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(size - limit, 0))
            return handle.read(), size > limit
    except OSError:
        return b"", False


def _node(threads):
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"host": socket.gethostname(), "cpus": os.cpu_count(), "usable_cpus": usable, "threads": threads,
            "python": sys.executable, "load": list(os.getloadavg())}


def run_job(child_source, job, timeout_s, max_processes, log_limit=1 << 20):
    """Run one variant's child on this node; returns a dict (see the module's doc).

    `job` is the harness's job with the driver's paths: its segments, result and trace
    directory are moved under a temporary directory (`root` in the answer, so that the
    driver maps paths back); `path0` (the program's directory) is kept when it exists
    here, else the temporary directory is the working directory."""
    root = tempfile.mkdtemp(prefix="perf-lint-ray-")
    try:
        programs, traces = os.path.join(root, "programs"), os.path.join(root, "traces")
        os.makedirs(programs)
        os.makedirs(traces)
        child = os.path.join(root, "child.py")
        with open(child, "w", encoding="utf-8") as handle:
            handle.write(child_source)
        job = dict(job)
        segments = []
        for segment in job["segments"]:
            segment = dict(segment, filename=os.path.join(programs, os.path.basename(segment["filename"])))
            with open(segment["filename"], "w", encoding="utf-8") as handle:
                handle.write(segment["code"])
            segments.append(segment)
        cwd = job.get("path0") if job.get("path0") and os.path.isdir(job["path0"]) else root
        threads = max(1, (os.cpu_count() or 1) // 4)  # as the harness does locally: DataLoader workers need cores
        job.update(segments=segments, trace_dir=traces, path0=cwd, threads=threads,
                   result=os.path.join(programs, os.path.basename(job["result"])))
        node = _node(threads)
        job_path = os.path.join(programs, "%s.job.json" % job["worker"])
        log_path = os.path.join(programs, "%s.log" % job["worker"])
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
        outcome = run_child(sys.executable, job, job_path, log_path, cwd, env, timeout_s, None, max_processes,
                            child=child, on_start=_reaper)
        status = outcome.status
        files = {}
        if status == "done":
            for folder, _, names in os.walk(traces):
                for name in names:
                    path = os.path.join(folder, name)
                    with open(path, "rb") as handle:
                        files[os.path.relpath(path, traces)] = handle.read()
        log, truncated = _tail(log_path, log_limit)
        node["load_after"] = list(os.getloadavg())
        return {"status": status, "result": outcome.result, "returncode": outcome.returncode, "pgid": outcome.pgid,
                "log": log, "log_truncated": truncated, "traces": files, "root": root, "node": node}
    finally:
        shutil.rmtree(root, ignore_errors=True)
