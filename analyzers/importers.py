"""Where a module's callers run it: the project's modules (`.py` and notebooks) that import
it, and whether one of them puts work on a GPU.

A module such as `engine.py` with `def train_step(model, batch, device)` never says where
its tensors live; `train.py`, which imports it and sets `device = "cuda"`, does. `gpu_importer`
finds such an importer, so the rules treat the module like code that says "cuda" itself.

The project (the folder `project_root` finds) is listed once per call, at most `MAX_FILES`
files; each file is read once per size and modification time. A cache learns of the answer's
inputs through `project.note`: the importers found, and every folder listed, so that a file
added, removed or renamed is noticed (a file edited in place to start importing the module is
not, until the module or its importers change).
"""

from __future__ import annotations

import ast
import os
import re
import stat
import threading
from collections import OrderedDict

from .project import MAX_FILE, FileNamespace, local_module, note, project_root
from .source import SourceError, notebook_source
from .vocabulary import CUDA_DEVICE, GPU_APIS, GPU_ENGINES, GPU_QUERIES

MAX_FILES = 5000  # a larger project is listed up to this many modules
_SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"}
_GPU_HINT = re.compile(rb"cuda|nccl|accelerat|deepspeed")  # a file without any of these never uses a GPU
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+)?import[ \t]+([^\n#;]+)", re.MULTILINE)
_WORD = re.compile(rb"\w+")

_SEEN: OrderedDict[tuple, tuple[frozenset, FileNamespace | None]] = OrderedDict()
_SEEN_LOCK = threading.Lock()
_SEEN_SIZE = 8192


def gpu_importer(path: str) -> str | None:
    """Where a module of the project that imports the module at `path` uses a GPU
    ("train.py:12"), or None."""
    path = os.path.normpath(os.path.abspath(path))
    directory = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = os.path.basename(directory) if stem == "__init__" else stem
    root = project_root(directory)
    for candidate, info in _modules(root):
        if candidate == path:
            continue
        words, module = _seen(candidate, info, root)
        if name.encode() not in words:
            continue
        note(candidate, info)  # an importer: a change to it may change the answer
        if module is None or not _imports(module, path):
            continue
        line = _gpu_line(module)
        if line is not None:  # (a notebook's lines run on across its cells: named by its file alone)
            return module.label if candidate.endswith(".ipynb") else f"{module.label}:{line}"
    return None


def _modules(root: str):
    """(path, stat) of the project's `.py` and `.ipynb` files, each folder noted."""
    count = 0
    for folder, folders, files in os.walk(root):
        try:
            note(folder, os.stat(folder))
        except OSError:
            continue
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
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


def _seen(path: str, info: os.stat_result, root: str) -> tuple[frozenset, FileNamespace | None]:
    """The words of a file's import statements, and the file read as a module when it
    may use a GPU (None otherwise, or when it cannot be read)."""
    key = (path, info.st_size, info.st_mtime_ns, root)
    with _SEEN_LOCK:
        found = _SEEN.get(key)
    if found is not None:
        return found
    words: frozenset = frozenset()
    module = None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        units = _cells(data, path) if path.endswith(".ipynb") else None
        code = data if units is None else "\n".join(unit.code for unit in units).encode()
        words = frozenset(word for match in _IMPORT.finditer(code) for part in match.groups() if part
                          for word in _WORD.findall(part))
        if words and _GPU_HINT.search(code):
            module = _module(path, code, units, root)
    except OSError:
        pass
    with _SEEN_LOCK:
        _SEEN[key] = words, module
        while len(_SEEN) > _SEEN_SIZE:
            _SEEN.popitem(last=False)
    return words, module


def _cells(data: bytes, path: str) -> list:
    """A notebook's code cells (IPython syntax masked); none when it cannot be read."""
    try:
        return list(notebook_source(data.decode("utf-8-sig"), path).units)
    except (SourceError, UnicodeDecodeError):
        return []


def _module(path: str, code: bytes, units: list | None, root: str) -> FileNamespace | None:
    """A `.py` file, or a notebook's `units` (each cell that parses), as a module."""
    label = os.path.relpath(path, root).replace(os.sep, "/")
    try:
        if units is None:
            return FileNamespace(path, ast.parse(code), label, root)
        body: list[ast.stmt] = []
        for unit in units:
            try:
                body.extend(ast.parse(unit.code).body)
            except (SyntaxError, ValueError):
                continue
        return FileNamespace(path, ast.Module(body=body, type_ignores=[]), label, root)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


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
    return min((node.lineno for node in ast.walk(module.tree) if _on_gpu(node, module)), default=None)


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
