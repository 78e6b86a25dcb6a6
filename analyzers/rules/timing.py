"""TPL2xx: synchronization and timing of asynchronous CUDA work."""

from __future__ import annotations

import libcst as cst

from ..context import Context, Scope, Site, call_name, children, dotted, remembered, short_code
from ..findings import Edit, Range
from .base import CallNames, Example, FixPlan, InsertLineBefore, Rule
from .cells import cell_statements

CLOCKS = {
    "time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
    "time.monotonic_ns", "timeit.default_timer",
}
TIMING_MAGICS = {"time", "timeit"}
# Where a text may hold them: IPython's form, or jupyterlab-lsp's rewritten `..._MAGIC("time` ones.
TIMING_MAGIC_TRIGGERS = ("%time", 'MAGIC("time', 'magic("time')
# Namespaces whose public functions run tensor ops (and so queue CUDA kernels on CUDA tensors).
_WORK_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special")
_NOT_WORK = {
    "device", "manual_seed", "no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "save", "load",
    "is_tensor", "compile", "dtype", "finfo", "iinfo", "Size", "is_grad_enabled", "set_num_threads",
    "get_num_threads", "use_deterministic_algorithms", "set_default_dtype", "get_default_dtype", "set_printoptions",
    "set_float32_matmul_precision", "seed", "initial_seed", "is_floating_point", "numel", "typename",
}
_COLLECTIVES = {
    "torch.distributed.all_reduce", "torch.distributed.all_gather", "torch.distributed.broadcast",
    "torch.distributed.reduce_scatter", "torch.distributed.all_to_all", "torch.distributed.reduce",
    "torch.distributed.all_gather_into_tensor", "torch.distributed.reduce_scatter_tensor",
}
_TENSOR_WORK_METHODS = {"backward", "cuda", "mm", "matmul", "bmm", "addmm", "forward", "all_reduce"}
_SYNC_METHODS = {"synchronize", "item", "cpu", "tolist", "numpy", "elapsed_time"}
_MODEL_NAMES = ("model", "net", "module", "encoder", "decoder")


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
        if name == "synchronize" or (type(call.func) is cst.Attribute and name in _SYNC_METHODS):
            return True
        if type(call.func) is cst.Name and name in ("print", "float") and call.args:
            return any(type(a.value) in (cst.Name, cst.Attribute, cst.Subscript) for a in call.args)
        return False

    def is_work(self, call: cst.Call, scope: Scope, depth: int = 0) -> bool:
        qualified = self.ctx.qualname(call.func)
        if qualified is not None:
            namespace, _, name = qualified.rpartition(".")
            if qualified in _COLLECTIVES:
                return True
            return namespace in _WORK_NAMESPACES and not name.startswith("_") and name not in _NOT_WORK
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
        if any(part in name.lower() for part in _MODEL_NAMES):
            return True
        return depth < 1 and self._function_does_work(name, depth)

    def _function_does_work(self, name: str, depth: int) -> bool:
        if name not in self._function_work:
            self._function_work[name] = False
            function = self.functions.get(name)
            if function is not None:
                scope = self.ctx.scopes.get(id(function), self.ctx.module_scope)
                self._function_work[name] = any(self.is_work(c, scope, depth + 1) for c in calls_in_order(function.body))
        return self._function_work[name]

    def unsynced_work(self, calls: list[cst.Call], scope: Scope) -> cst.Call | None:
        """The last call launching work with no synchronization after it, if any."""
        pending = None
        for call in calls:
            if self.is_sync(call):
                pending = None
            elif self.is_work(call, scope):
                pending = call
        return pending


def _functions(ctx: Context) -> dict[str, cst.FunctionDef]:
    return {name: defs[-1][0] for name, defs in ctx.functions.items()}


