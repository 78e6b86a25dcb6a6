"""Where a module's callers run it: the project's modules (`.py` and notebooks) that import
it, and whether one of them puts work on a GPU.

A module such as `engine.py` with `def train_step(model, batch, device)` never says where
its tensors live; `train.py`, which imports it and sets `device = "cuda"`, does. `gpu_importer`
finds such an importer, so the rules treat the module like code that says "cuda" itself.
`gpu_callee` looks the other way: a notebook whose `device = utils.try_gpu()` calls a
function of the project that picks the GPU.

The project (the folder `project_root` finds; at most `MAX_FILES` modules in `MAX_FOLDERS`
folders, the first in sorted order) is listed at most once per `LISTING_LIFE` seconds. Each
file is read once per size and modification time, and the importers a listing names are
looked at as they are now, the first `MAX_IMPORTERS` of them only (a module that many import
is a library's, driven from anywhere). A cache learns of the answer's inputs through
`project.note`: the importers, and the folders where a new one is likeliest (the project's
root, the module's folder, the importers' folders), so that a module added, removed or
renamed there is noticed; one added elsewhere, or edited in place to start importing the
module, is not, until the module or its importers change.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import re
import stat
import threading
import time
from collections import Counter, OrderedDict, defaultdict
from typing import NamedTuple, cast

import libcst as cst

from .nodes import UNKNOWN, dotted, trainer_gpu
from .project import (MAX_HOPS, MAX_FILE, MAX_NOTEBOOK, WORD, FileNamespace, Namespace, SourceNamespace, argparse_defaults, ast_dotted, base_name, body_nodes, call_target, coqui_model,
                      forward_helpers, given_namespace_defaults, guarded, maybe_project_call, module_file, module_trains, note, Place, place_of,
                      marked, project_root, search_paths, self_calls, steps_call)
from .source import SourceError, notebook_source
from .vocabulary import CUDA_DEVICE, MODEL_WORDS, PER_CALL_METHODS, TORCH_MODULES, gpu_api

MAX_FILES = 5000  # a larger project is listed up to this many modules
MAX_FOLDERS = 2000  # and this many folders (a home folder without a project marker can hold millions)
LISTING_LIFE = 5.0  # seconds a project's listing is reused (a run, a burst of edits) before it is made again
_SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"}
# a file without any of these never uses a GPU, nor picks a device with a function of the project (`get_device()`)
_GPU_HINT = re.compile(rb"cuda|nccl|accelerat|deepspeed|gpu|device\(|Trainer\(|Fabric\(|DataParallel\(|\.to\([\w.]+\(\)\)")
# what a GPU line looks like in text (confirmed on the parsed module): `.cuda(`, "cuda:0", "cuda:" (+ an index), "nccl",
# torch.cuda.* but the queries and seeding, torch.accelerator.*, deepspeed.*, Accelerator(, Lightning's Fabric( and
# Trainer(, DataParallel(
_GPU_TEXT = re.compile(
    rb"""\.cuda\(|['"](?:cuda(?::\d*)?|nccl)['"]|f['"]cuda:\{|cuda\.(?!is_available|device_count|get_device_|manual_seed|seed)\w"""
    rb"""|accelerator\.(?!is_available|device_count)\w|deepspeed\.|Accelerator\(|Fabric\(|Trainer\(|DataParallel\(""")
_DEVICE_KEYWORDS = {"device", "map_location", "output_device"}
_PICKER = re.compile(r"device|gpu", re.IGNORECASE)  # a function named as one that picks the device (`get_device`, `try_gpu`)
MAX_CALLEES = 64  # functions of other modules a source calls, looked at for a GPU line
MAX_IMPORTERS = 32  # importers of one module parsed for their GPU line (a library module has hundreds)
IMPORT_LEVELS = 5  # imports followed from a module to the one that puts its work on a GPU
# `import a.b as c, d` / `from .e import f, g as h` / `from . import (i,\n j)`: (from what, what)
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+)?import[ \t]+(\([^)]*\)|[^\n#;]+)", re.MULTILINE)
_WORD = re.compile(rb"\w+")
_SYS_PATH = re.compile(rb"^[ \t]*sys\.path\.(?:append|insert)\(([^\n]*)", re.MULTILINE)  # `sys.path.append("..")`
_STRING = re.compile(rb"""['"]([^'"\n]*)['"]""")
_SUMMARY_FORMAT = 2  # of `_Module.summary`: 2 counts the plugins a module loads by name among its imports
# a plugin loaded by name: `importlib.import_module("loss." + args.trainfunc)`, `import_module(f"models.{name}")`
_PLUGIN = re.compile(rb"""import_module\(\s*f?['"]([A-Za-z_][\w.]*)\.(?:\{|['"]\s*\+)""")


class _Listing(NamedTuple):
    """A project's folders (path, stat) and, by each word of their import statements, the
    modules and the packages' `__init__.py` (which may re-export a module to one that
    imports it), as listed at `made` (time.monotonic)."""

    made: float
    folders: list[tuple[str, os.stat_result]]
    importers: dict[bytes, list[str]]
    packages: dict[bytes, list[str]]
    configs: list[str]  # the modules that import yacs or a `CfgNode` (of defaults)
    modules: dict[str, list[str]]  # module name (`function` of core/function.py, `config` of config/__init__.py) -> files
    placed: dict[tuple[str, ...], str | None]  # `placed_anywhere`'s answers, by the dotted parts asked
    texts: list[bytes]  # the texts of its code and config files, read when first asked (`never_set`)
    unset: dict[str, bool]  # `never_set`'s answers, by the name asked
    off: dict[str, bool]  # `never_on`'s answers, by the name asked
    settings: list[dict[tuple[str, ...], list[str]]]  # its YAML files' settings, read when first asked (`yaml_setting`)
    losses: list[frozenset[str]]  # `loss_methods`' answer, found when first asked
    picked: dict["_Module", int | None]  # the line where a module picks the GPU with a function of the project (`gpu_line`)
    named: dict[str, bool]  # `named_elsewhere`'s answers, by the name asked
    methods: dict[str, list]  # `methods_named`'s answers, by the name asked
    files: list[tuple[str, os.stat_result]]  # its code and notebooks, as listed
    reader: list[str | None]  # `config_gpu`'s GPU module reading configs, found when first asked


def _plugins(path: str, code: bytes) -> list[tuple[bytes, bytes]]:
    """The modules a module may load by name from a package beside it, as imports (`from loss
    import aamsoftmax, triplet` for voxceleb_trainer's `importlib.import_module("loss." +
    trainfunc)`): each one the package's folder holds."""
    found = []
    for package in dict.fromkeys(_PLUGIN.findall(code)):
        folder = os.path.join(os.path.dirname(path), *package.decode().split("."))
        try:
            names = sorted(name[:-3] for name in os.listdir(folder) if name.endswith(".py") and name != "__init__.py")
        except OSError:
            continue
        if names:
            found.append((package, ", ".join(names).encode()))
    return found


class _Module:
    """What is known of one version of a module, each answered once: the words of its
    import statements, whether it may use a GPU (its text names one), the files of the
    project it imports, and a line where it puts work on a GPU."""

    def __init__(self, path: str, hint: bool, gpu_text: bool, imported: list[tuple[bytes, bytes]],
                 added: list[list[str]]) -> None:
        self.path, self.hint, self._gpu_text, self.imported, self._added = path, hint, gpu_text, imported, added
        self.words = frozenset(word for source, names in self.imported for part in (source, names)
                               for word in _WORD.findall(part))
        self._files: frozenset[str] | None = None
        self._unresolved: frozenset[str] | None = None  # see `unresolved`, found with `files`
        self._looked = not self.hint  # (nothing in its text looks like GPU work: never parsed)
        self._line: int | None = None
        self._namespace: ast.Module | None = None  # its code, parsed when first asked
        self._identifiers: frozenset[bytes] | None = None  # the words of its text, read when first asked
        self._cuda_default: bool | None = None  # whether its text makes CUDA the default device, read when first asked

    @classmethod
    def read(cls, path: str, code: bytes) -> "_Module":
        """The module whose code (a notebook's code cells joined) is `code`."""
        return cls(path, _GPU_HINT.search(code) is not None, _GPU_TEXT.search(code) is not None,
                   [(match.group(1) or b"", match.group(2)) for match in _IMPORT.finditer(code)] + _plugins(path, code),
                   [[s.decode(errors="replace") for s in _STRING.findall(m.group(1))] for m in _SYS_PATH.finditer(code)])

    def summary(self) -> list:
        """What `read` found, as JSON values (`of_summary` reads it back), with the summaries' format."""
        return [self.hint, self._gpu_text, [[s.decode("latin-1"), n.decode("latin-1")] for s, n in self.imported],
                self._added, _SUMMARY_FORMAT]

    @classmethod
    def of_summary(cls, path: str, summary) -> "_Module":
        """The module `summary` describes; TypeError or ValueError when it has another shape or format."""
        hint, gpu_text, imported, added, form = summary
        if form != _SUMMARY_FORMAT or type(hint) is not bool or type(gpu_text) is not bool or any(
                type(pair) is not list or len(pair) != 2 or any(type(s) is not str for s in pair) for pair in imported) or any(
                type(strings) is not list or any(type(s) is not str for s in strings) for strings in added):
            raise TypeError("summary")
        return cls(path, hint, gpu_text, [(s.encode("latin-1"), n.encode("latin-1")) for s, n in imported], added)

    def unresolved(self) -> frozenset[str]:
        """The modules it imports by absolute name (`from train_config import config`) that no file
        resolves from where it is: the folder it runs from puts one on the path (an experiment's
        train_config.py), or a library."""
        self.files()
        return cast(frozenset, self._unresolved)

    def files(self) -> frozenset[str]:
        """The files of the project it imports: `import a.b` a/b; `from .c import d` c, or the
        submodule c/d (read from its text: an import in a string may count too)."""
        if self._files is None:
            directory, found, missing = os.path.dirname(self.path), set(), set()
            paths = search_paths(directory, self._added)
            for source, names in self.imported:
                level = len(source) - len(source.lstrip(b"."))
                base = source[level:].decode()
                for written in names.strip(b"()").split(b","):
                    name = written.split()[0].decode() if written.split() else ""
                    if not name:
                        continue
                    dotted = f"{base}.{name}" if source and base else name
                    for module in ([base] if base else []) + ([dotted] if name != "*" else []):
                        file = module_file(directory, module, level, paths)
                        if file is not None:
                            found.add(os.path.normpath(os.path.abspath(file[0])))
                        elif level == 0 and "." not in module:
                            missing.add(module)
            self._files, self._unresolved = frozenset(found), frozenset(missing)
        return self._files

    def gpu_line(self) -> int | None:
        """A line where it puts work on a GPU (the context's test of "CUDA evidence", on ast
        nodes), or picks a device with a function of the project that does (`ctx =
        d2l.try_gpu()`, `.to(dist_util.dev())`: asked again with each listing of the project, as
        that function's module may change), or None; its code is parsed for this only."""
        if not self._looked:
            self._looked = True
            module = self.namespace("")
            self._line = _gpu_line(ast.walk(module.tree), module) if self._gpu_text else None
        if self._line is not None or not self.hint:
            return self._line
        picked = _listing(project_root(os.path.dirname(self.path))).picked
        if self not in picked:
            picked[self] = _picked_gpu(self.namespace(""))
        return picked[self]

    def sets_cuda_default(self) -> bool:
        """Whether its text makes the GPU torch's default device (see `cuda_default_importer`), read once."""
        if self._cuda_default is None:
            self._cuda_default = _CUDA_DEFAULT.search(_read(self.path) or b"") is not None
        return self._cuda_default

    def identifiers(self) -> frozenset[bytes]:
        """The words of its text (of a notebook, the whole file), read once."""
        if self._identifiers is None:
            self._identifiers = frozenset(_WORD.findall(_read(self.path) or b""))
        return self._identifiers

    def namespace(self, root: str) -> FileNamespace:
        """The module read (a notebook's code cells one after another), its places named from
        `root` (none without one)."""
        if self._namespace is None:
            body: list[ast.stmt] = []
            for part in _parts(self.path, _read(self.path)):
                try:
                    body.extend(ast.parse(part).body)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
            self._namespace = ast.Module(body=body, type_ignores=[])
        label = os.path.relpath(self.path, root).replace(os.sep, "/") if root else ""
        return FileNamespace(self.path, self._namespace, label, root or os.path.dirname(self.path))


_LOCK = threading.Lock()
_LISTINGS: OrderedDict[str, _Listing] = OrderedDict()  # project root -> its listing
_MODULES: OrderedDict[tuple, _Module] = OrderedDict()  # (path, size, mtime) -> what is known of it


def gpu_importer(path: str) -> str | None:
    """Where a module of the project that imports the module at `path` uses a GPU
    ("train.py:12", a notebook by its name), or one importing such an importer, up to
    `IMPORT_LEVELS` imports away (ogb's conv.py, imported by gnn.py, which main_pyg.py trains on
    a GPU; a loss of `loss_funcs/`, re-exported by its package, which transfer_losses.py
    imports, which models.py imports, which main.py trains on a GPU; FCOS's loss.py, below its
    head, RPN, detector and the package re-exporting it), nearest first, or None."""
    def where(candidate: str, module: _Module, root: str) -> str | None:
        line = module.gpu_line()
        if line is None:
            return None
        label = os.path.relpath(candidate, root).replace(os.sep, "/")  # (a notebook's lines run on across its
        return label if candidate.endswith(".ipynb") else f"{label}:{line}"  # cells: named by its file alone)

    path = os.path.normpath(os.path.abspath(path))
    seen, layer = {path}, [path]
    for level in range(IMPORT_LEVELS):
        for module_path in layer:
            for candidate, module, root in _importers(module_path):
                found = where(candidate, module, root) if candidate not in seen else None
                if found is not None:
                    return found
        if level + 1 < IMPORT_LEVELS:
            layer = [middle for module_path in layer for middle, _, _ in _importers(module_path, any_text=True)]
            layer = [middle for middle in dict.fromkeys(layer) if middle not in seen]
            seen.update(layer)
    return None


def config_gpu(ctx) -> str | None:
    """Where a module of the project that puts work on a GPU reads YAML configs (`OmegaConf.load`,
    `yaml.safe_load`, Hydra), when a YAML file of the project names a class of the source, or
    of a module importing it (`IMPORT_LEVELS` imports away), as `module.Class` for it to make
    (latent-diffusion's main.py trains `target: ldm.models.diffusion.ddpm.LatentDiffusion` on
    GPUs; ddpm.py imports ema.py's `LitEma`); None otherwise."""
    path = os.path.normpath(os.path.abspath(ctx.path))
    root = project_root(os.path.dirname(path))
    if not marked(root) or not any(_yaml_texts(ctx, path)):
        return None
    listing = _listing(root)
    seen, layer = {path}, [path]
    for _ in range(IMPORT_LEVELS):
        if any(_named_in_configs(ctx, module_path, r"[A-Z]\w*") for module_path in layer):
            if not listing.reader:
                listing.reader.append(_config_reader(listing, root))
            return listing.reader[0]
        layer = [middle for module_path in layer for middle, _, _ in _importers(module_path, any_text=True)]
        layer = [middle for middle in dict.fromkeys(layer) if middle not in seen]
        seen.update(layer)
    return None


_CONFIG_READ = re.compile(rb"\bOmegaConf\.(?:load|create)\b|\byaml\.(?:safe_|full_|unsafe_)?load\b|\bhydra\.main\b")


def _config_reader(listing: _Listing, root: str) -> str | None:
    """Where the first module of the project that puts work on a GPU reads YAML configs ("main.py:399")."""
    for found, info in listing.files:
        if not found.endswith(".py"):
            continue
        line = _module(found, info).gpu_line()
        if line is not None and _CONFIG_READ.search(_read(found) or b""):
            return f"{os.path.relpath(found, root).replace(os.sep, '/')}:{line}"
    return None


def gpu_importers(path: str) -> list[FileNamespace]:
    """The modules of the project that import the module at `path` and use a GPU, read
    (notebooks: their code cells), their places named from the project's root."""
    return [module.namespace(root) for _, module, root in _importers(path) if module.gpu_line() is not None]


def uses_gpu(path: str) -> bool:
    """Whether the module at `path` puts work on a GPU itself (a Trainer's solver.py, whose
    `self.device` is CUDA when there is one), or a base class of one of its classes does (the
    pix2pix family's models, deriving from the `BaseModel` whose `__init__` picks the CUDA device)."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    note(path, info)
    module = _module(path, info)
    if module.gpu_line() is not None:
        return True
    namespace = module.namespace(project_root(os.path.dirname(path)))
    bases = {name for cls in namespace.tree.body if type(cls) is ast.ClassDef for base in cls.bases if (name := ast_dotted(base))}
    for name in sorted(bases)[:MAX_CALLEES]:
        found = namespace.klass(name)
        if found is not None and isinstance(found[1], FileNamespace) and found[1].path != namespace.path and _gpu_line(
                ast.walk(found[0]), found[1]) is not None:
            return True
    return False


def constructed_with(path: str, name: str, param: str, index: int) -> list | None:
    """What each construction of the class `name` of the module at `path` in the modules of the
    project importing it (yolov5's train.py: `compute_loss = ComputeLoss(model)`) passes for its
    `__init__` parameter `param`, `index` among the positional ones after `self`: the constant,
    None when it leaves it out, UNKNOWN for anything else; None when no importer makes one."""
    found: list = []
    for namespace in importing(path, any_text=True):
        for node in ast.walk(namespace.tree):
            if type(node) is not ast.Call or (ast_dotted(node.func) or "").rpartition(".")[2] != name:
                continue
            if any(type(arg) is ast.Starred for arg in node.args) or any(k.arg is None for k in node.keywords):
                found.append(UNKNOWN)
                continue
            given = next((k.value for k in node.keywords if k.arg == param), None)
            if given is None and index < len(node.args):
                given = node.args[index]
            found.append(None if given is None else given.value if type(given) is ast.Constant else UNKNOWN)
    return found or None


def importing(path: str, any_text: bool = False) -> list[FileNamespace]:
    """The modules of the project that import the module at `path` (and, unless `any_text`,
    whose text may use a GPU: see `_importers`), read, their places named from the project's root."""
    return [module.namespace(root) for _, module, root in _importers(path, any_text=any_text)]


def forward_caller(path: str, name: str) -> str | None:
    """Where a module of the project importing the module at `path` calls its function `name`
    in a module's `forward` (or `__call__`, `training_step`): "openaimodel.py:723" for
    `timestep_embedding` of util.py, or the class `name` made in a method a forward calls
    (`ProbMask(...)` in `_update_context`); None when none does."""
    for _, module, root in _importers(path, any_text=True):
        namespace = module.namespace(root)
        for cls in (node for node in ast.walk(namespace.tree) if type(node) is ast.ClassDef):
            methods = {node.name: node for node in cls.body if type(node) is ast.FunctionDef}
            forwards = [method for method_name, method in methods.items() if method_name in PER_CALL_METHODS]
            helpers = set().union(*map(self_calls, forwards))
            called = [(method, True) for method in forwards] + [
                (methods[helper], False) for helper in sorted(helpers) if helper in methods and helper not in PER_CALL_METHODS]
            for method, forward in called:  # (in a helper, only what is called by its own name: `ProbMask(...)`)
                for call in (node for node in ast.walk(method) if type(node) is ast.Call):
                    if type(call.func) is ast.Name and call.func.id == name or \
                            forward and type(call.func) is ast.Attribute and call.func.attr == name:
                        return namespace.label if namespace.path.endswith(".ipynb") else f"{namespace.label}:{call.lineno}"
    return None


def built_once(path: str, name: str) -> bool:
    """Whether the modules of the project importing the module at `path` call its function `name`
    only in `__init__` methods (Pyraformer's `get_q_k`, building an attention mask when the model
    is made), once at least: it runs once per model, not per step."""
    found = False
    for _, module, root in _importers(path, any_text=True):
        tree = module.namespace(root).tree
        inits = {id(node) for init in ast.walk(tree) if type(init) is ast.FunctionDef and init.name == "__init__"
                 for node in ast.walk(init)}
        for call in (node for node in ast.walk(tree) if type(node) is ast.Call):
            if type(call.func) is ast.Name and call.func.id == name or type(call.func) is ast.Attribute and call.func.attr == name:
                if id(call) not in inits:
                    return False
                found = True
    return found


def step_caller(path: str, name: str, owner: str | None = None) -> str | None:
    """Where a module of the project importing the module at `path` calls its function `name`
    (with `owner`, the method `name` of that class of it, on an instance the module makes of
    the class or of one deriving from it there: `FM.sample_location_and_conditional_flow(x0,
    x1)` after `FM = ConditionalFlowMatcher(...)`, or on one made there: `utils.MixUp_AUG().aug(...)`)
    in a loop that trains (one whose body calls `backward()` or steps an optimizer), not under an
    interval test (`if step % 100 == 0:`) nor in an `except` handler (`project.guarded`):
    "trainer.py:197" for pycls' `net.mixup(inputs, labels)`; None when none does."""
    path = os.path.normpath(os.path.abspath(path))
    for _, module, root in _importers(path):
        namespace = module.namespace(root)
        instances = _instances(namespace, path, owner) if owner is not None else set()

        def this(call: ast.AST) -> bool:  # (the function of `path`, not another of that name)
            if type(call) is not ast.Call or not (type(call.func) is ast.Name and call.func.id == name or
                                                  type(call.func) is ast.Attribute and call.func.attr == name):
                return False
            if owner is not None and type(call.func) is ast.Attribute and type(call.func.value) is ast.Call:
                made = namespace.klass(ast_dotted(call.func.value.func) or "")  # (`utils.MixUp_AUG().aug(target, input_)`)
                return made is not None and made[0].name == owner and isinstance(made[1], FileNamespace) and \
                    os.path.normpath(os.path.abspath(made[1].path)) == path
            if owner is not None:
                return type(call.func) is ast.Attribute and ast_dotted(call.func.value) in instances
            found = namespace.function(ast_dotted(call.func) or "")
            return found is not None and found[0].name == name and os.path.normpath(found[2].path) == path

        for loop in (node for node in ast.walk(namespace.tree) if type(node) in (ast.For, ast.While)):
            skipped = guarded(loop)
            calls = [node for node in body_nodes(loop) if id(node) not in skipped and this(node)]
            if calls and any(type(node) is ast.Call and steps_call(node) for node in ast.walk(loop)):
                line = min(cast(ast.Call, call).lineno for call in calls)
                return namespace.label if namespace.path.endswith(".ipynb") else f"{namespace.label}:{line}"
    return None


def never_moved(path: str, name: str) -> bool:
    """Whether the modules of the project importing the module at `path` make its module class
    `name` only as plain names that nothing moves (audiolm's notebook: `trainer =
    SemanticTransformerTrainer(...)`, then `trainer.train()`): its buffers stay on the CPU. False
    when none makes it (its README may: `SoundStreamTrainer(...).cuda()`), or one makes it
    otherwise: moved (`.cuda()`, `.to(...)`), kept as an attribute, handed to a call."""
    found = False
    for _, module, root in _importers(path, any_text=True):
        tree = module.namespace(root).tree
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for call in (node for node in ast.walk(tree) if type(node) is ast.Call and (ast_dotted(node.func) or "").rpartition(".")[2] == name):
            statement = parents.get(id(call))
            if type(statement) is not ast.Assign or len(statement.targets) != 1 or type(statement.targets[0]) is not ast.Name:
                return False
            bound = statement.targets[0].id
            if any(type(node) is ast.Call and (type(node.func) is ast.Attribute and node.func.attr in ("cuda", "to") and ast_dotted(
                    node.func.value) == bound or any(type(arg) is ast.Name and arg.id == bound
                                                     for arg in (*node.args, *(keyword.value for keyword in node.keywords))))
                   for node in ast.walk(tree)):
                return False
            found = True
    return found


def _instances(namespace: FileNamespace, path: str, owner: str) -> set[str]:
    """The names a module assigns only instances of the class `owner` of the module at `path`
    (or of classes of that module deriving from it)."""
    assigned: dict[str, list] = {}
    for node in ast.walk(namespace.tree):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) in (ast.Name, ast.Attribute):
            assigned.setdefault(ast_dotted(node.targets[0]) or "", []).append(node.value)

    def made(value: ast.expr, where: Namespace, factory: bool = True) -> bool:
        dotted = ast_dotted(value.func) or "" if type(value) is ast.Call else ""
        found = where.klass(dotted) if dotted else None
        if found is not None:
            return os.path.normpath(found[2].path) == path and (found[0].name == owner or any(
                (ast_dotted(base) or "").rpartition(".")[2] == owner for base in found[0].bases))
        function = where.function(dotted) if dotted and factory else None  # (SiT's `transport = create_transport(...)`)
        if function is None:
            return False
        returned = _returned(function[0])
        return bool(returned) and all(made(value, function[1], False) for value in returned)
    return {name for name, values in assigned.items() if name and all(made(value, namespace) for value in values)}


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """What the function returns, a name followed to its only assignment there (`state =
    Transport(...)`, then `return state`); empty when it returns nothing known."""
    own = [node for node in ast.walk(function) if type(node) in (ast.Return, ast.Assign)]
    values = []
    for node in own:
        if type(node) is not ast.Return:
            continue
        value = node.value
        if type(value) is ast.Name:
            assigned = [n.value for n in own if type(n) is ast.Assign and any(
                type(t) is ast.Name and t.id == value.id for t in n.targets)]
            value = assigned[0] if len(assigned) == 1 else None
        if value is None:
            return []
        values.append(value)
    return values


def named_by_importers(path: str, name: str) -> bool | None:
    """Whether a module of the project importing the module at `path` names `name` (its text
    has the word: it imports, calls or passes it, or may, through a `from module import *`, a
    string or a file Python cannot parse); None when none imports it."""
    found = list(_importers(path, any_text=True, limit=None))
    if not found:
        return None
    return any(name.encode() in module.identifiers() for _, module, _ in found)


def subclass_forward_calls(path: str, names: frozenset[str]) -> dict[str, set[str]]:
    """{class: methods} for the classes `names` of the module at `path`: the methods the
    `forward` of a class deriving from one, in a module of the project importing it, calls on
    `self` (two calls deep: LLaVA's `LlavaLlamaForCausalLM.forward` calling the mixin's
    `prepare_inputs_labels_for_multimodal`)."""
    found: dict[str, set[str]] = {}
    words = {name.encode() for name in names}
    for _, module, root in _importers(path, any_text=True):
        if words.isdisjoint(module.identifiers()):
            continue  # (its text names none of the classes: parsed for nothing)
        for node in module.namespace(root).tree.body:  # (the module's own classes)
            if type(node) is not ast.ClassDef or not any(isinstance(n, ast.FunctionDef) and n.name == "forward" for n in node.body):
                continue
            for base in node.bases:
                name = (base_name(base) or "").rpartition(".")[2]
                if name in names:
                    found.setdefault(name, set()).update(forward_helpers(node))
    return found


def named_elsewhere(path: str, name: str) -> bool:
    """Whether a file of the project other than the module at `path` (code or notebook) has the
    word `name`: a method may be called wherever its object goes (a model unpickled by
    `torch.load` in eval.py calling `model.detect_objects(...)`, a model a factory module makes
    for the training script calling `model.loss(...)`). True outside a project."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    if not marked(root):
        return True
    listing = _listing(root)
    if name not in listing.named:
        word, own = name.encode(), os.path.normpath(os.path.abspath(path))
        listing.named[name] = any(found != own and word in _module(found, info).identifiers()
                                  for found, info in _noted(listing.files))
    return listing.named[name]


def methods_named(path: str, name: str) -> list[tuple[ast.FunctionDef, FileNamespace, Place, ast.ClassDef]]:
    """The methods `name` of the classes of the project of the module at `path`, as (definition,
    namespace, place, class): what `model.set_input(data)` may run where nothing says what
    `model` is (the pix2pix family's `model = create_model(opt)`, a class picked by name). Of
    the first `MAX_IMPORTERS` files whose text defines one; none outside a project."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    if not marked(root):
        return []
    listing = _listing(root)
    if name not in listing.methods:
        word, defined = name.encode(), re.compile(rb"^[ \t]+def[ \t]+" + re.escape(name.encode()) + rb"[ \t]*\(", re.MULTILINE)
        found: list[tuple[ast.FunctionDef, FileNamespace, Place, ast.ClassDef]] = []
        files = [(candidate, module) for candidate, info in _noted(listing.files)
                 if word in (module := _module(candidate, info)).identifiers() and defined.search(_read(candidate) or b"")]
        for candidate, module in files[:MAX_IMPORTERS]:
            namespace = module.namespace(root)
            place = place_of(namespace)
            found += [(node, namespace, place, cls) for cls in ast.walk(namespace.tree) if type(cls) is ast.ClassDef
                      for node in cls.body if type(node) is ast.FunctionDef and node.name == name]
        listing.methods[name] = found
    return listing.methods[name]


def _noted(files):
    """The (path, stat) pairs of `files`, each noted as a dependency of the analysis."""
    for found, info in files:
        note(found, info)
        yield found, info


def _words(ctx) -> Counter:
    """How often each word occurs in the source (counted once an analysis)."""
    if _words not in ctx.shared:
        words: Counter[str] = Counter()
        ctx.shared[_words] = words
        for unit in ctx.units:
            words.update(WORD.findall(unit.text))
    return ctx.shared[_words]


def unused_class(ctx, cls: cst.ClassDef) -> bool:
    """Whether nothing in the project names the class `cls` of the source: the source only
    defines it, the modules importing the source never name it (yolov7's `RankSort` and
    `APLoss` in loss.py, losses no script makes), and no YAML config of the project names it
    as `module.Class` (Hydra's `_target_: training.trainer.Trainer`): its methods never run.
    A module that no module imports counts when YAML configs name other classes of it (Hydra
    makes its classes from `_target_` strings: conditional-flow-matching's cfm_module.py)."""
    name = cls.name.value
    if not ctx.path or ctx.path.startswith("<"):
        return False
    key = ("unused class", name)
    if key not in ctx.shared:
        path = os.path.abspath(ctx.path)  # (named outside the class: not its `super(Name, self)`)
        importers = named_by_importers(path, name) if _words(ctx)[name] == WORD.findall(ctx.text_of(cls)).count(
            name) else True
        ctx.shared[key] = (importers is False or importers is None and _named_in_configs(ctx, path, r"\w+")) and \
            not _named_in_configs(ctx, path, re.escape(name))
    return ctx.shared[key]


def _named_in_configs(ctx, path: str, name: str) -> bool:
    """Whether a YAML file of the project names something matching the pattern `name` of the
    module at `path` as `module.name` (a class Hydra or a similar config instantiates)."""
    stem = os.path.splitext(os.path.basename(path))[0].encode()
    named = re.compile(rb"(?<![\w.])[\w.]*\b" + re.escape(stem) + rb"\." + name.encode() + rb"\b")
    return any(stem in text and named.search(text) for text in _yaml_texts(ctx, path))


def _yaml_texts(ctx, path: str) -> list[bytes]:
    """The texts of the YAML files of the project of the module at `path`, read once an analysis."""
    if "YAML configs" not in ctx.shared:
        texts = ctx.shared["YAML configs"] = []
        for config, info in _files(project_root(os.path.dirname(path)), [], (".yaml", ".yml")):
            note(config, info)
            texts.append(_read(config) or b"")
    return ctx.shared["YAML configs"]


_CALLERS_UP = 3  # how far `unused_function` follows a function's callers


def unused_function(ctx, function: cst.FunctionDef | None, depth: int = 0) -> bool:
    """A function of the analyzed module that nothing in the project runs: the module does not
    name it, or calls it only from functions nothing runs (guided-diffusion's
    `ddim_sample_loop_progressive`, called by `ddim_sample_loop` alone, which nothing calls;
    `_CALLERS_UP` callers up), and the modules importing it (one at least) do not name it either
    (`train_vae_v1` of a lecture's helper_train.py, which the lecture's notebooks never call), nor,
    for a method, any other file of the project (DomainBed's `Transfer.update_second`); or a
    method of a class nothing makes (yolov7's RankSort)."""
    if function is None or not ctx.path or ctx.path.startswith("<"):
        return False
    cls = ctx.class_of.get(id(function))
    if cls is not None and unused_class(ctx, cls):
        return True
    name = function.name.value
    if not any(defined is function and scope.parent is ctx.module_scope for defined, scope in ctx.functions[name]):
        return False  # (nested, run by whoever holds it: `return perform_train_step_fn`)
    if cls is not None and (name.startswith("__") or name in PER_CALL_METHODS or any(
            (ctx.qualname(base.value) or "torch.nn.Module") not in TORCH_MODULES for base in cls.bases)):
        return False  # (a method a framework may call: a hook of a library's class, a LightningModule's too)
    if name in ctx.calls and (depth >= _CALLERS_UP or not all(
            type(call.scope.node) is cst.FunctionDef and call.scope.node is not function
            and unused_function(ctx, call.scope.node, depth + 1) for call in ctx.calls[name])):
        return False  # (called here, by code that may run)
    key = ("unused", cls.name.value if cls is not None else "", name)
    if key not in ctx.shared:
        path = os.path.abspath(ctx.path)
        referenced = _words(ctx)[name] > len(ctx.functions[name]) + len(
            ctx.calls.get(name, ()))  # (named here but by its definitions and calls: `{"euler": self.euler_step}`)
        ctx.shared[key] = not referenced and named_by_importers(path, name) is False and (
            cls is None or not named_elsewhere(path, name))
    return ctx.shared[key]


def imported(path: str) -> bool:
    """Whether a module of the project imports the module at `path`."""
    return next(_importers(path, any_text=True), None) is not None


def installable(path: str) -> bool:
    """Whether the module at `path` is part of a project packaged for others to import (a
    `setup.py` or `pyproject.toml` at its root): its functions are an API, run by its users."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    return any(os.path.exists(os.path.join(root, marker)) for marker in ("setup.py", "pyproject.toml"))


def made_only_to_infer(path: str, name: str, depth: int = 0) -> bool:
    """Whether the modules of the project that import the module at `path` and make its class
    `name` (`model = DetectMultiBackend(weights)` in val.py and detect.py) never train: some make
    it, none calls `backward()`, an optimizer's `step()` or a trainer's `fit()`, and a class of
    theirs that makes it (as a part: RetinaNet's `self.focalLoss = losses.FocalLoss()` in
    model.py) is itself made only to infer."""
    makers = []
    for module in importing(path):
        calls = {id(node) for node in ast.walk(module.tree) if type(node) is ast.Call and (
            ast_dotted(node.func) or "").rpartition(".")[2] == name}
        if calls:
            makers.append((module, {cls.name for cls in ast.walk(module.tree) if type(cls) is ast.ClassDef
                                    for node in ast.walk(cls) if id(node) in calls}))
    return bool(makers) and depth < 2 and not any(
        module_trains(module) or not all(made_only_to_infer(module.path, owner, depth + 1) for owner in owners)
        for module, owners in makers)


def importer_namespace_default(ctx, scope, param: str, attribute: str):
    """`args.num_workers` where `args` is a parameter of a function of this module that modules
    importing it call, each with a namespace it parses (dlrm: `dp.make_loaders(args)` after
    `args = parser.parse_args()`): the default of `--num-workers` there, when all agree; UNKNOWN
    otherwise (and for a method)."""
    path, function = ctx.path, scope.node
    if not path or path.startswith("<") or function is None or ctx.class_of.get(id(function)) is not None:
        return UNKNOWN
    importers = ctx.shared.get(importing)
    if importers is None:
        importers = ctx.shared[importing] = importing(path)
    defaults = []
    for namespace in importers:
        given = given_namespace_defaults(namespace, os.path.abspath(path), function.name.value, scope.params.index(param), param)
        if given is None:
            return UNKNOWN
        defaults += [found.get(attribute, [None]) for found in given]
    values = {repr(value) for found in defaults for value in found}
    return defaults[0][0] if defaults and len(values) == 1 and defaults[0][0] is not None else UNKNOWN


def project_option_default(path: str, attribute: str):
    """The default that every argparse option of the project whose destination is `attribute`
    gives (`--num_workers`, default 10, in run_longExp.py), when they agree; UNKNOWN otherwise.
    For a parsed namespace that reaches the analyzed module by ways perf-lint does not follow
    (`self.args` of an experiment class, handed on to a data factory). The options of the
    analyzed module's top folder come first (PatchTST_supervised/ of a repository holding two
    projects)."""
    path = os.path.abspath(path)
    root = project_root(os.path.dirname(path))
    top = os.path.relpath(path, root).split(os.sep)[0]
    found: dict[bool, list] = {True: [], False: []}  # in the module's top folder -> defaults
    for candidate in _listing(root).importers.get(b"argparse", ())[:MAX_IMPORTERS]:
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        note(candidate, info)
        near = os.path.relpath(candidate, root).split(os.sep)[0] == top
        found[near] += _option_defaults(_module(candidate, info).namespace(root).tree).get(attribute, [])
    defaults = found[True] or found[False]
    values = {repr(value) for value in defaults}
    return defaults[0] if len(values) == 1 and defaults[0] is not None else UNKNOWN


def _option_defaults(tree: ast.Module) -> dict[str, list]:
    """{dest: [default, ...]} of the argparse options a module adds, at its top level or in its
    functions (`argparse_defaults` of each), gathered once a module."""
    memo = tree.__dict__.setdefault("_perf_lint_memo", {})
    if _option_defaults not in memo:
        gathered: dict[str, list] = {}
        owners: list = [tree, *(node for node in ast.walk(tree) if type(node) is ast.FunctionDef)]
        for owner in owners:
            for dest, defaults in argparse_defaults(owner).items():
                gathered.setdefault(dest, []).extend(defaults)
        memo[_option_defaults] = gathered
    return memo[_option_defaults]


def imported_to_train(path: str) -> bool:
    """Whether a module of the project that imports the module at `path` trains (calls
    `backward()`, an optimizer's `step()` or a trainer's `fit()`): `build_model(args)` of
    model.py, whose networks solver.py trains."""
    return any(map(module_trains, importing(path)))


# `torch.set_default_tensor_type('torch.cuda.FloatTensor')`, `torch.set_default_device("cuda")`
_CUDA_DEFAULT = re.compile(rb"""set_default_tensor_type\(\s*['"]?torch\.cuda\.|set_default_device\(\s*['"]cuda""")


def cuda_default_importer(path: str) -> bool:
    """Whether a module of the project that imports the module at `path` makes the GPU torch's
    default device (yolact's train.py, for the losses of layers/modules): its factories given no
    device make CUDA tensors."""
    return any(module.sets_cuda_default() for _, module, _ in _importers(path))


def _importers(path: str, hops: int = 0, any_text: bool = False, limit: int | None = MAX_IMPORTERS):
    """(path, module, project root) of the modules of the project whose text may use a GPU
    (or, with `any_text`, any) and that import the module at `path`, or a package that
    re-exports it (`from .ppo import PPO` in `algo/__init__.py`, imported as `from pkg import
    algo`; `MAX_HOPS` packages up): the first `limit` of each (all with None: for a search of
    their words, which parses nothing)."""
    path = os.path.normpath(os.path.abspath(path))
    directory = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = os.path.basename(directory) if stem == "__init__" else stem
    root = project_root(directory)
    listing = _listing(root)
    candidates = listing.importers.get(name.encode(), ())
    watched = {root, directory, *map(os.path.dirname, candidates)}
    for folder, info in listing.folders:
        if folder in watched:
            note(folder, info)  # a module added, removed or renamed there may change the answer
    parsed = 0
    for candidate in candidates:
        try:
            info = os.stat(candidate)  # (as it is now: the listing may be a few seconds old)
        except OSError:
            continue
        note(candidate, info)
        module = _module(candidate, info)
        if not (module.hint or any_text) or name.encode() not in module.words or candidate == path or not (
                path in module.files() or name in module.unresolved() and path in listing.modules.get(name, ())):
            continue  # (`from train_config import config`, run from each experiment's folder: each train_config.py)
        parsed += 1
        if limit is not None and parsed > limit:
            break  # (the packages re-exporting it still count: pytorch-ood's `from .utils import *`)
        yield candidate, module, root
    if hops < MAX_HOPS:
        for package in listing.packages.get(name.encode(), ()):
            try:
                info = os.stat(package)
            except OSError:
                continue
            note(package, info)
            if package != path and path in _module(package, info).files():
                yield from _importers(package, hops + 1, any_text, limit)


def gpu_callee(ctx) -> str | None:
    """Where a function of another module of the project, which the analyzed source imports
    and calls for a value with one argument at most (as a device is picked: assigned, or given
    to `.to()` or as a `device=`), puts work on a GPU itself (`device = d2l.try_gpu()`, which
    returns `torch.device("cuda:0")` when there is one: "d2l/utils.py:31"), or None. `ctx`: the source's context, after the pass."""
    seen: set[int] = set()
    asked: set[str] = set()
    assigned = {id(value) for scope in (ctx.module_scope, *ctx.scopes.values())
                for values in scope.assignments.values() for value in values}
    assigned.update(id(value) for value, _ in _device_arguments(ctx))  # `.to(dist_util.dev())`, `device=dist_util.dev()`
    for call, scope in ctx.call_order:
        name = dotted(call.func) or ""  # an imported function (`d2l.try_gpu()`, `get_device()`): not a method,
        head = name.partition(".")[0]  # called for the value it gives, with an index at most
        if name in asked or len(call.args) > 1 or id(call) not in assigned or not (
                head in ctx.imports or head in ctx.relative_imports):
            continue
        asked.add(name)
        if not maybe_project_call(ctx, call.func):
            continue
        found = call_target(ctx, call.func, scope)
        if found is None or not found[2].label or id(found[0]) in seen or not isinstance(found[1], FileNamespace):
            continue
        seen.add(id(found[0]))
        if len(seen) > MAX_CALLEES:
            break
        line = _gpu_line(body_nodes(found[0]), found[1])
        if line is not None:
            return found[2](line)
    return None


def gpu_base(ctx) -> str | None:
    """Where the module of a base class of the source's classes, a class of another module of
    the project, puts work on a GPU or picks the GPU device (a trainer subclassing
    `BaseTrainer`, whose `__init__` sets `self.device = setup_device()`, a function returning
    "cuda" when there is one); or a model of coqui's Trainer (deriving from `trainer.TrainerModel`
    through the project), which trains on the GPU when there is one; or None. `ctx`: the source's
    context, after the pass."""
    namespace = SourceNamespace.of(ctx)
    asked: set[str] = set()
    classes = {id(cls): cls for cls in ctx.class_of.values()}.values()
    for cls in classes:
        for base in cls.bases:
            name = dotted(base.value)
            if name is None or name in asked or len(asked) >= MAX_CALLEES or not maybe_project_call(ctx, base.value):
                continue  # (not `nn.Module`: a library's class)
            asked.add(name)
            found = namespace.klass(name)
            if found is None or not isinstance(found[1], FileNamespace) or not found[1].label:
                continue
            memo = found[0].__dict__.setdefault("_perf_lint_memo", {})
            if gpu_base not in memo:  # (a base class many modules derive from: its module read once)
                memo[gpu_base] = _gpu_line(ast.walk(found[0]), found[1]) or _picked_gpu(found[1])
            line = memo[gpu_base]
            if line is not None:
                return f"{found[1].label}:{line}"
    return next((f"coqui's Trainer, running `{cls.name.value}`" for cls in classes
                 if coqui_model(ctx, cls)), None)


def gpu_value(ctx) -> str | None:
    """Where a module of the project names the GPU device the analyzed source takes from it, by
    name, to move work to (`.to(device)`, `device=device` with `from conf import *` and conf.py's
    `device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")`: "conf.py:9"; or
    `.to(config.device)` with `from tools import config`), or None. `ctx`: the source's context, after the pass."""
    asked: set[str] = set()
    namespace = SourceNamespace.of(ctx)
    for value, scope in _device_arguments(ctx):
        name = dotted(value) if type(value) is cst.Name or type(value) is cst.Attribute and type(value.value) is cst.Name else None
        if name is None or name in asked or "." in name and name.partition(".")[0] not in ctx.imports:
            continue  # (`config.device` with `from tools import config`, a module of the project, is asked)
        asked.add(name)
        if scope.owner_of(name.partition(".")[0]) is not None or len(asked) > MAX_CALLEES:
            continue  # (bound by the source itself)
        found = namespace.value(name)
        values = [found] if found is not None else _instance_attribute(namespace, name)
        for value, module in values:
            if not isinstance(module, FileNamespace) or not module.label:
                continue
            line = _gpu_line(ast.walk(value), module)
            if line is not None:
                return f"{module.label}:{line}"
    return None


def _instance_attribute(namespace, name: str) -> list[tuple[ast.expr, FileNamespace]]:
    """What the class of an instance another module of the project makes gives its attribute, for
    `opt.device` with `from config import opt` and config.py's `opt = DefaultConfig()`: the class's
    `device = ...` and its methods' `self.device = ...` (or `opt.device = ...`)."""
    head, _, attr = name.partition(".")
    made = namespace.value(head) if attr and "." not in attr else None
    if made is None or type(made[0]) is not ast.Call or type(made[0].func) is not ast.Name:
        return []
    found = made[1].klass(made[0].func.id)
    if found is None:
        return []
    return [(node.value, found[1]) for node in ast.walk(found[0]) if type(node) is ast.Assign and any(
        type(t) is ast.Name and t.id == attr or type(t) is ast.Attribute and t.attr == attr and type(t.value) is ast.Name
        and t.value.id in ("self", head) for t in node.targets)]


def _device_arguments(ctx):
    """(expression, scope) of what the source hands over as a device: the arguments of its
    `.to()`/`.cuda()` calls, its `device=` keywords and the device pickers it hands to a call
    (`Trainer(cfg, model, get_device())`), in pass order."""
    for call, scope in ctx.call_order:
        moved = type(call.func) is cst.Attribute and call.func.attr.value in ("to", "cuda")
        for arg in call.args:
            value = arg.value
            picker = type(value) is cst.Call and not value.args and _picks_device(dotted(value.func))
            if moved or picker or arg.keyword is not None and arg.keyword.value in _DEVICE_KEYWORDS:
                yield value, scope


# a module of defaults imports yacs, or a `CfgNode` under another name (`from .config_node import ConfigNode`)
_CONFIG_WORDS = frozenset({b"yacs", b"CfgNode", b"ConfigNode"})


def config_default(path: str, keys: list[str]):
    """The default a yacs config of the project gives `cfg.DATA.NUM_WORKERS` (`keys`: ["DATA",
    "NUM_WORKERS"]): the constant assigned to `_C.DATA.NUM_WORKERS` in the modules that import
    yacs, when they agree; else None."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    listing = _listing(root)
    wanted = ".".join(keys)
    found = set()
    for candidate in listing.configs[:MAX_IMPORTERS]:
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        note(candidate, info)
        for node in _module(candidate, info).namespace(root).tree.body:
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.value) is ast.Constant:
                target = ast_dotted(node.targets[0]) or ""
                if target.partition(".")[2] == wanted:
                    found.add(node.value.value)
    return found.pop() if len(found) == 1 else None


def yaml_setting(path: str, keys: list[str]) -> list[str]:
    """What the YAML files of the project of the module at `path` set the setting whose key
    path ends in `keys` to (["data", "num_workers"]: `data:` then `  num_workers: 32`, or
    `num_workers: 32` in a Hydra group's `data/train.yaml`), as written, one a place."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    if not marked(root):
        return []  # (a folder of no project: its configurations may be anywhere)
    listing = _listing(root)
    if not listing.settings:
        found: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for config, info in _files(root, [], (".yaml", ".yml")):
            note(config, info)
            group = os.path.basename(os.path.dirname(config))
            for keys_set, value in _yaml_leaves(_read(config) or b""):
                found[keys_set].append(value)
                found[(group,) + keys_set].append(value)  # (Hydra: a group's file sets `group.key`)
        listing.settings.append(dict(found))
    wanted = tuple(keys)
    return [value for keys_set, values in listing.settings[0].items()
            if keys_set[-len(wanted):] == wanted for value in values]


_YAML_KEY = re.compile(rb"^( *)(- +)?([A-Za-z_][\w-]*) *:(?: +([^#\s][^#]*?))? *(?:#.*)?$")


def _yaml_leaves(text: bytes):
    """(key path, value) of each `key: value` line of a YAML text in block style (a list
    item's keys under `[]`); values as written, quotes taken off."""
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        match = _YAML_KEY.match(line.rstrip())
        if match is None:
            continue
        indent = len(match[1]) + len(match[2] or b"")
        while stack and stack[-1][0] >= (len(match[1]) if match[2] else indent):
            stack.pop()
        if match[2]:
            stack.append((len(match[1]), "[]"))
        key = match[3].decode()
        if match[4] is None:
            stack.append((indent, key))
        else:
            yield (*(k for _, k in stack), key), match[4].decode(errors="replace").strip("\"'")


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
    packages: dict[bytes, list[str]] = defaultdict(list)
    configs: list[str] = []
    modules: dict[str, list[str]] = defaultdict(list)
    files = list(_files(root, folders))
    for path, info in files:
        stem = os.path.splitext(os.path.basename(path))[0]
        if path.endswith(".py"):
            modules[os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem].append(path)
        module = _module(path, info)
        for word in module.words:
            importers[word].append(path)
        for word in module.words if os.path.basename(path) == "__init__.py" else ():
            packages[word].append(path)
        if not module.words.isdisjoint(_CONFIG_WORDS):
            configs.append(path)
    listing = _Listing(now, folders, dict(importers), dict(packages), configs, dict(modules), {}, [], {}, {}, [], [], {}, {}, {}, files, [])
    with _LOCK:
        _LISTINGS[root] = listing
        while len(_LISTINGS) > 16:
            _LISTINGS.popitem(last=False)
    return listing


def placed_anywhere(directory: str, parts: list[str]) -> str | None:
    """The one file of the project that is the module `parts` (["core", "function"]:
    `.../core/function.py` or `.../core/function/__init__.py`), for an import no folder on the
    importer's path resolves: the project puts it on sys.path by other means (HRNet's
    `import _init_paths`, adding lib/; PYTHONPATH in a launch script); None unless exactly one."""
    root = project_root(directory)
    if not marked(root):
        return None  # (a folder of no project: nothing says what else is on its path)
    listing = _listing(root)
    key = tuple(parts)
    if key not in listing.placed:
        suffix = os.sep + os.path.join(*parts)
        found = [path for path in listing.modules.get(parts[-1], ()) if path.endswith((suffix + ".py", suffix + os.sep + "__init__.py"))]
        listing.placed[key] = found[0] if len(found) == 1 else None
    return listing.placed[key]


def never_set(path: str, name: str) -> bool:
    """Whether no file of the project of the module at `path` (its code, notebooks, YAML and
    JSON) sets an attribute or option `name`: assigns it (`name = ...`, `self.name: int = 0`), names
    it as a key (`name: true`, `{"name": 1}`), an option (`--name`) or with `setattr`; only reads
    it (`hasattr(config, "name") and config.name`: a switch no configuration turns on)."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    if not marked(root):
        return False  # (a folder of no project: its configurations may be anywhere)
    listing = _listing(root)
    if name not in listing.unset:
        listing.unset[name] = not any(_sets(text, match) for text, match in _settings(listing, root, name))
    return listing.unset[name]


def never_on(path: str, name: str) -> bool:
    """Whether the files of the project of the module at `path` set an attribute or key `name`
    and only to a false constant (`'use_objectness_score': False` in a dict of defaults that no
    configuration changes; `name: false`, `name = None`): a switch no shipped configuration turns
    on. Not an option (`--name`), which a command line may turn on."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    if not marked(root):
        return False
    listing = _listing(root)
    if name not in listing.off:
        values = [text[match.end():match.end() + 8] for text, match in _settings(listing, root, name) if _sets(text, match)]
        listing.off[name] = bool(values) and all(_FALSE.match(value) is not None for value in values)
    return listing.off[name]


# what `loss, n = self.model.forward_loss(batch)` looks like in text (confirmed on the parsed module by `_loss_methods`)
_LOSS_CALL = re.compile(rb"loss\w*\s*(?:,[\w\s,]*)?=\s*[\w.]*(?:model|net|module|encoder|decoder)\w*\.[a-zA-Z]\w*\(", re.IGNORECASE)


def loss_methods(path: str) -> frozenset[str]:
    """The methods a training loop of the project of the module at `path` calls on a model for
    the loss it steps on (flair's trainer: `loss, count = self.model.forward_loss(batch)`, then
    `scaler.step(optimizer)`): a model class's method of that name runs at every training step,
    as `forward` does. Read once per project, from the modules that call `backward`."""
    root = project_root(os.path.dirname(os.path.abspath(path)))
    if not marked(root):
        return frozenset()
    listing = _listing(root)
    if not listing.losses:
        found: set[str] = set()
        for candidate, info in _files(root, []):
            module = _module(candidate, info)
            if b"backward" in module.identifiers() and _LOSS_CALL.search(_read(candidate) or b"") is not None:
                found.update(_loss_methods(module.namespace(root).tree))
        listing.losses.append(frozenset(found))
    return listing.losses[0]


def _loss_methods(tree: ast.Module) -> set[str]:
    """The names `meth` of `loss = model.meth(...)` (also `loss, n = self.model.meth(...)`) in
    the loops of `tree` that train."""
    found = set()
    for loop in (node for node in ast.walk(tree) if type(node) in (ast.For, ast.While)):
        if not any(type(node) is ast.Call and steps_call(node) for node in ast.walk(loop)):
            continue
        for node in ast.walk(loop):
            if type(node) is not ast.Assign or type(node.value) is not ast.Call or type(node.value.func) is not ast.Attribute:
                continue
            receiver = (ast_dotted(node.value.func.value) or "").rpartition(".")[2].lower()
            targets = [t for target in node.targets for t in (target.elts if type(target) is ast.Tuple else [target])]
            if any(word in receiver for word in MODEL_WORDS) and any(
                    type(t) is ast.Name and "loss" in t.id.lower() for t in targets) and not node.value.func.attr.startswith("_"):
                found.add(node.value.func.attr)
    return found - PER_CALL_METHODS


_FALSE = re.compile(rb"\s*(False|false|None|null|0)\b")


def _settings(listing: _Listing, root: str, name: str):
    """(text, match) of each place the texts of the project (code, notebooks, configurations; read
    when first asked) may set `name`: `name =`, `name:`, `--name`, `"name":`."""
    if not listing.texts:
        for found, info in _files(root, [], (".py", ".ipynb", ".yaml", ".yml", ".json", ".toml", ".cfg")):
            note(found, info)
            listing.texts.append(_read(found) or b"")
    raw = name.encode()
    word = re.escape(raw)
    setting = re.compile(rb"(\.?)\b" + word + rb"\b\s*(=(?!=)|:)|--" + word + rb"\b|[\"']" + word + rb"[\"']\s*:?")
    return ((text, match) for text in listing.texts if raw in text for match in setting.finditer(text))  # (the cheap test first)


_ATTRIBUTE_READ = re.compile(rb"(?:has|get)attr\(\s*[\w.]+\s*,\s*$")  # before the name it reads, quoted


def _sets(text: bytes, match: re.Match) -> bool:
    """Whether `never_set`'s match in `text` sets the name: not `config.name:` (an `if` reading
    it), not `hasattr(config, "name")` nor `getattr(config, "name", ...)`."""
    found = match.group()
    if found[:1] in (b"'", b'"'):
        return _ATTRIBUTE_READ.search(text, max(0, match.start() - 80), match.start()) is None
    return not (match.group(1) == b"." and match.group(2) == b":")


def _files(root: str, folders: list, suffixes: tuple[str, ...] = (".py", ".ipynb")):
    """(path, stat) of the project's `.py` and `.ipynb` files (or those ending in `suffixes`);
    its folders go to `folders`."""
    count = 0
    for folder, subfolders, files in os.walk(root):
        if len(folders) >= MAX_FOLDERS:
            return
        try:
            folders.append((folder, os.stat(folder)))
        except OSError:
            continue
        subfolders[:] = sorted(f for f in subfolders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
        for file in sorted(files):
            if not file.endswith(suffixes):
                continue
            candidate = os.path.join(folder, file)
            try:
                info = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size <= (MAX_NOTEBOOK if file.endswith(".ipynb") else MAX_FILE):
                yield candidate, info
                count += 1
                if count >= MAX_FILES:
                    return


def _module(path: str, info: os.stat_result) -> _Module:
    """What is known of the file at `path` as it is (read once per size and modification time,
    and not at all where the `Summaries` kept hold it)."""
    key = (path, info.st_size, info.st_mtime_ns)
    with _LOCK:
        found = _MODULES.get(key)
    if found is None:
        found = _summarized(path, info)
        with _LOCK:
            _MODULES[key] = found
            while len(_MODULES) > 2 * MAX_FILES:
                _MODULES.popitem(last=False)
    return found


class Summaries:
    """Where the summaries of modules (what `_Module.read` finds in their text) are kept between
    runs, by path: `get` gives (size, mtime_ns, digest of the bytes, summary) or None, `put`
    stores one. `keep_summaries` installs one (the CLI's, in its cache folder)."""

    def get(self, path: str) -> tuple[int, int, str, list] | None:
        raise NotImplementedError

    def put(self, path: str, size: int, mtime: int, digest: str, summary: list) -> None:
        raise NotImplementedError


_KEPT: list[Summaries] = []


def keep_summaries(summaries: Summaries | None) -> None:
    """Read and store the summaries of modules in `summaries` from now on (None: keep none)."""
    _KEPT[:] = [summaries] if summaries is not None else []


def _summarized(path: str, info: os.stat_result) -> _Module:
    """The file's module, from the summary kept for it when its size and modification time, or
    its bytes, are those it was made from."""
    kept = _KEPT[0].get(path) if _KEPT else None
    if kept is not None and kept[:2] == (info.st_size, info.st_mtime_ns):
        with contextlib.suppress(TypeError, ValueError):
            return _Module.of_summary(path, kept[3])
    data = _read(path)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest() if data is not None and _KEPT else None  # (none kept: no digest)
    if kept is not None and kept[2] == digest:  # (the same bytes, touched: a checkout, a copy)
        with contextlib.suppress(TypeError, ValueError):
            found = _Module.of_summary(path, kept[3])
            _KEPT[0].put(path, info.st_size, info.st_mtime_ns, kept[2], kept[3])
            return found
    found = _Module.read(path, b"\n".join(_parts(path, data)))
    if _KEPT and digest is not None:
        _KEPT[0].put(path, info.st_size, info.st_mtime_ns, digest, found.summary())
    return found


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _parts(path: str, data: bytes | None) -> list[bytes]:
    """The bytes of the `.py` file at `path`, or a notebook's code cells (IPython syntax
    masked); none when it could not be read (`data` None) or decoded."""
    if data is None:
        return []
    if not path.endswith(".ipynb"):
        return [data]
    try:
        units = notebook_source(data.decode("utf-8-sig"), path).units
    except (SourceError, UnicodeDecodeError):
        return []
    return [unit.code.encode() for unit in units]


def _gpu_line(nodes, module: FileNamespace) -> int | None:
    """The line of the first of `nodes` (of `module`) that puts work on a GPU, or None."""
    return next((node.lineno for node in nodes if isinstance(node, (ast.Call, ast.Constant, ast.JoinedStr))
                 and _on_gpu(node, module)),
                None)


def _picked_gpu(module: FileNamespace) -> int | None:
    """The line in `module` of the first device picked by a function of the project that
    puts work on a GPU (`device = d2l.try_gpu()`, `model.to(dist_util.dev())`: see
    `gpu_callee`), or None."""
    asked: set[str] = set()
    for node, call in _device_calls(module.tree):
        name = ast_dotted(call.func)
        if name is None or name in asked:
            continue
        asked.add(name)
        if len(asked) > MAX_CALLEES:
            break
        found = module.function(name)
        if found is not None and found[1] is not module and _gpu_line(body_nodes(found[0]), found[1]) is not None:
            return node.lineno
    return None


def _device_calls(tree: ast.Module):
    """(statement or call, call) of the calls with one argument at most whose value is
    assigned, given to `.to()`/`.cuda()` or as a `device=` (as a device is picked), or handed
    to a call when named as a device picker (`Trainer(cfg, model, get_device())`)."""
    for node in ast.walk(tree):
        candidates: list[ast.expr]
        if type(node) is ast.Assign and type(node.value) is ast.Call:
            candidates = [node.value]
        elif type(node) is ast.Call:
            moved = type(node.func) is ast.Attribute and node.func.attr in ("to", "cuda")
            candidates = [arg for arg in node.args if moved or _picker(arg)] + [
                k.value for k in node.keywords if k.arg in _DEVICE_KEYWORDS or _picker(k.value)]
        else:
            continue
        yield from ((node, call) for call in candidates if type(call) is ast.Call and len(call.args) <= 1)


def _picker(node: ast.expr) -> bool:
    """A call without arguments of a function named as one that picks the device."""
    return type(node) is ast.Call and not node.args and not node.keywords and _picks_device(ast_dotted(node.func))


def _picks_device(name: str | None) -> bool:
    """Whether a function's (dotted) name says it picks the device (`get_device`, `d2l.try_gpu`)."""
    return name is not None and _PICKER.search(name.rpartition(".")[2]) is not None


def _on_gpu(node: ast.AST, module: FileNamespace) -> bool:
    if type(node) is ast.Constant:
        return type(node.value) is str and (CUDA_DEVICE.fullmatch(node.value) is not None or node.value == "cuda:")
        # (`"cuda:" + str(args.device)`: the prefix of a device's name, its index appended)
    if type(node) is ast.JoinedStr:  # f"cuda:{rank % GPUS_PER_NODE}"
        head = node.values[0] if node.values else None
        return type(head) is ast.Constant and type(head.value) is str and head.value.startswith("cuda:")
    if type(node) is not ast.Call:
        return False
    if type(node.func) is ast.Attribute and node.func.attr == "cuda":
        return True
    name = ast_dotted(node.func)
    qualified = module.qualname(name) if name else None
    if qualified is not None and qualified.rpartition(".")[2] in ("Trainer", "Fabric") and "lightning" in qualified:
        return trainer_gpu(qualified, cast(cst.Call, cst.parse_expression(ast.unparse(node))))  # (one reading of its
        # keywords, on libcst's nodes)
    return qualified is not None and gpu_api(qualified)
