"""Whole-run replay for `perf-lint check`: a re-run with nothing changed prints the
stored output without importing the analyzer.

The key covers the perf-lint and Python versions, the working folder, the parsed
command line, and the path, size and modification time of every `.py`/`.ipynb` under
the checked paths and of every `pyproject.toml` that could configure them (those folders
and all above). Any change misses and the run is done for real (with the per-file cache
of `cache.py` making that fast too). Runs that hit errors are not stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

from perf_lint import __version__

from .files import EXTENSIONS, skipped_dir

RUNS = os.path.join(".perf-lint-cache", __version__, "runs")


def _stats(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:missing"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def key(options: dict, paths: list[str]) -> str:
    digest = hashlib.sha256()
    parts = [__version__, sys.version, os.getcwd(), json.dumps(options, sort_keys=True, default=str)]
    configs: set[str] = set()
    for path in paths:
        folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        while True:  # every pyproject.toml above may hold the configuration
            configs.add(os.path.join(folder, "pyproject.toml"))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        if not os.path.isdir(path):  # a folder's own mtime changes when our cache appears in it
            parts.append(_stats(path))
        else:
            parts.append(f"{path}:folder")
            for top, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not skipped_dir(os.path.join(top, d)))
                for name in sorted(names):
                    if name.endswith(EXTENSIONS):
                        parts.append(_stats(os.path.join(top, name)))
                    elif name == "pyproject.toml":
                        configs.add(os.path.abspath(os.path.join(top, name)))
    parts.extend(_stats(config) for config in sorted(configs))
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def load(run_key: str) -> dict | None:
    try:
        with open(os.path.join(RUNS, run_key + ".json"), encoding="utf-8") as handle:
            stored = json.load(handle)
        return stored if {"stdout", "stderr", "status"} <= stored.keys() else None
    except (OSError, ValueError, AttributeError):
        return None


def store(run_key: str, stdout: str, stderr: str, status: int) -> None:
    try:
        os.makedirs(RUNS, exist_ok=True)
        import tempfile  # only a run that was not replayed stores: see files.write_atomic

        fd, temp = tempfile.mkstemp(dir=RUNS, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"stdout": stdout, "stderr": stderr, "status": status}, handle)
        os.replace(temp, os.path.join(RUNS, run_key + ".json"))
    except OSError:
        pass  # an unwritable project just does not get replays
