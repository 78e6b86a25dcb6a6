"""TPL204-205: what a timed region measures besides the work (compilation, CUDA start-up,
input allocation)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from ..context import Scope, Site, module_below
from ..nodes import UNKNOWN, argument, call_name, call_result_name, code, keyword, literal, short_code, subtracts
from ..parse import parse_snippet
from ..source import Block, Magic
from .base import CallNames, Example
from .cells import cell_statements
from .timing import TIMING_MAGIC_TRIGGERS, calls_in_order
from .tracking import Compiled, CompiledModules, TrainingSteps, all_calls
from ..vocabulary import CLOCK_NAMES, CLOCKS, DEVICE_LIKE, MODEL_WORDS, SIZED_FACTORIES

TIMEIT = {"timeit.timeit", "timeit.repeat", "timeit.Timer"}
BENCHMARK_TIMER = ("torch.utils.benchmark.Timer", "torch.utils.benchmark.utils.timer.Timer")
_TIMERS = {"timeit", "repeat", "Timer"}
_SAFE_MODULES = {
    "time", "timeit", "math", "random", "numpy", "os", "sys", "json", "itertools", "functools", "collections",
    "pathlib", "argparse", "statistics", "gc", "copy", "re",
}
_BUILTINS = {
    "print", "len", "range", "list", "dict", "tuple", "set", "int", "float", "str", "bool", "sum", "min", "max",
    "abs", "round", "enumerate", "zip", "sorted", "isinstance", "getattr", "setattr", "hasattr", "open", "format",
    "repr", "type", "iter", "next", "map", "filter", "any", "all", "super", "object", "vars", "id", "hash",
    "callable", "divmod", "pow", "reversed", "slice", "frozenset", "bytes", "chr", "ord", "hex", "bin", "bytearray",
}
_QUIET_CUDA = (
    "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.synchronize", "torch.cuda.Event",
    "torch.cuda.empty_cache", "torch.cuda.manual_seed", "torch.cuda.reset", "torch.cuda.get_device_name",
    "torch.cuda.max_memory", "torch.cuda.memory",
)
_TORCH_MAY_TOUCH = ("torch.load", "torch.jit.load", "torch.hub.", "torch.distributed.", "torch.nn.parallel.")
_FACTORIES = SIZED_FACTORIES | {"arange", "linspace", "eye"} | {f"{name}_like" for name in SIZED_FACTORIES}


@dataclass
class Region:
    """Code that a clock, a timing magic or a timer runs and measures."""

    site: Site  # where to report when no call inside is to blame
    calls: list[cst.Call]  # the timed calls, as nodes of the pass (empty for a parsed string)
    start: int  # pass sequence number of the region's start, when `opened_by` is None
    repeated: bool  # timeit-style: the statement runs many times
    warms_up: bool = False  # the timer runs the statement before measuring (torch.utils.benchmark)
    parsed: cst.Module | None = None  # a statement given as a string, parsed
    loops: tuple = field(default=())
    opened_by: cst.Call | None = None  # the call whose place in pass order is the region's start


class _TimedRegions(CompiledModules):
    """Collects timed regions: clock intervals, %time/%timeit/%%time/%%timeit and timers.
    Times are pass order: a call's place in `ctx.call_order`."""

    calls = CallNames(frozenset({*CLOCK_NAMES, *_TIMERS, "compile"}))

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._sequence: dict[int, int] | None = None
        self.blocks: dict[cst.Module | cst.IndentedBlock, tuple[Site, list[cst.SimpleStatementLine]]] = {}
        self.magic_lines: list[tuple[Site, Magic]] = []
        self.cells: dict[int, tuple[cst.Module, list[tuple[Magic, Block]]]] = {}
        self.timers: list[tuple[Site, int]] = []
        self.classes: dict[str, cst.ClassDef] = {}

    def visit_Module(self, node: cst.Module) -> None:
        heads = self.ctx.units[self.ctx.unit].heads() if self.ctx.units else []
        timed = [(magic, block) for magic, block in heads if magic.name in ("time", "timeit")]
        if timed:
            self.cells[self.ctx.unit] = (node, timed)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes[node.name.value] = node

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) > 1 and type(node.body[0]) is cst.Pass and self.ctx.units:
            magic = self._magic_of(node)
            if magic is not None:
                self.magic_lines.append((self.ctx.site(node), magic))

    def _magic_of(self, line: cst.SimpleStatementLine) -> Magic | None:
        """The `%time`/`%timeit` magic whose statement the masked line `pass; stmt` holds."""
        taken = {id(m) for _, m in self.magic_lines}
        text = code(line).rstrip()
        for magic in self.ctx.units[self.ctx.unit].magics:
            if magic.statement and id(magic) not in taken and text.endswith(magic.statement.rstrip()):
                return magic
        return None

    def visit_Call(self, node: cst.Call) -> None:
        self.track_call(node)
        name = call_name(node)
        if name in CLOCK_NAMES and self.statement is not None and self.ctx.qualname(node.func) in CLOCKS:
            block = self.ctx.blocks[-1]
            if block not in self.blocks:
                self.blocks[block] = (self.ctx.site(block), [])
            reads = self.blocks[block][1]
            if not reads or reads[-1] is not self.statement:
                reads.append(self.statement)
        elif name in _TIMERS:
            qualified = self.ctx.qualname(node.func) or ""
            if qualified in TIMEIT or qualified in BENCHMARK_TIMER:
                self.timers.append((self.ctx.site(node), len(self.ctx.call_order) - 1))  # this call, recorded first

    # -- the regions, at the end of the pass ----------------------------------------------------------
    @property
    def sequence(self) -> dict[int, int]:
        """id(call) -> its place in pass order."""
        if self._sequence is None:
            self._sequence = {id(call): number for number, (call, _) in enumerate(self.ctx.call_order)}
        return self._sequence

    def start(self, region: Region) -> int:
        """The region's start in pass order (asked for few regions: numbering the calls is not free)."""
        return region.start if region.opened_by is None else self.sequence.get(id(region.opened_by), 0)

    def regions(self) -> list[Region]:
        found: list[Region] = []
        for block, (site, reads) in self.blocks.items():
            body = list(block.body)
            index = {id(statement): i for i, statement in enumerate(body)}
            for start, end in zip(reads, reads[1:]):
                name = call_result_name(start)
                if name is None or not subtracts(body[index[id(end)]:], name):
                    continue
                calls = [c for s in body[index[id(start)] + 1 : index[id(end)]] for c in calls_in_order(s)]
                first = calls_in_order(start)
                found.append(Region(Site(end, site.unit, site.scope), calls, 0, False, loops=site.loops,
                                    opened_by=first[-1] if first else None))
        for site, magic in self.magic_lines:
            line = cast(cst.SimpleStatementLine, site.node)  # a magic's site is its masked line
            calls = [c for small in line.body[1:] for c in calls_in_order(small)]
            found.append(Region(site, calls, 0, magic.name == "timeit", opened_by=calls[0] if calls else None))
        for unit, (module, timed) in self.cells.items():
            for magic, cell in timed:
                statements = cell_statements(module, self.ctx.units[unit], cell)
                calls = [c for statement in statements for c in calls_in_order(statement)]
                found.append(Region(Site(module, unit, self.ctx.module_scope), calls, 0, magic.name == "timeit",
                                    opened_by=calls[0] if calls else None))
        for site, begin in self.timers:
            found.extend(self._timer(site, begin))
        return found

    def _timer(self, site: Site, begin: int) -> list[Region]:
        call = cast(cst.Call, site.node)  # a timer's site is its call
        qualified = self.ctx.qualname(call.func) or ""
        statement = argument(call, 0, "stmt")
        if statement is None:
            return []
        region = Region(site, [], begin, True, warms_up=qualified in BENCHMARK_TIMER, loops=site.loops)
        if type(statement) is cst.Lambda:
            region.calls = calls_in_order(statement.body)
        elif type(statement) in (cst.SimpleString, cst.ConcatenatedString) and isinstance(literal(statement), str):
            region.parsed = parse_snippet(literal(statement))
            if region.parsed is None:
                return []
            region.site = Site(statement, site.unit, site.scope)
        else:
            return []
        return [region]

    def parsed_calls(self, region: Region) -> list[cst.Call]:
        if region.parsed is None:
            return region.calls
        return [c for statement in region.parsed.body for c in calls_in_order(statement)]


