"""TPL502-503: autograd work nobody uses (evaluation with gradients, zeroed gradient buffers)."""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from ..context import Frame, Site, WITH, argument, call_name, children, code, dotted, keyword, literal, remembered
from .base import CallNames, Example, FixPlan, InsertLineBefore, Replace
from .edits import replace_argument
from .timing import _MODEL_NAMES, torch_alias
from .tracking import Nesting, all_calls

NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
           "torch.autograd.grad_mode.inference_mode"}
SET_GRAD_ENABLED = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}
_EVAL_WORDS = {"val", "valid", "validate", "validation", "eval", "evaluate", "evaluation", "inference", "infer",
               "predict", "prediction"}
_GRAD_USES = {"backward", "grad", "requires_grad_", "retain_grad", "autograd", "enable_grad"}
_BENIGN_GRAD_METHODS = {"zero_", "detach_", "requires_grad_", "is_sparse"}


class _Loop(NamedTuple):  # a tuple: one per loop of every analysis (a frozen dataclass is slow to make)
    site: Site
    frames: tuple[Frame, ...]
    function: cst.FunctionDef | None
    order: int


def _evaluation_name(name: str) -> bool:
    words = name.lower().strip("_").split("_")
    return name == "test" or name.endswith("_test") or bool(set(words) & _EVAL_WORDS)


