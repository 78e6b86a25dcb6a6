"""TPL302-303: torch.compile called where it cannot pay off, and checkpoints of compiled modules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import libcst as cst

from ..context import DEF, Frame, IF, LOOP, Site
from ..nodes import call_name, code, dotted, names_in
from .base import Example, FixPlan, Replace
from .distributed import COMPILE
from .edits import names_in_target, root_name
from .tracking import Compiled, CompiledModules, TrainingSteps, calls_outside_loops, iterations
from ..vocabulary import PER_CALL_METHODS, SIZED_FACTORIES

_FACTORIES = {f"torch.{name}" for name in SIZED_FACTORIES | {"arange"}}
_RESHAPES = {"view", "reshape", "expand", "repeat", "narrow"}
_PER_CALL = PER_CALL_METHODS | {"validation_step"}  # a validation step's shapes recompile alike
_RECOMPILE_LIMIT = 8


@dataclass(frozen=True)
class _CompileCall:
    site: Site
    frames: tuple[Frame, ...]
    statement: cst.SimpleStatementLine | None
    function: cst.FunctionDef | None


class CompileInLoop(CompiledModules):
    """
    ## What it does
    Finds `torch.compile` called on every training step: inside a loop that runs a
    training step (or calls the compiled result), inside `forward`, or in a function
    called from such a loop. Also finds a compiled model fed tensors whose shape changes
    with a loop variable (`torch.randn(bs, ...)` for `bs` in a sweep, `x[:, :seq_len]`)
    while `torch.compile` was not told about it (`dynamic=` unset, or `False` for more
    shapes than `torch._dynamo.config.recompile_limit`).

    ## Why is this bad?
    Each `torch.compile` call builds a new compiled wrapper and re-checks its guards
    (milliseconds per call, more than a small model's step); a new function, backend or
    option object each time recompiles, and after `recompile_limit` (8) recompiles dynamo
    gives up and the code silently runs eagerly.

    For shapes: with `dynamic` unset, torch.compile specializes on the first shape,
    recompiles on the second and from then on uses shape-generic kernels (one extra
    compile, and later shapes do not get specialized kernels); with `dynamic=False` it
    recompiles for every new shape and falls back to eager after `recompile_limit`
    shapes. `dynamic=True` compiles one shape-generic graph up front.

    Silent when the compiled object or its options change with the loop (compiling each
    model of a list, sweeping `mode=`), under a lazy-init guard (`if compiled is None:`),
    and in an epoch loop that only calls the compiled model from its inner loop.

    ## Example
    ```python
    for x, y in loader:
        compiled = torch.compile(model)
        loss = loss_fn(compiled(x), y)
        loss.backward()
    ```

    ## Fix
    ```python
    compiled = torch.compile(model)
    for x, y in loader:
        loss = loss_fn(compiled(x), y)
        loss.backward()
    ```
    For a shape sweep, `torch.compile(model, dynamic=True)` (or
    `torch._dynamo.mark_dynamic(x, 0)`), or `dynamic=False` with a few padded sizes.
    """

    code = "TPL302"
    name = "compile-per-step"
    summary = "torch.compile called every step, or a compiled model fed varying shapes without dynamic="
    triggers = ("compile",)
    probe = "compile"
    VALID = (
        Example(
            """
            import torch
            compiled = torch.compile(model)
            for x, y in loader:
                loss = compiled(x).sum()
                loss.backward()
            """,
        ),
        Example(
            """
            import torch
            compiled = {}
            for name, net in models.items():
                compiled[name] = torch.compile(net)
            """,
        ),
        Example(
            """
            import torch
            for mode in ['default', 'max-autotune']:
                fast = torch.compile(model, mode=mode)
                for x in batches:
                    fast(x)
            """,
        ),
        Example(
            """
            import torch
            fast = torch.compile(model, dynamic=True)
            for bs in [1, 8, 64]:
                fast(torch.randn(bs, 128, device='cuda'))
            """,
        ),
        Example(
            """
            import torch
            fast = torch.compile(model, dynamic=False)
            for bs in [1, 8, 64]:
                fast(torch.randn(bs, 128, device='cuda'))
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            for x, y in loader:
                compiled = torch.compile(model)
                loss = loss_fn(compiled(x), y)
                loss.backward()
                optimizer.step()
            """,
        ),
        Example(
            """
            import torch
            from torch import nn
            class Block(nn.Module):
                def forward(self, x):
                    return torch.compile(self.mlp)(x)
            """,
        ),
        Example(
            """
            import torch
            fast = torch.compile(model)
            for seq_len in (128, 256, 512):
                tokens = torch.randint(0, 50257, (8, seq_len), device='cuda')
                fast(tokens)
            """,
        ),
        Example(
            """
            import torch
            fast = torch.compile(model, dynamic=False)
            for n in range(1, 33):
                fast(x[:, :n])
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.compiles: list[_CompileCall] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.track_call(node)
        if call_name(node) == "compile" and self.ctx.qualname(node.func) == COMPILE:
            self.compiles.append(_CompileCall(self.ctx.site(node), self.local_frames(), self.statement, self.function()))

    def finish(self) -> None:
        for call in self.compiles:
            where = self._per_step(call)
            if where is not None:
                self.report(
                    call.site,
                    f"torch.compile runs {where}: each call builds a new compiled wrapper and re-checks its "
                    "guards (milliseconds per call), a new function, backend or option object recompiles, and "
                    "after torch._dynamo.config.recompile_limit (8) recompiles the code silently runs eagerly. "
                    "Compile once, outside the loop, and reuse the compiled module.",
                )
        if "mark_dynamic" in self.ctx.calls:
            return
        for record in self.history:
            self._shapes(record)

    # -- compile on every step -----------------------------------------------------------------
    def _per_step(self, call: _CompileCall) -> str | None:
        site = call.site
        own = set()
        if call.statement is not None:
            for small in call.statement.body:
                if type(small) is cst.Assign:
                    own |= {n for t in small.targets for n in names_in_target(t.target)}
        if site.loops:
            loop = site.loops[-1]
            if not (TrainingSteps.of(self.ctx).trains(loop) or self._calls_result(loop, call, own)):
                return None
            variant = _loop_variant(site.loops, loop, call.statement)
            if names_in(site.node) & variant or _breaks(loop):
                return None
            inner = [i for i, f in enumerate(call.frames) if f.kind == LOOP and f.node is loop]
            guards = [f for f in call.frames[inner[-1] + 1 :] if f.kind == IF] if inner else []
            if any(names_in(cast(cst.If, f.node).test) & (variant | own) for f in guards):  # IF frames hold an If
                return None
            return "on every iteration of this training loop"
        function = call.function
        if function is None or any(f.kind == IF for f in call.frames):
            return None
        name = function.name.value
        if name in _PER_CALL:
            return f"on every call of `{name}`"
        if any(c.loops and TrainingSteps.of(self.ctx).trains(c.loops[-1]) for c in self.ctx.calls.get(name, [])):
            return f"every time `{name}` is called from the training loop"
        return None

    def _calls_result(self, loop: cst.For | cst.While, call: _CompileCall, own: set[str]) -> bool:
        """Whether the loop body (not its inner loops) calls what this compile returns."""
        for inner in calls_outside_loops(loop.body):
            if inner.func is call.site.node:
                return True
            if type(inner.func) is cst.Name and inner.func.value in own:
                return True
        return False

    # -- varying shapes ------------------------------------------------------------------------------
    def _shapes(self, record: Compiled) -> None:
        dynamic = record.option("dynamic")
        value = None if dynamic is None else self.ctx.value(dynamic.value, record.site.scope)
        if value not in (None, False) or (dynamic is not None and value is None):
            return
        for site in record.calls:
            varying = self._varying(site)
            if varying is None:
                continue
            name, loop = varying
            if value is False:
                shapes = iterations(loop, self.ctx, site.scope)
                if shapes is None or shapes <= _RECOMPILE_LIMIT:
                    continue
                self.report(
                    record.site,
                    f"`{record.name}` is compiled with dynamic=False and called with a shape that changes with "
                    f"`{name}` ({shapes} shapes): it recompiles for every new shape and, after "
                    "torch._dynamo.config.recompile_limit (8), silently runs eagerly. Pass dynamic=True (one "
                    "shape-generic graph) or pad the inputs to a few sizes.",
                )
            else:
                self.report(
                    record.site,
                    f"`{record.name}` is called with a shape that changes with `{name}` but torch.compile is "
                    "not told: it compiles for the first shape, recompiles on the second and then switches to "
                    "shape-generic kernels. Pass dynamic=True to compile one shape-generic graph up front, or "
                    "dynamic=False to specialize every shape (each is a compile; more than 8 fall back to eager).",
                    severity="info",
                )
            return

    def _varying(self, site: Site) -> tuple[str, cst.For] | None:
        """(loop variable, its loop) when an argument's shape follows a loop variable."""
        targets = {n: loop for loop in site.loops if type(loop) is cst.For for n in names_in_target(loop.target)}
        if not targets:
            return None
        for arg in cast(cst.Call, site.node).args:  # a call of the compiled name
            name = self._shape_name(arg.value, site, set(targets), 0)
            if name is not None:
                return name, targets[name]
        return None

    def _shape_name(self, expr: cst.BaseExpression, site: Site, targets: set[str], depth: int) -> str | None:
        if depth > 3:
            return None
        if type(expr) is cst.Name:
            found = self.ctx.origin(expr, site.scope)
            return None if found is None or found[0] is expr else self._shape_name(found[0], site, targets, depth + 1)
        if type(expr) is cst.Call:
            sized = self.ctx.qualname(expr.func) in _FACTORIES or (
                type(expr.func) is cst.Attribute and call_name(expr) in _RESHAPES
            )
            if sized:
                used = set().union(*(names_in(a.value) for a in expr.args if a.keyword is None)) & targets
                return min(used) if used else None
            return None
        if type(expr) is cst.Subscript:
            for element in expr.slice:
                if type(element.slice) is cst.Slice:
                    parts = [p for p in (element.slice.lower, element.slice.upper) if p is not None]
                    used = set().union(*(names_in(p) for p in parts)) & targets if parts else set()
                    if used:
                        return min(used)
        return None


def _loop_variant(loops: tuple, loop: cst.For | cst.While, statement) -> set[str]:
    """Names that change from one iteration to the next: loop targets and names assigned in
    the loop body, except by `statement` itself."""
    names = {n for outer in loops if type(outer) is cst.For for n in names_in_target(outer.target)}

    class Assigned(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
            return node is not statement

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            names.update(names_in_target(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            names.update(names_in_target(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            names.update(names_in_target(node.target))

        def visit_For(self, node: cst.For) -> None:
            names.update(names_in_target(node.target))

        def visit_AsName(self, node: cst.AsName) -> None:
            names.update(names_in_target(node.name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            names.update(names_in_target(node.target))

    loop.body.visit(Assigned())
    return names


def _breaks(loop: cst.For | cst.While) -> bool:
    """Whether the loop body (not an inner loop) can `break` out of it."""
    found = False

    class Breaks(cst.CSTVisitor):
        def visit_For(self, node: cst.For) -> bool:
            return False

        def visit_While(self, node: cst.While) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Break(self, node: cst.Break) -> None:
            nonlocal found
            found = True

    loop.body.visit(Breaks())
    return found


class CompiledStateDict(CompiledModules):
    """
    ## What it does
    Finds a checkpoint saved from the `state_dict()` of a module returned by
    `torch.compile` (`torch.save`, `safetensors.torch.save_file`, `accelerator.save`,
    directly or through a dict that is saved).

    ## Why is this bad?
    `torch.compile(model)` returns a wrapper (`OptimizedModule`) that holds the model as
    `_orig_mod`: every key of its state dict starts with `_orig_mod.`. The checkpoint then
    fails to load into a plain model (`Missing key(s) ... Unexpected key(s)
    "_orig_mod.conv1.weight"`), in evaluation scripts, in inference servers, and on the
    next run without `--compile`. `module.compile()` compiles in place and keeps the keys.

    ## Example
    ```python
    model = torch.compile(model)
    ...
    torch.save(model.state_dict(), "checkpoint.pt")
    ```

    ## Fix
    ```python
    torch.save(model._orig_mod.state_dict(), "checkpoint.pt")
    ```
    When the model was compiled under a condition (`if args.compile:`) the fix uses
    `getattr(model, "_orig_mod", model)`; when the uncompiled module is still bound to
    its own name (`compiled = torch.compile(model)`), it saves `model.state_dict()`.
    """

    code = "TPL303"
    name = "compiled-state-dict"
    summary = "state_dict() of a torch.compile wrapper saved: every key gets an `_orig_mod.` prefix"
    triggers = ("state_dict",)
    VALID = (
        Example(
            """
            import torch
            model = torch.compile(model)
            torch.save(model._orig_mod.state_dict(), 'ckpt.pt')
            """,
        ),
        Example(
            """
            import torch
            model.compile()
            torch.save(model.state_dict(), 'ckpt.pt')
            """,
        ),
        Example(
            """
            import torch
            model = torch.compile(model)
            model = model._orig_mod
            torch.save(model.state_dict(), 'ckpt.pt')
            """,
        ),
        Example(
            """
            import torch
            fast = torch.compile(model)
            sd = fast.state_dict()
            print(len(sd))
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            model = torch.compile(model)
            for epoch in range(3):
                train(model)
                torch.save(model.state_dict(), f'ckpt{epoch}.pt')
            """,
            """
            import torch
            model = torch.compile(model)
            for epoch in range(3):
                train(model)
                torch.save(model._orig_mod.state_dict(), f'ckpt{epoch}.pt')
            """,
        ),
        Example(
            """
            import torch
            def main(args):
                model = Net()
                if args.compile:
                    model = torch.compile(model)
                checkpoint = {'model': model.state_dict(), 'epoch': 3}
                torch.save(checkpoint, 'last.pt')
            """,
            """
            import torch
            def main(args):
                model = Net()
                if args.compile:
                    model = torch.compile(model)
                checkpoint = {'model': getattr(model, "_orig_mod", model).state_dict(), 'epoch': 3}
                torch.save(checkpoint, 'last.pt')
            """,
        ),
        Example(
            """
            import torch
            net = Net().cuda()
            fast_net = torch.compile(net)
            torch.save(fast_net.state_dict(), 'net.pt')
            """,
            """
            import torch
            net = Net().cuda()
            fast_net = torch.compile(net)
            torch.save(net.state_dict(), 'net.pt')
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.saving: list[cst.Call] = []
        self.saved_names: set[str] = set()
        self.candidates: list[tuple[Site, Compiled, tuple[Frame, ...], str | None, bool]] = []

    def _is_save(self, node: cst.Call) -> bool:
        name = call_name(node)
        if name not in ("save", "save_file"):
            return False
        qualified = self.ctx.qualname(node.func) or ""
        if qualified in ("torch.save", "safetensors.torch.save_file"):
            return True
        receiver = dotted(node.func.value) if type(node.func) is cst.Attribute else None
        return name == "save" and receiver is not None and receiver.rsplit(".", 1)[-1] in ("accelerator", "fabric")

    def visit_Call(self, node: cst.Call) -> None:
        self.track_call(node)
        if self._is_save(node):
            self.saving.append(node)
            first = node.args[0].value if node.args else None
            if type(first) is cst.Name:
                self.saved_names.add(first.value)
            return
        if call_name(node) != "state_dict" or type(node.func) is not cst.Attribute:
            return
        record = self.compiled_as(node.func.value)
        if record is None or record.in_place:
            return
        holder = None
        small = self.statement.body[0] if self.statement is not None and len(self.statement.body) == 1 else None
        if type(small) is cst.Assign and len(small.targets) == 1:
            holder = root_name(small.targets[0].target)
        self.candidates.append((self.ctx.site(node), record, self.local_frames(), holder, bool(self.saving)))

    def leave_Call(self, original_node: cst.Call) -> None:
        if self.saving and self.saving[-1] is original_node:
            self.saving.pop()

    def finish(self) -> None:
        for site, record, frames, holder, in_save in self.candidates:
            if not (in_save or (holder is not None and holder in self.saved_names)):
                continue
            receiver = cast(cst.Attribute, cast(cst.Call, site.node).func).value  # `x.state_dict()` (visit_Call)
            original = self._original(record, site)
            if original is not None:
                new = original
            elif all(frame in frames for frame in record.frames if frame.kind != DEF):
                new = f"{code(receiver)}._orig_mod"
            else:
                new = f'getattr({code(receiver)}, "_orig_mod", {code(receiver)})'
            fix = FixPlan("Save the original module's state_dict", (Replace(Site(receiver, site.unit, site.scope), new),))
            self.report(
                site,
                f"`{record.name}` is a torch.compile wrapper: its state_dict keys all start with `_orig_mod.`, "
                f"so this checkpoint will not load into an uncompiled model. Save `{new}.state_dict()` instead.",
                fix,
            )

    def _original(self, record: Compiled, site: Site) -> str | None:
        """The name still bound to the uncompiled module where `site` is, if it is another
        name than the wrapper's."""
        argument = record.argument
        if type(argument) is not cst.Name or argument.value == record.name:
            return None
        values = self.ctx.assigned(argument.value, record.site.scope)
        owner = record.site.scope.owner_of(argument.value)
        if values is None or owner is None or site.scope.owner_of(argument.value) is not owner:
            return None
        if len(values) == 1 and (values[0] is not None or argument.value in owner.params):
            return argument.value  # bound once: still the uncompiled module
        return None