class TimingWithoutWarmup(_TimedRegions):
    """
    ## What it does
    Finds a timed region (a `time.perf_counter()` interval, `%time`, `%timeit`,
    `%%time`, `%%timeit`, `timeit.timeit`/`repeat`) that contains the first call of a
    `torch.compile`d model, or the program's first CUDA operation (nothing before the
    region touched the GPU or called code that might), or, in a region timed to a
    `torch.cuda.synchronize()`, the first call of a model built in the same function
    (and loop iteration), called or passed to the code timed once. Not the time of a whole
    training run (the region runs training steps: the start-up is a part of it, and small).

    ## Why is this bad?
    The first call of a compiled model traces and compiles it: seconds, against
    milliseconds for the steps after. The first CUDA operation creates the CUDA context
    and loads kernels: hundreds of milliseconds; a new model's first forward creates cuBLAS
    handles, loads its kernels and grows the allocator. Timed, they are reported as the cost of
    the code, and in a `%timeit` they inflate the mean and the spread. (`torch.utils.benchmark`
    timers run a warm-up first and are not reported.)

    ## Example
    ```python
    model = torch.compile(model)
    start = time.perf_counter()
    model(x)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    ```

    ## Fix
    Run the code once (better: a few times) before starting the clock:
    ```python
    model = torch.compile(model)
    for _ in range(3):
        model(x)  # warm-up: compilation, CUDA start-up, autotuning
    torch.cuda.synchronize()
    start = time.perf_counter()
    model(x)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    ```
    """

    code = "TPL204"
    name = "timing-without-warmup"
    summary = "Timed region includes the first call of a compiled model or the first CUDA operation"
    triggers = ("perf_counter", "time(", "monotonic", "default_timer", "time_ns", "timeit", *TIMING_MAGIC_TRIGGERS)
    probe = "timing"
    VALID = (
        Example(
            """
            import time, torch
            model = torch.compile(model)
            model(x)
            start = time.perf_counter()
            model(x)
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            """,
        ),
        Example(
            """
            import time, torch
            x = torch.randn(1024, 1024, device='cuda')
            start = time.perf_counter()
            y = x @ x
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            """,
        ),
        Example(
            """
            import torch
            import torch.utils.benchmark as benchmark
            model = torch.compile(model)
            t = benchmark.Timer(stmt='model(x)', globals={'model': model, 'x': x})
            print(t.timeit(100))
            """,
        ),
        Example(("import torch\nmodel = torch.compile(model)\nmodel(x)", "%timeit model(x)")),
        # a warm-up generation before the clock starts
        Example(
            """
            import time, torch
            def main(x):
                model = GPTModel(cfg)
                model.to('cuda')
                generate(model=model, idx=x)
                torch.cuda.synchronize()
                start = time.time()
                generate(model=model, idx=x)
                torch.cuda.synchronize()
                print(time.time() - start)
            """,
        ),
        # a per-step timer in a training loop: the model was built before the loop
        Example(
            """
            import time, torch
            def main(loader):
                model = Net().cuda()
                while True:
                    t0 = time.time()
                    logits, loss = model(*next(loader))
                    loss.backward()
                    torch.cuda.synchronize()
                    t1 = time.time()
                    print(t1 - t0)
            """,
        ),
        # the time of the whole script, training included (knowledge-distillation's mnist scripts)
        Example(
            """
            import time, torch
            start_time = time.time()
            model = Net()
            model.cuda()
            def train(model):
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
            for epoch in range(10):
                train(model)
            print("--- %s seconds ---" % (time.time() - start_time))
            """,
        ),
        # a whole training run, not a GPU-synchronized measurement of one step
        Example(
            """
            import time, torch
            def main(loader):
                model = Net().cuda()
                start = time.time()
                train(model, loader)
                print(time.time() - start)
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import time, torch
            model = torch.compile(model)
            start = time.perf_counter()
            for _ in range(10):
                model(x)
            torch.cuda.synchronize()
            elapsed = (time.perf_counter() - start) / 10
            """,
        ),
        Example(("import torch\nmodel = torch.compile(Net().cuda())", "%timeit model(x)")),
        Example(("import torch\na = torch.randn(4096, 4096)", "%%time\nb = a.cuda()\nc = b @ b\ntorch.cuda.synchronize()")),
        Example(
            """
            import timeit, torch
            fast = torch.compile(f)
            print(timeit.timeit(lambda: fast(x), number=100))
            """,
        ),
        # the first generation of a model just built: cuBLAS start-up and lazy kernel loading are timed
        Example(
            """
            import time, torch
            def main(x):
                model = GPTModel(cfg)
                model.to('cuda')
                model.eval()
                torch.cuda.synchronize()
                start = time.time()
                ids = generate(model=model, idx=x)
                torch.cuda.synchronize()
                print(time.time() - start)
            """,
        ),
        # a fresh model for each batch size, its first forward/backward timed
        Example(
            """
            import time, torch
            for size in sizes:
                model = GPTModel(cfg).bfloat16().to('cuda')
                torch.cuda.synchronize()
                start = time.time()
                loss = model(x).sum()
                loss.backward()
                torch.cuda.synchronize()
                elapsed = time.time() - start
            """,
        ),
    )

    def finish(self) -> None:
        for region in self.regions():
            if region.warms_up or region.parsed is not None:
                continue
            ids = {id(c) for c in region.calls}
            compiled = next(((site, record) for node_id, (site, record) in self._first_calls.items() if node_id in ids), None)
            if compiled is not None and not region.loops[len(compiled[1].site.loops):]:
                site, record = compiled
                self.report(
                    site,
                    f"This timed region contains the first call of compiled `{record.name}`: it measures "
                    "tracing and compilation (seconds), not the steady state. Call it a few times before timing.",
                )
                continue
            fresh = self._fresh_model_call(region)
            if fresh is not None:
                call, model = fresh
                self.report(
                    Site(call, region.site.unit, region.site.scope),
                    f"`{short_code(call)}` is the first call of the newly built `{model}` on the GPU and it is "
                    "timed: the first forward and backward pay one-time costs (cuBLAS handles, lazy kernel "
                    "loading, allocator growth) that later steps do not. Run it once before starting the clock.",
                )
                continue
            if region.site.scope is not self.ctx.module_scope or (
                    self._first_touch is not None and self._first_touch < self.start(region)) or any(
                    map(TrainingSteps.of(self.ctx).steps, region.calls)):
                continue  # (nor a whole training run's time: the start-up is a part of it, and small)
            touch = next((c for c in region.calls if self._touch(c, proven=True)), None)
            if touch is not None:
                self.report(
                    Site(touch, region.site.unit, region.site.scope),
                    f"`{short_code(touch)}` is the program's first CUDA operation and it is timed: the measurement "
                    "includes creating the CUDA context and loading kernels (hundreds of milliseconds). Run a "
                    "CUDA operation (a warm-up iteration) before timing.",
                )

    def _fresh_model_call(self, region: Region) -> tuple[cst.Call, str] | None:
        """A single (not looped) call in a region timed to a CUDA synchronize that runs a model
        (calls it or passes it) built in the same scope and not run since: (call, model name)."""
        if region.repeated or region.parsed is not None or not any(
            self.ctx.qualname(c.func) == "torch.cuda.synchronize" for c in region.calls
        ):
            return None
        start, scope = self.start(region), region.site.scope
        for call in region.calls:
            if self._loops_of(call) != region.loops:
                continue
            for model in _run_names(call):
                built = self._built_at(model, scope, start, region.loops)
                if built is not None and not any(
                    model in _run_names(other) for other, _ in self.ctx.call_order[built + 1 : start]
                ):
                    return call, model
        return None

    def _loops_of(self, call: cst.Call) -> tuple | None:
        return next((site.loops for site in self.ctx.calls.get(call_name(call) or "", ()) if site.node is call), None)

    def _built_at(self, name: str, scope: Scope, before: int, loops: tuple) -> int | None:
        """Where in pass order (before `before`) a model-named variable of `scope` was last
        assigned an instance of a class (`GPTModel(cfg).to(device)`), inside all of `loops` (the
        region's: a model built before a timed loop is cold on the first iteration only)."""
        if not any(part in name.lower() for part in MODEL_WORDS) or scope.owner_of(name) is not scope:
            return None
        places = []
        for value in scope.assignments[name]:
            value = module_below(value) if value is not None else None
            if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value[:1].isupper():
                place = self.sequence.get(id(value))
                if place is not None and place < before and (self._loops_of(value) or ())[: len(loops)] == loops:
                    places.append(place)
        return max(places, default=None)

    @functools.cached_property  # worked out only when a timed region needs it
    def _first_calls(self) -> dict[int, tuple[Site, Compiled]]:
        """id(call) -> (site, record) for the first call of each compiled module in its own scope."""
        out = {}
        for record in self.history:
            own = [s for s in record.calls if s.scope is record.site.scope]
            if own:
                out[id(own[0].node)] = (own[0], record)
        return out

    @functools.cached_property  # a walk of every call: only for a timed region at module level
    def _first_touch(self) -> int | None:
        """Sequence number of the first module-level call that touches CUDA or may (code the
        source does not show); None when there is none."""
        for number, (call, scope) in enumerate(self.ctx.call_order):
            if scope is self.ctx.module_scope and (self._touch(call, proven=False) or self._foreign(call)):
                return number
        return None

    def _touch(self, call: cst.Call, proven: bool, depth: int = 0) -> bool:
        """Whether `call` runs on CUDA (`proven`: certainly, and not just a synchronize or a
        query), or may (otherwise)."""
        scope = self.ctx.module_scope
        name = call_name(call)
        qualified = self.ctx.qualname(call.func) or ""
        if qualified.startswith("torch.cuda."):
            return not qualified.startswith(_QUIET_CUDA) or (not proven and qualified == "torch.cuda.synchronize")
        if qualified == "torch.set_default_device":
            return True
        if name == "cuda" and type(call.func) is cst.Attribute:
            return True
        device = argument(call, 0, "device") if name == "to" and type(call.func) is cst.Attribute else None
        device = device or (named.value if (named := keyword(call, "device")) else None)
        if device is not None:
            cuda = self.ctx.is_cuda_device(device, scope)
            if cuda is True or (cuda is UNKNOWN and DEVICE_LIKE.search(code(device))):
                return True
        if not proven and depth < 2 and type(call.func) is cst.Name:
            name = call.func.value
            if name in self.ctx.functions:
                body = self.ctx.functions[name][-1][0].body
            elif name in self.classes:  # a class of the source: whatever its methods run
                body = self.classes[name].body
            else:
                return False
            return any(self._touch(c, False, depth + 1) or self._foreign(c) for c in all_calls(body))
        return False

    def _foreign(self, call: cst.Call) -> bool:
        """A call into code that is not in the source and not known to stay off the GPU."""
        qualified = self.ctx.qualname(call.func)
        if qualified is not None:
            head = qualified.split(".")[0]
            if head == "torch":
                return qualified.startswith(_TORCH_MAY_TOUCH)
            return head not in _SAFE_MODULES
        if type(call.func) is cst.Name:
            name = call.func.value
            return name not in _BUILTINS and name not in self.ctx.functions and name not in self.classes
        return False


