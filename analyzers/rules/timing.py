"""TPL2xx: synchronization and timing of asynchronous CUDA work."""

from __future__ import annotations

import libcst as cst

from ..context import Context, Scope, Site
from ..nodes import (
    argument, call_name, call_result_name, children, dotted, keyword, legacy_read, literal, names_in, remembered, short_code,
    statement_assignments, subtracts, walk,
)
from ..findings import Edit, Range
from ..parse import parse_snippet
from ..project import call_target, host_reads, maybe_project_call, syncs, used_arguments
from .base import CallNames, Example, FixPlan, InsertLineBefore, Rule
from .cells import cell_statements
from .tracking import TrainingSteps
from ..vocabulary import (
    CLOCK_NAMES, CLOCKS, CUDA_STRING, HOST_FACTORIES, MODEL_WORDS, NOT_TENSOR_OPS, SAME_DEVICE_METHODS, SYNC_METHODS,
    TENSOR_NAMESPACES,
)

TIMING_MAGICS = {"time", "timeit"}
# Where a text may hold them: IPython's form, or jupyterlab-lsp's rewritten `..._MAGIC("time` ones.
TIMING_MAGIC_TRIGGERS = ("%time", 'MAGIC("time', 'magic("time')
# Namespaces whose public functions run tensor ops (and so queue CUDA kernels on CUDA tensors).
_WORK_NAMESPACES = ("torch", *TENSOR_NAMESPACES)
# Their functions that queue no kernel: those that return no tensor, and settings and queries.
_NOT_WORK = NOT_TENSOR_OPS | {
    "set_grad_enabled", "is_tensor", "Size", "is_grad_enabled", "set_num_threads", "get_num_threads",
    "set_default_dtype", "get_default_dtype", "set_printoptions", "set_float32_matmul_precision", "is_floating_point",
}
_COLLECTIVES = {
    "torch.distributed.all_reduce", "torch.distributed.all_gather", "torch.distributed.broadcast",
    "torch.distributed.reduce_scatter", "torch.distributed.all_to_all", "torch.distributed.reduce",
    "torch.distributed.all_gather_into_tensor", "torch.distributed.reduce_scatter_tensor",
}
_TENSOR_WORK_METHODS = {"backward", "cuda", "mm", "matmul", "bmm", "addmm", "forward", "all_reduce"}


def guarded_sync(alias: str) -> str:
    """The synchronize a fix inserts: a no-op where CUDA is not available, so the fixed
    program still runs on a CPU-only torch where the original did (one expression: it fits
    a line of its own and after `;` in a `%time` line alike)."""
    return f"{alias}.cuda.synchronize() if {alias}.cuda.is_available() else None"


def torch_alias(ctx: Context) -> str | None:
    """The local name bound to the `torch` module, if any."""
    for local, qualified in ctx.imports.items():
        if qualified == "torch":
            return local
    return None


def calls_in_order(node: cst.CSTNode) -> list[cst.Call]:
    """Calls under `node` in evaluation order (arguments before the call; a conditional
    expression's test first), skipping nested defs. Remembered for the analysis."""
    return list(remembered(calls_in_order, node, lambda: _calls_in_order(node)))


def _calls_in_order(node: cst.CSTNode) -> list[cst.Call]:
    found = []
    stack: list = [(node, False)]
    while stack:  # post-order, iteratively (a recursive closure would be garbage in a cycle)
        current, done = stack.pop()
        if done:
            found.append(current)
        elif type(current) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            if type(current) is cst.Call:
                stack.append((current, True))
            stack.extend((child, False) for child in reversed(children(current)))
    return found


class CudaWork:
    """Classifies calls as launching CUDA work or synchronizing with the device."""

    def __init__(self, ctx: Context, functions: dict[str, cst.FunctionDef]) -> None:
        self.ctx = ctx
        self.functions = functions
        self._function_work: dict[str, bool] = {}

    def is_sync(self, call: cst.Call) -> bool:
        qualified = self.ctx.qualname(call.func) or ""
        if qualified == "torch.cuda.synchronize":
            return True
        name = call_name(call)
        if name == "synchronize" or (type(call.func) is cst.Attribute and name in SYNC_METHODS):
            return True
        if type(call.func) is cst.Name and name in ("print", "float", "int", "bool") and call.args:
            return any(_reduced(a.value) or name in ("print", "float") and (type(a.value) in _VALUES or _formats_a_value(a.value))
                       for a in call.args)
        return qualified == "torch.save"  # (copies the tensors it saves to the host)

    def is_work(self, call: cst.Call, scope: Scope, depth: int = 0) -> bool:
        qualified = self.ctx.qualname(call.func)
        if qualified is not None:
            namespace, _, last = qualified.rpartition(".")
            if qualified in _COLLECTIVES:
                return True
            return namespace in _WORK_NAMESPACES and not last.startswith("_") and last not in _NOT_WORK
        name = call_name(call)
        if type(call.func) is cst.Attribute:
            if name == "step":  # optimizer.step() launches kernels; prof.step(), scheduler.step() do not
                receiver = (dotted(call.func.value) or "").rsplit(".", 1)[-1].lower()
                return "opt" in receiver
            return name in _TENSOR_WORK_METHODS
        if type(call.func) is not cst.Name:
            return False
        origin = self.ctx.origin(call.func, scope)
        if origin is not None and type(origin[0]) is cst.Call:
            made = origin[0]
            made_qualified = self.ctx.qualname(made.func) or ""
            if call_name(made) in ("cuda", "to") or made_qualified.startswith("torch."):
                return True
        called = call.func.value  # (`name`, for a bare name)
        if any(part in called.lower() for part in MODEL_WORDS):
            return True
        return depth < 1 and self._function_does_work(called, depth)

    def _function_does_work(self, name: str, depth: int) -> bool:
        if name not in self._function_work:
            self._function_work[name] = False
            function = self.functions.get(name)
            if function is not None:
                scope = self.ctx.scopes.get(id(function), self.ctx.module_scope)
                self._function_work[name] = any(self.is_work(c, scope, depth + 1) for c in calls_in_order(function.body))
        return self._function_work[name]


def _functions(ctx: Context) -> dict[str, cst.FunctionDef]:
    return {name: defs[-1][0] for name, defs in ctx.functions.items()}


