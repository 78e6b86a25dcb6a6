"""`--runner ray`: each A/B run as a Ray task on a cluster node instead of a local child.

`RayRunner.run` has `process.run_child`'s contract and returns the same `ChildExit`. The
task (`remote_task.run_job`, standard library only) is pickled by value with `child.py`'s
source and the job (the program segments' code included), so a worker needs ray and torch,
not perf-lint. It runs the child in a temporary directory with the same timeout and
process-group handling as a local run and sends back the result, the log and every trace
file; here the traces are written into the run's directory and the task's paths in the
result (traceback frames, trace files) are mapped back to the local program files, so a
remote run reads exactly like a local one. Ray is imported only when this runner is used.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time

from . import process, remote_task
from .process import CHILD, MAX_PROCESSES, ChildExit, tail

INSTALL = "pip install 'perf-lint[ray]'"
REACH_S = 5.0  # TCP connect to the address before ray.init (which retries for minutes)
CONNECT_S = 30.0  # ray.init against something that accepts connections but does not answer
GRACE_S = 60.0  # on top of the run's timeout: scheduling, worker start, shipping traces back
CANCEL_S = 5.0  # a ray.cancel lets the task kill its child group this long before the worker is killed
_POLL_S = 0.1

_lock = threading.Lock()
_state: dict = {"address": None, "ours": False, "pending": None}  # this module's connection


class RunnerError(Exception):
    """The cluster cannot take the run (no Ray, unreachable, no GPU): nothing ran."""


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise RunnerError(f"the ray runner needs Ray installed next to perf-lint ({exc}): {INSTALL}") from None
    return ray


def where(address: str | None) -> str:
    """The cluster as messages name it."""
    return address or os.environ.get("RAY_ADDRESS") or "the local Ray instance (no address given)"


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of `host:port` or `ray://host:port`; None for "auto", "local" and the like."""
    text = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = text.rstrip("/").rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def _reach(address: str | None) -> None:
    """Fail fast where nothing listens: ray.init's own retries take minutes."""
    target = _host_port(address or os.environ.get("RAY_ADDRESS") or "")
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=REACH_S).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise RunnerError(f"cannot reach the Ray cluster at {where(address)}: {reason} (is a Ray head running there? "
                          "`ray start --head` prints the address to use)") from None


def connect(address: str | None):
    """The `ray` module, connected to `address` (None: RAY_ADDRESS, a Ray instance running
    on this machine, or a new local one, as `ray.init()` decides); a connection made here
    is kept for later runs and replaced when the address changes."""
    ray = _import_ray()
    with _lock:
        pending = _state["pending"]
        if pending is not None and pending.is_alive():
            raise RunnerError(f"still waiting for the Ray cluster at {where(_state['address'])} to answer an earlier "
                              "connection attempt; try again later")
        if ray.is_initialized() and (not _state["ours"] or _state["address"] == address):
            return ray  # connected here before, or by the program that called run_profile
        _reach(address)
        if ray.is_initialized():  # to another cluster: leave it for this one
            ray.shutdown()
            _state["ours"] = False
        outcome: dict = {}

        def init() -> None:
            try:
                ray.init(address=address or None, ignore_reinit_error=True, logging_level=logging.ERROR,
                         log_to_driver=False)
                _state["ours"] = True
            except BaseException as exc:  # reported by the caller
                outcome["error"] = exc

        thread = threading.Thread(target=init, name="perf-lint-ray-init", daemon=True)
        _state["address"], _state["pending"] = address, thread
        thread.start()
        thread.join(CONNECT_S)
        if thread.is_alive():
            raise RunnerError(f"the Ray cluster at {where(address)} did not answer within {CONNECT_S:g} s (is that "
                              "the head's GCS address, port 6379 by default?)")
        _state["pending"] = None
        if "error" in outcome:
            exc = outcome["error"]
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise RunnerError(f"cannot connect to the Ray cluster at {where(address)}: {first}")
        return ray


def check_resources(ray, num_gpus: float, address: str | None) -> None:
    """Refuse a task that no node could ever run (it would wait for resources forever)."""
    nodes = [node.get("Resources") or {} for node in ray.nodes() if node.get("Alive")]
    if any(r.get("CPU", 0) >= 1 and r.get("GPU", 0) >= num_gpus for r in nodes):
        return
    cpus = sum(r.get("CPU", 0) for r in nodes)
    gpus = max((r.get("GPU", 0) for r in nodes), default=0)
    size = f"{len(nodes)} node(s), {cpus:g} CPUs, {sum(r.get('GPU', 0) for r in nodes):g} GPUs"
    if num_gpus > 0 and gpus == 0:
        raise RunnerError(f"the Ray cluster at {where(address)} has no GPU ({size}); to profile on its CPUs, run with "
                          "--num-gpus 0 (editor setting perfLint.profiling.numGpus: 0)")
    if num_gpus > gpus:
        raise RunnerError(f"no node of the Ray cluster at {where(address)} has {num_gpus:g} GPUs (at most {gpus:g} on "
                          f"one node; {size}); ask for fewer with --num-gpus")
    raise RunnerError(f"no node of the Ray cluster at {where(address)} has a CPU for the task ({size})")


