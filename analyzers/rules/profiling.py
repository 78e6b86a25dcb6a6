"""TPL4xx: profiling hygiene."""

from __future__ import annotations

import libcst as cst

from ..context import Site
from ..nodes import code, literal
from .base import Example, FixPlan, InsertLineBefore, Rule

CUDNN_BENCHMARK = "torch.backends.cudnn.benchmark"
PROFILERS = ("torch.profiler.profile", "torch.autograd.profiler.profile", "torch.utils.benchmark", "torch.profiler._KinetoProfile")


class CudnnBenchmarkUnderProfiler(Rule):
    """
    ## What it does
    Finds `torch.backends.cudnn.benchmark = True` in a file or notebook that also profiles
    or benchmarks: `torch.profiler.profile`, `torch.autograd.profiler.profile` or
    `torch.utils.benchmark`.

    ## Why is this bad?
    With `benchmark = True` cuDNN times several convolution algorithms on the first
    calls of each input shape and keeps the fastest, which can differ from run to run.
    Profiles of the same code then disagree, and the autotuning itself lands in the
    profile. While profiling, use `benchmark = False` (and `deterministic = True`).

    ## Example
    ```python
    torch.backends.cudnn.benchmark = True
    with torch.profiler.profile() as prof:
        train_step()
    ```

    ## Fix
    ```python
    torch.backends.cudnn.benchmark = True
    with torch.profiler.profile() as prof:
        torch.backends.cudnn.benchmark = False
        train_step()
    ```
    """

    code = "TPL401"
    triggers = ("cudnn",)
    name = "cudnn-benchmark-under-profiler"
    summary = "cudnn.benchmark = True in code that profiles: profiles are not reproducible"
    probe = "cudnn"
    VALID = (
        Example(
            """
            import torch
            torch.backends.cudnn.benchmark = True
            train()
            """,
        ),
        Example(
            """
            import torch
            torch.backends.cudnn.benchmark = False
            with torch.profiler.profile() as prof:
                train()
            """,
        ),
        Example(
            """
            import torch
            benchmark = True
            with torch.profiler.profile() as prof:
                train()
            """,
        ),
        Example(
            """
            import torch
            torch.backends.cudnn.benchmark = True
            with torch.profiler.profile() as prof:
                torch.backends.cudnn.benchmark = False
                train()
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            torch.backends.cudnn.benchmark = True
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                train_step()
            """,
            """
            import torch
            torch.backends.cudnn.benchmark = True
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                torch.backends.cudnn.benchmark = False
                train_step()
            """,
        ),
        Example(
            """
            from torch.backends import cudnn
            import torch.utils.benchmark as benchmark
            cudnn.benchmark = True
            t = benchmark.Timer(stmt='f(x)', globals={'f': f, 'x': x})
            """,
        ),
        Example(  # each setting is turned off in the session that follows it
            "import torch\ntorch.backends.cudnn.benchmark = True\nwith torch.profiler.profile() as prof:\n    a()\n"
            "torch.backends.cudnn.benchmark = True\nwith torch.profiler.profile() as prof:\n    b()\n",
            "import torch\ntorch.backends.cudnn.benchmark = True\nwith torch.profiler.profile() as prof:\n"
            "    torch.backends.cudnn.benchmark = False\n    a()\n"
            "torch.backends.cudnn.benchmark = True\nwith torch.profiler.profile() as prof:\n"
            "    torch.backends.cudnn.benchmark = False\n    b()\n",
            count=2,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.settings: list[tuple[Site, cst.BaseExpression, int]] = []  # + sessions met before it
        self.profiled = False
        self.sessions: list[Site] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        value = literal(node.value)
        for target in node.targets:
            if self.ctx.qualname(target.target) != CUDNN_BENCHMARK:
                continue
            if value is True:
                self.settings.append((self.ctx.site(node), target.target, len(self.sessions)))
            elif value is False:
                self.settings.clear()  # turned off again before profiling

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualname(node.func)
        if qualified is not None and qualified.startswith(PROFILERS):
            self.profiled = True

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if type(call) is cst.Call and (self.ctx.qualname(call.func) or "").startswith(PROFILERS[:2]):
                if type(node.body) is cst.IndentedBlock and node.body.body:
                    self.sessions.append(self.ctx.site(node.body.body[0]))

    def finish(self) -> None:
        if not self.profiled:
            return
        for site, target, before in self.settings:
            fix = None
            if before < len(self.sessions):  # the first session after the setting
                line = f"{code(target)} = False"
                fix = FixPlan("Turn cudnn.benchmark off inside the profiling session",
                              (InsertLineBefore(self.sessions[before], line),))
            self.report(
                site,
                "cudnn.benchmark = True makes cuDNN autotune kernels per input shape, so profiles "
                "vary from run to run and include the autotuning: set "
                "torch.backends.cudnn.benchmark = False (and deterministic = True) while profiling.",
                fix,
            )