# DeepSpeed's device abstraction: the GPU (or another asynchronous accelerator) in DeepSpeed code.
_ACCELERATORS = {
    "deepspeed.get_accelerator", "deepspeed.accelerator.get_accelerator",
    "deepspeed.accelerator.real_accelerator.get_accelerator",
}
# torch.cuda queries that say nothing about where the values live.
_CUDA_QUERIES = {"torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.is_initialized"}
SYNC, WORK = "sync", "work"
_LOOP_END = object()  # marks where a loop's events end (its start is the loop node itself)


def events_in_order(node: cst.CSTNode) -> tuple:
    """What a timed statement does, in evaluation order: its calls, its `@` products (tensor
    work without a call), and its loops (the For/While node before its events, _LOOP_END
    after them), skipping nested defs. Remembered for the analysis."""
    return remembered(events_in_order, node, lambda: _events_in_order(node))


def _events_in_order(node: cst.CSTNode) -> tuple:
    found = []
    stack: list = [(node, False)]
    while stack:
        current, done = stack.pop()
        if done:
            found.append(current)
            continue
        kind = type(current)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if kind is cst.For or kind is cst.While:
            found.append(current)
            stack.append((_LOOP_END, True))
        elif kind is cst.Call or (kind is cst.BinaryOperation and type(current.operator) is cst.MatrixMultiply) or (
                kind is cst.AugAssign and type(current.operator) is cst.MatrixMultiplyAssign) or (
                kind is cst.Subscript and legacy_read(current) is not None):  # (`loss.data[0]`: a read on the host)
            stack.append((current, True))
        stack.extend((child, False) for child in reversed(children(current)))
    return tuple(found)


