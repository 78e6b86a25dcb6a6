"""What one pass over a source learns, for every rule to query.

Import aliases to qualified names, assignments per function scope, argparse
defaults, `dict(...)`/`{...}` kwargs, loops, function definitions and calls,
and evidence that the code runs on CUDA. Built during the same libcst pass as
the rules (no scope/qualified-name metadata providers: they cost several times
the parse). Values are resolved on demand; anything not provably constant is
`UNKNOWN` — the context never guesses.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import NamedTuple, cast

import libcst as cst

from .importers import cuda_default_importer
from .nodes import UNKNOWN, argument, call_name, children, code, dotted, keyword, trainer_gpu, literal, names_in, remembered, \
    star_kwargs, walk
from .vocabulary import CUDA_STRING, LEGACY_TENSOR_TYPES, gpu_api

_MAX_DEPTH = 12
_MUTATORS = {"setdefault", "pop", "popitem", "clear", "__setitem__"}  # (`update` is followed: see kwargs)
# A run-time condition that asks for a GPU (`use_cuda`, `torch.cuda.is_available()`), or for the CPU
_GPU_WORDS = re.compile(r"cuda|accel|gpu", re.IGNORECASE)
_CPU_WORDS = re.compile(r"no_cuda|no_accel|no_gpu|cpu|mps", re.IGNORECASE)  # (Apple's GPU: not a CUDA run)


IF, WITH, LOOP, EXCEPT, DEF = "if", "with", "loop", "except", "def"
_BUILTINS = frozenset({"True", "False", "None", "min", "max", "len", "int"})


def _rebinds(value: cst.BaseExpression | None, name: str) -> bool:
    """`name.method(...)`: a value made from the name's previous one (`args = args.parse_args()`)."""
    return (type(value) is cst.Call and type(value.func) is cst.Attribute and type(value.func.value) is cst.Name
            and value.func.value.value == name)


def _gpu_takes_body(test: cst.BaseExpression) -> bool | None:
    """Whether a GPU run takes the branch a test guards: True when it asks for a GPU
    (`use_cuda`, `torch.cuda.is_available()`), False when it asks for the CPU or Apple's MPS
    (`not use_cuda`, `args.no_cuda`, `device == "cpu"`, `x_is_mps`); None when it says neither."""
    flipped = False
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, flipped = test.expression, not flipped
    text = code(test)
    if _CPU_WORDS.search(text):
        return flipped
    return None if not _GPU_WORDS.search(text) else not flipped


def _leaves(block: cst.BaseSuite) -> bool:
    """Whether a block always ends in `return` or `raise`."""
    last = block.body[-1] if block.body else None
    if type(last) is cst.SimpleStatementLine:
        last = last.body[-1]
    return type(last) is cst.Return or type(last) is cst.Raise


def _asks_for_cuda(test: cst.BaseExpression) -> bool:
    """Whether an `if` test asks if CUDA is used: `torch.cuda.is_available()`, a flag naming
    CUDA or Apple's MPS (`use_cuda`, `args.no_cuda`, `x_is_mps`), `device == "cpu"` (`x.device.type == "mps"`); not which
    GPU (`args.gpu is not None`)."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is cst.Call:
        return dotted(test.func) in ("torch.cuda.is_available", "cuda.is_available")
    if type(test) is cst.Comparison:
        return len(test.comparisons) == 1 and type(test.comparisons[0].operator) in (cst.Equal, cst.NotEqual) and any(
            literal(side) in ("cpu", "cuda", "mps") for side in (test.left, test.comparisons[0].comparator))
    return type(test) in (cst.Name, cst.Attribute) and any(word in code(test).lower() for word in ("cuda", "mps"))


class Frame(NamedTuple):
    """A compound statement whose body encloses the current node (a tuple: made for every
    compound statement of every analysis, and a frozen dataclass is slow to make)."""

    kind: str  # IF (its body, not its else), WITH, LOOP (its body), EXCEPT (a handler) or DEF
    node: cst.CSTNode


class Scope:
    """A module or a function body: the names assigned in it and what they were assigned."""

    __slots__ = ("node", "parent", "assignments", "params")

    def __init__(self, node: cst.FunctionDef | None, parent: Scope | None) -> None:
        self.node, self.parent = node, parent
        self.assignments: dict[str, list] = defaultdict(list)
        self.params: list[str] = []

    def owner_of(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.assignments:
                return scope
            scope = scope.parent
        return None

    def annotation(self, name: str) -> cst.BaseExpression | None:
        """The annotation of `name`, a parameter of this scope's function that it never rebinds
        (`trainer: DiffusionPriorTrainer`, `X: np.ndarray`), or None."""
        params = self.node.params.params if self.node is not None else ()
        param = next((p for p in params if p.name.value == name), None)
        if param is None or param.annotation is None or any(value is not None for value in self.assignments.get(name, ())):
            return None
        return param.annotation.annotation


def _parameters(function: cst.FunctionDef) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A function's parameter names: the named ones, then `*args` and `**kwargs`."""
    params = function.params
    named = tuple(param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params))
    return named, tuple(star.name.value for star in (params.star_arg, params.star_kwarg) if type(star) is cst.Param)


def paired(target: cst.Tuple | cst.List, value: cst.BaseExpression | None) -> list:
    """The value each element of `a, b = x, y` gets (None for each when the value is not a
    tuple or list of as many plain elements)."""
    elements = target.elements
    if (type(value) is cst.Tuple or type(value) is cst.List) and len(value.elements) == len(elements) and not any(
        type(e) is cst.StarredElement for e in (*elements, *value.elements)
    ):
        return [e.value for e in value.elements]
    return [None] * len(elements)