class AllocationInTimedStatement(_TimedRegions):
    """
    ## What it does
    Finds `%timeit`, `%%timeit`, `timeit.timeit`/`repeat`/`Timer` and
    `torch.utils.benchmark.Timer` statements that create a large tensor
    (`torch.randn`, `torch.zeros`, `torch.empty`, `*_like`, ...; option `min-elements`,
    default 262144 = 512x512) on every repetition.

    ## Why is this bad?
    Timers run the statement many times and report the time per run: an allocation
    inside it (and the random fill or memset that comes with it) is measured with the
    operation, and can dominate it. The result no longer says how fast the operation is.

    ## Example
    ```python
    %timeit torch.mm(torch.randn(4096, 4096, device="cuda"), w)
    ```

    ## Fix
    Create the inputs once, outside the timed statement (a previous cell, `setup=`, or the
    first line of `%%timeit`):
    ```python
    x = torch.randn(4096, 4096, device="cuda")
    %timeit torch.mm(x, w)
    ```
    """

    code = "TPL205"
    name = "allocation-in-timed-statement"
    summary = "Timed statement (%timeit, timeit, benchmark.Timer) allocates a large tensor every repetition"
    triggers = ("timeit", "Timer")
    probe = "timing"
    options = {"min-elements": 262144}
    VALID = (
        Example(("import torch\nx = torch.randn(4096, 4096, device='cuda')", "%timeit torch.mm(x, x)")),
        Example(("import torch", "%timeit torch.zeros(16, 16)")),
        Example(
            """
            import torch.utils.benchmark as benchmark
            t = benchmark.Timer(stmt='f(x)', setup='x = torch.randn(4096, 4096)', globals={'f': f})
            """,
        ),
        Example(("import torch", "%time y = torch.randn(8192, 8192) @ w")),
    )
    INVALID = (
        Example(("import torch", "%timeit torch.mm(torch.randn(4096, 4096, device='cuda'), w)")),
        Example(("import torch\nN = 2048", "%%timeit\nx = torch.empty(N, N, device='cuda')\nf(x)")),
        Example(
            """
            import torch
            import torch.utils.benchmark as benchmark
            t = benchmark.Timer(stmt='f(torch.rand(64, 3, 224, 224))', globals={'f': f, 'torch': torch})
            """,
        ),
        Example(
            """
            import timeit
            import torch
            x = torch.randn(2048, 2048)
            timeit.timeit(lambda: g(torch.zeros_like(x)), number=50)
            """,
        ),
    )

    def finish(self) -> None:
        minimum = self.opts["min-elements"]
        for region in self.regions():
            if not region.repeated:
                continue
            scope = region.site.scope
            for call in self.parsed_calls(region):
                elements = self._elements(call, scope, 0)
                if elements is None or elements < minimum:
                    continue
                site = region.site if region.parsed is not None else Site(call, region.site.unit, scope)
                self.report(
                    site,
                    f"The timed statement creates a tensor of {elements:,} elements (`{short_code(call)}`) on every "
                    "repetition: the allocation and its fill are measured with the operation. Create the input "
                    "once, outside the timed statement (setup=, the first line of %%timeit, or a previous cell).",
                )
                break

    def _elements(self, call: cst.Call, scope: Scope, depth: int) -> int | None:
        """Elements of the tensor a factory call creates, when at least that many are provable."""
        qualified = self.ctx.qualname(call.func) or ""
        head, _, name = qualified.partition(".")
        if head != "torch" or name not in _FACTORIES or depth > 3:
            return None
        if name.endswith("_like"):
            source = argument(call, 0, "input")
            found = self.ctx.origin(source, scope) if source is not None else None
            if found is None or type(found[0]) is not cst.Call:
                return None
            return self._elements(found[0], found[1], depth + 1)
        if name == "arange":
            values = [self.ctx.value(a.value, scope) for a in call.args if a.keyword is None]
            numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            return len(range(*[int(v) for v in numbers])) if len(numbers) == len(values) and 1 <= len(values) <= 2 else None
        if name == "linspace":
            steps = argument(call, 2, "steps")
            value = self.ctx.value(steps, scope) if steps is not None else UNKNOWN
            return value if isinstance(value, int) and not isinstance(value, bool) else None
        if name == "eye":
            sides = [argument(call, 0, "n"), argument(call, 1, "m")]
            sizes = [self.ctx.value(d, scope) for d in sides if d is not None]
            return _product(sizes + ([sizes[0]] if len(sizes) == 1 else []))
        size = keyword(call, "size")
        dims: list[cst.BaseExpression]
        if size is not None:
            dims = [size.value]
        elif name in ("full", "randint"):
            tuples = [a.value for a in call.args if a.keyword is None and type(a.value) in (cst.Tuple, cst.List)]
            dims = tuples[:1]
        else:
            dims = [a.value for a in call.args if a.keyword is None and a.star == ""]
        if len(dims) == 1 and (type(dims[0]) is cst.Tuple or type(dims[0]) is cst.List):
            dims = [e.value for e in dims[0].elements]
        return _product([self.ctx.value(d, scope) for d in dims]) if dims else None





def _run_names(call: cst.Call) -> list[str]:
    """The names a call runs: the callee, and the names it passes (`generate(model=model)`)."""
    names = [call.func.value] if type(call.func) is cst.Name else []
    return names + [arg.value.value for arg in call.args if type(arg.value) is cst.Name]


def _product(values: list) -> int | None:
    """The product of the known integer sizes (unknown ones count as 1); None if none is known."""
    known = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return math.prod(known) if known else None
