"""TPL405: debugging switches left on in training code."""

from __future__ import annotations

import re
from typing import cast

import libcst as cst

from ..context import IF, Site
from ..nodes import argument, call_name, dotted, keyword, literal, main_guard
from ..findings import Range
from .base import Example, FixPlan, Replace
from .edits import replace_argument, with_keywords
from .tracking import Nesting, TrainingSteps

SET_ANOMALY = {"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"}
DETECT_ANOMALY = {"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"}
EMIT_NVTX = {"torch.autograd.profiler.emit_nvtx", "torch.autograd.profiler_legacy.emit_nvtx"}
GRADCHECK = {
    "torch.autograd.gradcheck", "torch.autograd.gradgradcheck", "torch.autograd.gradcheck.gradcheck",
    "torch.autograd.gradcheck.gradgradcheck",
}
_NAMES = {"set_detect_anomaly", "detect_anomaly", "emit_nvtx", "gradcheck", "gradgradcheck"}
_LAUNCH_BLOCKING = "CUDA_LAUNCH_BLOCKING"
_DEBUG_WORDS = ("debug", "anomaly", "check", "nan")
_ENV_MAGIC = re.compile(r"^\s*%env\s+CUDA_LAUNCH_BLOCKING\s*=?\s*(?P<value>\S+)")


def _on(value) -> bool:
    return isinstance(value, str) and value.strip() not in ("", "0")


