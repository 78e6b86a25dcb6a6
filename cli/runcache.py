"""Whole-run replay for `perf-lint check`: a re-run with nothing changed prints the
stored output without importing the analyzer.

The key covers the perf-lint and Python versions, the working folder, the parsed
command line, and the path, size and modification time of every `.py`/`.ipynb` under
the checked paths and of every `pyproject.toml` that could configure them (those folders
and all above). Any change misses and the run is done for real (with the per-file cache
of `cache.py` making that fast too). Runs that hit errors are not stored.

Both caches live in `.perf-lint-cache/VERSION/ID/`, ID derived from a secret of this
machine (`machine_key`) and from perf-lint's own code (`code_stamp`: an edited rule in a
development install misses too): a cache a repository ships cannot be read, nor can links it
plants there redirect writes. A `.perf-lint-cache` (or VERSION folder) that is a symbolic
link or not a folder is not used at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys

from perf_lint import __version__

from .files import EXTENSIONS, skipped_dir

CACHE_DIR = ".perf-lint-cache"


def machine_key() -> str | None:
    """This machine's secret, 64 hex digits in $XDG_CACHE_HOME/perf-lint/key (or
    ~/.cache/...), made on first use (mode 0600); None where it cannot be read or made."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(home, "perf-lint", "key")
    try:
        with open(path, "rb") as handle:
            key = handle.read(65).decode("ascii")
        if len(key) == 64 and not key.strip("0123456789abcdef"):
            return key
    except (OSError, ValueError):
        pass  # missing or damaged: make one
    key = os.urandom(32).hex()
    try:
        import tempfile  # only the first run on a machine gets here

        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(path))  # mode 0600
        with os.fdopen(fd, "w") as handle:
            handle.write(key)
        os.replace(temp, path)
    except OSError:
        return None
    return key


def code_stamp() -> str:
    """The size and modification time of every module of perf-lint (about 80 stats)."""
    import importlib.util

    parts = []
    for package in ("perf_lint", "perf_lint.analyzers", "perf_lint.cli"):
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for root, dirs, files in os.walk(folder):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                for name in sorted(files):
                    if name.endswith(".py"):
                        st = os.stat(os.path.join(root, name))
                        parts.append(f"{root}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def cache_folder() -> str | None:
    """This machine's cache folder under the current one, or None (said once on stderr when
    the project's `.perf-lint-cache` is a link or not a folder)."""
    key = machine_key()
    if key is None:
        return None
    path = os.path.join(CACHE_DIR, __version__, hashlib.sha256((key + code_stamp()).encode()).hexdigest()[:32])
    for part in (CACHE_DIR, os.path.dirname(path), path):
        try:
            mode = os.lstat(part).st_mode
        except OSError:
            break  # not made yet: we make it (and what is below it)
        if not stat.S_ISDIR(mode):
            what = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
            print(f"perf-lint: warning: {part} is {what}: not using the cache", file=sys.stderr)
            return None
    return path


def ignore_all() -> None:
    """`.perf-lint-cache/.gitignore`, made once (never through a link planted there)."""
    ignore = os.path.join(CACHE_DIR, ".gitignore")
    if not os.path.lexists(ignore):
        try:
            with open(ignore, "x", encoding="utf-8") as handle:
                handle.write("# created by perf-lint\n*\n")
        except OSError:
            pass


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


def load(folder: str, run_key: str) -> dict | None:
    """The stored run, or None: missing, damaged or of the wrong shape (a miss, then rewritten)."""
    try:
        with open(os.path.join(folder, "runs", run_key + ".json"), encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if (
        type(stored) is dict and type(stored.get("stdout")) is str and type(stored.get("stderr")) is str
        and stored.get("status") in (0, 1) and type(stored["status"]) is int
    ):
        try:
            return stored if unchanged(reads(stored.get("reads"))) else None
        except TypeError:
            return None
    return None


def reads(data) -> dict[str, tuple[int, int]]:
    """The files a stored analysis read ({path: [size, mtime_ns]} in JSON); TypeError on
    any other shape."""
    if type(data) is not dict:
        raise TypeError("reads")
    found = {}
    for path, info in data.items():
        if type(info) is not list or len(info) != 2 or any(type(value) is not int for value in info):
            raise TypeError("reads")
        found[path] = (info[0], info[1])
    return found


def unchanged(consulted: dict) -> bool:
    """Whether every file an analysis read (see perf_lint.analyzers.project.recording) is
    as it was then."""
    for path, (size, mtime) in consulted.items():
        try:
            info = os.stat(path)
        except OSError:
            return False
        if (info.st_size, info.st_mtime_ns) != (size, mtime):
            return False
    return True


def store(folder: str, run_key: str, stdout: str, stderr: str, status: int, consulted: dict) -> None:
    """Store a run's output; `consulted`: the files outside the run's paths its analyses
    read ({path: (size, mtime_ns)}): the run is replayed only while they are unchanged."""
    runs = os.path.join(folder, "runs")
    try:
        os.makedirs(runs, exist_ok=True)
        ignore_all()
        import tempfile  # only a run that was not replayed stores: see files.write_atomic

        fd, temp = tempfile.mkstemp(dir=runs, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"stdout": stdout, "stderr": stderr, "status": status, "reads": consulted}, handle)
        os.replace(temp, os.path.join(runs, run_key + ".json"))
    except OSError:
        pass  # an unwritable project just does not get replays
