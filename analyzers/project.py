"""The project a source belongs to: the modules it imports, read from disk, and what
their functions do to the values they are passed.

A module is read with `ast` once per path and modification time (a larger one than
`MAX_FILE`, or a notebook larger than `MAX_NOTEBOOK`, is not read). Imports resolve like
Python's: relative ones from the module's package, absolute ones from the module's folder,
then from the project's root (the folder above holding pyproject.toml, setup.py, setup.cfg
or .git). The rules reach other files only through this module, and every file it consults
is noted in the `recording` an analysis runs under, so a cache can tell when a finding
depends on a file that changed.

`host_reads` and `device_moves` summarize a function: which of its parameters it reads
on the host (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `float()`/`int()`) or moves to
a device (`.cuda()`, `.to(device)`) — the value, an element or attribute of it, what it
iterates — directly or through the functions and methods it calls, followed through the
project.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import functools
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple, cast

import libcst as cst

from .nodes import UNKNOWN, call_name, code, document_memo, dotted, literal, remembered, shortened
from .vocabulary import (CAST_METHODS, CAST_TYPES, CLOCKS, COQUI_MODELS, ELEMENTWISE_METHODS, HOST_FACTORIES, MASK_MAKERS, MATH_TESTS,
                         ONE_TENSOR_TESTS, SAME_DEVICE_FUNCTIONS, SAME_DEVICE_METHODS, TORCH_MODULES)

MAX_FILE = 1_000_000  # bytes: a larger module is not read
MAX_NOTEBOOK = 10 * 2**20  # bytes of a notebook, its outputs included (only its code cells are read)
_SYS_PATH_CALLS = ("sys.path.append", "sys.path.insert")
_SAME_MODULE = {"cuda", "to", "train", "eval", "cpu", "half", "float", "double", "bfloat16"}  # nn.Module methods returning self
MAX_HOPS = 3  # re-exports followed (`from .data import X` in a package's __init__, and its subpackage's)
_MAX_CALLS = 3  # calls followed from a function into others
_FURTHER_USES = 12  # further reads on the host a summary names (`Use.also`)
_SHALLOW_CALLS = 1  # for tests and selections with a boolean mask (deeper, a library's checks and branches)
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")

# -- what an analysis read --------------------------------------------------------------
_READS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("perf_lint_reads", default=None)


@contextlib.contextmanager
def recording():
    """Note the files the analyses in this block consult: {path: (size, mtime_ns)}."""
    reads: dict[str, tuple[int, int]] = {}
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


def note(path: str, info: os.stat_result) -> None:
    """Tell the `recording` in force that the analysis depends on `path` as it is now."""
    reads = _READS.get()
    if reads is not None:
        reads[os.path.normpath(os.path.abspath(path))] = (info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def marked(folder: str) -> bool:
    """Whether `folder` holds a project marker (pyproject.toml, setup.py, setup.cfg, .git)."""
    return any(os.path.exists(os.path.join(folder, marker)) for marker in _ROOT_MARKERS)


@functools.lru_cache(maxsize=256)
def project_root(directory: str) -> str:
    """The folder at or above `directory` holding a project marker; `directory` if none."""
    folder = directory
    for _ in range(8):
        if marked(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return directory


# -- namespaces: where the names a module uses are defined -----------------------------
class Namespace:
    """Names code can refer to: the classes, functions and imports of its module.
    `klass` and `function` give (definition, its namespace, the `Place` naming its lines)."""

    def qualname(self, dotted: str) -> str | None:
        raise NotImplementedError

    def klass(self, name: str) -> tuple[ast.ClassDef, "Namespace", "Place"] | None:
        raise NotImplementedError

    def function(self, name: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, "Namespace", "Place"] | None:
        raise NotImplementedError

    def value(self, name: str, hops: int = 0) -> tuple[ast.expr, "Namespace"] | None:
        """What a module-level name is assigned, its only assignment there (`opt = Config()`),
        followed through imports of the project; None when not known."""
        raise NotImplementedError


# What `method` and `_callee` find: (definition, its namespace, the `Place` naming its lines,
# its class or None for a function).
Definition = tuple[ast.stmt, "Namespace", "Place", ast.ClassDef | None]


@dataclass(frozen=True)
class Place:
    """Names a line of a module read from disk in a message ("data.py:31"); with no
    `label` (the analyzed source), none. `path`: the module's file."""

    label: str
    path: str = ""

    def __call__(self, lineno: int) -> str:
        return f"{self.label}:{lineno}" if self.label else ""


class _NotebookPlace(Place):
    """A notebook read as one module: its places are named by the file alone."""

    def __call__(self, lineno: int) -> str:
        return self.label