class UnsynchronizedTiming(Rule):
    """
    ## What it does
    Finds an interval read from `time.time()`, `time.perf_counter()`, `time.monotonic()`
    or `timeit.default_timer()` whose body launches CUDA work with no synchronization
    before the end read (`torch.cuda.synchronize()`, an event's `synchronize()` or
    `elapsed_time()`, or an implicit sync such as `.item()`, `.cpu()`, `.tolist()`, or
    printing a tensor). Only in code that uses CUDA.

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
    calls = CallNames(frozenset(name.rpartition(".")[2] for name in CLOCKS))
    name = "unsynchronized-timing"
    summary = "Wall-clock interval around CUDA work without torch.cuda.synchronize()"
    fixable = True
    probe = "timing"
    VALID = (
        Example(
            "import time, torch\nx = torch.randn(8, 8).cuda()\nstart = time.time()\ny = x @ x\n"
            "torch.cuda.synchronize()\nprint(time.time() - start)\n"
        ),
        Example(
            "import time, torch\nx = torch.randn(8, 8, device='cuda')\nt0 = time.perf_counter()\n"
            "loss = (x @ x).sum()\nvalue = loss.item()\nt1 = time.perf_counter()\nprint(t1 - t0)\n"
        ),
        Example("import time, torch\nx = torch.randn(8, 8)\nstart = time.time()\ny = x @ x\nprint(time.time() - start)\n"),
        Example(
            "import time, torch\ndevice = 'cuda'\nstart = time.time()\nrows = load_csv('data.csv')\n"
            "print(time.time() - start)\n"
        ),
    )
    INVALID = (
        Example(
            "import time\nimport torch\nx = torch.randn(64, 64).cuda()\nstart = time.perf_counter()\n"
            "y = torch.mm(x, x)\nelapsed = time.perf_counter() - start\n",
            "import time\nimport torch\nx = torch.randn(64, 64).cuda()\ntorch.cuda.synchronize()\n"
            "start = time.perf_counter()\ny = torch.mm(x, x)\ntorch.cuda.synchronize()\n"
            "elapsed = time.perf_counter() - start\n",
        ),
        Example(
            "from time import time\nimport torch as T\nmodel = Net().cuda()\n"
            "for batch in loader:\n    t0 = time()\n    out = model(batch)\n    out.sum().backward()\n"
            "    t1 = time()\n    print(t1 - t0)\n",
            "from time import time\nimport torch as T\nmodel = Net().cuda()\n"
            "for batch in loader:\n    t0 = time()\n    out = model(batch)\n    out.sum().backward()\n"
            "    T.cuda.synchronize()\n    t1 = time()\n    print(t1 - t0)\n",
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.blocks: dict[cst.CSTNode, tuple[Site, list[cst.CSTNode]]] = {}

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
        if self.ctx.cuda_evidence is None:
            return
        work = CudaWork(self.ctx, _functions(self.ctx))
        alias = torch_alias(self.ctx)
        for block, (site, reads) in self.blocks.items():
            if len(reads) < 2:
                continue
            body = list(block.body)
            index = {id(statement): i for i, statement in enumerate(body)}
            for start, end in zip(reads, reads[1:]):
                start_name = _assigned_name(start)
                if start_name is None or not _subtracts(body[index[id(end)]:], start_name):
                    continue
                between = body[index[id(start)] + 1 : index[id(end)]]
                calls = [c for statement in between for c in calls_in_order(statement)]
                calls += _calls_before_clock(end, self.ctx)
                pending = work.unsynced_work(calls, site.scope)
                if pending is None:
                    continue
                before = [c for statement in body[: index[id(start)]] for c in calls_in_order(statement)]
                steps = [InsertLineBefore(Site(end, site.unit, site.scope), f"{alias}.cuda.synchronize()")]
                if work.unsynced_work(before, site.scope) is not None:
                    steps.insert(0, InsertLineBefore(Site(start, site.unit, site.scope), f"{alias}.cuda.synchronize()"))
                fix = FixPlan("Synchronize CUDA before reading the clock", tuple(steps)) if alias else None
                self.report(
                    Site(end, site.unit, site.scope),
                    f"This interval times asynchronous CUDA work (`{short_code(pending)}`) without "
                    "synchronizing: the clock stops before the GPU finishes. Call "
                    "torch.cuda.synchronize() before reading the clock (or time with "
                    "torch.cuda.Event(enable_timing=True)).",
                    fix,
                )


def _assigned_name(statement: cst.SimpleStatementLine) -> str | None:
    small = statement.body[0] if statement.body else None
    if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
        if type(small.value) is cst.Call:
            return small.targets[0].target.value
    return None


def _subtracts(statements: list[cst.CSTNode], name: str) -> bool:
    """Whether any of the statements computes `... - name` (the interval is used)."""
    return any(name in _subtracted(statement) for statement in statements)


def _subtracted(statement: cst.CSTNode) -> frozenset[str]:
    """The names `n` of the `... - n` the statement computes (remembered)."""

    def names() -> frozenset[str]:
        found, stack = set(), [statement]
        while stack:
            node = stack.pop()
            if (type(node) is cst.BinaryOperation and type(node.operator) is cst.Subtract
                    and type(node.right) is cst.Name):
                found.add(node.right.value)
            stack.extend(children(node))
        return frozenset(found)

    return remembered(_subtracted, statement, names)


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
    the first line of its cell (IPython refuses such a cell: severity error).

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
    fixable = True
    probe = "timing"
    VALID = (
        Example(("import torch\nx = torch.randn(8, 8, device='cuda')", "%%time\ny = x @ x\ntorch.cuda.synchronize()")),
        Example(("import torch\nx = torch.randn(8, 8)", "%%time\ny = x @ x")),
        Example(("import torch\nx = torch.ones(3).cuda()", "%timeit x.sum().item()")),
        Example(("import torch\nx = torch.ones(3).cuda()", "%%time\nprint('hello')")),
        Example(("import torch\nx = torch.ones(3).cuda()", "%%capture\n%%time\ny = x.sum().item()")),
        Example(("import torch", "%%writefile bench.py\nimport torch\n%%time\n")),
    )
    INVALID = (
        Example(
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%%time\ny = torch.mm(x, x)\n"),
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%%time\ny = torch.mm(x, x)\ntorch.cuda.synchronize()\n"),
        ),
        Example(
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%timeit -n 10 torch.mm(x, x)"),
            ("import torch\nx = torch.randn(64, 64, device='cuda')", "%timeit -n 10 torch.mm(x, x); torch.cuda.synchronize()"),
        ),
        Example(("import torch\nx = torch.ones(3).cuda()", "torch.cuda.synchronize()\n%%time\ny = x * 2")),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.modules: dict[int, cst.Module] = {}

    def visit_Module(self, node: cst.Module) -> None:
        self.modules[self.ctx.unit] = node

    def finish(self) -> None:
        work = CudaWork(self.ctx, _functions(self.ctx))
        alias = torch_alias(self.ctx)
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
                    calls = [c for statement in statements for c in calls_in_order(statement)]
                    if work.unsynced_work(calls, scope) is None:
                        continue
                    end_line, end_col = block.tail
                    tail = unit.line(end_line)[:end_col]
                    insert = f"{alias}.cuda.synchronize()\n" if tail == "" else f"\n{alias}.cuda.synchronize()\n"
                    at = Range(end_line, end_col, end_line, end_col)
                else:
                    statement = _parse_statement(magic.statement)
                    if statement is None or work.unsynced_work(calls_in_order(statement), scope) is None:
                        continue
                    at = Range(magic.line, magic.end, magic.line, magic.end)
                    insert = f"; {alias}.cuda.synchronize()"
                fix = FixPlan("Synchronize CUDA at the end of the timed code", (Edit(unit.cell, at, insert),)) if alias else None
                self.report(
                    site,
                    f"%{'%' if magic.is_cell_magic else ''}{magic.name} times asynchronous CUDA work without "
                    "a synchronize at the end, so it measures the kernel launches, not the work: end "
                    "the timed code with torch.cuda.synchronize().",
                    fix,
                    at=(unit_index, whole),
                )


def _parse_statement(text: str | None) -> cst.Module | None:
    if not text:
        return None
    try:
        return cst.parse_module(text)
    except Exception:
        return None