_ABSL_DEFINES = {f"DEFINE_{kind}" for kind in ("integer", "float", "string", "bool", "boolean", "enum")}


class Site:
    """A node together with where it was met: its unit, scope and enclosing loops (a
    slotted class: one is made for every call of every analysis)."""

    __slots__ = ("node", "unit", "scope", "loops")

    def __init__(self, node: cst.CSTNode, unit: int, scope: Scope, loops: tuple = ()) -> None:
        self.node, self.unit, self.scope, self.loops = node, unit, scope, loops


class CallSite(Site):
    """The site of a call (`Context.calls`)."""

    __slots__ = ()
    node: cst.Call


MODULE_CHAIN = {"eval", "train", "to", "cuda", "cpu", "half", "float", "bfloat16", "requires_grad_"}  # return the module


def module_below(expr: cst.BaseExpression) -> cst.BaseExpression:
    """What a chain of the module methods that return the module is called on (`Net()` of
    `Net().cuda().eval()`, `model` of `model.eval().requires_grad_(False)`)."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in MODULE_CHAIN:
        expr = expr.func.value
    return expr


class Context:
    """Facts about one source, filled during the rule pass by the handlers in
    `visit_handlers`/`leave_handlers` (node kind -> method), called before the rules'
    visit_ and after their leave_ methods."""

    def __init__(self, units: list | None = None, path: str | None = None) -> None:
        self.units = units or []  # the source's units (perf_lint.analyzers.source.Unit)
        self.path = path  # the source's file, when it has one (rules may read modules next to it)
        self.shared: dict = {}  # per-source state rules share (keyed by the sharing class)
        self.texts: dict[int, str] = {}  # id of a module statement parsed on its own -> its text (see `text_of`)
        self.imports: dict[str, str] = {}
        self.module_scope = Scope(None, None)
        self.scope = self.module_scope
        self.scopes: dict[int, Scope] = {}  # id(function) -> its scope
        self.unit = 0
        self.line = 0  # the first line (in the unit) of the top-level statement being visited
        self.loops: tuple[cst.CSTNode, ...] = ()  # enclosing loops in the current function (a tuple: sites share it)
        self._loop_bodies: dict[int, cst.CSTNode] = {}  # id(loop body) -> loop (ids: a node's hash is a Python method)
        self.functions: dict[str, list[tuple[cst.FunctionDef, Scope]]] = defaultdict(list)
        self.function_units: dict[int, int] = {}  # id(function) -> the unit (notebook cell) defining it
        self.function_order: dict[int, int] = {}  # id(function) -> the calls met before it in the pass
        self.calls: dict[str, list[CallSite]] = defaultdict(list)  # callee's last name -> its calls
        self.call_order: list[tuple[cst.Call, Scope]] = []  # every call, in pass order
        self.attributes: dict[str, list[tuple[cst.BaseExpression | None, Scope]]] = defaultdict(list)
        self.by_name: dict[str, list[tuple[cst.BaseExpression | None, Scope]]] = defaultdict(list)
        # (id(scope), name) -> the values it was unpacked from (`a, b = model(x)`: its None assignments),
        # each with the name's index in the target (negative, from the end, after a starred name; None for it)
        self.unpacked: dict[tuple[int, str], list[tuple[cst.BaseExpression, int | None]]] = defaultdict(list)
        self.argparse: dict[str, list] = defaultdict(list)
        self.args_functions: set[str] = set()
        self.returns: dict[int, list[cst.BaseExpression]] = defaultdict(list)  # id(function) -> what it returns
        self.cuda_evidence: cst.CSTNode | None = None  # where the code says it runs on a GPU
        self._evidence_statement: cst.SimpleStatementLine | None = None  # the statement of the first evidence
        self._evidence_confirmed = False  # evidence met outside that statement, or that statement names no device
        self.gpu_importer: str | None = None  # or where a module importing it, or one it calls, does ("train.py:12")
        self.assume_device = "auto"  # where the user says the code runs (Config.assume_device)
        self.classes: dict[str, cst.ClassDef] = {}  # every class defined, by name (the last one)
        self.class_of: dict[int, cst.ClassDef] = {}  # id(method) -> its class
        self.relative_imports: dict[str, tuple[int, str | None, str]] = {}  # name -> (level, module, name there)
        self.star_imports: list[tuple[int, str | None]] = []  # (level, module) of each `from module import *`
        self.sys_paths: list[list[str]] = []  # the strings of each `sys.path.append(...)`/`insert(...)`
        self._outer_loops: list[tuple[cst.CSTNode, ...]] = []
        self.mutated: set[str] = set()  # names of dicts changed after creation (`d[k] = v`, `.pop(k)`)
        # name -> its `.update(...)` calls: (call, scope, whether under an `if`)
        self.updated: dict[str, list[tuple[cst.Call, Scope, bool]]] = defaultdict(list)
        self.blocks: list[cst.Module | cst.IndentedBlock] = []  # enclosing statement blocks
        self.modules: list[cst.Module] = []  # the units' modules, in pass order
        # `if torch.cuda.is_available():`, `if x_is_mps:`, with the block holding them (see gpu_skips)
        self.cuda_ifs: list[tuple[cst.If, cst.Module | cst.IndentedBlock | None]] = []
        self._gpu_skipped: set[int] | None = None
        self.statement: cst.SimpleStatementLine | None = None  # the simple statement being visited
        self.frames: list[Frame] = []  # compound statements around the node being visited, outermost first
        self._frame_bodies: dict[int, Frame] = {}  # id(body) -> the frame it opens
        self._local_frames: tuple[Frame, ...] | None = None  # local_frames() until the frames change
        self.final = False  # set after the pass: the facts no longer change, answers are kept
        self._cuda_names: dict[tuple, object] = {}  # (name, id(its scope), depth) -> is_cuda_device
        self.visit_handlers = {
            "Module": self._module,
            "SimpleStatementLine": self._simple_statement,
            "Import": self._import,
            "ImportFrom": self._import_from,
            "Assign": self._assign,
            "AnnAssign": self._ann_assign,
            "AugAssign": self._aug_assign,
            "NamedExpr": self._named_expr,
            "For": self._for,
            "While": self._while,
            "If": self._if,
            "With": self._with,
            "ExceptHandler": self._except_handler,
            "IndentedBlock": self._indented_block,
            "SimpleStatementSuite": self._block,
            "FunctionDef": self._function,
            "ClassDef": self._class,
            "Call": self._call,
            "SimpleString": self._string,
            "FormattedString": self._formatted_string,
            "Return": self._return,
            "WithItem": self._with_item,
        }
        self.leave_handlers = {
            "Module": self._leave_statement_block,
            "SimpleStatementLine": self._leave_simple_statement,
            "IndentedBlock": self._leave_indented_block,
            "SimpleStatementSuite": self._leave_block,
            "FunctionDef": self._leave_function,
        }

    def close(self) -> None:
        """Drop what makes the context part of reference cycles (its bound handlers, the
        rule instances it shares), so a finished analysis is freed at once, without
        waiting for a garbage collection."""
        self.visit_handlers, self.leave_handlers, self.shared = {}, {}, {}

    def text_of(self, node: cst.CSTNode) -> str:
        """The source text of `node`: for a statement of the module, as written (not rendered
        again: a class of thousands of lines takes libcst tens of milliseconds)."""
        return self.texts.get(id(node)) or code(node)

    def site(self, node: cst.CSTNode) -> Site:
        return Site(node, self.unit, self.scope, self.loops)

    def bodies(self, scope: Scope) -> list[cst.CSTNode]:
        """The nodes holding a scope's statements: its function, or for the module's scope the
        module of every unit (a notebook's cells)."""
        return [scope.node] if scope.node is not None else list(self.modules)

    def call_site(self, node: cst.Call) -> CallSite:
        return CallSite(node, self.unit, self.scope, self.loops)

    def local_frames(self) -> tuple[Frame, ...]:
        """The frames inside the current function (or module), outermost first (one tuple
        until the frames change: rules ask at every candidate)."""
        if self._local_frames is None:
            self._local_frames = tuple(self.frames)
            for index in range(len(self.frames) - 1, -1, -1):
                if self.frames[index].kind == DEF:
                    self._local_frames = tuple(self.frames[index + 1 :])
                    break
        return self._local_frames

    def function(self) -> cst.FunctionDef | None:
        """The function whose body holds the current node."""
        for frame in reversed(self.frames):
            if frame.kind == DEF:
                return cast(cst.FunctionDef, frame.node)  # a DEF frame is made for a function only
        return None

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                self.imports[alias.asname.name.value] = name
            else:
                first = name.split(".")[0]
                self.imports[first] = first

    def _star_modules(self, level: int, module: str | None) -> None:
        """The modules a project module imports, for `from utils import *` (`torch` when utils.py
        has `import torch`), also through its own star imports (bat67's `from FusionNet import *`,
        which has `from Basic_blocks import *`, which has `import torch.utils.data as data`),
        nearest first: names the source has not bound itself."""
        if not self.path or self.path.startswith("<"):
            return
        from .project import MAX_HOPS, local_module, project_root  # (the project model: only for a star import)

        directory = os.path.dirname(os.path.abspath(self.path))
        root = project_root(directory)
        layer: list[tuple[str, int, str | None, tuple]] = [(directory, level, module, ())]
        seen: set[str] = set()
        for _ in range(MAX_HOPS):
            found = [local_module(folder, name, dots, root, paths) for folder, dots, name, paths in layer]
            modules = [namespace for namespace in found if namespace is not None and namespace.path not in seen]
            seen.update(namespace.path for namespace in modules)
            for namespace in modules:
                for name, qualified in namespace.imports.items():
                    self.imports.setdefault(name, qualified)
            layer = [(namespace.directory, dots, name, namespace.paths) for namespace in modules
                     for dots, name in namespace.stars]

    def _import_from(self, node: cst.ImportFrom) -> None:
        aliases = node.names
        if isinstance(aliases, cst.ImportStar):  # `from utils import *`: names the project model may find there
            level, module = len(node.relative), dotted(node.module) if node.module is not None else None
            self.star_imports.append((level, module))
            self._star_modules(level, module)
            return
        if node.relative:  # `from .data import Dataset`
            module = dotted(node.module) if node.module is not None else None
            for alias in aliases:
                name = dotted(alias.name)
                if name is not None:
                    local = alias.asname.name.value if alias.asname and type(alias.asname.name) is cst.Name else name
                    self.relative_imports[local] = (len(node.relative), module, name)
            return
        if node.module is None:
            return
        module = dotted(node.module)
        if module is None:
            return
        for alias in aliases:
            name = dotted(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname and type(alias.asname.name) is cst.Name else name
            self.imports[local] = f"{module}.{name}"

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if type(target) is cst.Name:
            self.scope.assignments[target.value].append(value)
            self.by_name[target.value].append((value, self.scope))
        elif type(target) is cst.Tuple or type(target) is cst.List:
            values = paired(target, value)
            starred = False
            for index, (element, element_value) in enumerate(zip(target.elements, values)):
                self._bind(element.value, element_value)
                star = type(element) is cst.StarredElement
                starred = starred or star
                if element_value is None and value is not None and type(element.value) is cst.Name:  # (counted from
                    # the end after a starred name: `loss, *_, count = f()` binds `count` to element -1)
                    at = None if star else index - len(target.elements) if starred else index
                    self.unpacked[(id(self.scope), element.value.value)].append((value, at))
        elif type(target) is cst.StarredElement:
            self._bind(target.value, None)
        elif type(target) is cst.Attribute:
            key = dotted(target)
            if key is not None:
                self.attributes[key].append((value, self.scope))
        elif type(target) is cst.Subscript:
            key = dotted(target.value)
            if key is not None:
                self.mutated.add(key)

    def _assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            value = node.value
            unpacked = target.target
            if (type(unpacked) is cst.Tuple or type(unpacked) is cst.List) and self._is_parse_args(value):
                first = unpacked.elements[0].value if unpacked.elements else None
                if first is not None:
                    self._bind(first, value)
                    continue
            self._bind(target.target, value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def _named_expr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def _for(self, node: cst.For) -> None:
        self._bind(node.target, None)
        self._loop_bodies[id(node.body)] = node
        self._frame_bodies[id(node.body)] = Frame(LOOP, node)

    def _while(self, node: cst.While) -> None:
        self._loop_bodies[id(node.body)] = node
        self._frame_bodies[id(node.body)] = Frame(LOOP, node)

    def _if(self, node: cst.If) -> None:
        self._frame_bodies[id(node.body)] = Frame(IF, node)
        if _asks_for_cuda(node.test):
            self.cuda_ifs.append((node, self.blocks[-1] if self.blocks else None))

    def _with(self, node: cst.With) -> None:
        self._frame_bodies[id(node.body)] = Frame(WITH, node)

    def _except_handler(self, node: cst.ExceptHandler) -> None:
        self._frame_bodies[id(node.body)] = Frame(EXCEPT, node)

    def _module(self, node: cst.Module) -> None:
        self.modules.append(node)
        self._enter_block(node)

    def _enter_block(self, node: cst.Module | cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def _leave_statement_block(self, node: cst.CSTNode) -> None:
        self.blocks.pop()

    def _indented_block(self, node: cst.IndentedBlock) -> None:
        self._enter_block(node)
        self._block(node)

    def _leave_indented_block(self, node: cst.IndentedBlock) -> None:
        self._leave_block(node)
        self._leave_statement_block(node)

    def _simple_statement(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def _leave_simple_statement(self, node: cst.SimpleStatementLine) -> None:
        self.statement = None

    def _block(self, node: cst.CSTNode) -> None:
        loop = self._loop_bodies.get(id(node))
        if loop is not None:
            self.loops = (*self.loops, loop)
        frame = self._frame_bodies.get(id(node))
        if frame is not None:
            self.frames.append(frame)
            self._local_frames = None

    def _leave_block(self, node: cst.CSTNode) -> None:
        if self._loop_bodies.pop(id(node), None) is not None:
            self.loops = self.loops[:-1]
        if self._frame_bodies.pop(id(node), None) is not None:
            self.frames.pop()
            self._local_frames = None

    def _with_item(self, node: cst.WithItem) -> None:
        if node.asname is not None:  # (`with tqdm(loader) as bar:`: the progress bar, which iterates the loader)
            item = node.item
            self._bind(node.asname.name, item if type(item) is cst.Call and call_name(item) == "tqdm" else None)

    def _function(self, node: cst.FunctionDef) -> None:
        if id(node) not in self.class_of:  # (a method's name is bound in its class, not the scope around)
            self._bind(node.name, None)
        self._frame_bodies[id(node.body)] = Frame(DEF, node)
        scope = Scope(node, self.scope)
        named, starred = remembered(_parameters, node, lambda: _parameters(node))
        scope.params = list(named)
        for name in named + starred:
            scope.assignments[name].append(None)
        self.functions[node.name.value].append((node, scope))
        self.function_units[id(node)] = self.unit
        self.function_order[id(node)] = len(self.call_order)
        self.scopes[id(node)] = scope
        self.scope = scope
        self._outer_loops.append(self.loops)
        self.loops = ()

    def _leave_function(self, node: cst.FunctionDef) -> None:
        self.scope = self.scope.parent or self.module_scope
        self.loops = self._outer_loops.pop()

    def _call(self, node: cst.Call) -> None:  # every call of every analysis: call_name and site inlined
        scope = self.scope
        self.call_order.append((node, scope))
        func = node.func
        name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
        if name is not None:
            self.calls[name].append(CallSite(node, self.unit, scope, self.loops))
        if name == "add_argument":
            self._add_argument(node)
        elif name in _ABSL_DEFINES and self.qualname(func) == f"absl.flags.{name}":
            self._define_flag(node)
        elif name == "update" and type(func) is cst.Attribute:
            key = dotted(func.value)
            if key is not None:
                self.updated[key].append((node, scope, any(frame.kind == IF for frame in self.local_frames())))
        elif name in _MUTATORS and type(func) is cst.Attribute:
            key = dotted(func.value)
            if key is not None:
                self.mutated.add(key)
        elif name in ("append", "insert") and type(func) is cst.Attribute and dotted(func.value) == "sys.path":
            self.sys_paths.append([text for n in walk(node) if type(n) is cst.SimpleString
                                   for text in [literal(n)] if type(text) is str])
        if self._wants_evidence():
            if name == "cuda" and type(func) is cst.Attribute:
                self._evidence(node)
            else:
                qualified = self.qualname(node.func)
                if qualified is not None and (gpu_api(qualified) or name in ("Trainer", "Fabric") and trainer_gpu(qualified, node)):
                    self._evidence(node)

    def _class(self, node: cst.ClassDef) -> None:
        self.classes[node.name.value] = node
        for statement in node.body.body if type(node.body) is cst.IndentedBlock else ():
            if type(statement) is cst.FunctionDef:
                self.class_of[id(statement)] = node

    def _string(self, node: cst.SimpleString) -> None:
        if self._wants_evidence() and (CUDA_STRING.match(node.value) or node.value[1:-1] == "cuda:"):
            self._evidence(node)  # ("cuda:" + str(args.device): a device named by index)

    def _formatted_string(self, node: cst.FormattedString) -> None:
        """`f"cuda:{args.device}"`: a CUDA device named by index."""
        head = node.parts[0] if node.parts else None
        if self._wants_evidence() and type(head) is cst.FormattedStringText and head.value.startswith("cuda:") \
                and len(node.parts) > 1:
            self._evidence(node)

    def _wants_evidence(self) -> bool:
        """Whether the pass still looks for a sign of a GPU: none met yet, or only one in a
        statement binding a name, and the pass is outside that statement."""
        return self.cuda_evidence is None or (not self._evidence_confirmed and self.statement is not self._evidence_statement)

    def _evidence(self, node: cst.CSTNode) -> None:
        """A sign that the code runs on a GPU: the first is kept; when it is a "cuda" string in
        the statement binding a name (`device = torch.device("cuda" if ... else "cpu")`), the
        pass looks on for one outside it (see `displayed_device_only`)."""
        if self.cuda_evidence is None:
            self.cuda_evidence = node
            self._evidence_statement = self.statement
            self._evidence_confirmed = type(node) not in (cst.SimpleString, cst.FormattedString) or _bound_name(
                self.statement) is None
        else:
            self._evidence_confirmed = True

    def uses_rpc(self) -> bool:
        """Whether the source uses `torch.distributed.rpc`, which sends CPU tensors (unless
        device maps are set): there a move to another tensor's device is no copy to a GPU."""
        return any(q == "torch.distributed.rpc" or q.startswith("torch.distributed.rpc.") for q in self.imports.values())

    def displayed_device_only(self) -> bool:
        """Whether the code's only sign of a GPU is the device it binds to a name that it only
        shows (`device = "cuda" if torch.cuda.is_available() else "cpu"`, then `print(device)`
        and nothing moved to it: a tutorial that runs on the CPU). After the pass."""
        if self.cuda_evidence is None or self._evidence_confirmed:
            return False
        name = _bound_name(self._evidence_statement)
        return name is not None and not any(
            remembered(_used, statement, lambda: _used(statement, name), name)
            for module in self.modules for statement in module.body)

    def _return(self, node: cst.Return) -> None:
        if self.scope.node is not None and node.value is not None:
            self.returns[id(self.scope.node)].append(node.value)
            if self._is_parse_args(node.value):
                self.args_functions.add(self.scope.node.name.value)

    def _add_argument(self, call: cst.Call) -> None:
        flags = [literal(arg.value) for arg in call.args if arg.keyword is None and arg.star == ""]
        flags = [flag for flag in flags if isinstance(flag, str)]
        dest_arg = keyword(call, "dest")
        if dest_arg is not None:
            dest = literal(dest_arg.value)
        else:
            longs = [f for f in flags if f.startswith("--")]
            chosen = longs[0] if longs else (flags[0] if flags else None)
            dest = chosen.lstrip("-").replace("-", "_") if chosen else UNKNOWN
        if not isinstance(dest, str):
            return
        default = keyword(call, "default")
        action = keyword(call, "action")
        action_value = literal(action.value) if action is not None else None
        if default is not None:
            self.argparse[dest].append(default.value)
        elif action_value in ("store_true", "store_false"):
            self.argparse[dest].append(cst.Name("False" if action_value == "store_true" else "True"))
        else:
            self.argparse[dest].append(cst.Name("None"))

    def _define_flag(self, call: cst.Call) -> None:
        """absl's `flags.DEFINE_integer('num_workers', 4, 'help')`: `FLAGS.num_workers` defaults to 4."""
        name, default = argument(call, 0, "name"), argument(call, 1, "default")
        if name is not None and default is not None and isinstance(flag := literal(name), str):
            self.argparse[flag].append(default)

    def option_defaults(self, expr: cst.BaseExpression, scope: Scope) -> list[cst.BaseExpression] | None:
        """The defaults the source's `add_argument`s give `args.x` (module-scope expressions),
        when `args` is the namespace its parser parses; None for any other expression."""
        if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name:
            return None
        namespace = self.origin(expr.value, scope)
        if namespace is None or not self._is_parse_args(namespace[0]):
            return None
        return self.argparse.get(expr.attr.value, [])

    def _is_parse_args(self, expr: cst.BaseExpression | None) -> bool:
        if type(expr) is cst.Subscript:
            expr = expr.value
        if type(expr) is cst.Attribute:  # `FLAGS = flags.FLAGS`: absl's parsed flags
            return self.qualname(expr) == "absl.flags.FLAGS"
        if type(expr) is not cst.Call:
            return False
        name = call_name(expr)
        return name in ("parse_args", "parse_known_args") or (
            type(expr.func) is cst.Name and name in self.args_functions
        )

    # -- queries ----------------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression) -> str | None:
        """`T.utils.data.DataLoader` -> "torch.utils.data.DataLoader" through the imports."""
        if type(expr) is cst.Name:
            return self.imports.get(expr.value)
        parts = []
        while type(expr) is cst.Attribute:
            parts.append(expr.attr.value)
            expr = expr.value
        base = self.imports.get(expr.value) if type(expr) is cst.Name else None
        if base is None:
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def handed_calls(self, name: str) -> list[CallSite]:
        """Where the function `name` runs when the source passes it to a function of its own:
        the calls of the parameter it is given (`sample(ddim_step, model)`, with `def sample(f,
        model):` calling `f(x_t, t)` in its loop). Asked once the pass is over."""
        key = ("handed calls", name)
        if key not in self.shared:
            found: list[CallSite] = []
            for node, _ in self.call_order:
                if type(node.func) is not cst.Name or any(arg.star for arg in node.args):
                    continue
                for index, arg in enumerate(node.args):
                    if type(arg.value) is not cst.Name or arg.value.value != name:
                        continue
                    for function, _ in self.functions.get(node.func.value, ()):
                        params = [param.name.value for param in function.params.params]
                        param = arg.keyword.value if arg.keyword is not None else params[index] if index < len(params) else None
                        found += [site for site in self.calls.get(param or "", ()) if site.scope.node is function
                                  and type(site.node.func) is cst.Name and site not in found]
            self.shared[key] = found
        return self.shared[key]

    def assigned(self, name: str, scope: Scope) -> list | None:
        """The values assigned to `name` as seen from `scope` (None entries: unknown)."""
        owner = scope.owner_of(name)
        return None if owner is None else owner.assignments[name]

    def origin(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0):
        """Follow a name through its single assignment to the expression it holds (or a
        rebinding from itself: `args = get_args_parser()` then `args = args.parse_args()`).

        Returns (expression, scope), or None when the name is unknown or reassigned.
        """
        while depth < _MAX_DEPTH:
            depth += 1
            if type(expr) is cst.Name and expr.value not in self.imports:
                owner = scope.owner_of(expr.value)
                if owner is None:
                    return None
                values = owner.assignments[expr.value]
                if len(values) == 2 and _rebinds(values[1], expr.value) and type(values[0]) is cst.Call:
                    values = values[1:]
                one = self.one_value(values, owner)
                if one is None:
                    return None
                expr, scope = one, owner
                continue
            key = dotted(expr) if type(expr) is cst.Attribute else None
            if key is not None and key in self.attributes:
                attribute_values = self.attributes[key]
                if len(attribute_values) != 1:
                    return None
                value, scope = attribute_values[0]
                if value is None:
                    return None
                expr = value
                continue
            return expr, scope
        return None

    def one_value(self, values: list, owner: Scope | None = None, depth: int = 0) -> cst.BaseExpression | None:
        """The value a name is assigned, when it is assigned one: once, or the same each time
        (the same code, naming nothing but imports and names `owner` assigns one value so:
        `NUM_WORKERS = os.cpu_count()` in two notebook cells, `kwargs = {'num_workers': 1} if cuda
        else {}` in five); None when not."""
        if not values or any(value is None for value in values):
            return None
        if len(values) > 1 and (len({code(value) for value in values}) != 1 or any(
                name not in self.imports and name not in _BUILTINS and not (
                    owner is not None and depth < 2 and self.one_value(owner.assignments.get(name, []), owner, depth + 1) is not None)
                for name in names_in(values[0], attributes=False))):
            return None
        return values[0]

    def value(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0):
        """The constant value of `expr`: literals, constants, argparse defaults; else UNKNOWN."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        found = literal(expr)
        if found is not UNKNOWN:
            return found
        if type(expr) is cst.Attribute and type(expr.value) in (cst.Name, cst.Attribute):  # `args.x`, `self.cli_args.x`
            namespace = self.origin(expr.value, scope)
            if namespace is not None and self._is_parse_args(namespace[0]):
                return self.option_default(expr.attr.value, depth + 1)
        if type(expr) in (cst.Name, cst.Attribute):
            found = self.origin(expr, scope)
            if found is not None and found[0] is not expr:
                return self.value(found[0], found[1], depth + 1)
        return UNKNOWN

    def option_default(self, option: str, depth: int = 0):
        """The default the source's parser gives `--option`, when its `add_argument`s agree on
        one constant; else UNKNOWN."""
        defaults = self.argparse.get(option, [])
        values = {repr(self.value(d, self.module_scope, depth)) for d in defaults}
        return self.value(defaults[0], self.module_scope, depth) if defaults and len(values) == 1 else UNKNOWN

    def kwargs(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0, certain: bool = False):
        """A `**expr` mapping: ({key: expression}, its scope) when `expr` is a literal dict or
        `dict(...)` that nothing but `.update(...)` with such mappings changes afterwards (the
        updates merged, in order: those under `if use_accel:` too, as on a GPU). Of
        `a if cond else b`, the branch `cond` picks, or when it is decided at run time, the
        one a GPU run takes (`{...} if use_cuda else {}`). `certain`: only what holds on every
        run (as a fix that adds a keyword beside the mapping needs), else UNKNOWN."""
        name = dotted(expr)
        if name in self.mutated or depth > _MAX_DEPTH:
            return UNKNOWN
        found = self.origin(expr, scope) if type(expr) in (cst.Name, cst.Attribute) else (expr, scope)
        if found is None:
            return UNKNOWN
        result = self._mapping(found[0], found[1], depth, certain)
        for update, where, conditional in self.updated.get(name or "", ()) if result is not UNKNOWN else ():
            if where is not found[1] or conditional and certain:
                return UNKNOWN  # (changed in another function, or on some runs only)
            added = [self.kwargs(arg.value, where, depth + 1, certain) if arg.keyword is None
                     else ({arg.keyword.value: arg.value}, where) for arg in update.args]
            if UNKNOWN in added or any(arg.star for arg in update.args):
                return UNKNOWN
            result = {**result[0], **{key: value for mapping, _ in added for key, value in mapping.items()}}, result[1]
        return result

    def _mapping(self, expr: cst.BaseExpression, scope: Scope, depth: int, certain: bool):
        if type(expr) is cst.IfExp:  # `{"num_workers": 4} if device == "cuda" else {}`
            chosen = self.truth(expr.test, scope)
            if chosen is UNKNOWN and certain:
                return UNKNOWN
            branch = self._gpu_branch(expr) if chosen is UNKNOWN else expr.body if chosen else expr.orelse
            return UNKNOWN if branch is None else self.kwargs(branch, scope, depth + 1, certain)
        if type(expr) is cst.Dict:
            result = {}
            for element in expr.elements:
                if type(element) is not cst.DictElement:
                    return UNKNOWN
                key = literal(element.key)
                if not isinstance(key, str):
                    return UNKNOWN
                result[key] = element.value
            return result, scope
        if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "dict":
            if any(arg.keyword is None for arg in expr.args):
                return UNKNOWN
            return {arg.keyword.value: arg.value for arg in expr.args if arg.keyword is not None}, scope
        return UNKNOWN

    def gpu_skips(self, node: cst.CSTNode) -> bool:
        """Whether `node` lies in a branch a CUDA run does not take: the `else` of `if
        torch.cuda.is_available():`, the body of `if args.no_cuda:` or of `if x_is_mps:`, or
        what follows an `if use_cuda:` with no `else` whose body returns (`if use_cuda: return
        x.cpu().numpy()`, then `return x.numpy()`). After the pass."""
        if self._gpu_skipped is None:
            self._gpu_skipped = set()
            for branch, block in self.cuda_ifs:
                body = _gpu_takes_body(branch.test)
                other = None if body is None else branch.orelse if body else branch.body
                if other is not None:
                    self._gpu_skipped.update(id(inner) for inner in walk(other))
                statements = list(block.body) if body and branch.orelse is None and block is not None else []
                if branch in statements and _leaves(branch.body):
                    for statement in statements[statements.index(branch) + 1:]:
                        self._gpu_skipped.update(id(inner) for inner in walk(statement))
        return id(node) in self._gpu_skipped

    @staticmethod
    def _gpu_branch(expr: cst.IfExp) -> cst.BaseExpression | None:
        """The branch of `a if cond else b` a GPU run takes (see `_gpu_takes_body`); None when
        the test says neither."""
        body = _gpu_takes_body(expr.test)
        return None if body is None else expr.body if body else expr.orelse

    def truth(self, expr: cst.BaseExpression, scope: Scope):
        """Whether a condition holds whatever the command line says: a literal, or `==`/`!=`
        of two literals or of a `torch.device(...)` and a string (never equal: a device is
        not a str); else UNKNOWN (an argparse default is only the default)."""
        if type(expr) is not cst.Comparison:
            value = literal(expr)
            return UNKNOWN if value is UNKNOWN else bool(value)
        if len(expr.comparisons) != 1 or type(expr.comparisons[0].operator) not in (cst.Equal, cst.NotEqual):
            return UNKNOWN
        left, right = expr.left, expr.comparisons[0].comparator
        values = [literal(side) for side in (left, right)]
        if UNKNOWN not in values:
            equal = values[0] == values[1]
        elif any(isinstance(v, str) for v in values) and any(self._a_device(side, scope) for side in (left, right)):
            equal = False
        else:
            return UNKNOWN
        return equal if type(expr.comparisons[0].operator) is cst.Equal else not equal

    def _a_device(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """A name or expression holding a `torch.device(...)`."""
        found = self.origin(expr, scope) if type(expr) in (cst.Name, cst.Attribute) else (expr, scope)
        return found is not None and type(found[0]) is cst.Call and self.qualname(found[0].func) == "torch.device"

    def call_argument(self, call: cst.Call, index: int, name: str, scope: Scope):
        """What parameter `name` of `call` receives: (expression, scope), None when it is
        not passed, UNKNOWN when a `**mapping` of unknown content may pass it."""
        direct = argument(call, index, name)
        if direct is not None:
            return direct, scope
        for star in star_kwargs(call):
            mapping = self.kwargs(star.value, scope)
            if mapping is UNKNOWN:
                return UNKNOWN
            if name in mapping[0]:
                return mapping[0][name], mapping[1]
        if index >= 0 and any(arg.star == "*" for arg in call.args):
            return UNKNOWN
        return None

    def is_dtype(self, expr: cst.BaseExpression) -> bool:
        """`torch.float16`, `dtype`, `edge_index.dtype`: what `.to()` converts to, not moves to."""
        qualified = self.qualname(expr) or ""
        if qualified.startswith("torch.") and qualified.count(".") == 1 and qualified[6:] not in ("device",):
            return type(expr) is not cst.Call
        return "dtype" in (dotted(expr) or "").rsplit(".", 1)[-1].lower()

    def default_cuda(self) -> bool:
        """Whether the source, or a module of the project importing it, makes the GPU torch's
        default device (`torch.set_default_device("cuda")`,
        `torch.set_default_tensor_type("torch.cuda.FloatTensor")`): a factory given no device then
        makes a CUDA tensor. Asked after the pass."""
        for name in ("set_default_device", "set_default_tensor_type"):
            for site in self.calls.get(name, ()):
                value = site.node.args[0].value if site.node.args and self.qualname(site.node.func) == f"torch.{name}" else None
                if value is not None and ("cuda" in str(literal(value)) or self.is_cuda_device(value, site.scope) is True):
                    return True
        path = self.path
        return path is not None and not path.startswith("<") and cuda_default_importer(path)

    def made_on_cuda(self, call: cst.Call, scope: Scope) -> bool:
        """`x.cuda()`, `x.to("cuda")`, `torch.randn(n, device="cuda")`: a call whose tensor is on the GPU."""
        name = call_name(call)
        if name == "cuda" and type(call.func) is cst.Attribute:
            return True
        device = argument(call, 0, "device") if name == "to" else argument(call, -1, "device")
        return device is not None and self.is_cuda_device(device, scope) is True

    def is_cuda_device(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0):
        """True when `expr` names a CUDA device (or is derived from "cuda"), or a CUDA tensor type
        (`torch.cuda.FloatTensor`, as `x.type(...)` takes), False when it is provably another
        device (`torch.FloatTensor`), UNKNOWN otherwise."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        value = literal(expr)
        if isinstance(value, str):
            return value.startswith("cuda")
        if isinstance(value, int) and not isinstance(value, bool):
            return True
        if type(expr) is cst.FormattedString:
            head = expr.parts[0] if expr.parts else None
            return type(head) is cst.FormattedStringText and head.value.startswith("cuda")
        if type(expr) is cst.IfExp:
            branches = [self.is_cuda_device(b, scope, depth + 1) for b in (expr.body, expr.orelse)]
            return True if True in branches else (False if branches == [False, False] else UNKNOWN)
        if type(expr) is cst.Call:
            qualified = self.qualname(expr.func) or ""
            if qualified == "torch.device" and expr.args:
                return self.is_cuda_device(expr.args[0].value, scope, depth + 1)
            if qualified in ("torch.cuda.current_device", "torch.cuda.device"):
                return True
            return UNKNOWN
        if type(expr) is cst.Name:
            owner = scope.owner_of(expr.value)
            if owner is None:
                return UNKNOWN
            if not self.final:
                return self._cuda_name(expr.value, owner, depth)
            key = (expr.value, id(owner), depth)
            found = self._cuda_names.get(key)
            if found is None:
                found = self._cuda_names[key] = self._cuda_name(expr.value, owner, depth)
            return found
        if type(expr) is cst.Attribute:
            module, _, name = (self.qualname(expr) or "").rpartition(".")
            if name in LEGACY_TENSOR_TYPES and module in ("torch", "torch.cuda"):
                return module == "torch.cuda"
            defaults = self.option_defaults(expr, scope)
            if defaults is not None:
                results = [self.is_cuda_device(d, self.module_scope, depth + 1) for d in defaults]
                return True if True in results else UNKNOWN
            found = self.origin(expr, scope)
            if found is not None and found[0] is not expr:
                return self.is_cuda_device(found[0], found[1], depth + 1)
        return UNKNOWN

    def _cuda_name(self, name: str, owner: Scope, depth: int):
        """is_cuda_device of a name assigned in `owner`: True if any value is CUDA."""
        results = [UNKNOWN if v is None else self.is_cuda_device(v, owner, depth + 1) for v in owner.assignments[name]]
        if True in results:
            return True
        return False if results and all(r is False for r in results) else UNKNOWN


def _bound_name(statement: cst.SimpleStatementLine | None) -> str | None:
    """The name a statement binds alone (`device = ...`), or None."""
    if statement is None or len(statement.body) != 1 or type(statement.body[0]) is not cst.Assign:
        return None
    targets = statement.body[0].targets
    return targets[0].target.value if len(targets) == 1 and type(targets[0].target) is cst.Name else None


def _used(statement: cst.CSTNode, name: str) -> bool:
    """Whether `statement` uses `name` other than by binding it or showing it (`print(name)`,
    an f-string)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name and node.value == name:
            return True
        if type(node) is cst.AssignTarget and type(node.target) is cst.Name or type(node) is cst.FormattedString:
            continue
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in ("print", "display"):
            stack.extend(arg.value for arg in node.args if not (type(arg.value) is cst.Name and arg.value.value == name))
        elif type(node) is cst.Attribute:
            stack.append(node.value)  # (not `.attr`: `torch.device` is no use of `device`)
        elif type(node) is cst.Arg:
            stack.append(node.value)  # (nor a keyword: `to(device=d)`)
        else:
            stack.extend(children(node))
    return False