class EvaluationWithGradients(Nesting):
    """
    ## What it does
    Finds an evaluation loop that runs the model with autograd on: a loop calling the
    model after `model.eval()`, or inside a function named for validation (`validate`,
    `evaluate`, `eval_epoch`, `run_inference`, `predict`, `test`), with no
    `torch.no_grad()` / `torch.inference_mode()` around it (a `with`, a decorator, or the
    callers' `with`), and no gradient use (`backward`, `torch.autograd.grad`,
    `requires_grad_`) in the function.

    ## Why is this bad?
    `model.eval()` only switches dropout and batch norm to inference behaviour; autograd
    still records every operation and keeps every activation alive until the outputs are
    dropped. Evaluation then uses several times the memory it needs (limiting the batch
    size) and runs slower than under `no_grad`.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum()
    ```

    ## Fix
    ```python
    @torch.no_grad()
    def validate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum()
    ```
    (or `torch.inference_mode()` when the outputs never meet autograd again).
    """

    code = "TPL502"
    name = "evaluation-with-gradients"
    summary = "Evaluation loop (after model.eval() or in validate()) without torch.no_grad()"
    triggers = ("eval", "val", "test", "infer", "predict")  # .eval() or an evaluation function
    calls = CallNames(frozenset({"set_grad_enabled", "eval", "train"}))
    fixable = True
    probe = "memory"
    VALID = (
        Example(
            "import torch\ndef validate(model, loader):\n    model.eval()\n    with torch.no_grad():\n"
            "        for x, y in loader:\n            model(x)\n"
        ),
        Example("import torch\n@torch.inference_mode()\ndef evaluate(model, loader):\n    for x in loader:\n        model(x)\n"),
        Example(
            "import torch\ndef attack(model, loader):\n    model.eval()\n    for x, y in loader:\n"
            "        x.requires_grad_(True)\n        model(x).sum().backward()\n"
        ),
        Example(
            "import torch\ndef evaluate(model, loader):\n    for x in loader:\n        model(x)\n"
            "with torch.no_grad():\n    evaluate(model, val_loader)\n"
        ),
        Example("import torch\nmodel.train()\nfor x in loader:\n    model(x).sum().backward()\n"),
    )
    INVALID = (
        Example(
            "import torch\ndef validate(model, loader, device):\n    model.eval()\n    correct = 0\n"
            "    for x, y in loader:\n        out = model(x.to(device))\n        correct += (out.argmax(1) == y).sum()\n"
            "    return correct\n",
            "import torch\n@torch.no_grad()\ndef validate(model, loader, device):\n    model.eval()\n    correct = 0\n"
            "    for x, y in loader:\n        out = model(x.to(device))\n        correct += (out.argmax(1) == y).sum()\n"
            "    return correct\n",
        ),
        Example("import torch\nnet.eval()\nfor images, labels in test_loader:\n    outputs = net(images)\n"),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.loops: list[_Loop] = []
        self.modes: list[tuple[Site, bool, int]] = []  # model.eval() / model.train(): (site, eval?, order)
        self.no_grad_withs: dict[int, cst.With] = {}
        self.grad_disabled: set[int] = set()  # scopes that call torch.set_grad_enabled(False)
        self.count = 0

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if type(item.item) is cst.Call and self._turns_off(item.item):
                self.no_grad_withs[id(node)] = node

    def _turns_off(self, call: cst.Call) -> bool:
        qualified = self.ctx.qualname(call.func) or ""
        if qualified in NO_GRAD:
            mode = argument(call, 0, "mode")
            return mode is None or literal(mode) is True
        if qualified in SET_GRAD_ENABLED:
            mode = argument(call, 0, "mode")
            return mode is not None and literal(mode) is False
        return False

    def _without_grad(self) -> bool:
        return any(f.kind == WITH and id(f.node) in self.no_grad_withs for f in self.local_frames())

    def visit_For(self, node: cst.For) -> None:
        self.count += 1
        self.loops.append(_Loop(self.ctx.site(node), self.local_frames(), self.function(), self.count))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name == "set_grad_enabled" and not self._without_grad() and self._turns_off(node):
            self.grad_disabled.add(id(self.ctx.scope))
        if type(node.func) is cst.Attribute and name in ("eval", "train"):
            train = name == "train" and (not node.args or literal(node.args[0].value) is not False)
            self.count += 1
            self.modes.append((self.ctx.site(node), not train, self.count))

    def finish(self) -> None:
        alias = torch_alias(self.ctx)
        reported: set[int] = set()
        called_without_grad = {name for node in self.no_grad_withs.values() for name in _called_in(node.body)}
        for loop in self.loops:
            function = loop.function
            if id(loop.site.scope) in self.grad_disabled or id(function) in reported:
                continue
            if any(f.kind == WITH and id(f.node) in self.no_grad_withs for f in loop.frames):
                continue
            if function is not None and (self._decorated(function) or function.name.value in called_without_grad):
                continue
            evaluated = self._evaluated_module(loop)
            named = function is not None and _evaluation_name(function.name.value)
            if evaluated is None and not named:
                continue
            body = function.body if function is not None else loop.site.node.body
            if _uses_gradients(body, self.ctx):
                continue
            call = self._model_call(loop.site.node, evaluated, loop.site.scope)
            if call is None:
                continue
            fix = None
            if function is not None:
                reported.add(id(function))  # one finding per function
                if alias is not None:
                    decorator = InsertLineBefore(Site(function, loop.site.unit, loop.site.scope), f"@{alias}.no_grad()")
                    fix = FixPlan("Decorate the function with @torch.no_grad()", (decorator,))
            why = f"after `{evaluated}.eval()`" if evaluated else f"in `{function.name.value}`"
            self.report(
                Site(call, loop.site.unit, loop.site.scope),
                f"This evaluation loop ({why}) runs the model with autograd on: every activation is kept for a "
                "backward pass that never comes, costing memory and time. Wrap it in torch.no_grad() (or "
                "torch.inference_mode()); eval() alone does not turn gradients off.",
                fix,
            )

    def _decorated(self, function: cst.FunctionDef) -> bool:
        for decorator in function.decorators:
            target = decorator.decorator
            call = target if type(target) is cst.Call else None
            qualified = self.ctx.qualname(call.func if call else target) or ""
            if qualified in NO_GRAD or (call is not None and self._turns_off(call)):
                return True
        return False

    def _evaluated_module(self, loop: _Loop) -> str | None:
        """The receiver of the last `.eval()`/`.train(False)` before the loop in its scope,
        unless a `.train()` came after it."""
        last = None
        for site, evaluation, order in self.modes:
            if order < loop.order and site.scope is loop.site.scope:
                last = site.node.func.value if evaluation else None
        return dotted(last) if last is not None else None

    def _model_call(self, loop: cst.For, evaluated: str | None, scope) -> cst.Call | None:
        for call in all_calls(loop.body):
            func = call.func
            if type(func) is cst.Attribute and func.attr.value == "forward":
                func = func.value
            name = dotted(func)
            if name is None:
                continue
            if evaluated is not None:
                if name == evaluated:
                    return call
            elif self._model_like(func, name, scope):
                return call
        return None

    def _model_like(self, func: cst.BaseExpression, name: str, scope) -> bool:
        """A module object called directly (`model(x)`, `self.net(x)`), not a function or a
        method that merely mentions a module (`get_module_type(x)`, `m.get_module_rref()`)."""
        if type(func) is cst.Attribute and dotted(func.value) != "self":
            return False
        last = name.rsplit(".", 1)[-1]
        if type(func) is cst.Name and (
            last in self.ctx.functions or last in self.ctx.imports or self.ctx.assigned(last, scope) is None
        ):
            return False  # a function, not a variable holding a module
        return any(word in last.lower() for word in _MODEL_NAMES)


def _called_in(body: cst.CSTNode) -> frozenset[str]:
    """The names called in `body`, but not in the bodies of the functions it defines."""

    def names() -> frozenset[str]:
        found, stack = set(), [body]
        while stack:
            node = stack.pop()
            if type(node) is cst.Call and call_name(node) is not None:
                found.add(call_name(node))
            stack.extend(child for child in children(node) if not (type(node) is cst.FunctionDef and child is node.body))
        return frozenset(found)

    return remembered(_called_in, body, names)


class GradientsZeroedInPlace(Nesting):
    """
    ## What it does
    Finds `zero_grad(set_to_none=False)` and gradients zeroed by hand
    (`p.grad.zero_()`, `p.grad.data.zero_()`). Silent when the file updates gradients in
    place (`p.grad += ...`, `p.grad.add_(...)`, `p.grad[mask] = 0`), which needs them to
    exist as tensors, and in a function that also frees them (`p.grad = None`: a
    `zero_grad` implementation offering both).

    ## Why is this bad?
    Zeroing keeps every gradient buffer allocated between steps and launches a memset
    per parameter (or per group); the next backward then accumulates into the zeros, a
    read-modify-write of every gradient. With `set_to_none=True` (the default since
    PyTorch 2.0) the buffers are freed and backward writes fresh gradients: less memory,
    fewer kernels, less memory traffic.

    ## Example
    ```python
    optimizer.zero_grad(set_to_none=False)
    for p in model.parameters():
        p.grad.zero_()
    ```

    ## Fix
    ```python
    optimizer.zero_grad(set_to_none=True)
    for p in model.parameters():
        p.grad = None
    ```
    """

    code = "TPL503"
    name = "gradients-zeroed-in-place"
    summary = "zero_grad(set_to_none=False) or p.grad.zero_() instead of freeing gradients"
    triggers = ("zero_grad", "zero_(")
    calls = CallNames(frozenset({"zero_grad"}), suffix="_")
    fixable = True
    probe = "memory"
    VALID = (
        Example("import torch\noptimizer.zero_grad()\n"),
        Example("import torch\noptimizer.zero_grad(set_to_none=True)\n"),
        Example(
            "import torch\noptimizer.zero_grad(set_to_none=False)\nfor p in model.parameters():\n"
            "    p.grad.add_(torch.randn_like(p) * 1e-3)\n"
        ),
        Example("import torch\nx.zero_()\nbuffer.data.zero_()\n"),
    )
    INVALID = (
        Example(
            "import torch\nfor x, y in loader:\n    optimizer.zero_grad(set_to_none=False)\n    model(x).sum().backward()\n",
            "import torch\nfor x, y in loader:\n    optimizer.zero_grad(set_to_none=True)\n    model(x).sum().backward()\n",
        ),
        Example(
            "import torch\nfor p in model.parameters():\n    if p.grad is not None:\n        p.grad.detach_()\n"
            "        p.grad.data.zero_()\n",
            "import torch\nfor p in model.parameters():\n    if p.grad is not None:\n        p.grad.detach_()\n"
            "        p.grad = None\n",
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.candidates: list[tuple[Site, FixPlan | None, str]] = []
        self.in_place_updates = False
        self.freeing_scopes: set[int] = set()  # scopes that also set `.grad = None`: both behaviours offered
        self._statement_calls: set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_calls.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if type(node.func) is not cst.Attribute or name is None:
            return
        grad = _grad_attribute(node.func.value)
        if grad is not None:
            if name == "zero_":
                site = self.ctx.site(node)
                fix = None
                if id(node) in self._statement_calls:
                    fix = FixPlan("Free the gradient", (Replace(site, f"{code(grad)} = None"),))
                self.candidates.append((site, fix, f"`{code(node)}` zeroes a gradient buffer in place"))
            elif name.endswith("_") and name not in _BENIGN_GRAD_METHODS:
                self.in_place_updates = True
        elif name == "zero_grad":
            flag = keyword(node, "set_to_none") or (node.args[0] if node.args and node.args[0].keyword is None else None)
            if flag is not None and self.ctx.value(flag.value, self.ctx.scope) is False:
                site = self.ctx.site(node)
                fix = None
                if type(flag.value) is cst.Name:
                    fix = FixPlan("Set set_to_none=True", (Replace(site, replace_argument(node, flag, "True")),))
                self.candidates.append((site, fix, "zero_grad(set_to_none=False) keeps and zeroes every gradient buffer"))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _grad_attribute(node.target) is not None:
            self.in_place_updates = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if type(node.target) is cst.Subscript and _grad_attribute(node.target.value) is not None:
            self.in_place_updates = True

    def visit_Assign(self, node: cst.Assign) -> None:
        if literal(node.value) is None and any(_grad_attribute(t.target) is not None for t in node.targets):
            self.freeing_scopes.add(id(self.ctx.scope))

    def finish(self) -> None:
        if self.in_place_updates:
            return
        for site, fix, what in self.candidates:
            if id(site.scope) in self.freeing_scopes:
                continue
            self.report(
                site,
                f"{what}: the memory stays allocated between steps, a memset runs per buffer, and backward "
                "accumulates into the zeros. Free the gradients instead (zero_grad(set_to_none=True), the "
                "default, or p.grad = None).",
                fix,
            )


def _grad_attribute(expr: cst.BaseExpression) -> cst.Attribute | None:
    """`p.grad` for `p.grad` or `p.grad.data`, else None."""
    if type(expr) is cst.Attribute and expr.attr.value == "data":
        expr = expr.value
    if type(expr) is cst.Attribute and expr.attr.value == "grad":
        return expr
    return None




def _uses_gradients(body: cst.CSTNode, ctx) -> bool:
    """Whether `body` computes or asks for gradients."""
    for call in all_calls(body):
        name = call_name(call)
        if name in _GRAD_USES or (ctx.qualname(call.func) or "").startswith("torch.autograd."):
            return True
        requires = keyword(call, "requires_grad")
        if requires is not None and literal(requires.value) is not False:
            return True
    return False
