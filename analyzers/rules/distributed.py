"""TPL3xx: torch.compile and distributed training."""

from __future__ import annotations

from typing import cast

import libcst as cst

from ..context import MODULE_CHAIN, Scope, Site
from ..nodes import argument, call_name, contains, dotted, names_in
from .base import Example, FixPlan, MoveLinesBefore, Replace, Rule

DDP = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
}
COMPILE = "torch.compile"


class CompileBeforeDDP(Rule):
    """
    ## What it does
    Finds a module compiled with `torch.compile` (or `module.compile()`) that is then
    wrapped in `DistributedDataParallel`. It tracks the object, not line order: compiling
    an EMA copy that is never wrapped is fine. Off by default.

    ## Why is this bad?
    DDP overlaps gradient all-reduce with backward by bucketing gradients, and a compiled
    backward runs as one operation unless the graph is split at the buckets. Early
    PyTorch 2 guidance was to wrap with DDP first and compile the wrapper so that
    TorchDynamo's DDPOptimizer could split it. In the PyTorch releases perf-lint supports,
    Dynamo also applies DDPOptimizer to a module compiled inside DDP's forward (it checks
    for an active DDP module whenever it compiles a frame), and PyTorch's docs now
    recommend this very order (compile the inner module, then wrap it). Measured with
    torch 2.13 on the CPU, on a one-process gloo group: `DDP(torch.compile(m))` compiled
    the model into bucket-split graphs, while `torch.compile(DDP(m))` captured no graph.
    The order is therefore reported only when selected (`extend-select = ["TPL301"]`),
    to measure both orders on GPUs with `perf-lint profile --rule TPL301` (NCCL, several
    ranks) before changing code.

    ## Example
    ```python
    model = torch.compile(model)
    model = DDP(model, device_ids=[rank])
    ```

    ## Fix
    The other order, the variant the profiler measures against:
    ```python
    model = DDP(model, device_ids=[rank])
    model = torch.compile(model)
    ```
    """

    code = "TPL301"
    triggers = ("DistributedDataParallel",)
    name = "compile-before-ddp"
    summary = "torch.compile applied before DistributedDataParallel wraps the model"
    probe = "compile-ddp"
    severity = "info"
    default_enabled = False
    VALID = (
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[0])
            model = torch.compile(model)
            """,
        ),
        Example(
            """
            import copy, torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            ema = torch.compile(copy.deepcopy(model))
            model = DDP(model)
            """,
        ),
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = torch.compile(model)
            model = Net()
            model = DDP(model)
            """,
        ),
    )
    INVALID = (
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = torch.compile(model, mode='max-autotune')
            model = DDP(model, device_ids=[rank])  # wrap
            """,
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[rank])  # wrap
            model = torch.compile(model, mode='max-autotune')
            """,
        ),
        Example(
            """
            import torch
            import torch.nn.parallel
            ddp = torch.nn.parallel.DistributedDataParallel(torch.compile(net), device_ids=[0])
            """,
            """
            import torch
            import torch.nn.parallel
            ddp = torch.compile(torch.nn.parallel.DistributedDataParallel(net, device_ids=[0]))
            """,
        ),
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def setup(model, args):
                if args.compile:
                    model = torch.compile(model)
                model = DDP(model)
                return model
            """,
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def setup(model, args):
                model = DDP(model)
                if args.compile:
                    model = torch.compile(model)
                return model
            """,
        ),
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            net.compile()
            wrapped = DDP(net)
            """,
        ),
        # `.to()` on the compiled module returns the same compiled module
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def main(rank):
                model = GPTModel()
                model = torch.compile(model)
                model = model.to(rank)
                model = model.to(torch.bfloat16)
                model = DDP(model, device_ids=[rank])
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.compiled: dict[tuple[int, str], tuple[Site, cst.Call | None]] = {}

    def _key(self, scope: Scope, name: str) -> tuple[int, str]:
        owner = scope.owner_of(name) or scope
        return id(owner), name

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if type(target.target) is not cst.Name:
                continue
            key = self._key(self.ctx.scope, target.target.value)
            value = node.value
            if type(value) is cst.Call and self.ctx.qualname(value.func) == COMPILE:
                statement = cast(cst.SimpleStatementLine, self.ctx.statement)  # an Assign is in one
                self.compiled[key] = (self.ctx.site(statement), value)
            elif key in self.compiled and _same_module(value, target.target.value):
                self.compiled[key] = (self.compiled[key][0], None)  # (no fix: DDP must come after the move)
            else:
                self.compiled.pop(key, None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if call_name(node) == "compile" and type(func) is cst.Attribute and type(func.value) is cst.Name:
            if self.ctx.qualname(func) is None:  # module.compile(): compiles in place
                self.compiled[self._key(self.ctx.scope, func.value.value)] = (self.ctx.site(node), None)
            return
        if self.ctx.qualname(func) not in DDP:
            return
        wrapped = argument(node, 0, "module")
        site = self.ctx.site(node)
        if type(wrapped) is cst.Call and self.ctx.qualname(wrapped.func) == COMPILE and wrapped.args:
            inner = wrapped.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            rest = [a for a in node.args if a.value is not wrapped]
            ddp = node.with_changes(args=[inner.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) if rest else inner, *rest])
            new = wrapped.with_changes(args=[wrapped.args[0].with_changes(value=ddp), *wrapped.args[1:]])
            self._report(site, FixPlan("Wrap with DDP first, then compile", (Replace(site, new),)))
            return
        if type(wrapped) is not cst.Name:
            return
        found = self.compiled.get(self._key(self.ctx.scope, wrapped.value))
        if found is None:
            return
        compile_site, compile_call = found
        self._report(site, self._move_fix(site, wrapped.value, compile_site, compile_call))

    def _move_fix(self, site: Site, name: str, compile_site: Site, compile_call) -> FixPlan | None:
        """Move `name = DDP(name, ...)` above the statement that compiles `name`."""
        statement = self.ctx.statement
        if compile_call is None or statement is None or compile_site.unit != site.unit:
            return None
        small = statement.body[0] if len(statement.body) == 1 else None
        if not (type(small) is cst.Assign and len(small.targets) == 1 and small.value is site.node):
            return None
        target = small.targets[0].target
        inner = compile_call.args[0].value if compile_call.args else None
        if not (type(target) is cst.Name and target.value == name and type(inner) is cst.Name and inner.value == name):
            return None
        body = list(self.ctx.blocks[-1].body)  # the statement's block
        position = next((i for i, s in enumerate(body) if s is statement), None)
        container = next((i for i, s in enumerate(body[:position or 0]) if contains(s, compile_site.node)), None)
        if position is None or container is None:
            return None
        used = names_in(statement) - {name}
        if any(_assigns(s, used) for s in body[container:position]):
            return None
        block_site = Site(body[container], site.unit, site.scope)
        return FixPlan("Wrap with DDP first, then compile", (MoveLinesBefore(Site(statement, site.unit, site.scope), block_site),))

    def _report(self, site: Site, fix: FixPlan | None) -> None:
        self.report(
            site,
            "This model is compiled before DistributedDataParallel wraps it, the order PyTorch's docs "
            "now recommend (Dynamo splits the compiled graph at DDP's buckets); measure it against "
            "torch.compile(DDP(model)) with `perf-lint profile --rule TPL301` on GPUs before changing it.",
            fix,
        )


def _same_module(value: cst.BaseExpression, name: str) -> bool:
    """`model.to(device)`, `model.train()`: a module method that returns the module itself."""
    return (
        type(value) is cst.Call and type(value.func) is cst.Attribute and dotted(value.func.value) == name
        and value.func.attr.value in MODULE_CHAIN
    )


def _assigns(root: cst.CSTNode, names: set[str]) -> bool:
    hit = False

    class Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal hit
            hit = hit or bool(names_in(node.target) & names)

    root.visit(Targets())
    return hit
