"""Starting and stopping the child: its own session, killed with its whole process group."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
_POLL_S = 0.05


@dataclass
class ChildExit:
    status: str  # "done", "timeout", "cancelled", "crashed", "processes" (over MAX_PROCESSES)
    result: dict | None  # the child's JSON result
    returncode: int | None
    log_tail: str
    pgid: int


_GONE_S = 10.0  # how long a killed group may take to be gone (hundreds of torch processes tear down slowly)
MAX_PROCESSES = 256  # live processes a run's group may hold (DataLoader workers and the like fit easily)
_COUNT_EVERY_S = 0.2  # how often the group is counted (a /proc scan)
_DUMP_S = 3.0  # how long a timed-out child may take to write its stack
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')
_REPORT_S = 0.5  # how long a timed-out child may take to print its compile time
COMPILE_MARK = "perf-lint compile time: "  # child.py's line (the child imports nothing of perf-lint)


def compile_time(log: str) -> dict | None:
    """The last compile time a child printed to its log ({seconds, compilations, compiling, watching}), or None."""
    at = log.rfind(COMPILE_MARK)
    if at < 0:
        return None
    try:
        return json.loads(log[at + len(COMPILE_MARK):].splitlines()[0])
    except (ValueError, IndexError):
        return None


def live_members(pgid: int) -> list[int]:
    """Processes of group `pgid` not yet dead (zombies excluded); Linux /proc, else a probe."""
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
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                members.append(int(entry))
    return members


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group (the child and any DataLoader worker it left)
    and wait, briefly, until none of them runs any more."""
    deadline = time.monotonic() + _GONE_S
    while True:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        if not live_members(pgid) or time.monotonic() > deadline:
            return
        time.sleep(_POLL_S)


def dump_stack(proc: subprocess.Popen) -> None:
    """Make a timed-out child write where it is: first its torch.compile time (SIGUSR2: child.py
    prints a COMPILE_MARK line), then, as it runs with PYTHONFAULTHANDLER, SIGABRT has faulthandler
    print every thread's Python stack to its log before it dies (without a core file)."""
    try:
        proc.send_signal(signal.SIGUSR2)
        proc.wait(timeout=_REPORT_S)  # the child does not exit on it: time for the handler to print
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        resource.prlimit(proc.pid, resource.RLIMIT_CORE, (0, 0))
    except (AttributeError, OSError):  # not Linux, or already gone
        pass
    try:
        proc.send_signal(signal.SIGABRT)
        proc.wait(timeout=_DUMP_S)
    except (OSError, subprocess.TimeoutExpired):
        pass


def stack_of(log: str) -> list[tuple[str, int, str]]:
    """The main thread's frames (file, line, function; innermost last) in the last faulthandler
    dump of a log, or []: the thread whose outermost frame is a `<module>` (child.py's)."""
    start = log.rfind("Fatal Python error: Aborted")
    if start < 0:
        return []
    threads: list[list[tuple[str, int, str]]] = []
    frames: list[tuple[str, int, str]] | None = None
    for line in log[start:].splitlines():
        if line.endswith("(most recent call first):"):
            frames = []
            threads.append(frames)
        elif frames is not None and (match := _FRAME.match(line)):
            frames.append((match[1], int(match[2]), match[3]))
    main = [t for t in threads if t and t[-1][2] == "<module>"] or threads
    return list(reversed(main[0])) if main else []


def tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(handle.tell() - limit, 0))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_child(python: str, job: dict, job_path: str, log_path: str, cwd: str, env: dict, timeout_s: float,
              cancel: threading.Event | None, max_processes: int = MAX_PROCESSES, child: str = CHILD,
              on_start: Callable[[int], Callable[[], None]] | None = None) -> ChildExit:
    """Run `python child.py job.json` until it exits, `timeout_s` passes, `cancel` is set or
    its process group holds more than `max_processes` processes (a fork bomb: counted by
    the harness because RLIMIT_NPROC counts threads of every process of the user and does
    not bind root); a timed-out child first writes its Python stack to the log (`dump_stack`).
    `on_start(pid)` may start a watcher and return what stops it.

    Standard library only: a Ray worker runs this module too (see remote_task)."""
    with open(job_path, "w") as handle:
        json.dump(job, handle)
    if os.path.exists(job["result"]):
        os.remove(job["result"])
    deadline = time.monotonic() + timeout_s
    next_count = time.monotonic() + _COUNT_EVERY_S
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([python, child, job_path], cwd=cwd, env=dict(env, PYTHONFAULTHANDLER="1"),
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    status = "done"
    stop_watcher = None
    try:
        if on_start is not None:
            stop_watcher = on_start(proc.pid)
        while True:
            try:
                proc.wait(timeout=_POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            if cancel is not None and cancel.is_set():
                status = "cancelled"
                break
            now = time.monotonic()
            if now > deadline:
                status = "timeout"
                dump_stack(proc)
                break
            if now > next_count:
                next_count = now + _COUNT_EVERY_S
                if len(live_members(proc.pid)) > max_processes:
                    status = "processes"
                    break
    finally:  # also on KeyboardInterrupt (a cancelled Ray task): the whole group goes
        kill_group(proc.pid)
        proc.wait()
        if stop_watcher is not None:
            stop_watcher()
    result = None
    if status == "done":
        try:
            with open(job["result"]) as handle:
                result = json.load(handle)
        except (OSError, ValueError):
            status = "crashed"
    return ChildExit(status, result, proc.returncode, tail(log_path), proc.pid)