class TimedWork:
    """What the timed code leaves queued on the device when the clock is read: CudaWork's
    classification of calls, plus `@` products, blocking copies (which synchronize), and the
    functions of the source it calls, followed to what they leave queued."""

    _DEPTH = 4

    def __init__(self, ctx: Context, functions: dict[str, cst.FunctionDef], copies_sync: bool = True) -> None:
        self.ctx = ctx
        self.functions = functions
        self.calls = CudaWork(ctx, functions)
        self.copies_sync = copies_sync  # False: count only explicit syncs (where a spare one is harmless)
        self._summaries: dict[int, str | None] = {}  # id(function) -> SYNC, WORK or None

    def pending(self, events, scope: Scope, depth: int = 0):
        """The last work event with no synchronization after it, if any. A loop whose body
        synchronizes leaves at most one pass of work queued: it ends synchronized."""
        pending, syncs = None, 0
        loops: list[int] = []  # the synchronizations before each loop being passed
        for event in events:
            if event is _LOOP_END:
                if loops and syncs > loops.pop():
                    pending = None
                continue
            kind = type(event)
            if kind is cst.For or kind is cst.While:
                loops.append(syncs)
                continue
            effect = self.effect(event, scope, depth)
            if effect is SYNC:
                pending, syncs = None, syncs + 1
            elif effect is WORK:
                pending = event
        return pending, syncs

    def effect(self, event, scope: Scope, depth: int = 0) -> str | None:
        if type(event) is cst.Subscript:
            return SYNC  # `loss.data[0]`
        if type(event) is not cst.Call:
            return WORK  # a @ b
        function = self._function(event)
        if function is not None:
            return self._summary(function, depth)
        if self.is_sync(event, scope) or self._reads_on_host(event, scope) or self._waits(event, scope):
            return SYNC
        return WORK if self.calls.is_work(event, scope, 1) else None

    def _waits(self, call: cst.Call, scope: Scope) -> bool:
        """A function or method of another module of the project that waits for the device
        (`engine.train(...)` reading `loss.item()` every step, `save_model(...)` calling
        `torch.save`)."""
        return maybe_project_call(self.ctx, call.func) and syncs(call_target(self.ctx, call.func, scope)) is not None

    def _reads_on_host(self, call: cst.Call, scope: Scope) -> bool:
        """A function or method of the project that reads an argument of this call on the host
        (`tracker.update(loss)` calling `loss.item()`): a sync when that value is on the GPU."""
        if not call.args or not maybe_project_call(self.ctx, call.func):
            return False
        return bool(used_arguments(self.ctx, call, scope, host_reads)[1])

    def is_sync(self, call: cst.Call, scope: Scope) -> bool:
        """CudaWork's syncs, and blocking copies: to the host (`.to("cpu")`), or from a
        tensor just made in host memory to the device (`torch.tensor(v).to(device)`), which
        PyTorch follows with a stream synchronize."""
        if self.calls.is_sync(call):
            return True
        func = call.func
        if not self.copies_sync or type(func) is not cst.Attribute or func.attr.value not in ("to", "cuda"):
            return False
        blocking = keyword(call, "non_blocking")
        if blocking is not None and literal(blocking.value) is not False:
            return False
        if func.attr.value == "to":
            target = argument(call, 0, "device")
            if target is not None and self.ctx.is_cuda_device(target, scope) is False:
                return True  # to the host
            if target is None or self.ctx.is_dtype(target):
                return False
        return self._host_made(func.value, scope, 0)

    def _host_made(self, made: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        """A tensor just made in host memory: a torch factory without a device, through casts
        and reshapes (`torch.from_numpy(img).float().div(255.0)`, `.to(torch.float)`), or a name bound to such
        tensors and otherwise only to what it makes of itself (`img = img.cuda()`)."""
        if depth > 4:
            return False
        if type(made) is cst.Name:
            owner = scope.owner_of(made.value)
            if owner is None:
                return False
            values = [v for v in owner.assignments.get(made.value, ()) if v is not None]
            host = [v for v in values if self._host_made(v, owner, depth + 1)]
            return bool(host) and all(v in host or made.value in names_in(v) for v in values)
        if type(made) is not cst.Call:
            return False
        qualified = self.ctx.qualname(made.func) or ""
        namespace, _, name = qualified.rpartition(".")
        if namespace == "torch" and name in HOST_FACTORIES:
            return keyword(made, "device") is None
        cast_only = made.func.attr.value == "to" and len(made.args) == 1 and self.ctx.is_dtype(made.args[0].value) \
            if type(made.func) is cst.Attribute else False  # `.to(torch.float)`
        return type(made.func) is cst.Attribute and (made.func.attr.value in SAME_DEVICE_METHODS or cast_only) and self._host_made(
            made.func.value, scope, depth + 1)

    def _function(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function of this source a call runs: `helper(...)`, or `self.method(...)`."""
        func = call.func
        if type(func) is cst.Name:
            name = func.value
            if name in self.ctx.imports:
                return None
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            name = func.attr.value
        else:
            return None
        return self.functions.get(name)

    def _summary(self, function: cst.FunctionDef, depth: int) -> str | None:
        """What a call of `function` leaves: SYNC (it synchronizes after its last work), WORK
        (work still queued when it returns) or None (neither, as far as can be seen)."""
        key = id(function)
        if key in self._summaries:
            return self._summaries[key]
        if depth >= self._DEPTH:
            scope = self.ctx.module_scope
            return WORK if any(self.calls.is_work(c, scope, 1) for c in calls_in_order(function.body)) else None
        self._summaries[key] = None  # a recursive call adds nothing
        scope = self.ctx.scopes.get(id(function), self.ctx.module_scope)
        events = events_in_order(function.body)
        pending, syncs = self.pending(events, scope, depth + 1)
        summary = WORK if pending is not None else SYNC if syncs else None
        self._summaries[key] = summary
        return summary


class CudaValues:
    """Whether code reads values tied to CUDA: made or moved there (`.cuda()`, `.to(device)`
    or `device=` with a CUDA device, `torch.cuda.*`, DeepSpeed's accelerator), through the
    names and attributes it reads, their assignments, the arguments a function's parameters
    receive at its calls in the source, and the bodies of the functions of the source it
    calls. A file that mentions CUDA elsewhere, or a callee named like a model, is not
    evidence. Each name is resolved once per analysis."""

    _DEPTH = 12

    def __init__(self, ctx: Context, functions: dict[str, cst.FunctionDef], moves: list) -> None:
        self.ctx = ctx
        self.functions = functions
        self.moves = moves  # in-place moves (`model.to(device)` statements): (receiver, call, scope)
        self._names: dict[tuple, bool] = {}  # (name, id(its scope)) -> whether any value it holds is CUDA
        self._reached: dict[tuple, bool] = {}  # (id(value), id(scope)) -> the same, for one assignment
        self._attributes: dict[str, bool] = {}
        self._bodies: dict[int, bool] = {}
        self._moved: tuple[dict, dict] | None = None

    def read_by(self, nodes, scope: Scope, reaching=None) -> bool:
        """Whether the code of `nodes` reads CUDA values; `reaching(name)` gives the value a
        name holds where the code starts, when the statements above say so."""
        return any(self._walk(node, scope, reaching, 0) for node in nodes)

    def _walk(self, node: cst.CSTNode, scope: Scope, reaching, depth: int) -> bool:
        if depth > self._DEPTH:
            return False
        stack: list[cst.CSTNode] = [node]
        while stack:
            current = stack.pop()
            if type(current) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                continue
            if type(current) is cst.Call:
                if self._call(current, scope, depth):
                    return True
                stack.append(current.func)
                stack.extend(arg.value for arg in current.args)
            elif type(current) is cst.Attribute:
                key = dotted(current)
                if key is not None and self._attribute(key, depth):
                    return True
                stack.append(current.value)
            elif type(current) is cst.Name:
                if self._name(current.value, scope, reaching, depth):
                    return True
            elif type(current) is cst.SimpleString:
                if CUDA_STRING.match(current.value):
                    return True
            elif type(current) is cst.Assign or type(current) is cst.NamedExpr:
                stack.append(current.value)
            elif type(current) is cst.AnnAssign:
                if current.value is not None:
                    stack.append(current.value)
            elif type(current) is cst.For:
                stack.extend((current.iter, current.body))
            elif type(current) is cst.WithItem:
                stack.append(current.item)
            elif type(current) is cst.Arg:
                stack.append(current.value)
            else:
                stack.extend(children(current))
        return False

    def _call(self, call: cst.Call, scope: Scope, depth: int) -> bool:
        func = call.func
        name = call_name(call)
        if type(func) is cst.Attribute and name == "cuda":
            return True
        qualified = self.ctx.qualname(func) or ""
        if (qualified.startswith("torch.cuda.") and qualified not in _CUDA_QUERIES) or qualified in _ACCELERATORS:
            return True
        device = keyword(call, "device")
        if device is not None and self._device(device.value, scope, depth):
            return True
        if type(func) is cst.Attribute and name == "to":
            target = argument(call, 0, "device")
            if target is not None and self._device(target, scope, depth):
                return True
        if type(func) is cst.Name and func.value in self.functions and func.value not in self.ctx.imports:
            return self._body(self.functions[func.value], depth)
        return False

    def _device(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        return self.ctx.is_cuda_device(expr, scope) is True or self._walk(expr, scope, None, depth + 1)

    def _name(self, name: str, scope: Scope, reaching, depth: int) -> bool:
        if reaching is not None:
            found = reaching(name)
            if found is not None:  # the assignment the statements above end with
                value, owner, *deeper = found  # (and what reaches that assignment, when the lookup knows)
                reached = (id(value), id(owner))
                result = self._reached.get(reached)
                if result is None:
                    self._reached[reached] = False
                    host = type(value) is cst.Call and type(value.func) is cst.Attribute and call_name(value) == "cpu"
                    result = not host and (self._walk(value, owner, deeper[0] if deeper else None, depth + 1)
                                           or self._moved_name(name, owner))
                    self._reached[reached] = result
                return result
        if name in self.ctx.imports:
            return False
        owner = scope.owner_of(name)
        if owner is None:
            return False
        key = (name, id(owner))
        found = self._names.get(key)
        if found is None:
            self._names[key] = False  # a cycle adds nothing
            found = any(v is not None and self._walk(v, owner, None, depth + 1) for v in owner.assignments[name])
            found = found or self._moved_name(name, owner) or self._passed(name, owner, depth)
            self._names[key] = found
        return found

    def _attribute(self, key: str, depth: int) -> bool:
        found = self._attributes.get(key)
        if found is None:
            self._attributes[key] = False
            values = self.ctx.attributes.get(key, ())
            found = any(v is not None and self._walk(v, s, None, depth + 1) for v, s in values)
            found = found or key in self._moves()[1]
            self._attributes[key] = found
        return found

    def _passed(self, name: str, owner: Scope, depth: int) -> bool:
        """Whether a parameter receives CUDA values at some call of its function in the source."""
        function = owner.node
        if type(function) is not cst.FunctionDef or name not in owner.params:
            return False
        index = owner.params.index(name)
        method = bool(owner.params) and owner.params[0] in ("self", "cls")
        for site in self.ctx.calls.get(function.name.value, ())[:20]:
            call = site.node
            if method != (type(call.func) is cst.Attribute):
                continue  # `model.train()` is not a call of a function `train`
            passed = self.ctx.call_argument(call, index - 1 if method else index, name, site.scope)
            if passed and self._walk(passed[0], passed[1], None, depth + 1):
                return True
        return False

    def _body(self, function: cst.FunctionDef, depth: int) -> bool:
        found = self._bodies.get(id(function))
        if found is None:
            self._bodies[id(function)] = False
            scope = self.ctx.scopes.get(id(function), self.ctx.module_scope)
            found = self._bodies[id(function)] = self._walk(function.body, scope, None, depth + 1)
        return found

    def _moves(self) -> tuple[dict, dict]:
        """The names (by scope) and attributes moved to CUDA in place (`model.to(device)`)."""
        if self._moved is None:
            names, attributes = {}, {}
            for receiver, call, scope in self.moves:
                target = argument(call, 0, "device")
                if call_name(call) == "cuda" or (target is not None and self._device(target, scope, 0)):
                    if type(receiver) is cst.Name:
                        owner = scope.owner_of(receiver.value) or scope
                        names[(receiver.value, id(owner))] = True
                    else:
                        attributes[dotted(receiver)] = True
            self._moved = (names, attributes)
        return self._moved

    def _moved_name(self, name: str, owner: Scope) -> bool:
        return (name, id(owner)) in self._moves()[0]


def _in_place_move(node: cst.Expr) -> tuple[cst.BaseExpression, cst.Call] | None:
    """The receiver and call of a statement moving a module in place (`model.to(device)`)."""
    value = node.value
    if type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in ("to", "cuda"):
        return value.func.value, value
    return None


def _reaching(body: list, index: int, scope: Scope, earlier: tuple = ()):
    """`lookup(name)`: the (value, scope, lookup of what reaches it) of the plain assignment to
    `name` that the statements of a block above `index` end with (then those of the `earlier`
    blocks, last first: a notebook's cells above), or None (not assigned there, or bound in a
    way that does not say what: the caller then looks at all its assignments)."""
    statements = [*(statement for block in earlier for statement in block), *body[:index]]

    def before(limit: int):
        cache: dict = {}

        def lookup(name: str):  # (value, scope, the lookup of the statements above that assignment)
            if name not in cache:
                cache[name] = None
                for at in range(limit - 1, -1, -1):
                    assigned = statement_assignments(statements[at])
                    if name in assigned:
                        value = assigned[name]
                        cache[name] = None if value is None else (value, scope, before(at))
                        break
            return cache[name]

        return lookup

    return before(len(statements))


class UnsynchronizedTiming(Rule):
    """
    ## What it does
    Finds an interval read from `time.time()`, `time.perf_counter()`, `time.monotonic()`
    or `timeit.default_timer()` whose body launches CUDA work (a torch op, a model call,
    `backward`, `optimizer.step()`, an `a @ b` product) with no synchronization before the
    end read: `torch.cuda.synchronize()`, an event's `synchronize()` or `elapsed_time()`,
    or an implicit sync such as `.item()`, `.cpu()`, `.tolist()`, `float(t)`, PyTorch 0.3's
    `loss.data[0]`, printing a tensor, or a blocking copy (`.to("cpu")`, or a tensor just made on the host copied to
    the device: `img = torch.from_numpy(a).float().div(255)`, then `img.cuda()`; casts with
    `.to(torch.float)` too). A function of the same source called in the interval is followed (a few
    calls deep) to what it leaves queued: one that synchronizes after its last work ends
    the interval synchronized. A loop whose body synchronizes leaves at most one pass
    queued and counts as synchronized. Silent for an interval around several epochs of
    training (a loop around the loop that steps an optimizer, or around a call of a function
    that loops over the steps): what is left queued at its end is a step or two of many; and
    for an interval whose value nothing in a script reads (`dt = time.time() - time0`, its
    print commented out).

    Only when the timed code reads values tied to CUDA: made or moved there (`.cuda()`,
    `.to(device)` or `device=` with a CUDA device, `torch.cuda.*`, DeepSpeed's
    `get_accelerator()`), followed through names (the assignment the statements above
    the interval end with, in a notebook the cells above too, and so on for the names that
    assignment reads, else all of a name's assignments; not what `.cpu()` gives back: a
    notebook timing `model = model.cpu()` before `model = model.cuda()`), `self.` attributes, modules
    moved in place (`model.to(device)`), the arguments a parameter receives at the
    function's calls in the source, and the functions of the source called. A file that
    mentions CUDA elsewhere, or a callee named like a model, is not evidence: timed work
    on host tensors is left alone.

    ## Why is this bad?
    CUDA calls return as soon as the work is queued. The clock then measures the launch,
    not the work: a 4096x4096 matmul "takes" microseconds, and the real cost shows up in
    whatever line happens to synchronize next.

    ## Example
    ```python
    start = time.perf_counter()
    y = model(x)
    elapsed = time.perf_counter() - start
    ```

    ## Fix
    ```python
    start = time.perf_counter()
    y = model(x)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    ```
    (and a synchronize before the start read when CUDA work is still queued there), or
    time with `torch.cuda.Event(enable_timing=True)`.
    """

    code = "TPL201"
    triggers = ("perf_counter", "time(", "monotonic", "default_timer", "time_ns")
    calls = CallNames(frozenset(CLOCK_NAMES))
    name = "unsynchronized-timing"
    summary = "Wall-clock interval around CUDA work without torch.cuda.synchronize()"
    probe = "timing"
    VALID = (
        # an epoch timed whose every step ends reading the loss on the host, PyTorch 0.3's way
        Example(
            """
            import time
            import torch
            from torch.autograd import Variable
            model = Net().cuda()
            for epoch in range(10):
                since = time.time()
                for x, y in loader:
                    loss = criterion(model(Variable(x).cuda()), Variable(y).cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    running_loss += loss.data[0]
                print(time.time() - since)
            """
        ),
        # a notebook timing the model on the CPU (moved there in the cell above), then on the GPU
        Example(
            (
                "%matplotlib inline\nimport time\nimport torch\nmodel = Net().cuda()\nx = torch.from_numpy(image).float()\n",
                "model = model.cpu()\n",
                "start = time.time()\nout = model(x)\nprint(time.time() - start)\n",
            ),
        ),
        # the interval ends with a blocking copy of an image just made on the host
        Example(
            """
            import time
            import numpy as np
            import torch
            def do_detect(model, img):
                t0 = time.time()
                img = torch.from_numpy(img.transpose(2, 0, 1)).float().div(255.0).unsqueeze(0)
                img = img.cuda()
                t1 = time.time()
                print("preprocess", t1 - t0)
                return model(img)
            """,
        ),
        # NeRF's step time, computed and never shown
        Example(
            """
            import time
            import torch
            def train():
                for i in range(200000):
                    time0 = time.time()
                    loss = model(rays.cuda()).mean()
                    loss.backward()
                    optimizer.step()
                    dt = time.time() - time0
                    # print(f"Step: {i}, Loss: {loss}, Time: {dt}")
            """,
        ),
        # OGB's feature load: NumPy rows cast with `.to(torch.float)`, then a blocking copy
        Example(
            """
            import time
            import torch
            device = torch.device("cuda")
            t = time.perf_counter()
            x_train = dataset.paper_feat[train_idx]
            x_train = torch.from_numpy(x_train).to(torch.float).to(device)
            print(f"Done! [{time.perf_counter() - t:.2f}s]")
            """,
        ),
        # an epoch timed up to a test that reads its counts on the host (`int(... .sum())`): synchronized
        Example(
            """
            import time
            import torch
            def test():
                pred = model(data.x.cuda()).argmax(dim=-1)
                return int((pred == data.y.cuda()).sum()) / len(data.y)
            for epoch in range(1, 201):
                start = time.time()
                train()
                acc = test()
                times.append(time.time() - start)
            """
        ),
        # the time of a whole training run: what is left queued at its end is a step of many epochs
        Example(
            """
            import time
            import torch
            start_time = time.time()
            for epoch in range(num_epochs):
                for x, y in train_loader:
                    cost = F.cross_entropy(model(x.to("cuda")), y.to("cuda"))
                    optimizer.zero_grad()
                    cost.backward()
                    optimizer.step()
            print('Total Training Time: %.2f min' % ((time.time() - start_time) / 60))
            """
        ),
        Example(
            """
            import time, torch
            x = torch.randn(8, 8).cuda()
            start = time.time()
            y = x @ x
            torch.cuda.synchronize()
            print(time.time() - start)
            """,
        ),
        Example(
            """
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            t0 = time.perf_counter()
            loss = (x @ x).sum()
            value = loss.item()
            t1 = time.perf_counter()
            print(t1 - t0)
            """,
        ),
        Example(
            """
            import time, torch
            x = torch.randn(8, 8)
            start = time.time()
            y = x @ x
            print(time.time() - start)
            """,
        ),
        Example(
            """
            import time, torch
            device = 'cuda'
            start = time.time()
            rows = load_csv('data.csv')
            print(time.time() - start)
            """,
        ),
        # CPU work in code that uses CUDA elsewhere: the timed values are host tensors
        Example(
            """
            import time, torch
            device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
            x = torch.zeros(2, 3).to(device)
            x = torch.randn(5000, 5000)
            start = time.time()
            _ = torch.matmul(x, x)
            end = time.time()
            print(end - start)
            """,
        ),
        Example(
            """
            import time, torch
            probe = torch.ones(1).cuda()
            net = SmallNet()
            start = time.perf_counter()
            out = net(torch.randn(4, 3))
            print(time.perf_counter() - start)
            """,
        ),
        # the interval ends after a sync on the result: a blocking copy to the host, float()
        Example(
            """
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            t0 = time.perf_counter()
            y = torch.mm(x, x).to('cpu')
            t1 = time.perf_counter()
            print(t1 - t0)
            """,
        ),
        Example(
            """
            import time, torch
            model = Net().cuda()
            t0 = time.time()
            loss = model(batch).sum()
            value = float(loss)
            print(time.time() - t0)
            """,
        ),
        # a function of the source that synchronizes after its work (its helpers followed)
        Example(
            """
            import time, torch
            def accuracy(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
                return correct
            def train(model, loader, opt):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
                return accuracy(model, loader)
            model = Net().cuda()
            start = time.time()
            acc = train(model, loader, opt)
            print(time.time() - start)
            """,
        ),
        # a loop that synchronizes on every pass (a blocking copy of a new host tensor) leaves one pass queued
        Example(
            """
            import time, torch
            def generate(model, idx, steps):
                for _ in range(steps):
                    logits = model(idx)[:, -1]
                    logits = torch.where(logits < 0, torch.tensor(0.0).to(logits.device), logits)
                    idx = torch.cat((idx, logits.argmax(-1, keepdim=True)), dim=1)
                return idx
            model = GPT().cuda()
            start = time.time()
            out = generate(model, ids.cuda(), 50)
            print(time.time() - start)
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import time
            import torch
            x = torch.randn(64, 64).cuda()
            start = time.perf_counter()
            y = torch.mm(x, x)
            elapsed = time.perf_counter() - start
            print(f"{elapsed:.3f} s")
            """,
            """
            import time
            import torch
            x = torch.randn(64, 64).cuda()
            torch.cuda.synchronize() if torch.cuda.is_available() else None
            start = time.perf_counter()
            y = torch.mm(x, x)
            torch.cuda.synchronize() if torch.cuda.is_available() else None
            elapsed = time.perf_counter() - start
            print(f"{elapsed:.3f} s")
            """,
        ),
        Example(
            """
            from time import time
            import torch as T
            model = Net().cuda()
            for batch in loader:
                t0 = time()
                out = model(batch)
                out.sum().backward()
                t1 = time()
                print(t1 - t0)
            """,
            """
            from time import time
            import torch as T
            model = Net().cuda()
            for batch in loader:
                t0 = time()
                out = model(batch)
                out.sum().backward()
                T.cuda.synchronize() if T.cuda.is_available() else None
                t1 = time()
                print(t1 - t0)
            """,
        ),
        # the @ operator is tensor work
        Example(
            """
            import time, torch
            a = torch.randn(1024, 1024, device='cuda')
            t0 = time.perf_counter()
            c = a @ a
            t1 = time.perf_counter()
            print(t1 - t0)
            """,
            """
            import time, torch
            a = torch.randn(1024, 1024, device='cuda')
            torch.cuda.synchronize() if torch.cuda.is_available() else None
            t0 = time.perf_counter()
            c = a @ a
            torch.cuda.synchronize() if torch.cuda.is_available() else None
            t1 = time.perf_counter()
            print(t1 - t0)
            """,
        ),
        # a function of the source that leaves its work queued
        Example(
            """
            import time, torch
            def train_epoch(model, loader, opt):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            start = time.time()
            train_epoch(model, loader, opt)
            elapsed = time.time() - start
            print(f"{elapsed:.3f} s")
            """,
            """
            import time, torch
            def train_epoch(model, loader, opt):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            start = time.time()
            train_epoch(model, loader, opt)
            torch.cuda.synchronize() if torch.cuda.is_available() else None
            elapsed = time.time() - start
            print(f"{elapsed:.3f} s")
            """,
        ),
        # CUDA values reach the timed code through a parameter
        Example(
            """
            import time, torch
            def bench(model, x):
                t0 = time.perf_counter()
                y = model(x)
                return time.perf_counter() - t0
            bench(Net().cuda(), batch)
            """,
            """
            import time, torch
            def bench(model, x):
                t0 = time.perf_counter()
                y = model(x)
                torch.cuda.synchronize() if torch.cuda.is_available() else None
                return time.perf_counter() - t0
            bench(Net().cuda(), batch)
            """,
        ),
        # DeepSpeed's accelerator is the GPU
        Example(
            """
            import time, torch
            from deepspeed import get_accelerator
            device = torch.device(get_accelerator().device_name())
            for batch in loader:
                start = time.time()
                loss = model(batch.to(device)).loss
                model.backward(loss)
                end = time.time()
                print(end - start)
            """,
            """
            import time, torch
            from deepspeed import get_accelerator
            device = torch.device(get_accelerator().device_name())
            for batch in loader:
                start = time.time()
                loss = model(batch.to(device)).loss
                model.backward(loss)
                torch.cuda.synchronize() if torch.cuda.is_available() else None
                end = time.time()
                print(end - start)
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.blocks: dict[cst.Module | cst.IndentedBlock, tuple[Site, list[cst.SimpleStatementLine]]] = {}
        self.moves: list[tuple[cst.BaseExpression, cst.Call, Scope]] = []  # `model.to(device)` statements
        self.modules: dict[int, cst.Module] = {}  # unit -> its module (a notebook's cells, in order)

    def visit_Module(self, node: cst.Module) -> None:
        self.modules[self.ctx.unit] = node

    def visit_Expr(self, node: cst.Expr) -> None:
        if (move := _in_place_move(node)) is not None:
            self.moves.append((*move, self.ctx.scope))

    def visit_Call(self, node: cst.Call) -> None:
        statement = self.ctx.statement
        if statement is None or self.ctx.qualname(node.func) not in CLOCKS:
            return
        block = self.ctx.blocks[-1]
        if block not in self.blocks:
            self.blocks[block] = (self.ctx.site(block), [])
        reads = self.blocks[block][1]
        if not reads or reads[-1] is not statement:
            reads.append(statement)

    def finish(self) -> None:
        if self.ctx.cuda_evidence is None and not any(
                q in _ACCELERATORS or q == "deepspeed" for q in self.ctx.imports.values()):
            return
        functions = _functions(self.ctx)
        work = TimedWork(self.ctx, functions)
        values: CudaValues | None = None
        before_work: TimedWork | None = None
        alias = torch_alias(self.ctx)
        sync = guarded_sync(alias) if alias else ""  # (no fix without the alias)
        for block, (site, reads) in self.blocks.items():
            if len(reads) < 2:
                continue
            body = list(block.body)
            index = {id(statement): i for i, statement in enumerate(body)}
            for start, end in zip(reads, reads[1:]):
                start_name = call_result_name(start)
                if start_name is None or not subtracts(body[index[id(end)]:], start_name):
                    continue
                between = body[index[id(start)] + 1 : index[id(end)]]
                if _never_read(end, site.scope, self.ctx) or self._whole_training(between):
                    continue  # what is left queued at its end is a step or two of many epochs: a negligible error
                timed = [e for statement in between for e in events_in_order(statement)]
                before_clock = _calls_before_clock(end, self.ctx)
                pending, _ = work.pending(timed + before_clock, site.scope)
                if pending is None:
                    continue
                if values is None:
                    values = CudaValues(self.ctx, functions, self.moves)
                earlier = tuple(self.modules[unit].body for unit in sorted(self.modules) if unit < site.unit) \
                    if type(block) is cst.Module else ()  # (a notebook's cell: the cells above ran before it)
                if not values.read_by([*between, *before_clock], site.scope, _reaching(body, index[id(start)], site.scope, earlier)):
                    continue  # nothing timed is known to be on the GPU: CPU work, or unknown
                before = [e for statement in body[: index[id(start)]] for e in events_in_order(statement)]
                steps = [InsertLineBefore(Site(end, site.unit, site.scope), sync)]
                if before_work is None:  # a synchronize before the start read is cheap: only copies it as needed
                    before_work = TimedWork(self.ctx, functions, copies_sync=False)
                if before_work.pending(before, site.scope)[0] is not None:
                    steps.insert(0, InsertLineBefore(Site(start, site.unit, site.scope), sync))
                fix = FixPlan("Synchronize CUDA before reading the clock", tuple(steps)) if alias else None
                self.report(
                    Site(end, site.unit, site.scope),
                    f"This interval times asynchronous CUDA work (`{short_code(pending)}`) without "
                    "synchronizing: the clock stops before the GPU finishes. Call "
                    "torch.cuda.synchronize() before reading the clock (or time with "
                    "torch.cuda.Event(enable_timing=True)).",
                    fix,
                )


    def _whole_training(self, between: list) -> bool:
        """Whether the timed statements run several epochs of training: a loop around a loop
        that steps (`for epoch ...: for x, y in loader: ... optimizer.step()`), or around a
        call of a function that loops over training steps (`train_epoch(model, loader)`)."""
        steps = TrainingSteps.of(self.ctx)
        return any(type(statement) in (cst.For, cst.While) and steps.per_epoch(statement) for statement in between)


def _never_read(statement: cst.CSTNode, scope: Scope, ctx: Context) -> bool:
    """`dt = time.time() - t0` whose name nothing in a script reads (its print commented out, or
    under `if False:`): a measure that shows nothing (in a notebook, a name is there to look at)."""
    if any(unit.notebook for unit in ctx.units):
        return False
    line = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
    if type(line) is not cst.Assign or len(line.targets) != 1 or type(line.targets[0].target) is not cst.Name:
        return False
    name = line.targets[0].target.value
    nodes = [node for root in ctx.bodies(scope) for node in walk(root)]
    bound = {id(node.target) for node in nodes if type(node) is cst.AssignTarget}  # (`model_time = time.time()` too)
    own = {id(node) for node in walk(line)} | {id(inner) for node in nodes if type(node) is cst.If and literal(
        node.test) in (False, 0) for inner in walk(node.body)}  # (and its print under `if False:`)
    return not any(type(node) is cst.Name and node.value == name and id(node) not in bound and id(node) not in own
                   for node in nodes)


def _calls_before_clock(statement: cst.CSTNode, ctx: Context) -> list[cst.Call]:
    """Calls evaluated in the end-read statement before its clock call."""
    calls = calls_in_order(statement)
    for i, call in enumerate(calls):
        if ctx.qualname(call.func) in CLOCKS:
            return calls[:i]
    return calls


class TimingMagicWithoutSync(Rule):
    """
    ## What it does
    In notebooks, finds `%%time`, `%time`, `%%timeit` and `%timeit` over CUDA work with no
    synchronization at the end of the timed code, and `%%time`/`%%timeit` that is not
    the first line of its cell (IPython refuses such a cell: severity error). Timed code
    that reads no value known to be on the GPU at that point of the notebook (`tensor =
    torch.tensor([1, 2, 3])` ... `%%time torch.matmul(tensor, tensor)`, `%timeit
    torch.randn(784, 10)`) does no CUDA work, however much the notebook uses the GPU
    later; timed code that ends
    waiting for the device (formatting a tensor, `torch.save`, a function of the project
    that reads a value on the host, as `engine.train(...)` reading `loss.item()` every
    step) measures the work.

    ## Why is this bad?
    The magics read the wall clock: without `torch.cuda.synchronize()` they report the
    time to queue the kernels, not to run them. A cell magic below other code is a
    `UsageError` and the cell never runs.

    ## Example
    ```python
    %%time
    y = torch.mm(x, x)
    ```

    ## Fix
    ```python
    %%time
    y = torch.mm(x, x)
    torch.cuda.synchronize()
    ```
    For `%timeit stmt`, time `stmt; torch.cuda.synchronize()`. Move a misplaced
    `%%time` to the first line and put the setup above it into the previous cell.
    """

    code = "TPL202"
    triggers = TIMING_MAGIC_TRIGGERS
    name = "timing-magic-without-sync"
    summary = "%%time/%timeit over CUDA work without synchronize, or a misplaced cell magic"
    probe = "timing"
    VALID = (
        Example(("import torch\nx = torch.randn(8, 8, device='cuda')", "%%time\ny = x @ x\ntorch.cuda.synchronize()")),
        Example(("import torch\nx = torch.randn(8, 8)", "%%time\ny = x @ x")),
        Example(("import torch\ntensor = torch.tensor([1, 2, 3])", "%%time\ntorch.matmul(tensor, tensor)",
                 "device = 'cuda'\nmodel = Net().to(device)")),
        # the timed code ends reading its results: formatting a tensor, saving the weights
        Example(("import torch\nx = torch.ones(3).cuda()",
                 "%%time\nfor i in range(3):\n    total = (x * i).sum()\n    print(f'{i}: {total:.3f}')")),
        Example(("import torch\nmodel = Net().cuda()",
                 "%%time\nfor x in batches:\n    model(x.cuda()).sum().backward()\ntorch.save(model.state_dict(), 'm.pt')")),
        Example(("import torch\nx = torch.ones(3).cuda()", "%timeit x.sum().item()")),
        Example(("import torch\nx = torch.ones(3).cuda()", "%%time\nprint('hello')")),
        Example(("import torch\nx = torch.ones(3).cuda()", "%%capture\n%%time\ny = x.sum().item()")),
        Example(("import torch", "%%writefile bench.py\nimport torch\n%%time\n")),
        # host tensors timed before the notebook moves copies of them to the GPU (fastai's 01_matmul)
        Example(("import torch\nfrom torch import tensor\nx_train, weights = map(tensor, load()), torch.randn(784, 10)",
                 "%timeit -n 10 torch.randn(784, 10)", "%timeit -n 5 _ = torch.matmul(x_train, weights)",
                 "m1c, m2c = x_train.cuda(), weights.cuda()", "%timeit -n 10 r = (m1c @ m2c).cpu()")),
    )
    INVALID = (
        Example(
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%%time\ny = torch.mm(x, x)\n"),
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%%time\ny = torch.mm(x, x)\ntorch.cuda.synchronize() if torch.cuda.is_available() else None\n"),
        ),
        Example(
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%timeit -n 10 torch.mm(x, x)"),
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%timeit -n 10 torch.mm(x, x); torch.cuda.synchronize() if torch.cuda.is_available() else None"),
        ),
        Example(("import torch\nx = torch.ones(3).cuda()", "torch.cuda.synchronize()\n%%time\ny = x * 2")),
        # the `@` operator launches the matmul: only once the tensors are on the GPU
        Example(
            ("import torch\na, b = torch.rand(100, 200), torch.rand(200, 300)", "%timeit a @ b",
             "a, b = a.to('cuda'), b.to('cuda')", "%timeit a @ b"),
            ("import torch\na, b = torch.rand(100, 200), torch.rand(200, 300)", "%timeit a @ b",
             "a, b = a.to('cuda'), b.to('cuda')",
             "%timeit a @ b; torch.cuda.synchronize() if torch.cuda.is_available() else None"),
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.modules: dict[int, cst.Module] = {}
        # module name -> ((unit, line of its top-level statement), value)
        self.bound: dict[str, list[tuple[tuple[int, int], cst.BaseExpression | None]]] = {}
        self.moves: list[tuple[cst.BaseExpression, cst.Call, Scope]] = []  # `model.to(device)` statements
        self.values: CudaValues | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self.modules[self.ctx.unit] = node

    def visit_Expr(self, node: cst.Expr) -> None:
        if (move := _in_place_move(node)) is not None:
            self.moves.append((*move, self.ctx.scope))

    def leave_Assign(self, node: cst.Assign) -> None:
        scope = self.ctx.scope
        if scope is not self.ctx.module_scope:
            return
        for target in node.targets:
            for name in _target_names(target.target):
                self.bound.setdefault(name, []).append(((self.ctx.unit, self.ctx.line), scope.assignments[name][-1]))

    def _operates_on_cuda(self, statements: list, unit: int, line: int) -> bool:
        """Timed code with no calls whose operators (`a @ b`) take a tensor the code before made
        on the GPU: the operator launches the kernel."""
        if any(calls_in_order(statement) for statement in statements):
            return False
        names = [name for statement in statements for name in _operands(statement)]
        return any(self._cuda_before(name, (unit, line)) for name in names)

    def _leaves_work(self, work: TimedWork, statements: list, unit: int, line: int) -> bool:
        """Whether the timed code leaves CUDA work queued when the magic reads the clock: work
        pending at its end, on values it reads that are known to be on the GPU there."""
        events = [event for statement in statements for event in events_in_order(statement)]
        if not any(type(event) is cst.Call for event in events):
            return self._operates_on_cuda(statements, unit, line)
        pending, _ = work.pending(events, self.ctx.module_scope)
        if pending is None or type(pending) is not cst.Call and not self._operates_on_cuda([pending], unit, line):
            return False
        if self.values is None:
            self.values = CudaValues(self.ctx, _functions(self.ctx), self.moves)
        scope = self.ctx.module_scope

        def reaching(name: str):
            values = [value for at, value in self.bound.get(name, ()) if at <= (unit, line)]
            return (values[-1], scope) if values and values[-1] is not None else None

        return self.values.read_by(statements, scope, reaching)

    def _cuda_before(self, name: str, where: tuple[int, int]) -> bool:
        """Whether the value `name` last got before `where` (unit, line) is made on or moved to
        the GPU (in a notebook: the cells before and the lines before in the cell; in one
        document, as jupyterlab-lsp makes of a notebook: the statements before)."""
        values = [value for at, value in self.bound.get(name, ()) if at <= where]
        return bool(values) and type(values[-1]) is cst.Call and self.ctx.made_on_cuda(values[-1], self.ctx.module_scope)

    def finish(self) -> None:
        work = TimedWork(self.ctx, _functions(self.ctx))
        alias = torch_alias(self.ctx)
        sync = guarded_sync(alias) if alias else ""  # (no fix without the alias)
        scope = self.ctx.module_scope
        for unit_index, module in self.modules.items():
            unit = self.ctx.units[unit_index]
            misplaced = unit.misplaced_cell_magics
            site = Site(module, unit_index, scope)
            for magic in unit.magics:
                whole = Range(magic.line, 0, magic.line, len(magic.text))
                if magic in misplaced and magic.name in TIMING_MAGICS:
                    self.report(
                        site,
                        f"%%{magic.name} must be the first line of its cell: IPython refuses this cell "
                        "(UsageError) and nothing runs. Move it to the top and put the code above it "
                        "in the previous cell.",
                        severity="error",
                        at=(unit_index, whole),
                    )
                    continue
                if self.ctx.cuda_evidence is None or magic.name not in TIMING_MAGICS:
                    continue
                if magic.is_cell_magic:
                    block = unit.block_of(magic)
                    statements = cell_statements(module, unit, block) if block is not None else []
                    if not self._leaves_work(work, statements, unit_index, magic.line):
                        continue
                    end_line, end_col = block.tail
                    tail = unit.line(end_line)[:end_col]
                    insert = f"{sync}\n" if tail == "" else f"\n{sync}\n"
                    at = Range(end_line, end_col, end_line, end_col)
                else:
                    statement = parse_snippet(magic.statement)
                    if statement is None or not self._leaves_work(work, [statement], unit_index, magic.line):
                        continue
                    at = Range(magic.line, magic.end, magic.line, magic.end)
                    insert = f"; {sync}"
                fix = FixPlan("Synchronize CUDA at the end of the timed code", (Edit(unit.cell, at, insert),)) if alias else None
                self.report(
                    site,
                    f"%{'%' if magic.is_cell_magic else ''}{magic.name} times asynchronous CUDA work without "
                    "a synchronize at the end, so it measures the kernel launches, not the work: end "
                    "the timed code with torch.cuda.synchronize().",
                    fix,
                    at=(unit_index, whole),
                )


def _target_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds (`a, b = ...` binds both)."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [name for element in target.elements for name in _target_names(element.value)]
    return []


_VALUES = (cst.Name, cst.Attribute, cst.Subscript)
_REDUCTIONS = {"sum", "mean", "max", "min", "norm", "prod", "all", "any", "argmax", "count_nonzero", "detach"}


def _reduced(expr: cst.BaseExpression) -> bool:
    """A tensor reduced or detached (`(pred == y).sum()`, `loss.detach()`): `int()` or
    `float()` of it reads the value on the host."""
    return type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _REDUCTIONS


def _formats_a_value(expr: cst.BaseExpression) -> bool:
    """An f-string formatting a variable (`f"loss {loss:.3f}"`): a tensor's is read on the host."""
    return type(expr) is cst.FormattedString and any(
        type(part) is cst.FormattedStringExpression and type(part.expression) in _VALUES for part in expr.parts)


def _operands(node: cst.CSTNode) -> list[str]:
    """The names that binary operators under `node` take."""
    found = []
    if type(node) is cst.BinaryOperation:
        found += [side.value for side in (node.left, node.right) if type(side) is cst.Name]
    for child in children(node):
        found += _operands(child)
    return found