class DebugModeLeftOn(Nesting):
    """
    ## What it does
    Finds debugging switches that slow every step: `torch.autograd.set_detect_anomaly(True)`,
    `torch.autograd.detect_anomaly()`, `torch.autograd.profiler.emit_nvtx()`,
    `CUDA_LAUNCH_BLOCKING=1` (`os.environ[...] = "1"`, `setdefault`, `%env`), and
    `torch.autograd.gradcheck`/`gradgradcheck` in a training loop or training-step
    function.

    ## Why is this bad?
    Anomaly mode records a Python traceback for every autograd node and checks every
    backward output for NaN, a device-to-host sync per operator: training runs several
    times slower. `emit_nvtx` runs the autograd profiler on every operator.
    `CUDA_LAUNCH_BLOCKING=1` makes every kernel launch wait for the kernel to finish, so
    the CPU and GPU never overlap. `gradcheck` runs the function once per input element
    in double precision.

    Silent when the switch is set from a value perf-lint cannot see
    (`set_detect_anomaly(args.debug)`), under an `if` (a debug flag) other than
    `if __name__ == "__main__":`, or in a function made for debugging (named for
    `debug`, `anomaly`, `check` or `nan`); and for `CUDA_LAUNCH_BLOCKING` set after code
    above it (or an earlier notebook cell) moved something to the GPU: CUDA reads it when it
    starts, so there it changes nothing.

    ## Example
    ```python
    torch.autograd.set_detect_anomaly(True)
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    ```

    ## Fix
    Remove them, or turn them off (the quick fix does):
    ```python
    torch.autograd.set_detect_anomaly(False)
    os.environ["CUDA_LAUNCH_BLOCKING"] = "0"
    ```
    `with torch.autograd.detect_anomaly():` becomes `with torch.autograd.set_detect_anomaly(False):`
    and `emit_nvtx()` gets `enabled=False`.
    """

    code = "TPL405"
    name = "debug-mode-left-on"
    summary = "Anomaly detection, emit_nvtx, CUDA_LAUNCH_BLOCKING=1 or gradcheck left in training code"
    triggers = ("anomaly", "emit_nvtx", "CUDA_LAUNCH_BLOCKING", "gradcheck")
    probe = "syncs"
    VALID = (
        Example(
            """
            import torch
            torch.autograd.set_detect_anomaly(args.debug)
            """,
        ),
        Example(
            """
            import torch
            if args.debug:
                torch.autograd.set_detect_anomaly(True)
            """,
        ),
        Example(
            """
            import os
            import torch
            os.environ['CUDA_LAUNCH_BLOCKING'] = '0'
            """,
        ),
        # set after the code moved something to the GPU (a cell run after another): CUDA has
        # started and read it already, so it changes nothing
        Example(
            """
            import os
            import torch
            device = torch.device("cuda:0")
            model = Net().to(device)
            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            for x in loader:
                model(x.to(device)).sum().backward()
            """,
        ),
        Example(
            """
            import torch
            from torch.autograd import gradcheck
            def test_op():
                assert gradcheck(op, (x,))
            """,
        ),
        Example(
            """
            import torch
            with torch.autograd.profiler.emit_nvtx(enabled=False):
                train()
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            torch.autograd.set_detect_anomaly(True)
            """,
            """
            import torch
            torch.autograd.set_detect_anomaly(False)
            """,
        ),
        Example(
            """
            import torch
            for x in loader:
                with torch.autograd.detect_anomaly():
                    model(x).sum().backward()
            """,
            """
            import torch
            for x in loader:
                with torch.autograd.set_detect_anomaly(False):
                    model(x).sum().backward()
            """,
        ),
        Example(
            """
            import os
            import torch
            if __name__ == '__main__':
                os.environ['CUDA_LAUNCH_BLOCKING'] = '1'
                os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")
            """,
            """
            import os
            import torch
            if __name__ == '__main__':
                os.environ['CUDA_LAUNCH_BLOCKING'] = '0'
                os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "0")
            """,
            count=2,
        ),
        Example(
            """
            import torch
            with torch.autograd.profiler.emit_nvtx():
                train()
            """,
            """
            import torch
            with torch.autograd.profiler.emit_nvtx(enabled=False):
                train()
            """,
        ),
        Example(
            """
            import torch
            from torch.autograd import gradcheck
            for x in loader:
                assert gradcheck(layer, (x.double().requires_grad_(),))
                layer(x).sum().backward()
                opt.step()
            """,
        ),
        Example(("import torch", "%env CUDA_LAUNCH_BLOCKING=1\nmodel(x)")),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.with_items: set[int] = set()
        self.gradchecks: list[Site] = []

    def _guarded(self) -> bool:
        """Under a condition (a debug flag), or in a function made for debugging."""
        function = self.function()
        if function is not None and any(word in function.name.value.lower() for word in _DEBUG_WORDS):
            return True
        return any(
            frame.kind == IF and not main_guard(cast(cst.If, frame.node).test)  # IF frames hold an If
            for frame in self.local_frames()
        )

    def visit_WithItem(self, node: cst.WithItem) -> None:
        self.with_items.add(id(node.item))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name == "setdefault":
            self._setdefault(node)
            return
        if name not in _NAMES or self._guarded():
            return
        qualified = self.ctx.qualname(node.func)
        site = self.ctx.site(node)
        if qualified in SET_ANOMALY:
            mode = argument(node, 0, "mode")
            if mode is not None and self.ctx.value(mode, site.scope) is True:
                passed = keyword(node, "mode") or node.args[0]
                fix = FixPlan("Turn anomaly detection off", (Replace(site, replace_argument(node, passed, "False")),))
                self._anomaly(site, fix)
        elif qualified in DETECT_ANOMALY:
            fix = None
            if type(node.func) is cst.Attribute and dotted(node.func.value) and id(node) in self.with_items:
                new = cst.parse_expression(f"{dotted(node.func.value)}.set_detect_anomaly(False)")
                fix = FixPlan("Turn anomaly detection off", (Replace(site, new),))
            self._anomaly(site, fix)
        elif qualified in EMIT_NVTX:
            enabled = keyword(node, "enabled") or (node.args[0] if node.args and node.args[0].keyword is None else None)
            if enabled is None or self.ctx.value(enabled.value, site.scope) is True:
                fix = FixPlan("Disable emit_nvtx", (Replace(site, with_keywords(node, {"enabled": "False"})),))
                self.report(
                    site,
                    "emit_nvtx() runs the autograd profiler on every operator to emit NVTX ranges; outside an "
                    "Nsight Systems capture it only slows training down. Remove it or pass enabled=False.",
                    fix,
                )
        elif qualified in GRADCHECK:
            self.gradchecks.append(site)

    def _anomaly(self, site: Site, fix: FixPlan | None) -> None:
        self.report(
            site,
            "Anomaly detection is on: autograd records a traceback for every operation and checks every "
            "backward output for NaN (a GPU sync per operator), so training runs several times slower. "
            "Turn it on only while hunting a NaN.",
            fix,
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            sub = target.target
            if type(sub) is not cst.Subscript or self.ctx.qualname(sub.value) != "os.environ" or len(sub.slice) != 1:
                continue
            index = sub.slice[0].slice
            if type(index) is cst.Index and literal(index.value) == _LAUNCH_BLOCKING:
                self._launch_blocking(node.value)

    def _setdefault(self, node: cst.Call) -> None:
        if type(node.func) is not cst.Attribute or self.ctx.qualname(node.func.value) != "os.environ":
            return
        if len(node.args) == 2 and literal(node.args[0].value) == _LAUNCH_BLOCKING:
            self._launch_blocking(node.args[1].value)

    def _launch_blocking(self, value: cst.BaseExpression) -> None:
        if self._guarded() or not _on(literal(value)):
            return
        site = self.ctx.site(value)
        if self._started():
            return
        fix = None
        if type(value) is cst.SimpleString:
            quote = value.quote
            fix = FixPlan("Set CUDA_LAUNCH_BLOCKING to 0", (Replace(site, f"{value.prefix}{quote}0{quote}"),))
        self._blocking(site, fix)

    def _started(self) -> bool:
        """Whether code run before this statement (module-level code above it, or an earlier
        notebook cell) moved something to the GPU (`.cuda()`, `.to(device)`): CUDA has started
        and read the variable already. (The calls met so far in the pass are those above.)"""
        return any(site.scope is self.ctx.module_scope and (name == "cuda" or bool(site.node.args) and self.ctx.is_cuda_device(
            site.node.args[0].value, site.scope) is True) for name in ("cuda", "to") for site in self.ctx.calls.get(name, ()))

    def _blocking(self, site: Site, fix: FixPlan | None, at=None) -> None:
        self.report(
            site,
            "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait for the kernel to finish: the CPU never runs "
            "ahead of the GPU, and training runs much slower. Use it only to locate a CUDA error.",
            fix,
            at=at,
        )

    def finish(self) -> None:
        for site in self.gradchecks:
            function = site.scope.node
            in_training = (site.loops and TrainingSteps.of(self.ctx).trains(site.loops[-1])) or (
                function is not None and TrainingSteps.of(self.ctx).trains(function)
            )
            if in_training:
                self.report(
                    site,
                    "gradcheck runs the function once per input element in double precision: in a training "
                    "loop it costs far more than the step. Move it to a test.",
                )
        for index, unit in enumerate(self.ctx.units):
            for magic in unit.magics:
                match = _ENV_MAGIC.match(magic.text) if magic.name == "env" else None
                if match and _on(match.group("value")):
                    whole = Range(magic.line, 0, magic.line, len(magic.text))
                    no_node = cast(cst.CSTNode, None)  # a magic line has no node (Site.node does not admit None)
                    self._blocking(Site(no_node, index, self.ctx.module_scope), None, at=(index, whole))