def _mapped(value, pairs: list[tuple[str, str]]):
    """`value` (JSON) with the task's paths replaced by the local ones."""
    if isinstance(value, str):
        for remote, local in pairs:
            value = value.replace(remote, local)
        return value
    if isinstance(value, list):
        return [_mapped(v, pairs) for v in value]
    if isinstance(value, dict):
        return {key: _mapped(v, pairs) for key, v in value.items()}
    return value


class RayRunner:
    """Runs the harness's jobs as Ray tasks asking for `num_gpus` GPUs (0: CPU only)."""

    def __init__(self, address: str | None, num_gpus: float) -> None:
        self.ray = connect(address)
        self.address, self.num_gpus, self.where = address, num_gpus, where(address)
        check_resources(self.ray, num_gpus, address)
        for module in (remote_task, process):  # the worker never imports perf_lint
            self.ray.cloudpickle.register_pickle_by_value(module)
        self.task = self.ray.remote(remote_task.run_job).options(
            num_gpus=num_gpus, num_cpus=1, max_retries=0, name="perf-lint profile")
        with open(CHILD, encoding="utf-8") as handle:
            self.child_source = handle.read()
        self.nodes: list[dict] = []  # what each finished task said about its node
        self.python = f"the Ray workers' Python ({self.where})"

    def run(self, python: str, job: dict, job_path: str, log_path: str, cwd: str, env: dict, timeout_s: float,
            cancel: threading.Event | None, max_processes: int = MAX_PROCESSES) -> ChildExit:
        """`process.run_child` on a cluster node (`python`, `cwd` and `env` are the worker's own)."""
        with open(job_path, "w") as handle:
            json.dump(job, handle)
        if os.path.exists(job["result"]):
            os.remove(job["result"])
        ray = self.ray
        ref = self.task.remote(self.child_source, job, timeout_s, max_processes)
        deadline = time.monotonic() + timeout_s + GRACE_S
        stopped = None
        try:
            while not ray.wait([ref], timeout=_POLL_S)[0]:
                if cancel is not None and cancel.is_set():
                    stopped = "cancelled"
                elif time.monotonic() > deadline:
                    stopped = "timeout"
                if stopped:
                    break
        except BaseException:  # Ctrl-C (KeyboardInterrupt) in the CLI: the task goes too
            self._stop(ref)
            raise
        if stopped:
            self._stop(ref)
            message = ("cancelled: the Ray task was cancelled" if stopped == "cancelled" else
                       f"the Ray task did not come back within the {timeout_s:g} s timeout plus {GRACE_S:g} s "
                       "(waiting for a free GPU?) and was cancelled")
            return self._failed(stopped, message, log_path)
        try:
            answer = ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            return self._failed("cancelled", "cancelled: the Ray task was cancelled", log_path)
        except ray.exceptions.RayError as exc:  # the worker died (killed for memory?) or the task could not run
            text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
            return self._failed("crashed", f"the Ray task on {self.where} failed: {text}", log_path)
        return self._received(answer, job, log_path)

    def _stop(self, ref) -> None:
        """Cancel: first as KeyboardInterrupt in the task (it kills its child's group), then
        by killing the worker (the child dies with it)."""
        for force in (False, True):
            try:
                self.ray.cancel(ref, force=force)
            except Exception:
                return  # already finished
            if self.ray.wait([ref], timeout=CANCEL_S)[0]:
                return

    def _failed(self, status: str, message: str, log_path: str) -> ChildExit:
        with open(log_path, "w", encoding="utf-8") as handle:
            handle.write(message + "\n")
        return ChildExit(status, None, None, message[-4000:], 0)

    def _received(self, answer: dict, job: dict, log_path: str) -> ChildExit:
        """Write the task's traces, log and result where a local run leaves them."""
        trace_dir = os.path.abspath(job["trace_dir"])
        programs = os.path.dirname(os.path.abspath(job["result"]))
        root = answer["root"]
        pairs = [(os.path.join(root, "programs"), programs), (os.path.join(root, "traces"), trace_dir)]
        for relative, data in answer["traces"].items():
            target = os.path.normpath(os.path.join(trace_dir, relative))
            if not target.startswith(trace_dir + os.sep):
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data)
        log = _mapped(answer["log"].decode("utf-8", "replace"), pairs)
        with open(log_path, "w", encoding="utf-8") as handle:
            if answer["log_truncated"]:
                handle.write("[... earlier output of the Ray task left out ...]\n")
            handle.write(log)
        result = _mapped(answer["result"], pairs)
        if result is not None:
            with open(job["result"], "w") as handle:
                json.dump(result, handle)
        self.nodes.append(answer["node"])
        return ChildExit(answer["status"], result, answer["returncode"], tail(log_path), answer["pgid"])

    def finish(self, result) -> None:
        """Name the runner, the node(s) and their CPUs in the result (the device is the child's)."""
        result.machine["runner"] = f"ray: {self.where}"
        if not self.nodes:
            return
        first, last = self.nodes[0], self.nodes[-1]
        hosts = list(dict.fromkeys(n["host"] for n in self.nodes))
        result.machine.update(node=", ".join(hosts), cpus=first["cpus"], threads=first["threads"],
                              load_before=first["load"], load_after=last["load_after"], python=first["python"])
        result.python = first["python"]
        result.notes.append(f"ran as Ray tasks ({self.num_gpus:g} GPU each) on the cluster at {self.where}: "
                            f"node {', '.join(hosts)}, {first['python']}")
