"""The Ray task that runs one profiling child on a cluster node (see remote.py).

Standard library only, and never imports perf_lint: `remote.py` registers this module
with Ray's cloudpickle to be pickled by value, so a worker needs ray and torch and
nothing of perf-lint. `run_job` gets `child.py`'s source and the job (the program
chunks' code included), writes them to a temporary directory, runs
`python child.py job.json` there in its own session exactly as `process.run_child` does
locally (timeout, fork-bomb count, the whole process group killed at the end, and also
when the worker dies), and returns the result, the log's tail and every trace file.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

_POLL_S = 0.05
_COUNT_EVERY_S = 0.2
_GONE_S = 10.0


def _members(pgid):
    """Processes of group `pgid` not yet dead (zombies excluded)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    stat = handle.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                members.append(int(entry))
    return members


def _kill_group(pgid):
    deadline = time.monotonic() + _GONE_S
    while True:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        if not _members(pgid) or time.monotonic() > deadline:
            return
        time.sleep(_POLL_S)


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

    `job` is the harness's job with the driver's paths: its chunks, result and trace
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
        chunks = []
        for chunk in job["chunks"]:
            chunk = dict(chunk, filename=os.path.join(programs, os.path.basename(chunk["filename"])))
            with open(chunk["filename"], "w", encoding="utf-8") as handle:
                handle.write(chunk["code"])
            chunks.append(chunk)
        cwd = job.get("path0") if job.get("path0") and os.path.isdir(job["path0"]) else root
        threads = max(1, (os.cpu_count() or 1) // 4)  # as the harness does locally: DataLoader workers need cores
        job.update(chunks=chunks, trace_dir=traces, path0=cwd, threads=threads,
                   result=os.path.join(programs, os.path.basename(job["result"])))
        node = _node(threads)
        job_path = os.path.join(programs, "%s.job.json" % job["worker"])
        log_path = os.path.join(programs, "%s.log" % job["worker"])
        with open(job_path, "w") as handle:
            json.dump(job, handle)
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
        deadline = time.monotonic() + timeout_s
        next_count = time.monotonic() + _COUNT_EVERY_S
        status = "done"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, child, job_path], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        reaper = None
        try:
            reaper = subprocess.Popen([sys.executable, "-I", "-c", _REAPER, str(os.getpid()), str(proc.pid)],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
            while True:
                try:
                    proc.wait(timeout=_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if now > deadline:
                    status = "timeout"
                    break
                if now > next_count:
                    next_count = now + _COUNT_EVERY_S
                    if len(_members(proc.pid)) > max_processes:
                        status = "processes"
                        break
        finally:  # also on ray.cancel (KeyboardInterrupt here): the whole group goes
            _kill_group(proc.pid)
            proc.wait()
            if reaper is not None:
                reaper.kill()
                reaper.wait()
        result = None
        if status == "done":
            try:
                with open(job["result"]) as handle:
                    result = json.load(handle)
            except (OSError, ValueError):
                status = "crashed"
        files = {}
        if status == "done":
            for folder, _, names in os.walk(traces):
                for name in names:
                    path = os.path.join(folder, name)
                    with open(path, "rb") as handle:
                        files[os.path.relpath(path, traces)] = handle.read()
        log, truncated = _tail(log_path, log_limit)
        node["load_after"] = list(os.getloadavg())
        return {"status": status, "result": result, "returncode": proc.returncode, "pgid": proc.pid,
                "log": log, "log_truncated": truncated, "traces": files, "root": root, "node": node}
    finally:
        shutil.rmtree(root, ignore_errors=True)
