"""TPL402-404: what a torch.profiler session records (schedule, recording options, compilation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import libcst as cst

from ..context import Scope, Site
from ..nodes import UNKNOWN, call_name, code, dotted, keyword
from .base import Example
from .tracking import CompiledModules, Nesting, TrainingSteps, iterations
from ..vocabulary import SHORT_LOOP

PROFILE = {"torch.profiler.profile", "torch.profiler.profiler.profile"}
LEGACY_PROFILE = {"torch.autograd.profiler.profile", "torch.autograd.profiler_legacy.profile"}
SCHEDULE = {"torch.profiler.schedule", "torch.profiler.profiler.schedule"}
_RECORDING = ("record_shapes", "profile_memory", "with_stack")


@dataclass(frozen=True)
class Session:
    """A `with torch.profiler.profile(...) as prof:` block."""

    site: Site  # the profile(...) call
    block: cst.With
    handle: str | None  # the `as` name
    legacy: bool

    @property
    def call(self) -> cst.Call:
        return cast(cst.Call, self.site.node)  # visit_With makes the site of a call


class _Sessions(Nesting):
    """Collects profiler sessions and answers what their bodies loop over."""

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.sessions: list[Session] = []

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if type(call) is not cst.Call or call_name(call) != "profile":
                continue
            qualified = self.ctx.qualname(call.func)
            if qualified in PROFILE or qualified in LEGACY_PROFILE:
                handle = item.asname.name.value if item.asname and type(item.asname.name) is cst.Name else None
                self.sessions.append(Session(self.ctx.site(call), node, handle, qualified in LEGACY_PROFILE))

    def schedule(self, session: Session):
        """The `schedule=` expression and its scope, None when not passed, UNKNOWN."""
        if session.legacy:
            return None
        return self.ctx.call_argument(session.call, -1, "schedule", session.site.scope)

    def long_loop(self, body: cst.CSTNode, scope: Scope, depth: int = 0) -> cst.CSTNode | None:
        """A loop in `body` (or in a function of the source it calls) that runs more than a few
        iterations: a `while`, a loop over data (not a `range`), a `range` of more than a few,
        or of an unknown number when it trains. (Benchmark loops that repeat a kernel an
        unknown number of times under the profiler are deliberate.)"""
        for node in _outside_functions(body):
            if type(node) is cst.While:
                return node
            if type(node) is cst.For:
                count = iterations(node, self.ctx, scope)
                over_range = type(node.iter) is cst.Call and dotted(node.iter.func) == "range"
                if count is not None and count > SHORT_LOOP:
                    return node
                if count is None and (not over_range or TrainingSteps.of(self.ctx).trains(node)):
                    return node
            if type(node) is cst.Call and depth < 2 and type(node.func) is cst.Name:
                defs = self.ctx.functions.get(node.func.value)
                if defs:
                    function, inner = defs[-1]
                    if self.long_loop(function.body, inner, depth + 1) is not None:
                        return node
        return None

    def loops(self, body: cst.CSTNode) -> list[cst.CSTNode]:
        return [n for n in _outside_functions(body) if type(n) in (cst.For, cst.While)]


class ProfileWithoutSchedule(_Sessions):
    """
    ## What it does
    Finds a `torch.profiler.profile` session around a loop that either has no
    `schedule=` (and the loop runs more than a few iterations: a `while`, a loop over
    data, a `range` of more than 10, or a training loop), or has a schedule but never
    calls `prof.step()`.

    ## Why is this bad?
    Without a schedule the profiler records every iteration: the trace grows with the
    run (gigabytes, minutes to export, too big for the trace viewer), the profiler's
    overhead slows every step, and the first iterations (CUDA context, allocator
    growth, cuDNN autotuning, compilation) are averaged in with the steady state. With a
    schedule but no `prof.step()`, the schedule never leaves its first phase: nothing,
    or the wrong steps, are recorded.

    ## Example
    ```python
    with torch.profiler.profile() as prof:
        for batch in loader:
            train_step(batch)
    ```

    ## Fix
    ```python
    with torch.profiler.profile(
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=torch.profiler.tensorboard_trace_handler("./log"),
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    ```
    """

    code = "TPL402"
    name = "profile-without-schedule"
    summary = "torch.profiler session around a training loop without schedule= (or without prof.step())"
    triggers = ("profile",)
    VALID = (
        Example(
            """
            import torch
            with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) as prof:
                for batch in loader:
                    step(batch)
                    prof.step()
            """,
        ),
        Example(
            """
            import torch
            with torch.profiler.profile() as prof:
                model(x)
            """,
        ),
        Example(
            """
            import torch
            with torch.profiler.profile() as prof:
                for _ in range(5):
                    model(x)
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            with torch.profiler.profile(record_shapes=True) as prof:
                for batch in loader:
                    step(batch)
            """,
        ),
        Example(
            """
            from torch.profiler import profile, schedule
            sched = schedule(wait=1, warmup=1, active=2)
            with profile(schedule=sched) as p:
                for i in range(100):
                    step(i)
            """,
        ),
        Example(
            """
            import torch
            def train(loader):
                for batch in loader:
                    step(batch)
            with torch.autograd.profiler.profile(use_cuda=True) as prof:
                train(loader)
            """,
        ),
    )

    def finish(self) -> None:
        for session in self.sessions:
            scope = session.site.scope
            schedule = self.schedule(session)
            if schedule is UNKNOWN:
                continue
            if schedule is None:
                loop = self.long_loop(session.block.body, scope)
                if loop is None:
                    continue
                what = "a training run" if type(loop) is cst.Call else "every iteration of this loop"
                self.report(
                    session.site,
                    f"This profiler session records {what} without a schedule: the trace grows with the run, "
                    "profiler overhead slows every step, and warm-up iterations are mixed with the steady "
                    "state. Pass schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1) and "
                    "call prof.step() at the end of each iteration"
                    + (" (torch.profiler.profile; this legacy profiler has no schedule)." if session.legacy else "."),
                )
            elif self.loops(session.block.body) and not self._steps(session):
                self.report(
                    session.site,
                    "This profiler session has a schedule but the loop never calls "
                    f"{session.handle or 'prof'}.step(), so the schedule stays in its first phase and the "
                    "intended steps are not recorded. Call prof.step() at the end of each iteration.",
                )

    def _steps(self, session: Session) -> bool:
        """Whether the session's handle is stepped, or handed to code that can step it."""
        if session.handle is None:
            return False
        found = False
        handle = session.handle

        class Uses(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                nonlocal found
                found = found or node.value == handle

        session.block.body.visit(Uses())
        steps = [s.node for s in self.ctx.calls.get("step", [])]
        stepped_elsewhere = any(type(s.func) is cst.Attribute and code(s.func.value) == handle for s in steps)
        return found or stepped_elsewhere


class ProfilerRecordingOptions(_Sessions):
    """
    ## What it does
    Finds `record_shapes=True`, `profile_memory=True` or `with_stack=True` on a
    `torch.profiler.profile` session that records a long run: no schedule, around a loop
    of more than a few iterations (or an unknown number). Off by default: these options
    are often wanted; enable it with `extend-select = ["TPL403"]`.

    ## Why is this bad?
    Each option adds work to every recorded operator: `with_stack` captures a Python
    stack per op, `record_shapes` the input shapes, `profile_memory` every allocation.
    Over a long run this inflates the step time being measured (so the profile shows a
    slower program than the real one) and multiplies the size of the trace.

    ## Example
    ```python
    with torch.profiler.profile(with_stack=True, profile_memory=True) as prof:
        for batch in loader:
            train_step(batch)
    ```

    ## Fix
    Record a few steps with a schedule, or turn the options on only for a short run:
    ```python
    with torch.profiler.profile(
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        with_stack=True, profile_memory=True,
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    ```
    """

    code = "TPL403"
    name = "profiler-recording-overhead"
    summary = "with_stack/profile_memory/record_shapes left on for a long profiled run"
    triggers = ("profile",)
    severity = "info"
    default_enabled = False
    VALID = (
        Example(
            """
            import torch
            with torch.profiler.profile(with_stack=True, schedule=torch.profiler.schedule(wait=1, warmup=1, active=2)) as p:
                for batch in loader:
                    step(batch)
                    p.step()
            """,
        ),
        Example(
            """
            import torch
            with torch.profiler.profile(with_stack=True) as p:
                model(x)
            """,
        ),
        Example(
            """
            import torch
            with torch.profiler.profile(with_stack=False) as p:
                for batch in loader:
                    step(batch)
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            with torch.profiler.profile(with_stack=True, profile_memory=True, record_shapes=False) as p:
                for batch in loader:
                    step(batch)
            """,
            count=2,
        ),
    )

    def finish(self) -> None:
        for session in self.sessions:
            if session.legacy or self.schedule(session) is not None:
                continue
            if self.long_loop(session.block.body, session.site.scope) is None:
                continue
            for option in _RECORDING:
                arg = keyword(session.call, option)
                if arg is not None and self.ctx.value(arg.value, session.site.scope) is True:
                    self.report(
                        Site(arg, session.site.unit, session.site.scope),
                        f"{option}=True adds work to every recorded operator for the whole profiled run: the "
                        "profile shows a slower program than the real one and the trace grows. Record a few "
                        "steps with schedule=, or turn it on only for a short run.",
                    )


class CompileInProfilerWindow(CompiledModules):
    """
    ## What it does
    Finds the first call of a `torch.compile`d module (or of one compiled in place with
    `module.compile()`) inside a `torch.profiler.profile` session that records from its
    first step: no `schedule=`, or a schedule with `wait=0`, `warmup=0` and
    `skip_first=0`.

    ## Why is this bad?
    `torch.compile` is lazy: the first call traces the model, compiles it with Inductor
    and autotunes kernels, seconds to minutes of CPU work with the GPU idle. Recorded,
    it dwarfs the steps the profile was meant to show, and the trace attributes it to the
    first step.

    ## Example
    ```python
    model = torch.compile(model)
    with torch.profiler.profile() as prof:
        for _ in range(3):
            model(x)
    ```

    ## Fix
    Call the compiled model once (better: a few times) before the session, or let the
    schedule skip the first steps:
    ```python
    model = torch.compile(model)
    model(x)  # compile outside the profile
    with torch.profiler.profile() as prof:
        for _ in range(3):
            model(x)
    ```
    """

    code = "TPL404"
    name = "compile-in-profiler-window"
    summary = "First call of a compiled model (compilation) recorded by the profiler"
    triggers = ("profile",)
    VALID = (
        Example(
            """
            import torch
            model = torch.compile(model)
            model(x)
            with torch.profiler.profile() as prof:
                for _ in range(3):
                    model(x)
            """,
        ),
        Example(
            """
            import torch
            from torch.profiler import profile, schedule
            model = torch.compile(model)
            with profile(schedule=schedule(wait=1, warmup=1, active=3)) as prof:
                for x in batches:
                    model(x)
                    prof.step()
            """,
        ),
        Example(
            """
            import torch
            with torch.profiler.profile() as prof:
                model(x)
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            model = torch.compile(model)
            with torch.profiler.profile() as prof:
                for _ in range(3):
                    model(x)
            """,
        ),
        Example(
            """
            import torch
            from torch.profiler import profile, schedule
            with profile(schedule=schedule(wait=0, warmup=0, active=3)) as prof:
                net.compile()
                for x in batches:
                    net(x)
                    prof.step()
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.windows: list[tuple[cst.With, bool]] = []  # (block, records its first step)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if type(call) is cst.Call and call_name(call) == "profile":
                qualified = self.ctx.qualname(call.func)
                if qualified in PROFILE or qualified in LEGACY_PROFILE:
                    self.windows.append((node, self._records_first_step(call)))
                    return

    def leave_With(self, original_node: cst.With) -> None:
        if self.windows and self.windows[-1][0] is original_node:
            self.windows.pop()

    def _records_first_step(self, call: cst.Call) -> bool:
        scope = self.ctx.scope
        passed = self.ctx.call_argument(call, -1, "schedule", scope)
        if passed is None:
            return True
        if passed is UNKNOWN:
            return False
        found = self.ctx.origin(*passed) if type(passed[0]) in (cst.Name, cst.Attribute) else passed
        if found is None or type(found[0]) is not cst.Call or self.ctx.qualname(found[0].func) not in SCHEDULE:
            return False
        schedule, where = found
        for name in ("wait", "warmup", "skip_first"):
            arg = keyword(schedule, name)
            if arg is not None and self.ctx.value(arg.value, where) != 0:
                return False
        return True

    def visit_Call(self, node: cst.Call) -> None:
        record = self.track_call(node)
        if record is None or len(record.calls) != 1 or not self.windows or not self.windows[-1][1]:
            return
        self.report(
            self.ctx.site(node),
            f"This is the first call of compiled `{record.name}`, inside the profiler's recorded window: "
            "compilation (seconds of tracing, Inductor codegen and autotuning, with the GPU idle) lands in the "
            "trace and dwarfs the steps. Call the model once before profiling, or use "
            "schedule=torch.profiler.schedule(wait=1, warmup=1, active=N).",
        )


def _outside_functions(body: cst.CSTNode):
    """Nodes under `body`, not inside nested functions, classes or lambdas; loops are
    yielded but not entered."""
    stack = list(reversed(body.children))
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        yield node
        if type(node) not in (cst.For, cst.While):
            stack.extend(reversed(node.children))
