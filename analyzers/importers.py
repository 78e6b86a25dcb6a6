"""Where a module's callers run it: the project's modules (`.py` and notebooks) that import
it, and whether one of them puts work on a GPU.

A module such as `engine.py` with `def train_step(model, batch, device)` never says where
its tensors live; `train.py`, which imports it and sets `device = "cuda"`, does. `gpu_importer`
finds such an importer, so the rules treat the module like code that says "cuda" itself.

The project (the folder `project_root` finds, at most `MAX_FILES` modules) is listed at most
once per `LISTING_LIFE` seconds; each file is read once per size and modification time, and
the importers a listing names are looked at as they are now. A cache learns of the answer's
inputs through `project.note`: the importers, and every folder listed, so that a module added,
removed or renamed is noticed (one edited in place to start importing the module is not,
until the module or its importers change).
"""

from __future__ import annotations

import ast
import os
import re
import stat
import threading
import time
from collections import OrderedDict, defaultdict
from typing import NamedTuple

from .project import MAX_FILE, FileNamespace, local_module, note, project_root
from .source import SourceError, notebook_source
from .vocabulary import CUDA_DEVICE, GPU_APIS, GPU_ENGINES, GPU_QUERIES

MAX_FILES = 5000  # a larger project is listed up to this many modules
LISTING_LIFE = 5.0  # seconds a project's listing is reused (a run, a burst of edits) before it is made again
_SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"}
_GPU_HINT = re.compile(rb"cuda|nccl|accelerat|deepspeed")  # a file without any of these never uses a GPU
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+)?import[ \t]+([^\n#;]+)", re.MULTILINE)
_WORD = re.compile(rb"\w+")


class _Listing(NamedTuple):
    """A project's folders (path, stat) and, by each word of their import statements, the
    modules that may use a GPU, as listed at `made` (time.monotonic)."""

    made: float
    folders: list[tuple[str, os.stat_result]]
    importers: dict[bytes, list[str]]


_LOCK = threading.Lock()
_LISTINGS: OrderedDict[str, _Listing] = OrderedDict()  # project root -> its listing
_WORDS: OrderedDict[tuple, tuple[frozenset, bool]] = OrderedDict()  # (path, size, mtime) -> import words, GPU hint
_MODULES: OrderedDict[tuple, FileNamespace | None] = OrderedDict()  # (path, size, mtime, root) -> module


def gpu_importer(path: str) -> str | None:
    """Where a module of the project that imports the module at `path` uses a GPU
    ("train.py:12", a notebook by its name), or None."""
    path = os.path.normpath(os.path.abspath(path))
    directory = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = os.path.basename(directory) if stem == "__init__" else stem
    root = project_root(directory)
    listing = _listing(root)
    for folder, info in listing.folders:
        note(folder, info)  # a module added, removed or renamed there may change the answer
    for candidate in listing.importers.get(name.encode(), ()):
        try:
            info = os.stat(candidate)  # (as it is now: the listing may be a few seconds old)
        except OSError:
            continue
        note(candidate, info)
        words, hint = _words(candidate, info)
        module = _module(candidate, info, root) if hint and name.encode() in words and candidate != path else None
        if module is None or not _imports(module, path):
            continue
        line = _gpu_line(module)
        if line is not None:  # (a notebook's lines run on across its cells: named by its file alone)
            return module.label if candidate.endswith(".ipynb") else f"{module.label}:{line}"
    return None


def forget() -> None:
    """List the projects again at their next use (a server told of files created or deleted)."""
    with _LOCK:
        _LISTINGS.clear()


def _listing(root: str) -> _Listing:
    now = time.monotonic()
    with _LOCK:
        listing = _LISTINGS.get(root)
    if listing is not None and now - listing.made < LISTING_LIFE:
        return listing
    folders: list[tuple[str, os.stat_result]] = []
    importers: dict[bytes, list[str]] = defaultdict(list)
    for module, info in _modules(root, folders):
        words, hint = _words(module, info)
        for word in words if hint else ():
            importers[word].append(module)
    listing = _Listing(now, folders, dict(importers))
    with _LOCK:
        _LISTINGS[root] = listing
        while len(_LISTINGS) > 16:
            _LISTINGS.popitem(last=False)
    return listing


def _modules(root: str, folders: list):
    """(path, stat) of the project's `.py` and `.ipynb` files; its folders go to `folders`."""
    count = 0
    for folder, subfolders, files in os.walk(root):
        try:
            folders.append((folder, os.stat(folder)))
        except OSError:
            continue
        subfolders[:] = sorted(f for f in subfolders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
        for file in sorted(files):
            if not file.endswith((".py", ".ipynb")):
                continue
            candidate = os.path.join(folder, file)
            try:
                info = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE:
                yield candidate, info
                count += 1
                if count >= MAX_FILES:
                    return


def _words(path: str, info: os.stat_result) -> tuple[frozenset, bool]:
    """The words of a file's import statements, and whether it may use a GPU."""
    key = (path, info.st_size, info.st_mtime_ns)
    with _LOCK:
        found = _WORDS.get(key)
    if found is None:
        code = b"\n".join(_parts(path))
        found = frozenset(word for match in _IMPORT.finditer(code) for part in match.groups() if part
                          for word in _WORD.findall(part)), _GPU_HINT.search(code) is not None
        with _LOCK:
            _WORDS[key] = found
            while len(_WORDS) > 4 * MAX_FILES:
                _WORDS.popitem(last=False)
    return found


def _parts(path: str) -> list[bytes]:
    """A `.py` file's bytes, or a notebook's code cells (IPython syntax masked); none when
    it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    if not path.endswith(".ipynb"):
        return [data]
    try:
        units = notebook_source(data.decode("utf-8-sig"), path).units
    except (SourceError, UnicodeDecodeError):
        return []
    return [unit.code.encode() for unit in units]


def _module(path: str, info: os.stat_result, root: str) -> FileNamespace | None:
    """The file at `path` read as a module (a notebook: each code cell that parses)."""
    key = (path, info.st_size, info.st_mtime_ns, root)
    with _LOCK:
        if key in _MODULES:
            return _MODULES[key]
    label = os.path.relpath(path, root).replace(os.sep, "/")
    body: list[ast.stmt] = []
    for cell in _parts(path):
        try:
            body.extend(ast.parse(cell).body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    module = FileNamespace(path, ast.Module(body=body, type_ignores=[]), label, root) if body else None
    with _LOCK:
        _MODULES[key] = module
        while len(_MODULES) > 256:
            _MODULES.popitem(last=False)
    return module


def _imports(module: FileNamespace, path: str) -> bool:
    """Whether `module` imports the module at `path` (anywhere in its code)."""
    for node in ast.walk(module.tree):
        if type(node) is ast.Import:
            names = [(alias.name, 0) for alias in node.names]
        elif type(node) is ast.ImportFrom:
            base = node.module or ""
            names = [(base, node.level)] * bool(base) + [
                (f"{base}.{alias.name}" if base else alias.name, node.level) for alias in node.names]
        else:
            continue
        for dotted, level in names:
            found = local_module(module.directory, dotted, level, module.root)
            if found is not None and os.path.normpath(found.path) == path:
                return True
    return False


def _gpu_line(module: FileNamespace) -> int | None:
    """The first line where `module` puts work on a GPU (the context's test of "CUDA
    evidence", on ast nodes), or None."""
    return min((node.lineno for node in ast.walk(module.tree) if isinstance(node, (ast.Call, ast.Constant)) and _on_gpu(node, module)), default=None)


def _on_gpu(node: ast.AST, module: FileNamespace) -> bool:
    if type(node) is ast.Constant:
        return type(node.value) is str and CUDA_DEVICE.fullmatch(node.value) is not None
    if type(node) is not ast.Call:
        return False
    if type(node.func) is ast.Attribute and node.func.attr == "cuda":
        return True
    name = _dotted(node.func)
    qualified = module.qualname(name) if name else None
    return qualified is not None and (
        qualified.startswith(GPU_APIS) and qualified not in GPU_QUERIES or qualified in GPU_ENGINES)


def _dotted(expr: ast.expr) -> str | None:
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        head = _dotted(expr.value)
        return None if head is None else f"{head}.{expr.attr}"
    return None