class FileNamespace(Namespace):
    """A module read from disk (a local module the analyzed file imports)."""

    def __init__(self, path: str, tree: ast.Module, label: str, root: str) -> None:
        self.path, self.directory, self.label, self.root = path, os.path.dirname(path), label, root
        self.tree = tree
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.imports: dict[str, str] = {}
        self.relative: dict[str, tuple[int, str | None, str]] = {}
        self.stars: list[tuple[int, str | None]] = []  # `from module import *`: (level, module)
        added: list[list[str]] = []  # the folders it puts on sys.path, as written
        self.assigned: dict[str, ast.expr | None] = {}  # module-level name -> its one value (None: several)
        for node in tree.body:
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                name = node.targets[0].id
                self.assigned[name] = node.value if name not in self.assigned else None
            elif type(node) is ast.Expr and type(node.value) is ast.Call and ast_dotted(node.value.func) in _SYS_PATH_CALLS:
                added.append([n.value for n in ast.walk(node.value) if type(n) is ast.Constant and type(n.value) is str])
            elif type(node) is ast.ClassDef:
                self.classes[node.name] = node
            elif type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef:
                self.functions[node.name] = node
            elif type(node) is ast.Import:
                for alias in node.names:
                    first = alias.name.split(".")[0]
                    self.imports[alias.asname or first] = alias.name if alias.asname else first
            elif type(node) is ast.ImportFrom and node.names[0].name == "*":
                self.stars.append((node.level, node.module))
            elif type(node) is ast.ImportFrom:
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.level:
                        self.relative[local] = (node.level, node.module, alias.name)
                    elif node.module:
                        self.imports[local] = f"{node.module}.{alias.name}"
        self.paths = search_paths(self.directory, added)

    def qualname(self, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        base = self.imports.get(head)
        return None if base is None else f"{base}.{rest}" if rest else base

    def klass(self, name: str, hops: int = 0):
        if name in self.classes:
            return self.classes[name], self, Place(self.label, self.path)
        found = self._imported(name, hops)
        return found[0].klass(found[1], hops + 1) if found is not None else self._starred("klass", name, hops)

    def function(self, name: str, hops: int = 0):
        if name in self.functions:
            return self.functions[name], self, Place(self.label, self.path)
        found = self._imported(name, hops)
        return found[0].function(found[1], hops + 1) if found is not None else self._starred("function", name, hops)

    def value(self, name: str, hops: int = 0):
        if name in self.assigned:
            found = self.assigned[name]
            return None if found is None else (found, self)
        imported = self._imported(name, hops)
        return imported[0].value(imported[1], hops + 1) if imported is not None else self._starred("value", name, hops)

    def _imported(self, name: str, hops: int):
        """(module, name there) for a name this module imports from a local module."""
        if hops >= MAX_HOPS:
            return None
        return imported(self.directory, self.root, name, self.relative, self.imports, self.paths)

    def _starred(self, kind: str, name: str, hops: int):
        return starred(self.stars, self.directory, self.root, kind, name, hops, self.paths)


_FILES: OrderedDict[tuple, FileNamespace | None] = OrderedDict()
_FILES_LOCK = threading.Lock()
_FILES_SIZE = 256


def starred(stars: list, directory: str, root: str, kind: str, name: str, hops: int, paths: tuple = ()):
    """The class, function or value (`kind`) `name` from the first `from module import *` of a
    project module that defines it."""
    if "." in name or hops >= MAX_HOPS:
        return None
    for level, module in stars:
        found = local_module(directory, module, level, root, paths)
        definition = getattr(found, kind)(name, hops + 1) if found is not None else None
        if definition is not None:
            return definition
    return None


def imported(directory: str, root: str, name: str, relative: dict, imports: dict, paths: tuple = ()):
    """(module, its name for it) for a name a module in `directory` imports from a local
    module (`from .data import X`, `from data import X`; `data.X` after `import data` or
    `from . import data`), or None. `paths`: the folders the module puts on sys.path."""
    head, dot, rest = name.partition(".")
    if dot:
        if head in relative:
            level, module, original = relative[head]
            found = local_module(directory, f"{module}.{original}" if module else original, level, root)
        elif head in imports:
            found = local_module(directory, imports[head], 0, root, paths)
        else:
            return None
        return None if found is None else (found, rest)
    if name in relative:
        level, module, original = relative[name]
        found = local_module(directory, module, level, root)
    elif name in imports and "." in imports[name]:
        module, _, original = imports[name].rpartition(".")
        found = local_module(directory, module, 0, root, paths)
    else:
        return None
    return None if found is None else (found, original)


def local_module(directory: str, module: str | None, level: int, root: str, paths: tuple = ()) -> FileNamespace | None:
    """The module `from <level dots><module> import ...` names, when it is a file of the
    project (see `module_file`), parsed once per path and modification time; None when
    there is no such file. Its places are named relative to `root`, the analyzed file's folder."""
    found = module_file(directory, module, level, paths)
    if found is None:
        return None
    candidate, info = found
    note(candidate, info)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE:
        return None  # (a FIFO or device never read)
    key = (os.path.abspath(candidate), info.st_mtime_ns, info.st_size, root)
    with _FILES_LOCK:
        if key in _FILES:
            _FILES.move_to_end(key)
            return _FILES[key]
    namespace = None
    try:
        with open(candidate, "rb") as handle:
            tree = ast.parse(handle.read())
        label = os.path.relpath(candidate, root).replace(os.sep, "/")
        namespace = FileNamespace(candidate, tree, label, root)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        namespace = None
    with _FILES_LOCK:
        _FILES[key] = namespace
        while len(_FILES) > _FILES_SIZE:
            _FILES.popitem(last=False)
    return namespace


def module_file(directory: str, module: str | None, level: int, paths: tuple = ()) -> tuple[str, os.stat_result] | None:
    """(path, stat) of the file `from <level dots><module> import ...` in `directory` names,
    resolved like Python (level 0: `module.py` or `module/__init__.py` in `directory`, in
    `paths` (folders the importer puts on sys.path: `search_paths`), else in the folders holding
    its packages (`_ancestors`) or the project's root, else the one file of the project that
    is that module, wherever it is (`placed_anywhere`); level n: n-1 folders up); None when
    there is none."""
    if not module and level == 0:
        return None
    bases = [directory]
    if level == 0:
        top = project_root(directory)
        bases += [path for path in paths if path != directory] + list(_ancestors(directory, top))
    else:
        for _ in range(level - 1):
            bases = [os.path.dirname(bases[0]) or bases[0]]
    parts = module.split(".") if module else []
    for candidate in (
        path for base in bases for stem in [os.path.join(base, *parts)]
        for path in (stem + ".py", os.path.join(stem, "__init__.py"))
    ):
        try:
            return candidate, os.stat(candidate)
        except OSError:
            continue
    if level == 0 and parts:
        from .importers import placed_anywhere  # (imported here: importers builds on this module)
        found = placed_anywhere(directory, parts)
        if found is not None:
            with contextlib.suppress(OSError):
                return found, os.stat(found)
    return None


@functools.lru_cache(maxsize=256)
def _ancestors(directory: str, top: str) -> tuple[str, ...]:
    """The folders above `directory` within the project's root, nearest first, then the root:
    first those holding the packages it is in (it and the folders above it with an
    `__init__.py`), where a script importing the package runs (`from loss_funcs.adv import *` in
    `loss_funcs/daan.py`, imported by `main.py` beside `loss_funcs/`); then the others, where a
    script runs that imports a folder without an `__init__.py` (FEDformer/run.py, importing
    exp/exp_main.py, whose `from data_provider.data_factory import ...` is FEDformer's)."""
    found: list[str] = []
    folder = directory
    while folder.startswith(top + os.sep) and os.path.isfile(os.path.join(folder, "__init__.py")):
        folder = os.path.dirname(folder)
        found.append(folder)
    while folder.startswith(top + os.sep):
        folder = os.path.dirname(folder)
        if folder not in found:
            found.append(folder)
    return (*found, *([top] if top != directory and top not in found else []))


def search_paths(directory: str, added: list[list[str]]) -> tuple[str, ...]:
    """The folders of the project a module in `directory` puts on sys.path, from the strings
    of each `sys.path.append(...)`/`insert(...)` call (`".."`; `os.path.join(os.path.dirname(
    __file__), "..", "src")`: `../src`), relative to `directory` (where a notebook or script
    runs)."""
    top = project_root(directory)
    found = []
    for strings in added:
        parts = [part for part in strings if part and "\x00" not in part]
        folder = os.path.normpath(os.path.join(directory, *parts)) if parts else ""
        if folder and (folder == top or folder.startswith(top + os.sep)) and folder not in found and os.path.isdir(folder):
            found.append(folder)
    return tuple(found)


def parse_definition(text: str) -> ast.stmt | None:
    """The class or function whose source is `text` (a node of the analyzed source,
    rendered), or None."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        try:
            import textwrap

            tree = ast.parse(textwrap.dedent(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    for node in tree.body:
        if type(node) in (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef):
            return node
    return None


_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)  # the nodes a function or class may be nested in
WORD = re.compile(r"\w+")  # a word of a source's text (its names among them)


def _words_of(node: cst.CSTNode, text: str | None) -> frozenset:
    """The words of `node`, whose text is `text` (rendered when None); remembered."""
    return remembered(_words_of, node, lambda: frozenset(WORD.findall(text if text is not None else code(node))))


class SourceNamespace(Namespace):
    """The analyzed source (its classes and functions are libcst nodes, rendered and read
    with `ast` when asked for), and the local modules it imports from. Its places are not
    named in messages: the code quoted finds them, and a message stays the same when
    lines or cells above it change (and in jupyterlab-lsp's virtual document)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        path = getattr(ctx, "path", None)
        self.directory = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else None
        self.paths = search_paths(self.directory, ctx.sys_paths) if self.directory is not None else ()
        self._found: dict[tuple, tuple | None] = {}  # (kind, name) -> definition: rules ask again and again
        self._fresh: set[int] = set()  # ids of the definitions' trees whose summaries this analysis has vetted
        self._version: int | None = None  # see _changes
        self._changed: dict = {}  # see _changes

    @classmethod
    def of(cls, ctx) -> "SourceNamespace":
        """The source's (made on first use, after the pass)."""
        found = ctx.shared.get(cls)
        if found is None:
            found = ctx.shared[cls] = cls(ctx)
        return found

    def qualname(self, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        base = self.ctx.imports.get(head)
        return None if base is None else f"{base}.{rest}" if rest else base

    def klass(self, name: str, hops: int = 0):
        return self._remember(("klass", name), lambda: self._klass(name, hops))

    def function(self, name: str, hops: int = 0):
        return self._remember(("function", name), lambda: self._function(name, hops))

    def function_run_by(self, func: cst.Name):
        """The function a call of the source runs (its libcst `func`): see `redefined_run_by`;
        else `function(name)`."""
        node = self.redefined_run_by(func)
        return self._definition(node) if node is not None else self.function(func.value)

    def redefined_run_by(self, func: cst.Name, unit: int | None = None) -> cst.FunctionDef | None:
        """In a notebook that defines the function a call names (its libcst `func`, in the
        unit `unit`, found when not given) in several cells: the last definition in a cell
        before the call's (a `training_loop` redefined for the GPU further down is not the
        one an earlier cell runs); so too in one document (a notebook as jupyterlab-lsp sends
        it), for a call of the module's own code: the last definition above it. None when it
        is defined once."""
        defined = [node for node, scope in self.ctx.functions.get(func.value, ()) if scope.parent is self.ctx.module_scope]
        if len(defined) < 2:
            return None
        if len(self.ctx.units) < 2:
            order = self.ctx.shared.get("call order")
            if order is None:  # id(func) -> (the call's place in the pass, whether the module's own code makes it)
                order = self.ctx.shared["call order"] = {
                    id(call.func): (index, scope is self.ctx.module_scope) for index, (call, scope) in enumerate(self.ctx.call_order)}
            place, own = order.get(id(func), (None, False))
            earlier = [node for node in defined if place is not None and self.ctx.function_order[id(node)] <= place]
            return earlier[-1] if own and earlier else None
        if unit is None:
            units = self.ctx.shared.get("call units")
            if units is None:  # the unit of each call of the source, by its func node
                units = self.ctx.shared["call units"] = {
                    id(site.node.func): site.unit for sites in self.ctx.calls.values() for site in sites}
            unit = units.get(id(func))
        earlier = [node for node in defined if unit is not None and self.ctx.function_units[id(node)] <= unit]
        return earlier[-1] if earlier else None

    def visible_function(self, name: str, scope):
        """The function a call of `name` in `scope` runs: one defined in `scope` or a function
        around it (an ignite process function nested in `train`), else `function(name)`."""
        while scope is not None and scope is not self.ctx.module_scope:
            nested = [node for node, inner in self.ctx.functions.get(name, ()) if inner.parent is scope]
            if nested:
                return self._definition(nested[-1])
            scope = scope.parent
        return self.function(name)

    def _remember(self, key: tuple, find):
        """`find()`, once per analysis. Kept without a reference to this namespace (a cycle
        the collector would have to break: the server defers collections)."""
        if key not in self._found:
            found = find()
            self._found[key] = found if found is None or found[1] is not self else (found[0], None, found[2])
        found = self._found[key]
        return found if found is None or found[1] is not None else (found[0], self, found[2])

    def _klass(self, name: str, hops: int):
        if name in self.ctx.classes:
            return self._definition(self.ctx.classes[name])
        found = self._imported(name)
        return found[0].klass(found[1], hops + 1) if found is not None else self._starred("klass", name, hops)

    def _function(self, name: str, hops: int):
        defined = [node for node, scope in self.ctx.functions.get(name, ()) if scope.parent is self.ctx.module_scope]
        if defined:
            return self._definition(defined[-1])
        found = self._imported(name)
        return found[0].function(found[1], hops + 1) if found is not None else self._starred("function", name, hops)

    def value(self, name: str, hops: int = 0):
        """(Only names imported from a module of the project: the source's own values are
        the context's.)"""
        found = self._imported(name)
        return found[0].value(found[1], hops + 1) if found is not None else self._starred("value", name, hops)

    def _starred(self, kind: str, name: str, hops: int):
        if self.directory is None or not self.ctx.star_imports:
            return None
        return starred(self.ctx.star_imports, self.directory, self.directory, kind, name, hops, self.paths)

    def _imported(self, name: str):
        if self.directory is None:
            return None
        return imported(self.directory, self.directory, name, self.ctx.relative_imports, self.ctx.imports, self.paths)

    def _definition(self, node):
        tree = remembered(parse_definition, node, lambda: parse_definition(self.ctx.text_of(node)))
        if tree is None:
            return None
        if id(tree) not in self._fresh:  # (kept from an earlier version of the document: what was
            self._fresh.add(id(tree))  # learnt of it then may hang on definitions an edit changed since)
            vetted = tree.__dict__.get("_perf_lint_vetted")
            version, changed = self._changes()
            if vetted is None or max(changed.get(node.name.value, 0), changed.get(None, 0)) > vetted:
                pending: list[ast.AST] = [tree]
                while pending:  # (the summaries are kept on its functions and classes: its statements hold them)
                    inner = pending.pop()
                    inner.__dict__.pop("_perf_lint_memo", None)
                    pending.extend(child for child in ast.iter_child_nodes(inner) if isinstance(child, _HOLDERS))
            tree.__dict__["_perf_lint_vetted"] = version
        return tree, self, Place("")

    def _changes(self) -> tuple[int, dict]:
        """(this analysis's number among the document's, name -> the last analysis whose edit may
        change what is learnt of the source's definitions so named; None: of all of them).
        A summary finds other definitions by name, so a definition is affected when one of the
        names its statement's text holds is defined anew (added, edited, removed), or is
        affected itself; when the imports, `sys.path` additions or the defaults of the source's
        command-line options (which summaries read: `range(args.epochs)`) changed, all are."""
        if self._version is None:
            ctx, state = self.ctx, document_memo(SourceNamespace)
            definitions: dict[str, list] = {name: [defined for defined, _ in defs] for name, defs in ctx.functions.items()}
            for name, cls in ctx.classes.items():
                definitions.setdefault(name, []).append(cls)
            imports = (tuple(ctx.imports.items()), tuple(ctx.relative_imports.items()), tuple(ctx.star_imports),
                       tuple(map(tuple, ctx.sys_paths)), tuple((option, repr(ctx.option_default(option))) for option in ctx.argparse))
            self._version = version = state.get("version", 0) + 1
            self._changed = changed = state.setdefault("changed", {})
            before = state.get("definitions")
            if before is None or state.get("imports") != imports:
                changed[None] = version
            else:
                frontier = {name for name in definitions.keys() | before.keys() if len(definitions.get(name, ())) != len(
                    before.get(name, ())) or any(a is not b for a, b in zip(definitions.get(name, ()), before[name]))}
                affected = set(frontier)
                while frontier:  # (the definitions whose statements name one affected, until none is added)
                    named = {name for name, defs in definitions.items() if name not in affected and any(
                        not frontier.isdisjoint(self._names(defined)) for defined in defs)}
                    affected |= named
                    frontier = named
                for name in affected:
                    changed[name] = version
            state.update(version=version, definitions=definitions, imports=imports)
        return self._version, self._changed

    def _names(self, node) -> frozenset:
        """The words of the module statement holding `node` (a method: its class's)."""
        holder = node
        while id(holder) not in self.ctx.texts and id(holder) in self.ctx.class_of:
            holder = self.ctx.class_of[id(holder)]
        return _words_of(holder, self.ctx.texts.get(id(holder)))


# calls that are not functions of the project: builtins, tensor and container methods
_NOT_PROJECT = frozenset({
    "sum", "mean", "max", "min", "norm", "detach", "clone", "float", "half", "double", "abs", "sqrt", "pow", "exp",
    "log", "squeeze", "unsqueeze", "view", "reshape", "argmax", "argmin", "softmax", "std", "var", "prod", "cuda",
    "to", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "sub", "add", "mul", "div", "item",
    "len", "range", "enumerate", "zip", "isinstance", "getattr", "setattr", "hasattr", "append", "extend", "format",
    "join", "get", "items", "keys", "values", "pop", "insert", "sorted", "list", "tuple", "dict", "set", "str",
    "repr", "round", "cat", "stack", "split", "chunk", "permute", "transpose", "expand", "repeat", "contiguous",
    "zero_", "add_", "mul_", "copy_", "fill_", "masked_fill", "index_select", "gather", "scatter", "matmul", "bmm",
    "mm", "einsum", "where", "clamp", "type", "long", "int", "bool", "new_zeros", "new_ones", "zeros", "ones",
    "empty", "full", "arange", "tensor", "randn", "rand", "zero_grad", "step", "backward", "parameters",
    "named_parameters", "state_dict", "load_state_dict", "no_grad", "autocast", "set_description", "set_postfix",
    "write", "add_scalar", "info", "debug", "warning", "startswith", "endswith", "replace", "strip", "set_epoch",
    "print", "tolist", "cpu", "numpy",
})
_LIBRARIES = frozenset({"torch", "numpy", "math", "os", "sys", "time", "json", "re", "random", "logging", "np",
                        "torchvision", "transformers", "datasets", "einops", "tqdm", "wandb", "matplotlib", "PIL"})


def maybe_project_call(ctx, func, scope=None) -> bool:
    """Whether a call of the analyzed source (its libcst `func`, in `scope` when given) may call a
    function or method of the project: not a builtin, a tensor or container method, or a
    library's function, and, for a bare name, one the source defines or imports; a method of
    the project class a parameter is annotated with (`trainer.update()` with `trainer:
    DiffusionPriorTrainer`)."""
    return _once(ctx, (maybe_project_call, id(func), id(scope)), lambda: _maybe_project_call(ctx, func, scope))


def _once(ctx, key: tuple, compute):
    """`compute()`, kept for the rest of the analysis once the pass is over (rules ask again
    and again); during the pass, computed from what it has seen so far, and not kept."""
    if not ctx.final:
        return compute()
    if key not in ctx.shared:
        ctx.shared[key] = compute()
    return ctx.shared[key]


def _maybe_project_call(ctx, func, scope) -> bool:
    head: str | None
    if type(func) is cst.Name:
        name = head = func.value
    elif type(func) is cst.Attribute:
        name, head = func.attr.value, func.value.value if type(func.value) is cst.Name else None
        root = dotted(func.value) if head is None else None
        if root is not None and (ctx.imports.get(root.partition(".")[0]) or "").partition(".")[0] in _LIBRARIES:
            return False  # (`torch.optim.SGD(...)`, `nn.functional.cross_entropy(...)`: a library's)
        annotated = _annotated_class(SourceNamespace.of(ctx), func.value, scope) if scope is not None and head else None
        if annotated is not None:
            return method(annotated[0], name, *annotated[1:]) is not None
    else:
        return False
    imported = ctx.imports.get(head) if head is not None else None
    if name in _NOT_PROJECT and not _defined_here(ctx, func, head, imported):
        return False
    if imported is not None and imported.partition(".")[0] in _LIBRARIES:
        return False
    return type(func) is not cst.Name or imported is not None or head in ctx.functions or (
        head in ctx.relative_imports or bool(ctx.star_imports)) or _bound_to_project_call(ctx, name)


def _bound_to_project_call(ctx, name: str) -> bool:
    """Whether `name` is bound somewhere in the source to what a call of the project gives back
    (`train = train_fns.make_step(...)`) or to a module of the project (once per name an analysis)."""
    return _once(ctx, (_bound_to_project_call, name), lambda: any(
        type(value) is cst.Call and type(value.func) is cst.Attribute and maybe_project_call(ctx, value.func)
        or _made_module(ctx, value) for value, _ in ctx.by_name.get(name, ())))


def _defined_here(ctx, func, head: str | None, imported: str | None) -> bool:
    """Whether a call by a name builtins and tensors use too (`add`, `step`) calls a function
    of the project: `add(...)` it defines or imports from a module of its own, `metric.add(...)`
    with `metric = Accumulator(3)`, a class of the project defining `add` (d2l's)."""
    if type(func) is cst.Name:
        return head in ctx.functions and not imported or head in ctx.relative_imports or (
            imported is not None and imported.partition(".")[0] not in _LIBRARIES and bool(ctx.path))
    name = func.attr.value
    return head is not None and _once(ctx, (_defined_here, head, name), lambda: any(  # (per receiver and method)
        _defines(ctx, value, name) for value, _ in ctx.by_name.get(head, ())))


def _defines(ctx, value, name: str) -> bool:
    """Whether `value` makes an instance of a class of the project that defines method `name`."""
    made = _module_made(value) if type(value) is cst.Call else None
    if made is None or type(made.func) is not cst.Name or not _made_module(ctx, made):
        return False  # (most bindings: `x = x.to(device)`, asked at every call of `x.to(...)` in the pass)
    found = SourceNamespace.of(ctx).klass(made.func.value)
    return found is not None and any(type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and node.name == name for node in found[0].body)


def _made_module(ctx, value) -> bool:
    """Whether `value` makes an instance of a class the source defines or imports (`model =
    ModelWithLoss(net).cuda()`): calling it runs the class's `forward`."""
    value = _module_made(value) if type(value) is cst.Call else value
    return type(value) is cst.Call and type(value.func) is cst.Name and (
        value.func.value in ctx.classes or value.func.value in ctx.imports and ctx.imports[value.func.value].partition(".")[0] not in _LIBRARIES)


def call_target(ctx, func, scope):
    """(definition, namespace, place, class or None) of the function or method of the
    project that a call of the analyzed source (its libcst `func`, in `scope`) calls:
    `f(...)`, `module.f(...)`, `self.m(...)`, `obj.m(...)` with `obj = Class(...)` (or
    `Class(...).cuda()`, which gives the module back), and `Class(...).m(...)`."""
    namespace = SourceNamespace.of(ctx)
    if type(func) is cst.Name:
        found = namespace.function_run_by(func)
        if found is not None:
            return (*found, None)
        return _made_step(ctx, func, scope) or _instance_method(ctx, namespace, func, scope, "forward")
    if type(func) is not cst.Attribute:
        return None
    receiver = dotted(func.value)
    if receiver is None and type(func.value) is cst.Call:  # `utils.MetricLogger(delimiter=" ").log_every(...)`
        made = dotted(func.value.func)
        found = None if made is None else namespace.klass(made)
        return None if found is None else method(found[0], func.attr.value, *found[1:])
    if receiver is None:
        return None
    attached = _attached(ctx, receiver, func.attr.value)
    if attached is not None:  # `setattr(StepByStep, "make_normalizer", make_normalizer)` in a notebook
        found = namespace.function_run_by(attached)
        return None if found is None else (*found, None)
    if receiver == "self":
        cls = ctx.class_of.get(id(scope.node)) if scope.node is not None else None
        found = None if cls is None else namespace.klass(cls.name.value)
        own = None if found is None else method(found[0], func.attr.value, *found[1:])
        return own or (None if cls is None else _instance_method(ctx, namespace, func, scope, "forward"))
    if receiver.partition(".")[0] in ctx.imports or receiver in ctx.relative_imports:
        found = namespace.function(f"{receiver}.{func.attr.value}")
        return (*found, None) if found is not None else _class_method(namespace, receiver, func.attr.value)
    return _instance_method(ctx, namespace, func.value, scope, func.attr.value)


def _instance_method(ctx, namespace: "SourceNamespace", instance, scope, name: str) -> Definition | None:
    """Method `name` of the class of the project whose instance `instance` (a name, or
    `self.attr`) is bound to: `obj = Class(...)` (or `Class(...).cuda()`, which gives the module
    back); `forward` for a module called (`self.criterion(out, y)` after `self.criterion =
    FocalLoss()`)."""
    origin = ctx.origin(instance, scope) or _handed_back(ctx, instance, scope)
    if origin is None:
        annotated = _annotated_class(namespace, instance, scope)
        return None if annotated is None else method(annotated[0], name, *annotated[1:])
    if type(origin[0]) is not cst.Call:
        return None
    maker = _module_made(origin[0]).func
    chosen = ctx.origin(maker, origin[1]) if type(maker) is cst.Name else None
    if chosen is not None and type(chosen[0]) is cst.IfExp:  # `Trainer = A if unsupervised else B`
        maker = chosen[0].body
    found = classes_made_by(namespace, maker)
    return method(found[0][0], name, *found[0][1:]) if found else None


def _annotated_class(namespace: "SourceNamespace", instance, scope):
    """(class, namespace, place) of the project that a parameter, never rebound, is annotated
    with (DALLE2's `def train(trainer: DiffusionPriorTrainer, ...)`), or None."""
    owner = scope.owner_of(instance.value) if type(instance) is cst.Name else None
    annotation = owner.annotation(instance.value) if owner is not None else None
    if annotation is None:
        return None
    name = dotted(annotation) or (literal(annotation) if type(annotation) is cst.SimpleString else None)  # (`trainer:
    # "DiffusionPriorTrainer"`)
    found = namespace.klass(name) if type(name) is str else None
    return found if found is not None and type(found[0]) is ast.ClassDef else None


def _module_made(call: cst.Call) -> cst.Call:
    """The call making the module `call` gives back: `Trainer(model)` of `Trainer(model).cuda()`
    (nn.Module methods returning the module itself)."""
    while type(call.func) is cst.Attribute and call.func.attr.value in _SAME_MODULE and type(call.func.value) is cst.Call:
        call = call.func.value
    return call


def classes_made_by(namespace: "SourceNamespace", maker: cst.BaseExpression) -> list[tuple]:
    """The classes of the project (definition, namespace, place) whose instances a call of
    `maker` makes: the class itself, or those a function of that name returns (`model =
    load_model(hparams)`; `dataset = LoadData(name)`, one class per dataset name)."""
    made = dotted(maker)
    found = None if made is None else namespace.klass(made)
    if found is None and made is not None and type(maker) is cst.Name:
        return _returned_classes(namespace.function(made))
    return [] if found is None else [found]


def _made_step(ctx, func: cst.Name, scope):
    """For `train(x, y)` with `train = train_fns.GAN_training_function(G, D, ...)` (in one of
    the branches that bind it), the function that factory defines and returns."""
    owner = scope.owner_of(func.value) if func.value not in ctx.functions else None
    for value in owner.assignments.get(func.value, ()) if owner is not None else ():
        if type(value) is cst.Call and type(value.func) in (cst.Name, cst.Attribute) and dotted(value.func) != func.value:
            maker = call_target(ctx, value.func, owner)
            inner = _returned_functions(maker[0]) if maker is not None else []
            if len(inner) == 1:
                return inner[0], *maker[1:3], None
    return None


def _handed_back(ctx, name, scope):
    """(value, scope) of a name first bound to a value and then only to what calls given it hand
    back (`model = apply_gradient_allreduce(model)`; `model, optimizer, it = load_checkpoint(path,
    model, optimizer)`: the same object, wrapped or restored), or None."""
    owner = scope.owner_of(name.value) if type(name) is cst.Name else None
    if owner is None:
        return None

    def given(value) -> bool:
        return type(value) is cst.Call and any(type(arg.value) is cst.Name and arg.value.value == name.value for arg in value.args)

    values = owner.assignments[name.value]
    known = [value for value in values if value is not None]
    unpacked = [value for value, _ in ctx.unpacked.get((id(owner), name.value), ())]
    if not known or given(known[0]) or values.count(None) != len(unpacked) or not all(map(given, [*known[1:], *unpacked])):
        return None
    return known[0], owner


def _returned_classes(found) -> list[tuple]:
    """The classes of the project whose instances the function `found` returns (`model =
    Tacotron2(hparams).cuda()` ... `return model`), last return first."""
    if found is None:
        return []
    classes = []
    function, namespace = found[0], found[1]
    assigned = _assignments(function)
    for node in body_nodes(function):
        if type(node) is not ast.Return or node.value is None:
            continue
        values = assigned.get(node.value.id, []) if type(node.value) is ast.Name else [node.value]
        for value in values:
            while type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in _SAME_MODULE \
                    and type(value.func.value) is ast.Call:
                value = value.func.value
            name = ast_dotted(value.func) if type(value) is ast.Call else None
            klass = namespace.klass(name) if name else None
            if klass is not None:
                classes.append(klass)
    return classes


def _attached(ctx, receiver: str, attribute: str) -> cst.Name | None:
    """The function of the source `setattr(receiver, "attribute", function)` attaches to a
    class (a notebook adding methods cell by cell); None when the source does not."""
    for site in ctx.calls.get("setattr", ()):
        args = site.node.args
        if len(args) == 3 and dotted(args[0].value) == receiver and type(args[2].value) is cst.Name and type(
                args[1].value) is cst.SimpleString and args[1].value.evaluated_value == attribute:
            return args[2].value
    return None


def used_arguments(ctx, call, scope, summary) -> tuple[tuple | None, list[tuple]]:
    """The project function or method a call of the source calls (see `call_target`; a class
    made: its `__init__`) and, for
    each argument bound to a parameter that `summary(callee)` ({parameter: what}) names,
    (argument, what), in argument order; (None, []) when the call reaches no such function."""
    callee = call_target(ctx, call.func, scope)
    if callee is None and type(call.func) is cst.Name:  # `Trainer(model, train_loader, ...)`: its `__init__`,
        callee = _constructor(call.func.value, SourceNamespace.of(ctx))  # which may keep them
    said = summary(callee) if callee is not None else {}
    if not said:
        return callee, []
    method_call = callee[3] is not None
    return callee, [(value, said[param]) for param, value in bind(call, parameters(callee[0]), method_call) if param in said]


def _unknown_parameter(expr, scope) -> bool:
    """Whether `expr` is a parameter of the function `scope` never rebound there (its class
    is whatever callers pass)."""
    if type(expr) is not cst.Name or scope.node is None:
        return False
    return expr.value in scope.params and scope.assignments.get(expr.value) == [None]


def fitting_methods(ctx, call, scope, made: bool = False) -> list[tuple]:
    """For `obj.m(...)` on a parameter `obj` (its class not known: any may be passed; with
    `made`, also a name bound to what a call returns that perf-lint cannot follow: `model =
    create_model(opt)`, a class picked by name), the methods `m` of the classes of the source
    and of the project modules it imports that accept the call's arguments, as `call_target`
    gives them; [] for other calls."""
    func = call.func
    if type(func) is not cst.Attribute or not (_unknown_parameter(func.value, scope) or made and _unknown_made(ctx, func.value, scope)):
        return []
    return [target for target in _methods_named(ctx, func.attr.value) if _accepts(call, parameters(target[0]))]


def _methods_named(ctx, name: str) -> list[Definition]:
    """The methods `name` that classes of the source and of the project modules it imports
    define themselves (found once per analysis and name)."""
    memo = ctx.shared.setdefault(_methods_named, {})
    found = memo.get(name)
    if found is None:
        found = memo[name] = list[Definition]()
        for namespace, classes in _class_namespaces(ctx):
            for class_name in classes:
                cls = namespace.klass(class_name)
                if cls is None:
                    continue
                target = method(cls[0], name, *cls[1:])
                if target is not None and target[3] is cls[0]:
                    found.append(target)
    return found


def _unknown_made(ctx, expr, scope) -> bool:
    """Whether `expr` is a name bound once to what a call of a function (not a class) returns:
    a factory (`create_model(opt)`, picking the class by name) or one perf-lint cannot follow."""
    found = ctx.origin(expr, scope) if type(expr) is cst.Name else None
    if found is None or type(found[0]) is not cst.Call:
        return False
    name = dotted(found[0].func) or ""
    target = call_target(ctx, found[0].func, found[1])
    return not name.rpartition(".")[2][:1].isupper() and (target is None or type(target[0]) is not ast.ClassDef)


def used_by_all_fitting(ctx, call, scope, summary, made: bool = False) -> list[tuple]:
    """For each argument of `obj.m(...)` on a parameter `obj` (with `made`, see
    `fitting_methods`) that every method it may call (`fitting_methods`, one at least) uses by
    `summary`: (argument, [what each uses])."""
    uses: dict[int, tuple] | None = None  # id(argument) -> (argument, [what each method uses])
    for target in fitting_methods(ctx, call, scope, made):
        said = summary(target)
        found = {id(value): (value, said[param]) for param, value in bind(call, parameters(target[0]), True) if param in said}
        if uses is None:
            uses = {key: (value, [what]) for key, (value, what) in found.items()}
        else:
            uses = {key: (value, [*whats, found[key][1]]) for key, (value, whats) in uses.items() if key in found}
        if not uses:
            return []
    return list(uses.values()) if uses else []


def attribute_module(ctx, expr, scope) -> str | None:
    """For `obj.attr` on a parameter `obj` (its class not known), the module every class of
    the source and of the project modules it imports that sets `self.attr` sets it to
    (`self._wandb = wandb` after `import wandb`), or None."""
    if type(expr) is not cst.Attribute or not _unknown_parameter(expr.value, scope):
        return None
    modules = set()
    for namespace, classes in _class_namespaces(ctx):
        for name in classes:
            cls = namespace.klass(name)
            for function in cls[0].body if cls is not None else ():
                if type(function) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    modules |= _modules_set(function, expr.attr.value, namespace)
    return modules.pop() if len(modules) == 1 and None not in modules else None


def _modules_set(function, attribute: str, namespace: Namespace) -> set[str | None]:
    """The modules a method sets `self.<attribute>` to (None: something else)."""
    nodes = list(body_nodes(function))
    imported = {alias.asname or alias.name.partition(".")[0]: alias.name if alias.asname else alias.name.partition(".")[0]
                for node in nodes if type(node) is ast.Import for alias in node.names}
    found: set[str | None] = set()
    for node in nodes:
        if type(node) is ast.Assign and any(
            type(t) is ast.Attribute and t.attr == attribute and type(t.value) is ast.Name and t.value.id == "self"
            for t in node.targets
        ):
            value = node.value
            found.add(imported.get(value.id) or namespace.qualname(value.id) if type(value) is ast.Name else None)
    return found


def _class_namespaces(ctx) -> list[tuple[Namespace, list[str]]]:
    """(namespace, its class names) of the source and of the project modules it imports."""
    source = SourceNamespace.of(ctx)
    modules = ctx.shared.get(_imported_modules)
    if modules is None:
        modules = ctx.shared[_imported_modules] = _imported_modules(ctx, source.directory, source.paths)
    return [(source, list(ctx.classes)), *((module, list(module.classes)) for module in modules)]


def _imported_modules(ctx, directory: str | None, paths: tuple) -> list[FileNamespace]:
    """The project modules the source imports (`import utils`, `from .data import X`, stars)."""
    if directory is None:
        return []
    places = [(name, 0) for qualified in ctx.imports.values() for name in (qualified, qualified.rpartition(".")[0]) if name]
    places += [(module, level) for level, module, _ in ctx.relative_imports.values()]
    places += [(module, level) for level, module in ctx.star_imports]
    modules = {id(m): m for name, level in places for m in [local_module(directory, name, level, directory, paths)]
               if m is not None}
    return list(modules.values())


def _accepts(call, params: Parameters) -> bool:
    """Whether a method with `params` can take a libcst call's arguments (called on an instance)."""
    positional = 0
    for arg in call.args:
        if _star(arg):
            return True
        keyword = _keyword(arg)
        if keyword is None:
            positional += 1
        elif keyword not in params.names and params.kwargs is None:
            return False
    return positional <= len(params.names) - 1 or params.args is not None


# -- what a function does to the values it is passed -----------------------------------
_HOST_METHODS = {"item", "tolist", "cpu", "numpy"}
_HOST_CONVERSIONS = {"float", "int"}
_SIZES = {"shape", "size", "numel", "dim", "ndim", "dtype", "device", "is_cuda", "keys", "__len__", "nelement"}


@dataclass(frozen=True)
class Use:
    """Where a function uses a parameter's value (reads it on the host, moves it to a
    device): the code (`v.item()`), its place ("utils.py:42", empty in the analyzed
    source), the module's file and line, and the functions the value went through
    ("MetricLogger.update"); for a move, whether what is moved is the host's cast of the
    value (`batch_x.float().to(device)`: a copy pinned memory would not reach); for a read on
    the host, the further reads of the same value in the function and those it calls (a loss
    testing its inputs in five places), the first `_FURTHER_USES`."""

    code: str
    where: str
    path: str
    line: int
    via: str
    recast: bool = False
    also: tuple = ()

    @property
    def selects(self) -> bool:
        """Whether the use selects with a boolean mask (`x[x > 0]`): the host reads the mask's
        count, not the values."""
        try:
            return type(ast.parse(self.code, mode="eval").body) is ast.Subscript
        except SyntaxError:
            return False


def _host_read(call: ast.Call):
    """The value `call` reads on the host (`v.item()`, `float(v)`), or None."""
    func = call.func
    if type(func) is ast.Attribute and func.attr in _HOST_METHODS and not call.args:
        return func.value
    if type(func) is ast.Name and func.id in _HOST_CONVERSIONS and len(call.args) == 1 and not _setting_read(call.args[0]):
        return call.args[0]
    return None


def _argument_read(call: ast.Call):
    """The value `call` reads on the host, `math.isnan(v)` too (a float() of it first: a read
    when what the caller passes is a tensor, as the callers' side decides)."""
    if type(call.func) is ast.Attribute and ast_dotted(call.func) in MATH_TESTS and len(call.args) == 1:
        return call.args[0]
    return _host_read(call)


def _selection(node: ast.Subscript, masks: set[str], augmented: set[int]):
    """The tensor `x[mask]` selects from with a boolean mask, whose count the host reads to size
    the result (`boxes[boxes[:, 4] != -1]`, `x[~keep]`, `x[m]` after `m = y > 0`; also `x[m] -= 1`,
    an augmented assignment's target (`augmented`: their ids), which reads it first), or None:
    not a fill through one (`x[m] = 0`)."""
    index = node.slice.elts[0] if type(node.slice) is ast.Tuple and node.slice.elts else node.slice
    if type(node.ctx) is not ast.Load and id(node) not in augmented:
        return None
    return node.value if type(index) is ast.Name and index.id in masks or _mask_form(index) else None


def _mask_form(value: ast.expr) -> bool:
    """A boolean tensor's form: a comparison, `~m`, `torch.ge(a, b)` / `a.ge(b)` and the other
    comparisons, `m.bool()`, `&` or `|` of two of those."""
    if isinstance(value, ast.Compare):
        return not any(type(op) in (ast.Is, ast.IsNot, ast.In, ast.NotIn) for op in value.ops)
    if isinstance(value, ast.UnaryOp):
        return type(value.op) is ast.Invert
    if isinstance(value, ast.BinOp):
        return type(value.op) in (ast.BitAnd, ast.BitOr) and _mask_form(value.left) and _mask_form(value.right)
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    name, receiver = value.func.attr, ast_dotted(value.func.value)
    if receiver == "torch":
        return name in MASK_MAKERS and len(value.args) >= (1 if name in ONE_TENSOR_TESTS else 2)
    return name == "bool" and not value.args or name in MASK_MAKERS - ONE_TENSOR_TESTS and len(value.args) == 1


def _switched_off(function, namespace: Namespace) -> set[int]:
    """Ids of the nodes under `if cfg.flag:` where the files of the project set `flag` only to
    false constants (`never_on`): a branch no shipped configuration takes."""
    path = namespace.path if isinstance(namespace, FileNamespace) else namespace.ctx.path if isinstance(
        namespace, SourceNamespace) else None
    tests = [(node, node.test.attr) for node in body_nodes(function) if type(node) is ast.If and type(node.test) is ast.Attribute]
    if not tests or not path or path.startswith("<"):
        return set()
    from .importers import never_on  # (imported here: importers builds on this module)
    return {id(inner) for node, name in tests if never_on(path, name) for statement in node.body for inner in ast.walk(statement)}


def _defaulting(function) -> set[int]:
    """Ids of the nodes that work out a value when the caller left it out or none is kept yet
    (`if size is None: size = int(edge_index.max()) + 1`, the `else` of `if num_nodes is not
    None: return num_nodes`, `if self.cache is None:`): they run only for callers that do not
    pass it, or once."""
    found: set[int] = set()
    for node in body_nodes(function):
        if type(node) is not ast.If or type(node.test) is not ast.Compare or len(node.test.ops) != 1 or type(
                node.test.left) not in (ast.Name, ast.Attribute):
            continue
        right, op = node.test.comparators[0], type(node.test.ops[0])
        if type(right) is ast.Constant and right.value is None and op in (ast.Is, ast.IsNot):
            branch = node.body if op is ast.Is else node.orelse
            found.update(id(inner) for statement in branch for inner in ast.walk(statement))
    return found


def _masks(function) -> set[str]:
    """The names a function assigns boolean masks only (`positive = torch.ge(iou, 0.5)`)."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in body_nodes(function):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    return {name for name, values in assigned.items() if all(map(_mask_form, values))}


def _setting_read(value: ast.expr) -> bool:
    """`config['num_D_accumulations']`: a value looked up by name in a mapping, a setting
    (`float()` of it reads no tensor; a dict of losses is read with `.item()`)."""
    return type(value) is ast.Subscript and type(value.slice) is ast.Constant and type(value.slice.value) is str


_TESTS = (ast.If, ast.While, ast.Assert)
_READ_NODES = (*_TESTS, ast.Subscript)  # what a function's summary of host reads looks at besides calls
_TESTED = {"min", "max", "any", "all", "isnan", "isinf", "isfinite", "equal", "allclose", "sum", "mean"}


def _tested(test: ast.expr, namespace: Namespace):
    """The tensor a condition reads on the host through a torch function of it (`torch.min(y)
    < -1.`, `torch.isnan(loss).any()`, `not torch.all(mask)`), or None."""
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return _tested(test.operand, namespace)
    if type(test) is ast.BoolOp:
        return next((found for value in test.values if (found := _tested(value, namespace)) is not None), None)
    if type(test) is ast.Compare:
        return next((found for value in (test.left, *test.comparators) if (found := _tested(value, namespace)) is not None), None)
    if type(test) is ast.Call and type(test.func) is ast.Attribute and test.func.attr in ("any", "all", "item") and not test.args:
        return _tested(test.func.value, namespace)
    if type(test) is ast.Call and test.args:
        head, _, name = (namespace.qualname(ast_dotted(test.func) or "") or "").partition(".")
        if head == "torch" and name in _TESTED:
            return test.args[0]
    return None


_DEVICE_WORDS = re.compile(r"device|cuda|gpu|rank", re.IGNORECASE)


def _device_move(call: ast.Call):
    """The value `call` moves to a device (`x.cuda()`, `x.to(device)`, not `x.to(dtype)`), or None."""
    func = call.func
    if type(func) is not ast.Attribute or func.attr not in ("to", "cuda"):
        return None
    if func.attr == "cuda":
        return func.value
    target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if type(target) is ast.Constant:
        return func.value if isinstance(target.value, str) and target.value.startswith("cuda") else None
    text = ast.unparse(target) if target is not None else ""
    return func.value if _DEVICE_WORDS.search(text.rsplit(".", 1)[-1]) else None


def _host_cast(value: ast.expr) -> bool:
    """`x.float()`, `x.type(torch.FloatTensor)`, `x.to(torch.float32)`: a copy of `x` the host
    casts to another dtype."""
    if type(value) is not ast.Call or type(value.func) is not ast.Attribute:
        return False
    if value.func.attr in CAST_METHODS:
        return not value.args
    return value.func.attr in ("type", "to") and len(value.args) == 1 and not value.keywords and (
        ast_dotted(value.args[0]) or "").removeprefix("torch.") in CAST_TYPES


def host_reads(found: Definition | None) -> dict[str, Use]:
    """{parameter: Use} of the parameters the function `found` = (definition, namespace,
    place, class or None), as `Namespace.function`/`method` give it, reads on the host."""
    return _uses(found, _argument_read, 0)


def device_moves(found: Definition | None) -> dict[str, Use]:
    """{parameter: Use} of the parameters the function `found` moves to a device (a
    constructor: also the loaders it keeps whose batches the class moves, `_kept_loaders`)."""
    moves = _uses(found, _device_move, 0)
    kept = {param: uses.moved for param, uses in _kept_loaders(found).items() if uses.moved is not None}
    return {**kept, **moves} if kept else moves


def _uses(found: Definition | None, matcher, depth: int) -> dict[str, Use]:
    if found is None or depth > _MAX_CALLS:
        return {}
    memo = _memo(found[0])
    key = (matcher, depth)
    if key not in memo:
        memo[key] = {}  # (a recursion uses nothing more)
        memo[key] = _summarize(*found, matcher, depth)
    return memo[key]


def _summarize(function, namespace: Namespace, place: Place, cls, matcher, depth: int) -> dict[str, Use]:
    params = parameters(function)
    derived = {name: {name} for name in (*params.names, params.args, params.kwargs) if name}

    def roots_of(node, value: ast.expr) -> set[str]:
        roots = _roots(value)
        if type(node) in (ast.For, ast.comprehension) and type(value) is ast.Call:  # `for x in wrap(p, 10)`
            return roots.union(*map(_roots, value.args))
        if type(value) is ast.Call and value.args:  # `loader = sample_data(loader)`, then `next(loader)`
            roots = roots.union(*map(_roots, _generated_from(value, namespace, place, cls)))
            if matcher is _device_move and _callee(value.func, namespace, place, cls) is not None:
                roots = roots.union(*map(_roots, value.args))  # (moved: what a function of the project makes of
                # it, `X, lS_o, lS_i, T = unpack_batch(batch)`)
        return roots

    _propagate(body_nodes(function), derived, roots_of)  # (`for k, v in kwargs.items()`, `x = p[0]`)
    found: dict[str, Use] = {}
    further: dict[str, list[Use]] = {}

    def add(param: str, use: Use) -> None:
        if param not in found:
            found[param] = use
        elif matcher is _argument_read and len(further.setdefault(param, [])) < _FURTHER_USES and use.line not in {
                u.line for u in (found[param], *further[param]) if u.path == use.path}:
            further[param].append(use)

    owners: dict[str | None, set[str]] = {}  # name -> the parameters it is taken from (`total = pred - target`: both,
    for param, names in derived.items():  # for a read; for a move, the last one: a new tensor made of several)
        for name in names:
            owners[name] = owners.get(name, set()) | {param} if matcher is _argument_read else {param}
    apart = _bound_apart(function, derived, roots_of) if matcher is _device_move else {}  # (but a name bound from
    # each alone, `for im, label in train_data:`, then `for im, label in valid_data:`: the one bound last before)
    tests = matcher is _argument_read and depth <= _SHALLOW_CALLS
    masks = _masks(function) if tests else set()
    augmented = {id(node.target) for node in body_nodes(function) if type(node) is ast.AugAssign} if tests else set()
    defaulting = _defaulting(function) | _switched_off(function, namespace) if matcher is _argument_read else set()
    for node in sorted((n for n in body_nodes(function) if (type(n) is ast.Call or tests and type(n) in _READ_NODES)
                        and id(n) not in defaulting), key=lambda n: (n.lineno, n.col_offset)):
        if type(node) is ast.Subscript:  # `boxes[boxes[:, 4] != -1]`: the host reads the mask's count
            value = _selection(node, masks, augmented)
            for param in {param for root in _roots(value) for param in owners.get(root, ())} if value is not None else ():
                add(param, Use(ast.unparse(node), place(node.lineno), place.path, node.lineno, _name(function, cls)))
            continue
        if isinstance(node, _TESTS):  # `if torch.min(y) < -1.:` (hifi-gan's mel_spectrogram)
            value = _tested(node.test, namespace)
            said = f"{type(node).__name__.lower()} {ast.unparse(node.test)}" + (":" if type(node) is not ast.Assert else "")
            for param in {param for root in _roots(value) for param in owners.get(root, ())} if value is not None else ():
                add(param, Use(said, place(node.lineno), place.path, node.lineno, _name(function, cls)))
            continue
        value = matcher(node)
        if value is not None:
            for param in {param for root in _roots(value) for param in (
                    _bound_before(apart[root], node.lineno) if root in apart else owners.get(root, ()))}:
                add(param, Use(ast.unparse(node), place(node.lineno), place.path, node.lineno, _name(function, cls)))
            continue
        callee = _callee(node.func, namespace, place, cls)
        inner = _uses(callee, matcher, depth + 1)
        if callee is None or not inner:
            continue
        for param_name, argument in bind(node, parameters(callee[0]), method=callee[3] is not None):
            use = inner.get(param_name)
            if use is None:
                continue
            for param in {param for root in _roots(argument) for param in owners.get(root, ())}:
                for inner_use in (use, *use.also):
                    add(param, Use(inner_use.code, inner_use.where, inner_use.path, inner_use.line, f"{_name(function, cls)} -> {inner_use.via}"))
    for param, uses in further.items():
        found[param] = replace(found[param], also=tuple(uses))
    return found


def _bound_apart(function, derived: dict[str, set[str]], roots_of) -> dict[str, list[tuple[int, str]]]:
    """{name: [(line, parameter)] in line order} for the names bound from two parameters or
    more, each binding taken from one of them alone (bat67's `train`: `for im, label in
    train_data:`, later `for im, label in valid_data:`)."""
    single: dict[str, list[tuple[int, str]]] = {}
    for node in body_nodes(function):
        targets, value = _binding(node)
        if value is None:
            continue
        roots = roots_of(node, value)
        taken = [param for param, names in derived.items() if not names.isdisjoint(roots)]
        if len(taken) == 1:
            for name in (n for target in targets for n in _names(target)):
                line = node.target.lineno if type(node) is ast.comprehension else node.context_expr.lineno \
                    if type(node) is ast.withitem else node.lineno
                single.setdefault(name, []).append((line, taken[0]))
    return {name: sorted(bound) for name, bound in single.items() if len({param for _, param in bound}) > 1}


def _bound_before(bound: list[tuple[int, str]], line: int) -> tuple[str, ...]:
    """The parameter of the last binding at or before `line` (a loop's target is bound on its
    own line)."""
    before = [param for at, param in bound if at <= line]
    return (before[-1],) if before else ()


def _generated_from(call: ast.Call, namespace: Namespace, place: Place, cls) -> list:
    """The arguments of `call` whose items the generator of the project it calls yields
    (`def sample_data(loader): while True: yield from loader`)."""
    callee = _callee(call.func, namespace, place, cls)
    if callee is None or not yields(callee):
        return []
    loops = iterated(callee)
    return [argument for name, argument in bind(call, parameters(callee[0]), method=callee[3] is not None)
            if name in loops]


_SYNC_CALLS = {"torch.save", "torch.cuda.synchronize"}  # wait for the device: save its tensors, wait for it


def syncs(found: Definition | None) -> Use | None:
    """Where the function `found` (or one it calls, through the project) waits for the
    device: reads a value on the host (`loss.item()`), saves tensors (`torch.save`) or
    synchronizes; None when it does not, as far as the project shows."""
    return _first_use(found, "syncs", 0)


def reads_every_call(found: Definition | None) -> Use | None:
    """Where the function `found` (or one it calls) reads a value on the host each time it
    runs: not under an interval guard (`if step % 100 == 0:`) or in an `except` handler."""
    return _first_use(found, "reads", 0)


def copies_every_call(found: Definition | None) -> Use | None:
    """Where the function `found` (or one it calls) copies a tensor to the host each time it
    runs (`x.item()`, `.cpu()`, `.numpy()`, `.tolist()`: not `float(x)`, which Python numbers
    take too), as `reads_every_call` finds them."""
    return _first_use(found, "copies", 0)


def _first_use(found: Definition | None, kind: str, depth: int) -> Use | None:
    if found is None or depth > _MAX_CALLS:
        return None
    memo = _memo(found[0])
    key = (kind, depth)
    if key not in memo:
        memo[key] = None  # (a recursion adds nothing)
        memo[key] = _first(*found, kind, depth)
    return memo[key]


def _memo(function: ast.stmt) -> dict:
    """The summaries of a function read from disk, kept on its node (cached with its module)."""
    return function.__dict__.setdefault("_perf_lint_memo", {})


def _first(function, namespace: Namespace, place: Place, cls, kind: str, depth: int) -> Use | None:
    skipped = guarded(function, typed=kind == "copies") if kind != "syncs" else set()
    calls = sorted((n for n in body_nodes(function) if type(n) is ast.Call and id(n) not in skipped),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in calls:
        value = _host_read(node)
        read = value is not None and (kind != "copies" or type(node.func) is ast.Attribute) and not _made_on_host(
            value, function, namespace)
        if read or kind == "syncs" and namespace.qualname(ast_dotted(node.func) or "") in _SYNC_CALLS:
            return Use(ast.unparse(node), place(node.lineno), place.path, node.lineno, _name(function, cls))
    for node in calls:
        inner = _first_use(_callee(node.func, namespace, place, cls), kind, depth + 1)
        if inner is not None:
            return Use(inner.code, inner.where, inner.path, inner.line, f"{_name(function, cls)} -> {inner.via}")
    return None


def _made_on_host(value: ast.expr, function, namespace: Namespace) -> bool:
    """`torch.randperm(n)` (a torch factory given no device), or a name the function assigns
    only such calls, or a part of one (`torch.randperm(n)[:k]`): a CPU tensor, whose read waits for nothing."""
    while type(value) is ast.Subscript:
        value = value.value
    if type(value) is ast.Name:
        values = [n.value for n in body_nodes(function) if type(n) is ast.Assign and any(
            type(t) is ast.Name and t.id == value.id for t in n.targets)]
        return bool(values) and all(type(v) is ast.Call and _made_on_host(v, function, namespace) for v in values)
    head, _, name = ((namespace.qualname(ast_dotted(value.func) or "") or "") if type(value) is ast.Call else "").partition(".")
    return head == "torch" and name in HOST_FACTORIES and not any(k.arg == "device" for k in cast(ast.Call, value).keywords)


_TORCH_LAYER = re.compile(r"torch\.nn\.(modules\.\w+\.)?(?!Parameter\b|UninitializedParameter\b)_?[A-Z]\w*")  # a module class of
# torch.nn (also as its modules spell it: `nn.modules.loss._Loss`, EDSR's base of its loss)


def derives_from(ctx, name: str | None, qualnames: Collection[str]) -> bool:
    """Whether the class `name` (of the source, or of a module of the project it imports)
    derives from one of `qualnames` (`torch.nn.Module`, a DataLoader, DataParallel), through
    classes of the project."""
    return name is not None and _derives(SourceNamespace.of(ctx).klass(name), qualnames)


def loader_overrides(ctx, name: str, loaders: Collection[str]) -> set[str] | None:
    """The methods a class of the project that derives from one of `loaders` (torch's
    DataLoader) through classes of the project overrides: `{"__iter__"}` for the prefetching
    `DataLoaderX` recipe; None when it does not so derive, or an `__init__` on the way takes
    its own parameters (one forwarding `*args, **kwargs` to `super().__init__` keeps the
    loader's settings: timm's `MultiEpochsDataLoader`)."""
    found, overrides = SourceNamespace.of(ctx).klass(name), set[str]()
    for _ in range(4):
        if found is None:
            return None
        cls, namespace = found[0], found[1]
        methods = {node.name: node for node in cls.body if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef)}
        init = methods.get("__init__")
        if init is not None and not _forwards_arguments(init):
            return None
        overrides.update(methods)
        bases = [namespace.qualname(base_name(base) or "") or "" for base in cls.bases]
        if any(base in loaders for base in bases):
            return overrides
        found = namespace.klass(base_name(cls.bases[0]) or "") if len(cls.bases) == 1 else None
    return None


def _forwards_arguments(init: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def __init__(self, *args, **kwargs): super().__init__(*args, **kwargs)`, whatever else it does."""
    args = init.args
    if args.vararg is None or args.kwarg is None or len(args.args) != 1 or args.kwonlyargs:
        return False
    return any(type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "__init__"
               and len(node.args) == 1 and type(node.args[0]) is ast.Starred
               and ast_dotted(node.args[0].value) == args.vararg.arg and len(node.keywords) == 1
               and node.keywords[0].arg is None and ast_dotted(node.keywords[0].value) == args.kwarg.arg
               for node in ast.walk(init))


def coqui_model(ctx, cls) -> bool:
    """Whether the class `cls` of the source derives from coqui's `trainer.TrainerModel`, through
    classes of the project (coqui TTS's `Tacotron` -> `BaseTacotron` -> `BaseTTS` -> ...): a model
    coqui's Trainer trains, on the GPU when there is one. Asked once per class."""
    key = (coqui_model, id(cls))
    if key not in ctx.shared:
        ctx.shared[key] = derives_from(ctx, cls.name.value, COQUI_MODELS)
    return ctx.shared[key]


def _derives(found, qualnames: Collection[str], depth: int = 0) -> bool:
    """Whether the class `found` = (definition, namespace, place) derives from one of
    `qualnames` (through classes of the project, three deep)."""
    if found is None or depth > 3:
        return False
    cls, namespace = found[0], found[1]
    for base in cls.bases:
        name = base_name(base) or ""
        qualified = namespace.qualname(name) or ""
        if qualified in qualnames or _TORCH_LAYER.fullmatch(qualified) and any(q in TORCH_MODULES for q in qualnames):
            return True  # (`nn.SmoothL1Loss`, `nn.Conv2d`: modules of torch.nn)
        inner = namespace.klass(name) if name else None
        if inner is not None and inner[0] is not cls and _derives(inner, qualnames, depth + 1):
            return True
    return False


def reads_clock(found: Definition | None) -> bool:
    """Whether the function `found` reads a clock itself (`time.time()`: a timer's `toc`)."""
    return found is not None and any(
        type(node) is ast.Call and found[1].qualname(ast_dotted(node.func) or "") in CLOCKS for node in body_nodes(found[0]))


def tests_interval(found: Definition | None) -> bool:
    """Whether a function of the project is an interval test: its one statement returns a
    modulo (`def divisible_by(num, den): return (num % den) == 0`)."""
    function = None if found is None else found[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = [s for s in function.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
    return len(body) == 1 and type(body[0]) is ast.Return and body[0].value is not None and any(
        type(n) is ast.BinOp and type(n.op) is ast.Mod for n in ast.walk(body[0].value))


def guarded(function, typed: bool = False) -> set[int]:
    """Ids of the nodes of a function that do not run every time: under an `if` testing an
    interval (`step % 100 == 0`), in an `except` handler; with `typed`, also under an `if`
    testing what a value is (`if isinstance(v, torch.Tensor): v = v.item()`: a read of what
    the caller passes, judged where it is passed)."""
    found: set[int] = set()
    for node in body_nodes(function):
        if type(node) is ast.If and any(
                type(n) is ast.BinOp and type(n.op) is ast.Mod
                or typed and type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == "isinstance"
                for n in ast.walk(node.test)):
            found.update(id(n) for statement in node.body for n in ast.walk(statement))
        elif type(node) is ast.ExceptHandler:
            found.update(id(n) for n in ast.walk(node))
    return found


def trains(found: Definition | None, depth: int = 0) -> bool:
    """Whether a call of the function `found` is a training step: it calls `backward()`, an
    optimizer's (or scaler's, or engine's) `step()`, directly or through the functions and
    methods of the project it calls, outside its own loops (a function that loops over the
    batches itself is an epoch: the loop calling it runs once per epoch, not per step, as
    the source's own loops are judged)."""
    if found is None or depth > _MAX_CALLS:
        return False
    function = found[0]
    memo = function.__dict__.setdefault("_perf_lint_memo", {})
    key = (trains, depth)
    if key not in memo:
        memo[key] = False  # (a recursion trains only if another path does)
        calls = [node for node in body_nodes(function, loops=False) if type(node) is ast.Call]
        memo[key] = any(map(steps_call, calls)) or any(
            trains(_callee(node.func, found[1], found[2], found[3]), depth + 1) for node in calls if not steps_call(node))
    return memo[key]


def steps_in_loops(found: Definition | None) -> bool:
    """Whether the function `found` runs training steps in a loop of its own, so a call of it
    is an epoch (not a step: see `trains`)."""
    return found is not None and not trains(found) and any(
        type(node) is ast.Call and steps_call(node) for node in body_nodes(found[0]))


def self_calls(function: ast.AST, guarded: bool = False) -> set[str]:
    """The names of the methods `function` calls on `self` (`self.encode_img(image)`); with
    `guarded`, not those under an `if` (`if opt.debug > 0: self.debug(batch, output)`)."""
    nodes = list(ast.walk(function) if not guarded else _outside_ifs(function))
    return {node.func.attr for node in nodes if type(node) is ast.Call and type(node.func) is ast.Attribute
            and type(node.func.value) is ast.Name and node.func.value.id == "self"} | _dispatched(function, nodes)


def _dispatched(function: ast.AST, nodes: list) -> set[str]:
    """The methods a table of bound methods names (`model_func = {'TransE': self.TransE, ...}`)
    whose subscript one of `nodes` calls (`model_func[self.model_name](head, tail)`)."""
    called = [node.func.value for node in nodes if type(node) is ast.Call and type(node.func) is ast.Subscript]
    names = {table.id for table in called if type(table) is ast.Name}
    tables = [table for table in called if type(table) is not ast.Name] + [
        node.value for node in (ast.walk(function) if names else ()) if type(node) is ast.Assign
        and len(node.targets) == 1 and type(node.targets[0]) is ast.Name and node.targets[0].id in names]
    return {value.attr for table in tables
            for value in (table.values if type(table) is ast.Dict else getattr(table, "elts", ()))
            if type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == "self"}


def _outside_ifs(root: ast.AST):
    """The nodes under `root` but those of its `if` statements and conditional expressions."""
    stack = list(ast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        if type(node) not in (ast.If, ast.IfExp):
            yield node
            stack.extend(ast.iter_child_nodes(node))


def project_bases(ctx, cls: cst.ClassDef) -> list[tuple]:
    """The classes of the project that the class `cls` of the analyzed source derives from
    directly (not torch's own: their lookups would be wasted on torch's modules)."""
    namespace = SourceNamespace.of(ctx)
    bases = [base.value.value if type(base.value) is cst.Subscript else base.value for base in cls.bases]  # (`Classifier[DT]`)
    return [found for base in bases if (name := dotted(base)) and not (ctx.qualname(base) or "").startswith(
        "torch.") and (found := namespace.klass(name)) is not None]


def lineage(classes: list, layers: int) -> Iterator[tuple[int, tuple]]:
    """The classes `classes` (definitions of the project) and their bases of the project,
    breadth first and `layers` deep, each with its depth (0 for `classes`)."""
    layer = [found for found in classes if type(found[0]) is ast.ClassDef]
    for depth in range(layers):
        yield from ((depth, found) for found in layer)
        layer = [base for found in layer for name in map(base_name, found[0].bases) if name and (
            base := found[1].klass(name)) is not None and type(base[0]) is ast.ClassDef and base[0] is not found[0]]


def step_helpers(found) -> set[str]:
    """The names of the methods a method of the class `found` = (definition, namespace, ...) (of
    another module: a base of a class of the source), or of its bases of the project, calls on
    `self` in a loop that steps (torchlake's `TrainerBase.run` calling `self._calc_loss(output,
    row, criterion)` before `loss.backward()`), not under an `if`: subclasses override them."""
    return _called_on_self_in(found, _stepping_calls)


def no_grad_helpers(found) -> set[str]:
    """The names of the methods the class `found` (or a base of the project) calls on `self` under
    `torch.no_grad()`/`torch.inference_mode()` (torchlake's `Evaluator.run` calling
    `self._predict(row, model)` in a `with torch.no_grad():`)."""
    return _called_on_self_in(found, _no_grad_calls)


def _called_on_self_in(found, calls) -> set[str]:
    """What `calls(cls)` finds in the class `found` and in its bases of the project, three deep
    (once per class)."""
    names: set[str] = set()
    for _, (cls, *_) in lineage([found], 4):
        memo = cls.__dict__.setdefault("_perf_lint_memo", {})
        if calls not in memo:
            memo[calls] = calls(cls)
        names |= memo[calls]
    return names


def _stepping_calls(cls: ast.ClassDef) -> set[str]:
    """The methods the loops of the methods of `cls` that run a training step call on `self`,
    outside their `if` statements; and those a step method calls so, one that steps an
    optimizer outside any loop of its own (Auto-PyTorch's `train_step` calling `self.data_preparation(data,
    targets)`, which a mixup trainer overrides, before `loss.backward()`)."""
    methods = [method for method in cls.body if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found: set[str] = set()
    for method in methods:
        stepping = {id(node): node for node in body_nodes(method) if type(node) is ast.Call and steps_call(node)}
        in_loops: set[int] = set()
        for loop in (node for node in body_nodes(method) if type(node) in (ast.For, ast.While)):
            inside = {id(node) for node in body_nodes(loop)}
            in_loops |= inside
            if not inside.isdisjoint(stepping):
                found |= self_calls(loop, guarded=True)
        if any(key not in in_loops and not (type(node.func) is ast.Attribute and node.func.attr == "backward")
               for key, node in stepping.items()):  # (an optimizer's step: not Grad-CAM's `forward`, backpropagating to read gradients)
            found |= self_calls(method, guarded=True)
    return found


_NO_GRAD = re.compile(r"^(torch\.)?(no_grad|inference_mode)\(")


def _no_grad_calls(cls: ast.ClassDef) -> set[str]:
    """The methods the methods of `cls` call on `self` in their `with torch.no_grad():` (or
    `inference_mode`) blocks, or anywhere in a method decorated so."""
    methods = [method for method in cls.body if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))]
    blocks = [method for method in methods if any(_NO_GRAD.match(ast.unparse(d)) for d in method.decorator_list)] + [
        node for method in methods for node in body_nodes(method)
        if type(node) is ast.With and any(_NO_GRAD.match(ast.unparse(item.context_expr)) for item in node.items)]
    return set().union(*map(self_calls, blocks))


def forward_helpers(cls: ast.ClassDef) -> set[str]:
    """The names of the methods the `forward` of the class `cls` (of another module: a base of a
    class of the source, or a subclass of one) calls on `self`, two calls deep (MiniGPTBase's
    `forward` calling `self.preparing_embedding`, which calls `self.encode_img`, that
    subclasses define)."""
    memo = cls.__dict__.setdefault("_perf_lint_memo", {})
    if forward_helpers not in memo:
        methods = {node.name: node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        reached: set[str] = set()
        layer = {"forward"} & set(methods)
        for _ in range(2):
            called = set().union(*(self_calls(methods[name]) for name in layer))
            reached |= called
            layer = (called & set(methods)) - layer
        memo[forward_helpers] = reached
    return memo[forward_helpers]


def evaluates(found: Definition) -> bool:
    """Whether the function `found` puts a module in evaluation mode (`model.eval()`) or opens
    `no_grad`/`inference_mode` (also as its decorator)."""
    function, namespace = found[0], found[1]
    decorated = [decorator.func if type(decorator) is ast.Call else decorator for decorator in getattr(function, "decorator_list", ())]
    calls = [node.func for node in body_nodes(function) if type(node) is ast.Call]
    return any(type(func) is ast.Attribute and func.attr == "eval" or (namespace.qualname(ast_dotted(func) or "") or "") in (
        "torch.no_grad", "torch.inference_mode") for func in calls + decorated)


def trains_somewhere(found: Definition | None, depth: int = 0) -> bool:
    """Whether the function `found` runs training steps at all: itself, in its loops or
    through the functions of the project it calls (`engine.train` looping over the epochs
    and calling a `train_step` that loops over the batches), or makes the step function it
    returns (BigGAN's `GAN_training_function(...)` returning its inner `train`)."""
    if found is None or depth > _MAX_CALLS:
        return False
    memo = _memo(found[0])
    key = (trains_somewhere, depth)
    if key not in memo:
        memo[key] = False  # (a recursion trains only if another path does)
        calls = [node for node in body_nodes(found[0]) if type(node) is ast.Call]
        memo[key] = any(map(steps_call, calls)) or any(
            trains_somewhere(_callee(node.func, found[1], found[2], found[3]), depth + 1) for node in calls) or any(
            trains_somewhere((function, *found[1:]), depth + 1) for function in _returned_functions(found[0]))
    return memo[key]


def _returned_functions(function) -> list:
    """The functions a function defines in its body and returns (`def train(x, y): ...`,
    then `return train`: a factory of step functions)."""
    returned = {node.value.id for node in body_nodes(function) if type(node) is ast.Return and type(node.value) is ast.Name}
    return [statement for statement in getattr(function, "body", ()) if type(statement) in (
        ast.FunctionDef, ast.AsyncFunctionDef) and statement.name in returned]


def steps_call(call: ast.Call) -> bool:
    """`loss.backward()`, or an optimizer's (a scaler's, an engine's) `step()`, or a call given
    both a loss and an optimizer (timm's `loss_scaler(loss, optimizer, clip_grad=...)`)."""
    func = call.func
    callee = (ast_dotted(func) or "").rsplit(".", 1)[-1].lower()
    if len(call.args) >= 2 and any(word in callee for word in ("scaler", "step", "backward")):
        names = [(ast_dotted(arg) or "").rsplit(".", 1)[-1].lower() for arg in call.args]
        if any("optim" in name for name in names) and any("loss" in name for name in names):
            return True
    if type(func) is not ast.Attribute:
        return False
    if func.attr == "backward":
        return True
    receiver = ast.unparse(func.value).rsplit(".", 1)[-1].lower()
    return func.attr == "step" and any(word in receiver for word in ("opt", "scaler", "engine"))


def iterated(found: Definition | None) -> dict[str, int]:
    """{parameter: line} of the parameters the function `found` loops over (`for b in
    loader`, `enumerate(loader)`, `tqdm(loader)`, `logger.log_every(loader, ...)`)."""
    if found is None:
        return {}
    function = found[0]
    memo = function.__dict__.setdefault("_perf_lint_memo", {})
    if iterated not in memo:
        params = parameters(function)
        names = {*params.names, params.args, params.kwargs} - {None}
        loops: dict[str, int] = {}
        bound: dict[str, list] = {}  # local names and what they are assigned
        for node in body_nodes(function):
            targets, value = _binding(node) if type(node) in (ast.Assign, ast.withitem) else ([], None)
            if len(targets) == 1 and type(targets[0]) is ast.Name and value is not None:
                bound.setdefault(targets[0].id, []).append(value)
        for node in body_nodes(function):
            if type(node) is ast.YieldFrom:  # `yield from loader`: a loop over it
                source = _loop_source(node.value)
            elif type(node) in (ast.For, ast.comprehension):
                source = _loop_source(node.iter)
            else:
                continue
            for _ in range(4):
                if type(source) is ast.Name and len(bound.get(source.id, ())) == 1 and source.id not in names:
                    source = _loop_source(bound[source.id][0])  # `progress = tqdm(enumerate(x))`
            if type(source) is ast.Name and source.id in names:
                loops.setdefault(source.id, getattr(node, "lineno", 0) or source.lineno)
        for param, uses in _kept_loaders(found).items():
            use = uses.again or uses.moved
            if use is not None:
                loops.setdefault(param, use.line)
        memo[iterated] = loops
    return memo[iterated]


def _loop_source(source: ast.expr) -> ast.expr:
    """What a loop's iterable wraps: `x` of `enumerate(x)`, `tqdm(x)`, `logger.log_every(x, ...)`,
    and the container of `dataloaders[phase]` (a dict of loaders)."""
    while type(source) is ast.Call and source.args:
        source = source.args[0]
    return source.value if type(source) is ast.Subscript and type(source.value) is ast.Name else source


def iterated_through(found: Definition | None, depth: int = 0) -> set[str]:
    """The parameters the function `found` loops over, itself or through the functions of the
    project it passes them to (`make_normalizer(loader)` calling `loader_apply(loader, f)`)."""
    if found is None or depth > 2:
        return set()
    function, namespace, place, cls = found
    names = set(parameters(function).names)
    loops = set(iterated(found))
    for node in body_nodes(function):
        callee = _callee(node.func, namespace, place, cls) if type(node) is ast.Call else None
        if callee is None or callee[0] is function:
            continue
        inner = iterated_through(callee, depth + 1)
        loops.update(argument.id for param, argument in bind(node, parameters(callee[0]), callee[3] is not None)
                     if param in inner and type(argument) is ast.Name and argument.id in names)
    return loops


def iterated_again(found: Definition | None) -> dict[str, int]:
    """{parameter: line} of the parameters the function `found` loops over again and again:
    in a loop inside another of its loops, or by a function of the project it calls in a
    loop (`train(model, loader, epochs)` calling `train_step(model, loader)` each epoch)."""
    if found is None:
        return {}
    function, namespace, place, cls = found
    memo = _memo(function)
    if iterated_again not in memo:
        names = set(parameters(function).names)
        again: dict[str, int] = {}
        for loop in (n for n in body_nodes(function) if type(n) in (ast.For, ast.While) and not _runs_once(n, function, namespace)):
            for node in (n for statement in loop.body for n in ast.walk(statement)):
                if type(node) is ast.For:
                    source = _loop_source(node.iter)
                    if type(source) is ast.Name and source.id in names:
                        again.setdefault(source.id, node.lineno)
                elif type(node) is ast.Call:
                    callee = _callee(node.func, namespace, place, cls)
                    loops = iterated(callee)
                    if callee is None or not loops:
                        continue
                    for param, argument in bind(node, parameters(callee[0]), callee[3] is not None):
                        if param in loops and type(argument) is ast.Name and argument.id in names:
                            again.setdefault(argument.id, node.lineno)
        for param, uses in _kept_loaders(found).items():
            if uses.again is not None:
                again.setdefault(param, uses.again.line)
        memo[iterated_again] = again
    return memo[iterated_again]


def _runs_once(loop, function, namespace: Namespace) -> bool:
    """`for _ in range(num_to_avg):` where the parameter's default is 1 (a literal, or the
    default of the option it names: `num_to_avg=args.num_to_avg`, `--num_to_avg` 1)."""
    if type(loop) is not ast.For or type(loop.iter) is not ast.Call or ast_dotted(loop.iter.func) != "range" or len(loop.iter.args) != 1:
        return False
    count = loop.iter.args[0]
    if type(count) is ast.Name:
        count = parameter_defaults(function).get(count.id, count)
    if type(count) is ast.Attribute and type(count.value) is ast.Name:
        if isinstance(namespace, FileNamespace):
            found = argparse_defaults(namespace.tree).get(count.attr, [])
            count = ast.Constant(found[0]) if len(found) == 1 else count
        elif isinstance(namespace, SourceNamespace):
            count = ast.Constant(namespace.ctx.option_default(count.attr))
    return type(count) is ast.Constant and count.value == 1


def trained_over(found: Definition | None, depth: int = 0) -> set[str]:
    """The parameters of the function `found` whose batches it trains on: a loop of it over
    one runs training steps (`backward()`, an optimizer's `step()`, or a function of the
    project that does), or it gives one to a function of the project that trains over it
    (`train_model(model, train_loader, valid_loader, test_loader)`: `train_loader` only)."""
    if found is None or depth > _MAX_CALLS:
        return set()
    function, namespace, place, cls = found
    memo = _memo(function)
    key = (trained_over, depth)
    if key not in memo:
        memo[key] = set()  # (a recursion adds nothing)
        names = set(parameters(function).names)
        over: set[str] = set()
        for node in body_nodes(function):
            if type(node) in (ast.For, ast.AsyncFor):
                source = _loop_source(node.iter)
                if type(source) is ast.Name and source.id in names and _steps_in(node, namespace, place, cls, depth):
                    over.add(source.id)
            elif type(node) is ast.Call and any(type(a) is ast.Name and a.id in names for a in node.args):
                over.update(_trained_on(node, names, namespace, place, cls, depth))
        memo[key] = over
    return memo[key]


def _trained_on(call: ast.Call, names: set[str], namespace: Namespace, place: Place, cls, depth: int) -> set[str]:
    """The names among `names` that `call` gives to a function of the project training over them."""
    callee = _callee(call.func, namespace, place, cls)
    inner = trained_over(callee, depth + 1) if callee is not None else set()
    if not inner or callee is None:
        return set()
    return {argument.id for param, argument in bind(call, parameters(callee[0]), callee[3] is not None)
            if param in inner and type(argument) is ast.Name and argument.id in names}


def _steps_in(loop: ast.For | ast.AsyncFor, namespace: Namespace, place: Place, cls, depth: int) -> bool:
    """Whether the body of `loop` runs a training step, itself or by a function of the project
    (also a method that every class of the project defining it trains in: `model.optimize_parameters()`
    where nothing says what `model` is)."""
    calls = [n for statement in loop.body for n in ast.walk(statement) if type(n) is ast.Call]
    return any(map(steps_call, calls)) or any(trains(_callee(n.func, namespace, place, cls), depth + 1) for n in calls) or any(
        all(trains(found, depth + 1) for found in defined) for n in calls if (defined := _methods_anywhere(n.func, namespace, cls)))


def _methods_anywhere(func: ast.expr, namespace: Namespace, cls) -> list[Definition]:
    """For `model.m(...)` on an object a function of the project makes, of a class nothing
    names (`model = create_model(opt)`, a class the project picks by name), the methods `m`
    of the project's classes that do something (not an abstract `pass` or `raise
    NotImplementedError`); empty for other calls, or in a source of no project."""
    if type(func) is not ast.Attribute or type(func.value) is not ast.Name or not isinstance(namespace, FileNamespace) or \
            not _factory_made(namespace, func.value.id) or _callee(func, namespace, place_of(namespace), cls) is not None:
        return []
    from .importers import methods_named  # (imported here: importers builds on this module)
    return [found for found in methods_named(namespace.path, func.attr) if not _abstract(found[0])]


def _factory_made(namespace: FileNamespace, name: str) -> bool:
    """Whether every assignment of `name` in the module makes it with a function of the project
    (`model = create_model(opt)`), not a class of it, an import or anything else."""
    memo = _memo(cast(ast.stmt, namespace.tree))
    made = memo.get(_factory_made)
    if made is None:
        made = memo[_factory_made] = {key: all(
            type(value) is ast.Call and type(value.func) is ast.Name and namespace.function(value.func.id) is not None
            and namespace.klass(value.func.id) is None for value in found) for key, found in _module_assignments(namespace).items()}
    return made.get(name, False) and name not in namespace.imports and name not in namespace.relative


def _module_assignments(namespace: FileNamespace) -> dict[str, list[ast.expr]]:
    """{name: [value, ...]} of every assignment to a name anywhere in the module (its functions too)."""
    memo = _memo(cast(ast.stmt, namespace.tree))
    values = memo.get(_module_assignments)
    if values is None:
        values = memo[_module_assignments] = {}
        for node in ast.walk(namespace.tree):
            if type(node) is ast.Assign:
                for target in node.targets:
                    for assigned in _names(target):
                        values.setdefault(assigned, []).append(node.value)
    return values


def _made_instance_method(func: ast.expr, namespace: FileNamespace) -> Definition | None:
    """`t.train()` where the module's one assignment of `t` makes an instance of a class of the
    project (`t = Trainer(args, loader, model, loss, checkpoint)`): that class's method."""
    if type(func) is not ast.Attribute or type(func.value) is not ast.Name:
        return None
    values = _module_assignments(namespace).get(func.value.id, [])
    name = ast_dotted(values[0].func) if len(values) == 1 and type(values[0]) is ast.Call else None
    klass = namespace.klass(name) if name else None
    return None if klass is None else method(klass[0], func.attr, *klass[1:])


def _abstract(function: ast.FunctionDef) -> bool:
    """A method that does nothing itself: a docstring, `pass`, `...` or `raise NotImplementedError`."""
    body = [s for s in function.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
    return all(type(s) is ast.Pass or type(s) is ast.Raise for s in body)


class LoaderUses(NamedTuple):
    """What a module does with a DataLoader, directly or by the functions of the project it
    gives it to."""

    moved: Use | None  # where a batch of it is moved to a device
    again: Use | None  # where it is iterated again and again (each epoch)
    trained: bool  # whether a loop over it trains
    module_trains: bool = False  # whether the module runs training steps at all (with any loader)


def caller_uses(namespace: FileNamespace, path: str, name: str, index: int | None, attribute: str | None = None) -> LoaderUses:
    """What the module `namespace` does with what the function `name` of the module at `path`
    returns (element `index` of the tuple it returns, or all of it) where it assigns it to
    names. A DataLoader a factory of another module returns: `train_loader, test_loader =
    data.make_loaders(...)` in train.py. With `attribute`, `name` is a class of that module
    whose instances keep the loader as `attribute` (`dataset = Cifar(...)`, then `for batch in
    dataset.train:`)."""
    place = place_of(namespace)
    moved = again = None
    trained = False
    scopes = [namespace.tree, *(node for node in ast.walk(namespace.tree) if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef))]
    owners = {id(node): cls for cls in ast.walk(namespace.tree) if type(cls) is ast.ClassDef for node in cls.body}
    for scope in scopes:
        names, batched = set[str](), set[str]()
        for node in body_nodes(scope):
            if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.value) is not ast.Call:
                continue
            target: ast.expr | None = node.targets[0]
            if index is not None:
                elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
                target = elements[index] if index < len(elements) else None
            if type(target) is ast.Subscript and type(target.value) is ast.Name:
                target = target.value  # `dataloaders["tar"] = load_data(...)`: a dict of loaders
            kept = type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self"
            if not isinstance(target, ast.Name) and not kept:
                continue
            if attribute is not None:
                func = node.value.func
                made = _constructor(func.id, namespace) if type(func) is ast.Name else None
                cls = made[3] if made is not None and made[3] is not None and made[3].name == name and _makes(
                    made, path, "__init__") else _instance_made(_callee(func, namespace, place, owners.get(id(scope))), path, name)
                if cls is not None:
                    names.add(f"{ast_dotted(cast(ast.expr, target))}.{attribute}")
                    if _iterates_attribute(cls, attribute):  # (`for i, data in enumerate(dataset)`: its `__iter__` runs the loader;
                        # its batches only, when it changes what it holds: CUT's `dataset.set_epoch(epoch)`, which
                        # persistent workers' copies of the dataset would not see)
                        (batched if _changes_held(cls) else names).add(ast_dotted(cast(ast.expr, target)) or "")
                continue
            found = _callee(node.value.func, namespace, place, owners.get(id(scope)))  # (`self._get_data(flag)` too)
            if _makes(found, path, name) or any(_makes(inner, path, name) for inner in _forwarded(found)):
                names.add(ast_dotted(cast(ast.expr, target)) or "")
        if batched:
            uses = _uses_of_loaders(scope, batched, namespace, place)
            moved, trained = moved or uses.moved, trained or uses.trained
        if names:
            uses = _uses_of_loaders(scope, names, namespace, place)
            moved, again, trained = moved or uses.moved, again or uses.again, trained or uses.trained
            readers = _global_readers(scope, names) if scope is namespace.tree else _attribute_readers(namespace.tree, scope, names)
            for function, read, looped in readers:
                uses = _uses_of_loaders(function, read, namespace, place, looped)
                moved, again, trained = moved or uses.moved, again or uses.again, trained or uses.trained
    return LoaderUses(moved, again, trained, (moved is not None or again is not None) and (trained or module_trains(namespace)))


def _instance_made(found: Definition | None, path: str, name: str) -> ast.ClassDef | None:
    """The class `name` of the module at `path` when the function `found` returns an instance
    of it: made there (`return Loader(opt)`), or what a method of that instance returning it
    gives (the pix2pix family's `data_loader = CustomDatasetDataLoader(opt)`, `dataset =
    data_loader.load_data()`, `return dataset`, `load_data` returning `self`)."""
    if found is None or found[3] is not None:
        return None
    function, namespace = found[0], found[1]
    assigned = _assignments(function)

    def single(value: ast.expr | None) -> ast.expr | None:
        values = assigned.get(value.id, []) if type(value) is ast.Name else [value]
        return values[0] if len(values) == 1 else None

    def made(value: ast.expr | None) -> ast.ClassDef | None:
        if type(value) is not ast.Call or type(value.func) is not ast.Name:
            return None
        klass = namespace.klass(value.func.id)
        return klass[0] if klass is not None and klass[0].name == name and isinstance(klass[1], FileNamespace) and \
            os.path.abspath(klass[1].path) == path else None

    returned = [single(node.value) for node in body_nodes(function) if type(node) is ast.Return]
    classes = []
    for value in returned:
        if type(value) is ast.Call and type(value.func) is ast.Attribute and not value.args:  # `data_loader.load_data()`
            cls = made(single(value.func.value))
            found_method = method(cls, value.func.attr, namespace, found[2]) if cls is not None else None
            classes.append(cls if found_method is not None and all(
                type(node.value) is ast.Name and node.value.id == "self"
                for node in body_nodes(found_method[0]) if type(node) is ast.Return) else None)
        else:
            classes.append(made(value))
    return classes[0] if classes and all(cls is not None and cls is classes[0] for cls in classes) else None


def _changes_held(cls: ast.ClassDef) -> bool:
    """Whether a method of `cls` (not `__init__`) assigns into what an attribute holds
    (`self.dataset.current_epoch = epoch`)."""
    return any(type(node) is ast.Assign and any(type(t) is ast.Attribute and type(t.value) is ast.Attribute and type(
        t.value.value) is ast.Name and t.value.value.id == "self" for t in node.targets)
        for method in cls.body if type(method) is ast.FunctionDef and method.name != "__init__" for node in ast.walk(method))


def _iterates_attribute(cls: ast.ClassDef, attribute: str) -> bool:
    """Whether iterating an instance of `cls` iterates its loader `self.attribute`: its
    `__iter__` yields from a loop over it (`for i, data in enumerate(self.dataloader): ... yield
    data`) or returns its iterator (`return iter(self.dataloader)`)."""
    function = next((node for node in cls.body if type(node) is ast.FunctionDef and node.name == "__iter__"), None)
    if function is None:
        return False

    def kept(expr: ast.expr | None) -> bool:
        while type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in ("enumerate", "iter") and expr.args:
            expr = expr.args[0]
        return type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == "self" and expr.attr == attribute

    return any(type(node) is ast.For and kept(node.iter) and any(type(n) in (ast.Yield, ast.YieldFrom) for n in ast.walk(node))
               or type(node) is ast.Return and kept(node.value) for node in body_nodes(function))


def place_of(namespace: FileNamespace) -> Place:
    """What names the lines of a module read from disk: "train.py:12"; a notebook, whose cells'
    lines run on, by the file alone."""
    return (_NotebookPlace if namespace.path.endswith(".ipynb") else Place)(namespace.label, namespace.path)


def module_trains(namespace: FileNamespace) -> bool:
    """Whether the module runs training steps: its own calls (`backward()`, an optimizer's
    `step()`, a trainer's `fit()`), or a function of the project it calls that does (a
    notebook's `train_model(...)` of helper_train.py; yolov4's train.py, calling utils_fit.py's
    `fit_one_epoch`)."""
    memo = namespace.tree.__dict__.setdefault("_perf_lint_memo", {})
    if module_trains not in memo:
        place = place_of(namespace)
        calls = [node for node in ast.walk(namespace.tree) if type(node) is ast.Call]
        memo[module_trains] = any(steps_call(node) or type(node.func) is ast.Attribute and node.func.attr == "fit"
                                  for node in calls) or any(
            trains_somewhere(_callee(node.func, namespace, place, None) or _made_instance_method(node.func, namespace)) or bool(
                defined := _methods_anywhere(node.func, namespace, None)) and all(
                trains_somewhere(found) for found in defined) for node in calls if type(node.func) is ast.Name or type(node.func) is ast.Attribute and type(node.func.value) is ast.Name)
    return memo[module_trains]


def _makes(found: Definition | None, path: str, name: str) -> bool:
    """Whether `found` is the function `name` of the module at `path`."""
    return found is not None and getattr(found[0], "name", None) == name and isinstance(found[1], FileNamespace) \
        and os.path.abspath(found[1].path) == path


def _forwarded(found: Definition | None) -> list[Definition]:
    """The functions of the project whose result `found` returns as it is (`return
    _build_loader(config)` in a package's `build_loader` wrapper; `data_set, data_loader =
    data_provider(self.args, flag)` then `return data_set, data_loader` in a `_get_data` method)."""
    if found is None:
        return []
    function, namespace, place, _ = found
    made = {ast.unparse(node.targets[0]).strip("()"): node.value for node in body_nodes(function) if type(node) is ast.Assign
            and len(node.targets) == 1 and type(node.value) is ast.Call}
    returned = [node.value for node in body_nodes(function) if type(node) is ast.Return and node.value is not None]
    calls = [value if type(value) is ast.Call else made.get(ast.unparse(value).strip("()")) for value in returned]
    return [inner for call in calls if call is not None and (inner := _callee(call.func, namespace, place, None)) is not None]


def _global_readers(module: ast.Module, names: set[str]):
    """(function, names, 1 when a loop of the module calls it else 0) for the functions of the
    module that read some of the module's `names` as globals: TCN's `train(ep)` looping over the
    `train_loader` that `data_generator(...)` returned, called once per epoch."""
    functions = [node for node in ast.walk(module) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    looped = {node.func.id for loop in ast.walk(module) if type(loop) in (ast.For, ast.While)
              for node in ast.walk(loop) if type(node) is ast.Call and type(node.func) is ast.Name}
    for function in functions:
        bound = set(parameters(function).names) | {
            node.id for node in ast.walk(function) if type(node) is ast.Name and type(node.ctx) is ast.Store}
        read = {node.id for node in ast.walk(function) if type(node) is ast.Name and node.id in names} - bound
        if read:
            yield function, read, int(function.name in looped)


def _attribute_readers(module: ast.Module, method, names: set[str]):
    """(method, names, 1 when a loop of the module calls it else 0) for the other methods of
    the class of `method` that read the attributes `names` (`self.train_loader`) it sets:
    deeplab's `Trainer.training(epoch)`, looping over the loader `__init__` stored, called
    once per epoch."""
    kept = {name for name in names if name.startswith("self.")}
    cls = next((node for node in ast.walk(module) if type(node) is ast.ClassDef and method in node.body), None)
    if cls is None or not kept:
        return
    looped = {node.func.attr for loop in ast.walk(module) if type(loop) in (ast.For, ast.While)
              for node in ast.walk(loop) if type(node) is ast.Call and type(node.func) is ast.Attribute}
    yield from _class_readers(cls, method, kept, looped)


def _class_readers(cls: ast.ClassDef, method, kept: set[str], looped: set[str]):
    """(method, attributes, 1 when its name is in `looped` else 0) for the methods of `cls`
    other than `method` that read some of the attributes `kept` (`self.train_loader`)."""
    for function in cls.body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function is not method:
            read = {dotted for node in ast.walk(function) if type(node) is ast.Attribute and (dotted := ast_dotted(node)) in kept}
            if read:
                yield function, read, int(function.name in looped)


def _uses_of_loaders(scope, names: set[str], namespace: Namespace, place: Place, loops: int = 0) -> LoaderUses:
    """What is done with the loaders bound to `names` in `scope` (run in as many loops)."""
    moved: Use | None = None
    again: Use | None = None
    where = getattr(scope, "name", "<module>")
    names = names | {  # `epoch_iterator = tqdm(train_loader, ...)`, then a loop over it; `data_loader = self.celeba_loader`
        node.targets[0].id for node in body_nodes(scope) if type(node) is ast.Assign and len(node.targets) == 1
        and type(node.targets[0]) is ast.Name and (type(node.value) is ast.Call and ast_dotted(_loop_source(node.value)) in names
                                                   or type(node.value) in (ast.Name, ast.Attribute) and ast_dotted(node.value) in names)}
    iterators = {node.targets[0].id for node in body_nodes(scope) if type(node) is ast.Assign and len(node.targets) == 1
                 and type(node.targets[0]) is ast.Name and type(node.value) is ast.Call and ast_dotted(node.value.func) == "iter"
                 and len(node.value.args) == 1 and ast_dotted(node.value.args[0]) in names}  # (`data_iter = iter(data_loader)`)
    trained = any(type(node) in (ast.For, ast.While) and any(  # (then `next(data_iter)` in a loop that trains: stargan's Solver)
        type(call) is ast.Call and ast_dotted(call.func) == "next" and call.args and ast_dotted(call.args[0]) in iterators
        for call in ast.walk(node)) and _steps_in(cast(ast.For, node), namespace, place, None, 0)
        for node in body_nodes(scope)) if iterators else False
    stack = [(child, loops) for child in ast.iter_child_nodes(scope)]  # (node, loops around it)
    while stack:
        child, loops = stack.pop()
        if type(child) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        source = _loop_source(child.iter) if isinstance(child, (ast.For, ast.AsyncFor)) else None
        if isinstance(child, (ast.For, ast.AsyncFor)) and source is not None and ast_dotted(source) in names:
            if loops and again is None:
                again = Use(shortened(ast.unparse(child.iter)), place(child.lineno), place.path, child.lineno, where)
            trained = trained or _steps_in(child, namespace, place, None, 0)
            batch = _batch_names(child, namespace, place)
            placed: dict[str, int] = {}  # batch name -> the line it is first bound to a moved value
            for node in ast.walk(child):
                if type(node) is ast.Assign and type(node.value) is ast.Call and _device_move(node.value) is not None:
                    for name in (n for target in node.targets for n in _names(target)):
                        placed[name] = min(placed.get(name, node.lineno), node.lineno)
            for call in (n for n in ast.walk(child) if type(n) is ast.Call and (moved is None or moved.recast)):
                value = _device_move(call)
                if value is not None and not batch.isdisjoint(roots := _roots(value)) and not any(
                        placed.get(root, call.lineno) < call.lineno for root in roots):  # (not a batch moved already)
                    recast = _host_cast(value)
                    if moved is None or not recast:
                        moved = Use(shortened(ast.unparse(call)), place(call.lineno), place.path, call.lineno, where, recast)
                elif value is None and call.args:
                    callee = _callee(call.func, namespace, place, None)  # `dlrm_wrap(X, lS_o, lS_i, use_gpu, device)` moving `X`;
                    defined = [callee] if callee is not None else _methods_anywhere(call.func, namespace, None)  # `model.set_input(data)`
                    uses = [_moves_batch(call, found, batch) for found in defined]
                    if uses and all(use is not None for use in uses):
                        use = cast(Use, uses[0])
                        moved = Use(use.code, use.where, use.path, use.line, f"{where} -> {use.via}")
        elif type(child) is ast.Call and any(type(a) is ast.Name and a.id in names
                                             for a in (*child.args, *(k.value for k in child.keywords))):
            callee = _callee(child.func, namespace, place, None)
            if callee is None and type(child.func) is ast.Name:
                callee = _constructor(child.func.id, namespace)
            if callee is not None:
                method_call = callee[3] is not None
                given = [param for param, value in bind(child, parameters(callee[0]), method_call)
                         if type(value) is ast.Name and value.id in names]
                moves, loops_over = device_moves(callee), iterated(callee) if loops else iterated_again(callee)
                moved = moved or next((moves[param] for param in given if param in moves), None)
                if again is None and any(param in loops_over for param in given):
                    again = Use(shortened(ast.unparse(child)), place(child.lineno), place.path, child.lineno, where)
                kept = _kept_loaders(callee)
                trained = trained or bool(_trained_on(child, names, namespace, place, None, 0)) or any(
                    param in kept and kept[param].trained for param in given)  # (a Trainer's `train` looping over it)
        inner = loops + (type(child) in (ast.For, ast.AsyncFor, ast.While))
        stack.extend((grandchild, inner) for grandchild in ast.iter_child_nodes(child))
    return LoaderUses(moved, again, trained)


def _moves_batch(call: ast.Call, found: Definition, batch: set[str]) -> Use | None:
    """Where the function `found`, given a batch (of the names `batch`) by `call`, moves it to a device."""
    moves = device_moves(found)
    return next((moves[param] for param, argument in bind(call, parameters(found[0]), method=found[3] is not None)
                 if param in moves and not batch.isdisjoint(_roots(argument))), None)


def _kept_loaders(found: Definition | None) -> dict[str, LoaderUses]:
    """{parameter: LoaderUses} of the parameters a class's `__init__` (`found`) keeps as
    attributes (`self.train_loader = train_loader`), from what its other methods do with them:
    a Trainer looping over its loader in `train_epoch`, which `fit` calls in its epoch loop."""
    if found is None or found[3] is None or getattr(found[0], "name", None) != "__init__":
        return {}
    function, namespace, place, cls = found[0], found[1], found[2], found[3]
    memo = _memo(function)
    if _kept_loaders not in memo:
        memo[_kept_loaders] = {}  # (a recursion uses nothing more)
        params = set(parameters(function).names)
        kept = {target: node.value.id for node in body_nodes(function) if type(node) is ast.Assign and len(node.targets) == 1
                and type(node.value) is ast.Name and node.value.id in params and (target := ast_dotted(node.targets[0]))
                and target.startswith("self.") and target.count(".") == 1}
        methods = [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not function]
        looped = {node.func.attr for other in methods for loop in body_nodes(other) if type(loop) in (ast.For, ast.While)
                  for node in ast.walk(loop) if type(node) is ast.Call and type(node.func) is ast.Attribute
                  and ast_dotted(node.func.value) == "self"}  # (`for epoch in ...: self.train_epoch()`)
        uses: dict[str, LoaderUses] = {}
        for other, read, repeated in _class_readers(cls, function, set(kept), looped) if kept else ():
            for name in read:
                found_uses = _uses_of_loaders(other, {name}, namespace, place, repeated)
                before = uses.get(kept[name], LoaderUses(None, None, False))
                uses[kept[name]] = LoaderUses(before.moved or found_uses.moved, before.again or found_uses.again,
                                              before.trained or found_uses.trained)
        memo[_kept_loaders] = uses
    return memo[_kept_loaders]


def _batch_names(loop: ast.For | ast.AsyncFor, namespace: Namespace, place: Place) -> set[str]:
    """The names a loop over a loader binds to its batches: its targets, and the names its body
    assigns or iterates from them (`(b.to(device) for b in batch)`), also through a function of
    the project (`X, lS_o, lS_i, T = unpack_batch(b)`)."""
    def roots_of(node, value: ast.expr) -> set[str]:
        roots = _roots(value)
        if type(value) is ast.Call and _callee(value.func, namespace, place, None) is not None:
            roots = roots.union(*map(_roots, value.args))
        return roots

    derived = {"batch": set(_names(loop.target))}
    _propagate([node for node in ast.walk(loop) if type(node) in (ast.Assign, ast.comprehension, ast.For) and node is not loop],
               derived, roots_of)
    return derived["batch"]


def _propagate(nodes, derived: dict[str, set[str]], roots_of) -> None:
    """Add to each set of `derived` the names that `nodes` bind from one of its names
    (`x = p[0]`, `for k, v in p.items()`), `roots_of(node, value)` telling the names a
    bound value is taken from; three rounds, so that a name bound before the one it is
    taken from is still found."""
    bindings = [(node, targets, value) for node in nodes for targets, value in [_binding(node)] if value is not None]
    for _ in range(3):
        for node, targets, value in bindings:
            roots = roots_of(node, value)
            for names in derived.values():
                if not names.isdisjoint(roots):
                    names.update(t for target in targets for t in _names(target))


def yields(found: Definition) -> bool:
    """Whether the function `found` is a generator (its own body yields)."""
    return any(type(node) in (ast.Yield, ast.YieldFrom) for node in body_nodes(found[0]))


def returned_parameter(found: Definition | None) -> str | None:
    """The parameter the function `found` gives back itself on some path, when no path gives
    back nothing or a constant: `input_dict` of `reduce_dict(input_dict)`, which returns it
    on one process and a reduced copy on several. What it returns is what it is given; not when
    another path gives back a number read from it (ENAS's `to_item(x)`: `return x` for a float,
    else `return x.item()`)."""
    if found is None:
        return None
    memo = _memo(found[0])
    if returned_parameter not in memo:
        names = set(parameters(found[0]).names)
        values = [node.value for node in body_nodes(found[0]) if type(node) is ast.Return]
        given = [value.id for value in values if type(value) is ast.Name and value.id in names]
        constant = any(value is None or type(value) is ast.Constant or type(value) is ast.Call and (
            type(value.func) is ast.Attribute and value.func.attr in ("item", "tolist") or type(
                value.func) is ast.Name and value.func.id in ("float", "int")) for value in values)
        memo[returned_parameter] = given[0] if len(set(given)) == 1 and not constant else None
    return memo[returned_parameter]


def returned_mask(found: Definition | None, truth: bool = False, depth: int = 0) -> str | None:
    """The parameter whose boolean mask every return of the function `found` gives (`def
    is_unknown(labels): return labels < 0`), or with `truth`, whose mask's `.any()`/`.all()`
    (`def contains_unknown(labels): return is_unknown(labels).any()`); None for other functions."""
    if found is None or depth > _MAX_CALLS:
        return None
    memo = _memo(found[0])
    key = (returned_mask, truth)
    if key not in memo:
        memo[key] = None
        names = set(parameters(found[0]).names) - ({"self"} if found[3] is not None else set())  # (not `self.p` of a method's
        values = [node.value for node in body_nodes(found[0]) if type(node) is ast.Return]  # `bernoulli(mask.float() * self.p)`)
        given = {_masked(value, names, found, truth, depth) for value in values}
        memo[key] = given.pop() if len(given) == 1 else None
    return memo[key]


def _masked(value, names: set[str], found: Definition, truth: bool, depth: int) -> str | None:
    """The parameter `value` is a boolean mask of (with `truth`: the `.any()`/`.all()` of one)."""
    if truth:
        if type(value) is not ast.Call or type(value.func) is not ast.Attribute or value.func.attr not in ("any", "all") or value.args:
            return None
        value = value.func.value
    assigned = _assignments(found[0])

    def mask_form(v: ast.expr, depth: int = 0) -> bool:  # (through the names it reads: `return pos_mask | neg_mask`)
        if type(v) is ast.Name and len(assigned.get(v.id, ())) == 1 and depth < 4:
            return mask_form(assigned[v.id][0], depth + 1)
        if type(v) is ast.BinOp and type(v.op) in (ast.BitAnd, ast.BitOr):
            return mask_form(v.left, depth + 1) and mask_form(v.right, depth + 1)
        return _mask_form(v)

    if value is None or not mask_form(value) and type(value) is not ast.Call:
        return None
    if type(value) is ast.Call and not _mask_form(value):  # `is_unknown(labels)`: a mask function of the project
        callee = _callee(value.func, found[1], found[2], found[3])
        inner = returned_mask(callee, False, depth + 1) if callee is not None else None
        bound = dict(bind(value, parameters(callee[0]), callee[3] is not None)) if inner is not None and callee is not None else {}
        argument = bound.get(inner) if inner is not None else None
        roots = _roots(argument) & names if argument is not None else set()
        return roots.pop() if len(roots) == 1 else None
    roots = _param_roots(value, assigned, names)
    return next((name for name in parameters(found[0]).names if name in roots), None)  # (a mask of two, `labels > 0 |
    # orders < num_neg`, is where both are: an operation needs its tensors on one device)


def _assignments(function) -> dict[str, list[ast.expr]]:
    """{name: the values assigned it alone (`x = v`, not `x, y = v`)} in a function's body."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in body_nodes(function):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    return assigned


def _param_roots(value: ast.expr, assigned: dict[str, list[ast.expr]], names: set[str]) -> set[str]:
    """The parameters among `names` that `value` is computed from, through the local names it
    reads (assigned once: `pos_mask = labels > 0`, then `return pos_mask | neg_mask`)."""
    found: set[str] = set()
    pending, seen = list(_roots(value)), set[str]()
    while pending and len(seen) < 16:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in names:
            found.add(name)
        elif len(assigned.get(name, ())) == 1:
            pending.extend(_roots(assigned[name][0]))
    return found


def returns_host_copy(found: Definition | None, index: int | None, depth: int = 0) -> bool:
    """Whether every return of the function `found` gives back a copy on the host (`x.cpu()`,
    `x.item()`, or what a function of the project returning one gives: `to_cpu(x)`), as the
    element `index` of a tuple when `index` is not None (`return loss, to_cpu(torch.cat(parts))`
    in YOLOv3's `compute_loss`: the caller's `loss_components` is a CPU tensor; negative: from
    its end), directly or through a name it assigns once."""
    if found is None or depth > 3:
        return False
    values = [node.value for node in body_nodes(found[0]) if type(node) is ast.Return]
    if not values:
        return False
    assigned = _assignments(found[0])
    for value in values:
        if index is not None:
            if type(value) is not ast.Tuple or not -len(value.elts) <= index < len(value.elts) or any(type(e) is ast.Starred for e in value.elts):
                return False
            value = value.elts[index]
        if type(value) is ast.Name and len(assigned.get(value.id, ())) == 1:
            value = assigned[value.id][0]  # (`count = (p == y).sum().item()`, then `return loss, count`)
        if type(value) is not ast.Call:
            return False
        if _host_read(value) is None:
            callee = _callee(value.func, found[1], found[2], found[3])
            if callee is None or not returns_host_copy(callee, None, depth + 1):
                return False
    return True


_AGAIN = object()  # (returns_cpu_factory: a name met again while resolving it)
_PARTS = frozenset({"cat", "stack", "concat", "meshgrid", "split", "chunk", "unbind"})  # on their first argument's device


def _torch_function(namespace: Namespace, value) -> str | None:
    """`meshgrid` for a call of `torch.meshgrid(...)` (as the module imports it); None otherwise."""
    if type(value) is not ast.Call:
        return None
    head, _, name = (namespace.qualname(ast_dotted(value.func) or "") or "").partition(".")
    return name if head == "torch" else None


def returns_cpu_factory(found: Definition | None, converted: bool = False) -> Use | None:
    """Where the function `found` makes, by a torch factory given no device, the tensor each of
    its returns gives back (`return torch.zeros(n, self.hidden_size)`, `mask = torch.triu(
    torch.ones(1, n, n)).type(torch.int)` then `return mask == 0`: through casts, reshapes,
    comparisons and math with numbers, and names it assigns only such values): a CPU tensor its
    callers move; None otherwise. With `converted`, also one it converts from what it is given
    (`torch.tensor(k)`: for a caller that makes it once). `Use.code`: the factory's name."""
    if found is None:
        return None
    function, namespace, place = found[0], found[1], found[2]
    memo = _memo(function)
    key = (returns_cpu_factory, converted)
    excluded = set() if converted else {"from_numpy", "tensor", "as_tensor"}
    if key not in memo:
        assigned: dict[str, list] = {}
        for node in body_nodes(function):
            if type(node) is ast.Assign:
                for target in node.targets:
                    unpacked = type(target) is ast.Tuple and _torch_function(namespace, node.value) in _PARTS
                    for name in _names(target):  # (`y, x = torch.meshgrid(torch.arange(h), torch.arange(w))`: each made so)
                        assigned.setdefault(name, []).append(node.value if type(target) is ast.Name or unpacked else None)
                    if type(target) is ast.Subscript and type(target.value) is ast.Name and type(node.value) is not ast.Constant:
                        assigned.setdefault(target.value.id, []).append(None)  # (filled with the program's data: CLIP's
                        # `result[i, :n] = tokens`; not a mask's `mask[i, j] = 0`)

        def factory(value, depth: int = 0, resolving: frozenset = frozenset()):
            """The factory call making `value`; `_AGAIN` for the name being resolved (`omega = 1.0 /
            (t ** omega)`: what its other assignments make); None when not one."""
            while depth < 16:
                depth += 1
                if type(value) is ast.Name:
                    if value.id in resolving:
                        return _AGAIN
                    made = [factory(v, depth, resolving | {value.id}) for v in assigned.get(value.id, [None])]
                    calls = [m for m in made if m is not _AGAIN]
                    return calls[0] if calls and all(made) else None
                if type(value) is ast.Tuple and value.elts:  # (an LSTM's `(h, c)`: each made so)
                    made = [factory(element, depth, resolving) for element in value.elts]
                    return made[0] if all(made) else None
                if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "Variable" and value.args:
                    value = value.args[0]  # (PyTorch 0.3's wrapper)
                elif type(value) is ast.Compare and len(value.ops) == 1:
                    value = value.left
                elif type(value) is ast.BinOp and type(value.left) is ast.Constant:
                    value = value.right
                elif type(value) is ast.BinOp:  # (math with a CPU tensor made so: with a CUDA tensor it would fail)
                    return factory(value.left, depth, resolving) or factory(value.right, depth, resolving)
                elif type(value) is ast.Subscript:
                    value = value.value
                elif type(value) is ast.Call and type(value.func) is ast.Attribute and (value.func.attr in SAME_DEVICE_METHODS or (
                        value.func.attr == "type" and "cuda" not in ast.unparse(value)) or value.func.attr in ELEMENTWISE_METHODS and (
                        namespace.qualname(ast_dotted(value.func.value) or "") != "torch")):  # (`.type(torch.int)`, `x.sin()`)
                    value = value.func.value
                elif type(value) is ast.Call:
                    head, _, name = (namespace.qualname(ast_dotted(value.func) or "") or "").partition(".")
                    if head == "torch" and (name in SAME_DEVICE_FUNCTIONS or name in _PARTS or name in ELEMENTWISE_METHODS) and value.args:
                        value = value.args[0]  # (`torch.cat((x.sin(), x.cos()))`: the tuple's tensors)
                        continue
                    data = value.args and type(value.args[0]) not in (ast.Constant, ast.Name, ast.Attribute)  # (`torch.Tensor(
                    return value if head == "torch" and name in HOST_FACTORIES - excluded and not any(
                        k.arg == "device" for k in value.keywords) and not (data and name[0].isupper()) else None  # image / 255)`)
                else:
                    return None
            return None

        values = [node.value for node in body_nodes(function) if type(node) is ast.Return]
        made = [factory(v) if v is not None else None for v in values]
        made = [None if m is _AGAIN else m for m in made]
        first = made[0] if made and all(made) else None
        memo[key] = None if first is None else Use(
            (namespace.qualname(ast_dotted(first.func) or "") or "").partition(".")[2], place(first.lineno),
            place.path, first.lineno, _name(function, found[3]))
    return memo[key]


def class_default(found: tuple | None, attribute: str):
    """The constant a class of the project (`klass`'s answer) gives `attribute` in its body
    (`class Config: num_workers = 8`), or its `__init__` to an instance made without arguments
    (`self.num_workers = 4`, or the default of the parameter it is given: `def __init__(self,
    num_workers=4)`); UNKNOWN when it gives none, or not a constant."""
    if found is None:
        return UNKNOWN
    for node in found[0].body:
        target = node.targets[0] if type(node) is ast.Assign and len(node.targets) == 1 else \
            node.target if type(node) is ast.AnnAssign else None
        if type(target) is ast.Name and target.id == attribute and node.value is not None:
            return node.value.value if type(node.value) is ast.Constant else UNKNOWN
    init = next((node for node in found[0].body if type(node) is ast.FunctionDef and node.name == "__init__"), None)
    if init is None:
        return UNKNOWN
    given = init.args.args[len(init.args.args) - len(init.args.defaults):]
    defaults = {arg.arg: value for arg, value in zip(given, init.args.defaults)}
    values = [node.value for node in init.body if type(node) is ast.Assign and len(node.targets) == 1
              and type(target := node.targets[0]) is ast.Attribute and type(target.value) is ast.Name
              and target.value.id == "self" and target.attr == attribute]
    value = values[0] if len(values) == 1 else None
    if type(value) is ast.Name:
        value = defaults.get(value.id)
    return value.value if type(value) is ast.Constant else UNKNOWN


def from_afar(ctx, expr, scope) -> bool:
    """`args.num_workers` or `self.args.num_workers`, in a module of a project on disk, where
    nothing of the module binds `args` to a value (a parameter, an attribute set from one) or it
    is what a class or function of the project makes (`config = AugmentConfig()`, whose
    `__init__` parses the command line): a parsed namespace from another module, whose
    attributes are the project's options (`project_option_default`)."""
    if type(expr) is not cst.Attribute or not ctx.path or ctx.path.startswith("<"):
        return False
    base = expr.value
    if not (type(base) is cst.Name and base.value not in ctx.imports and scope.owner_of(base.value) is not None
            or type(base) is cst.Attribute and type(base.value) is cst.Name and base.value.value == "self"):
        return False
    origin = ctx.origin(base, scope)
    made = origin[0] if origin is not None else None
    return made is None or type(made) is cst.Name or type(made) is cst.Call and call_name(made) not in (
        "parse_args", "parse_known_args") and maybe_project_call(ctx, made.func)


def instance_default(ctx, expr, scope):
    """`opt.num_workers` where `opt` is the one instance of a class of the project, made
    without arguments here (`opt = Config()`) or in the module it is imported from (`from
    utils.config import opt`), or a parameter annotated with the class (litgpt's `train:
    TrainArgs`): the class's default (`class Config: num_workers = 8`, a dataclass's field
    `log_interval: int = 1`); or where `opt` is a module of the project (`from tools import
    config`), the constant it assigns (config.py's `num_workers = 4`); else UNKNOWN."""
    if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name:
        return UNKNOWN
    name, namespace = expr.value.value, SourceNamespace.of(ctx)
    if name in ctx.imports or name in ctx.relative_imports:
        constant = namespace.value(f"{name}.{expr.attr.value}")
        if constant is not None and type(constant[0]) is ast.Constant:
            return constant[0].value
        found = namespace.value(name)
        made = found[0] if found is not None else None
        cls = ast_dotted(made.func) if type(made) is ast.Call and not made.args and not made.keywords else None
        return class_default(found[1].klass(cls) if found is not None and cls else None, expr.attr.value)
    annotated = _annotated_class(namespace, expr.value, scope)
    if annotated is not None:
        return class_default(annotated, expr.attr.value)
    origin = ctx.origin(expr.value, scope)
    made_here = origin[0] if origin is not None else None
    cls = dotted(made_here.func) if type(made_here) is cst.Call and not made_here.args else None
    return class_default(namespace.klass(cls) if cls else None, expr.attr.value)


def argparse_defaults(found: Definition | ast.Module | ast.FunctionDef | None) -> dict[str, list]:
    """{dest: [default, ...]} of the `add_argument` calls of a function of the project that
    builds an argparse parser, or of a module's own statements (a constant default; None for
    one it does not give or that is not a constant)."""
    if found is None:
        return {}
    function = found if isinstance(found, (ast.Module, ast.FunctionDef)) else found[0]
    memo = function.__dict__.setdefault("_perf_lint_memo", {})
    if argparse_defaults not in memo:
        defaults: dict[str, list] = {}
        for node in body_nodes(function):
            if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr != "add_argument":
                continue
            flags = [a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str)]
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            dest = keywords.get("dest")
            longs = [f for f in flags if f.startswith("--")] or flags
            name = dest.value if type(dest) is ast.Constant else longs[0].lstrip("-").replace("-", "_") if longs else None
            given = keywords.get("default")
            action = keywords.get("action")
            switch = action.value if type(action) is ast.Constant and action.value in ("store_true", "store_false") else None
            if isinstance(name, str):  # (a switch's default: False for `store_true`, True for `store_false`)
                defaults.setdefault(name, []).append(
                    given.value if type(given) is ast.Constant else switch == "store_false" if switch and given is None else None)
        memo[argparse_defaults] = defaults
    return memo[argparse_defaults]


def given_namespace_defaults(namespace: FileNamespace, path: str, name: str, index: int, param: str) -> list[dict] | None:
    """For each call in the module `namespace` of the function `name` of the module at `path`,
    the argparse defaults (see `argparse_defaults`) of the namespace it gives the parameter
    `param` (at `index` among the positional ones): one the calling scope parses itself
    (`args = parser.parse_args()`, then `dp.make_loaders(args)`) or gets from a function of the
    project that does (`parsed_defaults`). None when a call gives another value."""
    place = Place(namespace.label, namespace.path)
    found: list[dict] = []
    scopes = [namespace.tree, *(n for n in ast.walk(namespace.tree) if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        nodes = list(body_nodes(scope))
        for call in (n for n in nodes if type(n) is ast.Call and (ast_dotted(n.func) or "").rpartition(".")[2] == name):
            target = _callee(call.func, namespace, place, None)
            if target is None or not isinstance(target[1], FileNamespace) or os.path.abspath(target[1].path) != path:
                continue
            given = next((k.value for k in call.keywords if k.arg == param), None)
            if given is None and index < len(call.args) and not any(type(a) is ast.Starred for a in call.args[:index + 1]):
                given = call.args[index]
            if type(given) is not ast.Name:
                return None
            made = [n.value for n in nodes if type(n) is ast.Assign and len(n.targets) == 1
                    and type(n.targets[0]) is ast.Name and n.targets[0].id == given.id]
            if len(made) != 1 or type(made[0]) is not ast.Call:
                return None
            parsing = made[0].func
            if type(parsing) is ast.Attribute and parsing.attr in ("parse_args", "parse_known_args"):
                found.append(argparse_defaults((cast(ast.stmt, scope), namespace, place, None)))  # (the module's own too)
            else:
                found.append(parsed_defaults(_callee(parsing, namespace, place, None)))
    return found


def parsed_defaults(found: Definition | None, depth: int = 0) -> dict[str, list]:
    """The argparse defaults (see `argparse_defaults`) of the namespace a function of the
    project returns: one it parses itself (`return parser.parse_args()`), or one it takes
    from another function of the project and gives back (`opt = parse_opts(); ...; return
    opt`), two calls deep."""
    if found is None or depth > 2:
        return {}
    nodes = list(body_nodes(found[0]))
    if any(type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ("parse_args", "parse_known_args")
           for n in nodes):
        return argparse_defaults(found)
    returned = {n.value.id for n in nodes if type(n) is ast.Return and type(n.value) is ast.Name}
    made = [n.value for n in nodes if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name
            and n.targets[0].id in returned]
    if len(made) != 1 or type(made[0]) is not ast.Call:
        return {}
    return parsed_defaults(_callee(made[0].func, found[1], found[2], found[3]), depth + 1)


@dataclass(frozen=True)
class Parameters:
    names: tuple[str, ...]  # in order, `self` included
    args: str | None  # the *args name
    kwargs: str | None  # the **kwargs name
    static: bool = False  # a @staticmethod: no instance, even called on one


def parameter_defaults(function) -> dict[str, ast.expr]:
    """The defaults of an `ast` function's parameters, by name (positional and keyword-only)."""
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    found = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    found.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return found


def parameters(function) -> Parameters:
    a = function.args
    names = tuple(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))
    static = any(type(d) is ast.Name and d.id == "staticmethod" for d in getattr(function, "decorator_list", ()))
    return Parameters(names, a.vararg.arg if a.vararg else None, a.kwarg.arg if a.kwarg else None, static)


def bind(call, params: Parameters, method: bool) -> list[tuple[str, object]]:
    """(parameter, argument) pairs of a call (ast or libcst) of a function with `params`;
    `method`: called on an instance (the first parameter is the instance)."""
    positional = params.names[1:] if method and not params.static else params.names
    pairs: list[tuple[str, object]] = []
    index = 0
    for arg in getattr(call, "args", ()):
        keyword = _keyword(arg)
        star = _star(arg)
        value = arg.value if hasattr(arg, "keyword") else arg  # libcst Arg, ast expr
        if star == "**":  # the values of `**d` are the callee's keyword arguments
            pairs.append((params.kwargs or "", value))
            continue
        if star:
            break  # past a *x, positions are not known
        if keyword is not None:
            pairs.append((keyword if keyword in params.names else params.kwargs or "", value))
        elif index < len(positional):
            pairs.append((positional[index], value))
            index += 1
        elif params.args:
            pairs.append((params.args, value))
    for keyword in getattr(call, "keywords", ()):  # ast; `**d` has no name
        name = params.kwargs if keyword.arg is None else keyword.arg if keyword.arg in params.names else params.kwargs
        pairs.append((name or "", keyword.value))
    return [(name, value) for name, value in pairs if name]


def calls_argument(found: Definition, call, value) -> bool:
    """Whether the function `found` calls the parameter that `call` passes `value` to (jepa's
    `gpu_timer(closure)` running `closure()`)."""
    names = {name for name, given in bind(call, parameters(found[0]), found[3] is not None) if given is value}
    return bool(names) and any(type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in names
                               for node in body_nodes(found[0]))


def _keyword(arg) -> str | None:
    keyword = getattr(arg, "keyword", None)
    return None if keyword is None else keyword.value


def _star(arg) -> str:
    """"*" or "**" for a starred argument (libcst; ast's `*x`), "" for another."""
    return "*" if type(arg) is ast.Starred else getattr(arg, "star", "")


def _callee(func, namespace: Namespace, place: Place, cls) -> Definition | None:
    """(definition, namespace, place, class) of what an ast call calls, when it is a
    function or method of the project."""
    if type(func) is ast.Name:
        found = namespace.function(func.id)
        return None if found is None else (*found, None)
    if type(func) is ast.Attribute and type(func.value) is ast.Name:
        if func.value.id == "self" and cls is not None:
            return method(cls, func.attr, namespace, place) or _kept_module_forward(cls, func.attr, namespace)
        found = namespace.function(f"{func.value.id}.{func.attr}")
        return (*found, None) if found is not None else _class_method(namespace, func.value.id, func.attr)
    return None


def _kept_module_forward(cls: ast.ClassDef, attribute: str, namespace: Namespace) -> Definition | None:
    """The `forward` that `self.attribute(...)` runs when the class keeps one instance of a
    class of the project there (`self.criterion = FocalLoss()`, also `.cuda()`-ed)."""
    kept = cls.__dict__.get("_perf_lint_kept")
    if kept is None:  # attribute -> what `self.attribute = ...` assigns, in any method (a pure function of the class:
        kept = cls.__dict__["_perf_lint_kept"] = {}  # kept on its node apart from its summaries)
        for function in cls.body:
            for node in ast.walk(function) if type(function) is ast.FunctionDef else ():
                if type(node) is ast.Assign:
                    for target in node.targets:
                        if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                            kept.setdefault(target.attr, []).append(node.value)
    made = kept.get(attribute, [])
    if len(made) != 1 or type(made[0]) is not ast.Call:
        return None
    call = made[0]
    while type(call.func) is ast.Attribute and call.func.attr in _SAME_MODULE and type(call.func.value) is ast.Call:
        call = call.func.value
    name = ast_dotted(call.func)
    found = None if name is None else namespace.klass(name)
    return None if found is None else method(found[0], "forward", *found[1:])


def _constructor(name: str, namespace: Namespace) -> Definition | None:
    """The `__init__` of the class of the project a call of `name` makes (`Solver(loader, config)`)."""
    made = namespace.klass(name)
    return None if made is None else method(made[0], "__init__", *made[1:])


def _class_method(namespace: Namespace, receiver: str, name: str) -> Definition | None:
    """`StepByStep.loader_apply(...)`: method `name` of the class `receiver` of the project,
    called on the class (a static method; `utils.ModelTrainer.train_one_epoch(...)` through a
    module); only a receiver written like a class (CapWords) is looked up, so
    `module.function(...)` does not search the disk for a class."""
    klass = namespace.klass(receiver) if receiver.rpartition(".")[2][:1].isupper() else None
    return None if klass is None else method(klass[0], name, *klass[1:])


def method(cls: ast.ClassDef, name: str, namespace: Namespace, place: Place) -> Definition | None:
    """(definition, namespace, place, class) of method `name` of `cls` (bases of the same
    module followed once)."""
    for node in cls.body:
        if (type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef) and node.name == name:
            return node, namespace, place, cls
    for base in cls.bases:
        if type(base) is ast.Name and base.id != cls.name:
            found = namespace.klass(base.id)
            if found is not None and found[0] is not cls:
                inner = found[0]
                for node in inner.body:
                    if (type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef) and node.name == name:
                        return node, found[1], found[2], inner
    return None


def ast_dotted(node: ast.expr) -> str | None:
    """`a.b.c` of an ast Name or Attribute chain; None for anything else (`f().x`)."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def base_name(base: ast.expr) -> str | None:
    """The dotted name of a base class, also of a generic one (flair's `Classifier[DT]`)."""
    return ast_dotted(base.value if type(base) is ast.Subscript else base)


def _name(function, cls) -> str:
    return f"{cls.name}.{function.name}" if cls is not None else function.name


def _binding(node) -> tuple[list, ast.expr | None]:
    if type(node) is ast.Assign:
        return node.targets, node.value
    if type(node) in (ast.AnnAssign, ast.NamedExpr):
        return [node.target], node.value
    if type(node) in (ast.For, ast.comprehension):
        return [node.target], node.iter
    if type(node) is ast.withitem and node.optional_vars is not None and type(node.context_expr) is ast.Call and (
            ast_dotted(node.context_expr.func) or "").rpartition(".")[2] == "tqdm":
        return [node.optional_vars], node.context_expr  # `with tqdm(loader) as bar:`: the bar iterates the loader
    return [], None


def _names(target) -> list[str]:
    if type(target) is ast.Name:
        return [target.id]
    if type(target) in (ast.Tuple, ast.List):
        return [n for element in target.elts for n in _names(element)]
    if type(target) is ast.Starred:
        return _names(target.value)
    return []


def _roots(expr) -> set[str]:
    """The names an expression's value is taken from: `p` for `p`, `p[0]`, `p.attr`,
    `p.items()`, `p.eq(q).sum()`, `enumerate(p)`, `tqdm(p)`; `p` and `q` for `zip(p, q)`,
    `p == q`, `p * q` and `torch.eq(p, q)`; none for sizes (`p.shape[0]`, `p.size(0)`:
    Python numbers)."""
    kind = type(expr)
    if kind is ast.Name:
        return {expr.id}
    if kind is ast.Subscript:
        return _roots(expr.value)
    if kind is ast.Attribute:
        return set() if expr.attr in _SIZES else _roots(expr.value)
    if kind is ast.Compare:
        return set().union(*map(_roots, (expr.left, *expr.comparators)))
    if kind is ast.BinOp:
        return _roots(expr.left) | _roots(expr.right)
    if kind is ast.UnaryOp:
        return _roots(expr.operand)
    if kind is ast.Call:
        func = expr.func
        dotted = ast_dotted(func) or ""
        if dotted.split(".", 1)[0] in _TENSOR_MODULES:  # torch.eq(p, q), F.softmax(p)
            return set().union(set(), *map(_roots, expr.args))
        if type(func) is ast.Attribute and func.attr not in _SIZES and func.attr not in _HOST_METHODS:
            return _roots(func.value)
        if type(func) is ast.Name and func.id in _WRAPPERS and expr.args:
            return set().union(*map(_roots, expr.args if func.id == "zip" else expr.args[:1]))
    return set()


_WRAPPERS = {"enumerate", "zip", "reversed", "list", "tuple", "iter", "next", "tqdm", "track"}  # what they give is what they are given
_TENSOR_MODULES = {"torch", "F"}  # functions of tensors: what they return derives from their arguments


def body_nodes(function, lambdas: bool = False, loops: bool = True):
    """The nodes of a function's body, without those of the functions and classes it defines
    (nor, unless `lambdas`, of its lambdas; nor, without `loops`, of its loops)."""
    skipped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) + (() if lambdas else (ast.Lambda,)) + (
        () if loops else (ast.For, ast.AsyncFor, ast.While))
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if type(node) in skipped:
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))
