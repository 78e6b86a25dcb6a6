"""What several rules follow during the pass: the compound statements around the current
node (ifs, withs, loops, function bodies) and the names bound to compiled modules."""

from __future__ import annotations

import ast
import itertools
import operator
import os
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from ..context import CallSite, Context, Frame, Scope, Site
from ..nodes import (UNKNOWN, argument, call_name, code, contains, dotted, iteration_source, keyword, lazy_init, leaves_loop, literal, main_guard, names_in,
                     option_test, positional, walk)
from ..importers import (constructed_with, imported, imported_to_train, importer_namespace_default, loss_methods, made_only_to_infer, never_on,
                         subclass_forward_calls, unused_class)
from ..project import (SourceNamespace, call_target, calls_argument, coqui_model, derives_from, forward_helpers, lineage, project_bases, step_helpers, instance_default, maybe_project_call, steps_in_loops, tests_interval,
                       trains_somewhere)
from ..project import trains as project_trains
from .edits import root_name
from .base import Rule
from .distributed import COMPILE
from ..vocabulary import AUTOGRAD_FUNCTIONS, BATCH_HOOKS, CALLBACK_CLASS, CLOCKS, COQUI_STEP_HOOKS, DEVICE_LIKE, EVALUATION_NAME, HF_TRAINERS, LIGHTNING_MODULES, MODULE_CLASSES, OPTIMIZERS, SHORT_LOOP

_COMPILE_OPTIONS = {"mode", "fullgraph", "dynamic", "backend", "options", "disable"}


class Nesting(Rule):
    """A rule base that knows the frames enclosing the node being visited (the context
    tracks them once for every rule)."""

    @property
    def frames(self) -> list[Frame]:
        return self.ctx.frames

    @property
    def statement(self) -> cst.SimpleStatementLine | None:
        return self.ctx.statement

    def local_frames(self) -> tuple[Frame, ...]:
        return self.ctx.local_frames()

    def function(self) -> cst.FunctionDef | None:
        return self.ctx.function()


@dataclass
class Compiled:
    """A name bound to `torch.compile(x)` (or a module compiled in place by `x.compile()`)."""

    site: Site  # the compile call
    name: str  # the bound name as written: "model", "self.net"
    frames: tuple[Frame, ...]  # the frames around the compile call
    in_place: bool = False
    calls: list[Site] = field(default_factory=list)  # calls of the compiled name, in pass order

    @property
    def call(self) -> cst.Call:
        return cast(cst.Call, self.site.node)  # the site of the compile call

    @property
    def argument(self) -> cst.BaseExpression | None:
        if self.in_place:
            return cst.ensure_type(self.call.func, cst.Attribute).value  # `x.compile()`
        return self.call.args[0].value if self.call.args and self.call.args[0].keyword is None else None

    def option(self, name: str) -> cst.Arg | None:
        return keyword(self.call, name)


class CompiledModules(Nesting):
    """A rule base that follows, in pass order, which names hold a compiled module and the
    calls made through them. Pass order is execution order for straight-line code and
    notebook cells; a name rebound to anything else stops being followed."""

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.compiled: dict[tuple, Compiled] = {}
        self.history: list[Compiled] = []
        if any("compile" in unit.text for unit in ctx.units):
            self.calls = None  # a call of any name may be a compiled module's (`track_call`)

    def key(self, expr: cst.BaseExpression) -> tuple | None:
        if type(expr) is cst.Name:
            owner = self.ctx.scope.owner_of(expr.value) or self.ctx.scope
            return id(owner), expr.value
        name = dotted(expr) if type(expr) is cst.Attribute else None
        return ("attribute", name) if name is not None else None

    def compiled_as(self, expr: cst.BaseExpression) -> Compiled | None:
        """The compiled module `expr` (a name or `self.x`) holds at this point, if any."""
        key = self.key(expr) if type(expr) in (cst.Name, cst.Attribute) else None
        return None if key is None else self.compiled.get(key)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        compiling = (
            value if type(value) is cst.Call and call_name(value) == "compile" and self.ctx.qualname(value.func) == COMPILE
            else None
        )
        if compiling is None and not self.compiled:
            return  # no compiled module to forget (most assignments of most files)
        key = self.key(target)
        if key is None:
            return
        if compiling is not None:
            record = Compiled(self.ctx.site(compiling), dotted(target) or "", self.local_frames())
            self.compiled[key] = record
            self.history.append(record)
        else:
            self.compiled.pop(key, None)

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def track_call(self, node: cst.Call) -> Compiled | None:
        """Record `node` if it calls a compiled module (or compiles one in place); returns
        the module it calls."""
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "compile":
            key = self.key(func.value) if type(func.value) in (cst.Name, cst.Attribute) else None
            in_place = all(arg.keyword is not None and arg.keyword.value in _COMPILE_OPTIONS for arg in node.args)
            if key is not None and in_place and self.ctx.qualname(func) is None:
                record = Compiled(self.ctx.site(node), dotted(func.value) or "", self.local_frames(), in_place=True)
                self.compiled[key] = record
                self.history.append(record)
            return None
        if not self.compiled:
            return None
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value
        called = self.compiled_as(func)
        if called is not None:
            called.calls.append(self.ctx.site(node))
        return called


_MIXIN_BASES = frozenset({"object", "ABC", "Generic"})  # what a mixin of methods for a model derives from


class TrainingSteps:
    """Which loop bodies and functions run a training step: `backward()` or an optimizer's
    `step()`, directly (not in a nested loop) or through a function of the source they
    call. Built once per source, from the calls the context collected, when a rule first
    asks (in `finish`)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._direct: set[int] = set()  # ids of loops and functions that step directly
        self._epochs: set[int] = set()  # ids of functions that step in a loop of their own
        self._outer: set[int] = set()  # ids of loops around a loop that steps
        self._callees: dict[int, set[str]] = {}  # loop or function id -> names of functions it calls
        self.engines: set[str] = set()  # functions a framework runs on every iteration
        self._forwards: dict[tuple[int, str], set[str]] = {}  # (class id, root method) -> the methods the root runs
        self._by_class: dict[int, dict[str, set[str]]] | None = None  # see _self_calls
        self._elsewhere: dict[int, list[CallSite]] | None = None  # loop or function id -> calls of other names
        self._elsewhere_calls: dict[int, list[CallSite]] = {}  # loop or function id -> see _calls_elsewhere
        self._anywhere: bool | None = None  # see anywhere
        self._cached: dict[int, set[int]] = {}  # function id -> see cached
        self._devices: dict[int, bool] = {}  # function id -> whether its text names a device or moves a value
        self._every: dict[tuple, bool] = {}  # (function id, depth) -> see called_every_step
        self._inferring: dict[int, bool] = {}  # class id -> see _made_to_infer
        self._applied: dict[int, bool] = {}  # autograd Function's method id -> see _applied_every_step
        self._main_blocks: set[int] | None = None  # ids of the nodes under the modules' `if __name__ == "__main__":`
        self._intervals: dict[tuple, set[int]] = {}  # (body id, loops id) -> see _guarded_calls
        self._evaluations: dict[int, list[CallSite]] | None = None  # see evaluates_every_iteration
        self._step_calls: set[int] = set()  # ids of the `backward()` and optimizer `step()` calls
        self._updates: set[int] = set()  # ids of the optimizer `step()` calls
        self._handed: dict[str, list[CallSite]] | None = None  # function name -> the calls given it by name
        self._handed_in: dict[int, set[str]] = {}  # loop or function id -> the names of functions handed by calls right in it
        self._runs_handed: dict[int, list[CallSite]] = {}  # function id -> see handed_to
        self._stepping: dict[int, bool] = {}  # id(function) -> whether it steps, in a loop or not
        self._optimizing: dict[int, bool] = {}  # id(class) -> whether a method of it steps an optimizer
        self._branches: dict[int, set[int]] = {}  # loop or function id -> see in_evaluation_branch
        self._answers: dict[tuple, bool] = {}  # (question's name, node id) -> the answers of trains, per_epoch, run_every_step
        for name, sites in ctx.calls.items():
            if name == "backward" or name == "step" or name in ctx.functions:
                for site in sites:
                    self._note(name, site)
            elif name == "Engine":  # ignite: Engine(process_function) runs it on every batch
                for site in sites:
                    first = positional(site.node, 0)
                    if first is not None and type(first.value) is cst.Name and (
                        ctx.qualname(site.node.func) or "").startswith("ignite."):
                        self.engines.add(first.value.value)
            for site in sites:  # `loss_scaler(loss, optimizer)`, `amp_step(optimizer, loss)`: a step
                # (a function of the source or the project is judged by its body:
                # `train_step(loss_fn=..., optimizer=...)` looping over the batches itself is an epoch)
                if name not in ctx.functions and len(site.node.args) >= 2 and _steps_with(site.node):
                    owner = site.loops[-1] if site.loops else site.scope.node
                    if owner is not None and not (maybe_project_call(ctx, site.node.func) and steps_in_loops(
                            call_target(ctx, site.node.func, site.scope))):
                        self._direct.add(id(owner))

    @classmethod
    def of(cls, ctx: Context) -> "TrainingSteps":
        """The source's (made on first use, after the pass)."""
        found = ctx.shared.get(cls)
        if found is None:
            found = ctx.shared[cls] = cls(ctx)
        return found

    def _note(self, name: str, site: CallSite) -> None:
        """Record a call for the innermost loop or function around it."""
        owner = site.loops[-1] if site.loops else site.scope.node
        if owner is None:
            return
        call = site.node
        steps = name == "backward"
        if name == "step" and type(call.func) is cst.Attribute:
            receiver = (dotted(call.func.value) or "").rsplit(".", 1)[-1].lower()
            steps = "opt" in receiver or (receiver == "scaler" and bool(call.args))
        if steps:
            self._step_calls.add(id(call))
            if name == "step":
                self._updates.add(id(call))
            self._direct.add(id(owner))
            self._outer.update(map(id, site.loops[:-1]))
            if site.loops and site.scope.node is not None:
                self._epochs.add(id(site.scope.node))
        elif type(call.func) is cst.Name or type(call.func) is cst.Attribute and dotted(call.func.value) == "self":
            self._callees.setdefault(id(owner), set()).add(name)

    def in_evaluation_branch(self, owner: cst.CSTNode, node: cst.CSTNode) -> bool:
        """Whether `node` is in the `else` of a test that the training step of `owner` (a loop
        or function) runs under: a loop shared by training and validation, `if is_train:
        loss.backward()` ... `else: writer.add_scalar("val_loss", loss.item())`; or a module's
        inference branch (`if self.training: return self.loss(...) else: ...`, `if not self.training:`)."""
        found = self._branches.get(id(owner))
        if found is None:
            def trains(block) -> bool:
                return any(id(n) in self._step_calls for n in walk(block))
            ifs = [n for n in walk(owner) if type(n) is cst.If]
            tests = {code(branch.test) for branch in ifs if trains(branch.body) and not (
                branch.orelse is not None and trains(branch.orelse))} | {"self.training"}  # (not `if use_amp:`, both train)
            found = self._branches[id(owner)] = {
                id(n) for branch in ifs if branch.orelse is not None and (code(branch.test) in tests or _phase_test(
                    branch.test) == "train") and not trains(branch.orelse) for n in walk(branch.orelse)} | {
                id(n) for branch in ifs if code(branch.test) == "not self.training" or _phase_test(branch.test) == "test"
                for n in walk(branch.body)}
        return id(node) in found

    def accumulation_boundary(self, branch: cst.If, loops: tuple, function: cst.FunctionDef | None) -> bool:
        """Whether the body of `branch` steps the optimizers of the innermost of `loops` around it (or
        of `function`), which steps none elsewhere (`if (i + 1) % accumulation_steps == 0:
        optimizer.step()`): its test picks the iterations that end a training step, so what runs
        there runs on every training step, not every N steps (not a GAN's `if i % n_critic == 0:`
        generator step)."""
        inside = {id(node) for node in walk(branch.body) if id(node) in self._updates}
        owner = next((loop for loop in reversed(loops) if contains(loop, branch)), function)
        return bool(inside) and owner is not None and all(id(node) in inside for node in walk(owner) if id(node) in self._updates)

    def run_every_step(self, function: cst.FunctionDef) -> bool:
        """Whether a framework calls `function` on every training step: an ignite Engine's
        process function, a per-batch hook of a callback class (`after_batch` of a fastai
        `Callback`, `on_train_batch_end`, in a project that trains), a LightningModule's `training_step` (and the methods it calls on
        `self`: `self.shared_step(batch, "train")`), a Hugging Face Trainer's `compute_loss` and
        `training_step` (and what they call on `self`), a custom autograd Function's `forward` and
        `backward` when a forward run so calls its `apply`, a custom optimizer's `step`, a module's `forward` (of a
        subclass of `torch.nn.Module`, also through classes of the project, that does not
        loop over training steps itself; and the
        methods it calls on `self`; in a notebook, one that trains: a notebook that only runs
        a model has no training step)."""
        return self._answer("run_every_step", self._run_every_step, function)

    def _run_every_step(self, function: cst.FunctionDef) -> bool:
        if function.name.value in self.engines:
            return True
        cls = self.ctx.class_of.get(id(function))
        if cls is None:
            return False
        bases = [dotted(base.value) or "" for base in cls.bases]
        if function.name.value in BATCH_HOOKS and any(CALLBACK_CLASS.search(base) for base in bases) and (
                self.anywhere() or any(base.endswith("ClassyHook") for base in bases)):
            return True  # (fastai's `MetricsCB(Callback).after_batch`, Lightning's `on_train_batch_end`; a ClassyVision
            # hook, which only a task's training loop runs: VISSL's `CheckNanLossHook.on_loss_and_meter`)
        lightning = any("LightningModule" in base for base in bases) or derives_from(self.ctx, cls.name.value, LIGHTNING_MODULES)
        if lightning and function.name.value in self._called_on_self(cls, "training_step"):  # (also through a base of the project)
            return True
        if any(function.name.value in self._called_on_self(cls, hook) for hook in COQUI_STEP_HOOKS) and coqui_model(self.ctx, cls):
            return True  # (coqui's Trainer: a TTS model's `train_step`, and the `format_batch_on_device` it runs before)
        if self.trainer_step(cls, function):
            return True
        if function.name.value == "training_step" or id(function) in self._epochs:
            return False  # (a Trainer module whose `forward` loops over the steps itself: byol-pytorch's)
        if self.overrides_step_helper(cls, function) or self.optimizer_step(cls, function):
            return True
        if function.name.value in ("forward", "backward") and derives_from(self.ctx, cls.name.value, AUTOGRAD_FUNCTIONS):
            return self._applied_every_step(cls, function)
        module = any(base.rpartition(".")[2] == "Module" for base in bases) or derives_from(self.ctx, cls.name.value, MODULE_CLASSES)
        if not module and self.loss_call(cls, function):
            return (not any(unit.notebook for unit in self.ctx.units) or self.anywhere()) and not unused_class(self.ctx, cls)
        if not module or lightning:  # (a LightningModule's forward runs where its `training_step` calls it: an inference one's never)
            return self._subclasses_run(cls, function)  # (a mixin's method the forward of a subclass in another module calls)
        return (function.name.value in self._called_on_self(cls, "forward") or self._inherited_helper(cls, function)
                or self.loss_method(cls, function)) \
            and (not any(unit.notebook for unit in self.ctx.units) or self.anywhere()) and not self._made_to_infer(cls) \
            and not self._infers(cls)

    def loss_call(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether `function` is the `__call__` of a loss object called like a function (a class
        named for a loss: maskrcnn-benchmark's `FCOSLossComputation`, YOLO's `ComputeLoss`), or
        a method it calls on `self`; its arguments are the step's predictions and targets."""
        return "loss" in cls.name.value.lower() and function.name.value in self._called_on_self(cls, "__call__")

    def _applied_every_step(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether a function that runs on every step calls the autograd Function `cls`'s `apply`
        (ShakeDrop's `ShakeDropFunction.apply(x)` in its forward), which runs `function` each time."""
        if id(function) not in self._applied:
            self._applied[id(function)] = False  # (Functions applying each other: conv2d_gradfix's)
            self._applied[id(function)] = any(
                site.scope.node is not None and self.run_every_step(site.scope.node) for site in self.ctx.calls.get("apply", ())
                if type(site.node.func) is cst.Attribute and dotted(site.node.func.value) == cls.name.value)
        return self._applied[id(function)]

    def loss_method(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether `function` is a method the project's training loops call on a model for its loss
        (flair's `forward_loss`: see `loss_methods`), or one it calls on `self`."""
        path = self.ctx.path
        return path is not None and path != "" and not path.startswith("<") and any(
            function.name.value in self._called_on_self(cls, name) for name in loss_methods(os.path.abspath(path)))

    def _subclasses_run(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether the `forward` of a subclass of `cls` in a module importing the source calls
        `function` on `self` (LLaVA's `LlavaMetaForCausalLM.prepare_inputs_labels_for_multimodal`,
        which `LlavaLlamaForCausalLM.forward` calls)."""
        path = self.ctx.path
        if not path or path.startswith("<") or self.ctx.classes.get(cls.name.value) is not cls or any(
                (dotted(base.value) or "").rpartition(".")[2] not in _MIXIN_BASES for base in cls.bases):
            return False  # (a mixin: a class of its own, or an abstract one)
        key = "subclass forwards"  # (asked once for all the classes of the source)
        if key not in self.ctx.shared:
            self.ctx.shared[key] = subclass_forward_calls(os.path.abspath(path), frozenset(self.ctx.classes))
        return function.name.value in self.ctx.shared[key].get(cls.name.value, ())

    def _inherited_helper(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether the `forward` a class of the source inherits from a base of another module
        calls `function` on `self` (MiniGPT4's `encode_img`, which MiniGPTBase's forward calls)."""
        if any(isinstance(node, cst.FunctionDef) and node.name.value == "forward" for node in cls.body.body):
            return False
        return any(function.name.value in forward_helpers(found[0]) for found in project_bases(self.ctx, cls))

    def trainer_step(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether `function` is a Hugging Face Trainer's `compute_loss` or `training_step`, or a
        method they call on `self` (trl's `KTOTrainer._compute_loss`): the Trainer runs it on
        every training step."""
        return any(function.name.value in self._called_on_self(cls, root) for root in ("compute_loss", "training_step")) and \
            derives_from(self.ctx, cls.name.value, HF_TRAINERS)

    def optimizer_step(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether `function` is a custom optimizer's `step` (or a method it calls on `self`:
        SimCLR's LARS), which the training loop runs once per step (in a notebook, one that trains)."""
        return function.name.value in self._called_on_self(cls, "step") and derives_from(self.ctx, cls.name.value, OPTIMIZERS) and (
            not any(unit.notebook for unit in self.ctx.units) or self.anywhere())

    def overrides_step_helper(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Whether a base class of another module calls `function` on `self` in its training
        loop (torchlake's `CRNNTrainer._calc_loss`, which `ClassificationTrainer.run` calls before
        each `loss.backward()`)."""
        return any(function.name.value in step_helpers(found) for found in project_bases(self.ctx, cls))

    @staticmethod
    def _infers(cls: cst.ClassDef) -> bool:
        """Whether the module is named for post-processing (DETR's `PostProcess`,
        `PostProcessPanoptic`): it turns a model's outputs into predictions, which evaluation
        runs, no training step. (A `forward` under `@torch.no_grad()` may still run at every
        step: DETR's Hungarian matcher.)"""
        return "postprocess" in cls.name.value.lower()

    def _made_to_infer(self, cls: cst.ClassDef) -> bool:
        """Whether a module class of a source that does not train is made only by modules of the
        project that never train either (an inference wrapper: its forward runs no training step)."""
        found = self._inferring.get(id(cls))
        if found is None:
            path = self.ctx.path  # (a source that trains trains its classes: its importers are not asked)
            found = self._inferring[id(cls)] = bool(path) and not self.anywhere() and made_only_to_infer(
                path or "", cls.name.value)
        return found

    def _called_on_self(self, cls: cst.ClassDef, root: str) -> set[str]:
        """The names of the method `root` (`forward`, `training_step`) and of the methods of `cls`
        it calls on `self`, two calls deep."""
        found = self._forwards.get((id(cls), root))
        if found is None:
            calls = self._self_calls().get(id(cls), {})
            found = self._forwards[(id(cls), root)] = {root}
            for _ in range(2):
                found |= {name for caller in found for name in calls.get(caller, ())}
        return found

    def cached(self, function: cst.FunctionDef | None) -> set[int]:
        """Ids of the calls in a function under an `if` that fills a cache, run on its first
        call only (`if self.cache is None or self.cache.shape[1] != n: self.cache = self.build(n)`;
        not a test of a parameter, `if hidden is None:` with `hidden=None`: an option each call
        may leave out)."""
        if function is None:
            return set()
        found = self._cached.get(id(function))
        if found is None:
            params = {p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                             *function.params.kwonly_params)}
            found = self._cached[id(function)] = calls_under_ifs(
                function.body, lambda branch: lazy_init(branch) and not option_test(branch, params))
        return found

    def _self_calls(self) -> dict[int, dict[str, set[str]]]:
        """Class id -> method name -> the names it calls on `self` (one pass over the calls),
        but those that fill a cache or sit in a branch no run takes."""
        if self._by_class is None:
            self._by_class = {}
            for name, sites in self.ctx.calls.items():
                for site in sites:
                    function = site.scope.node
                    cls = self.ctx.class_of.get(id(function)) if function is not None else None
                    if function is not None and cls is not None and type(site.node.func) is cst.Attribute \
                            and dotted(site.node.func.value) == "self" and id(site.node) not in self.cached(function) \
                            and id(site.node) not in never_taken(self.ctx, function):
                        self._by_class.setdefault(id(cls), {}).setdefault(function.name.value, set()).add(name)
            for node, scope in self.ctx.call_order:  # `model_func = {'TransE': self.TransE, ...}` then `model_func[name](...)`
                function = scope.node
                cls = self.ctx.class_of.get(id(function)) if function is not None else None
                if function is not None and cls is not None and type(node.func) is cst.Subscript and id(node) not in never_taken(
                        self.ctx, function):
                    self._by_class.setdefault(id(cls), {}).setdefault(function.name.value, set()).update(
                        self._dispatched(node.func.value, scope))
        return self._by_class

    def _dispatched(self, table: cst.BaseExpression, scope: Scope) -> set[str]:
        """The methods named `self.X` in the dictionary, list or tuple literal that `table` is (or
        a name holds), whose subscript a method calls: one of them runs, which the options pick."""
        found = self.ctx.origin(table, scope)
        literal_table = found[0] if found is not None else None
        if type(literal_table) is cst.Dict:
            values = [element.value for element in literal_table.elements if type(element) is cst.DictElement]
        elif type(literal_table) is cst.List or type(literal_table) is cst.Tuple:
            values = [element.value for element in literal_table.elements]
        else:
            return set()
        return {value.attr.value for value in values if type(value) is cst.Attribute and dotted(value.value) == "self"}

    def steps(self, call: cst.Call) -> bool:
        """Whether `call` is a training step (`backward()`, an optimizer's `step()`), or calls a
        function of the source that trains, in a loop of its own or not (`train(epoch, model)`)."""
        if id(call) in self._step_calls:
            return True
        defs = self.ctx.functions.get(call.func.value) if type(call.func) is cst.Name else None
        if not defs:
            return False
        function = defs[-1][0]
        found = self._stepping.get(id(function))
        if found is None:
            found = self._stepping[id(function)] = self.trains(function) or any(id(n) in self._step_calls for n in walk(function))
        return found

    def _answer(self, question: str, compute, node: cst.CSTNode) -> bool:
        """`compute(node)`, once per analysis (rules ask for the same loops and functions again
        and again); keyed by the question's name, not the bound method (a cycle)."""
        key = (question, id(node))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = compute(node)
        return found

    def trains(self, node: cst.CSTNode) -> bool:
        """Whether `node`, a loop or a function definition, runs training steps."""
        return self._answer("trains", self._trains, node)

    def _trains(self, node: cst.CSTNode, depth: int = 0) -> bool:
        if id(node) in self._direct:
            return True
        if depth >= 2:
            return False
        for name in self._callees.get(id(node), ()):
            defs = self.ctx.functions.get(name)
            if defs and self._trains(defs[-1][0], depth + 1) and not self.explains(defs[-1][0]):
                return True  # (not through a method backpropagating to read gradients: Grad-CAM's `forward`)
        self._handed_calls()
        for name in self._handed_in.get(id(node), ()):  # (`gpu_timer(train_step)`: the step it runs)
            defs = self.ctx.functions[name]
            if self._trains(defs[-1][0], depth + 1) and any(
                    (site.loops[-1] if site.loops else site.scope.node) is node for site in self.handed_to(defs[-1][0])):
                return True
        return depth == 0 and self._trains_elsewhere(node)

    def on_cpu(self, function: cst.FunctionDef | None) -> bool:
        """Whether `function`, which trains in a loop of its own, runs on the CPU: it names no
        device and moves nothing, while another function of the source that trains in a loop
        takes a device or moves its batches (d2l's `train_ch3`, "with CPU", beside
        `train_ch5(..., device)`): its batches and model stay where its callers made them. Not a
        method of a class that moves its modules (ENAS's `train_shared`, with `self.shared.cuda()`
        in `build_model`): its state is on the device the class put it."""
        if function is None or id(function) not in self._epochs or self._names_device(function):
            return False
        cls = self.ctx.class_of.get(id(function))
        if cls is not None and self._names_device(cls):
            return False
        return any(id(other) in self._epochs and self._names_device(other)
                   for defs in self.ctx.functions.values() for other, _ in defs if other is not function)

    def _names_device(self, function: cst.FunctionDef | cst.ClassDef) -> bool:
        found = self._devices.get(id(function))
        if found is None:
            text = code(function)
            found = self._devices[id(function)] = ".to(" in text or DEVICE_LIKE.search(text) is not None
        return found

    def called_every_step(self, function: cst.FunctionDef, depth: int = 0) -> bool:
        """Whether a helper of the source runs on every training step:
        called (`helper()`, or `self.helper()` from a method of its class) in a loop that trains,
        or from a step function called so (`run_step` -> `optimize` -> `self._log_grad_norm()`),
        two calls deep, not under an interval guard; not an evaluation pass."""
        key = (id(function), depth)
        found = self._every.get(key)
        if found is None:
            self._every[key] = False  # (a recursive call adds nothing)
            found = self._every[key] = any(self._steps_at(site, depth) for site in self.callers(function)) \
                and not self._evaluates(function)
        return found

    def _evaluates(self, function: cst.FunctionDef) -> bool:
        """Whether a function is an evaluation pass, not part of a training step: it runs without
        gradients (`@torch.no_grad()`, `@torch.inference_mode()`), calls `model.eval()` (a
        full-batch script's `test()` after each step of its epoch loop), or is named for one
        (`_eval_step(model, dataset)`, DLRM's `inference(...)`)."""
        if EVALUATION_NAME.search(function.name.value):
            return True
        return _without_gradients(function) or self._sets_eval(function)

    def _sets_eval(self, function: cst.FunctionDef) -> bool:
        """Whether a function puts a module in evaluation mode (`model.eval()`)."""
        return any(site.scope.node is function and not site.node.args for site in self.ctx.calls.get("eval", ()))

    def evaluates_every_iteration(self, loop: cst.CSTNode) -> bool:
        """Whether `loop` (or a step function) calls an evaluation pass of the source (one that
        calls `model.eval()`: not an EMA update under `no_grad`), or runs one itself
        (`model.eval()` in its body), not under an interval guard: a full-batch script's
        `test()` after each step, whose results the host waits for on every iteration anyway."""
        if self._evaluations is None:  # loop id -> the calls of evaluation passes right in it (one pass over them)
            self._evaluations = {}
            evaluating = set()
            for site in self.ctx.calls.get("eval", ()):
                function = site.scope.node
                if not site.node.args and (function is None or id(site.node) not in self._guarded_calls(function.body, site)):
                    evaluating.add(id(function))  # (not a sample every N steps: audiolm's `if not (steps % save_every):`)
                    if site.loops and type(site.node.func) is cst.Attribute:
                        self._evaluations.setdefault(id(site.loops[-1]), []).append(site)
            for name, defs in self.ctx.functions.items() if evaluating else ():
                if id(defs[-1][0]) in evaluating:
                    for site in self.ctx.calls.get(name, ()):
                        owner = site.loops[-1] if site.loops else site.scope.node
                        if owner is not None and (type(site.node.func) is cst.Name or type(site.node.func) is cst.Attribute
                                                  and dotted(site.node.func.value) == "self"):
                            self._evaluations.setdefault(id(owner), []).append(site)
        return any(id(site.node) not in self._guarded_calls(cast(cst.For, loop).body, site)
                   for site in self._evaluations.get(id(loop), ()))

    def called_in_loop(self, function: cst.FunctionDef) -> bool:
        """Whether the source calls `function` (`helper()`, `self.helper()`, `agent.update()` on an
        instance of its class) inside a loop."""
        return any(site.loops for site in self.callers(function))

    def callers(self, function: cst.FunctionDef) -> list[CallSite]:
        """The calls of `function` in the source: by name, or as a method on `self` (from its
        class) or on an instance of its class (`agent = SAC()`, then `agent.update()`; a
        `__next__`: `next(fetcher)`)."""
        cls = self.ctx.class_of.get(id(function))
        sites = self.ctx.calls.get(function.name.value, [])
        if cls is None:  # (in a notebook defining the name again, the calls that run this definition)
            namespace = SourceNamespace.of(self.ctx)
            return [site for site in sites if type(site.node.func) is cst.Name
                    and namespace.redefined_run_by(site.node.func, site.unit) in (None, function)]
        if function.name.value == "__next__":  # `next(fetcher)`: stargan-v2's InputFetcher
            return [site for site in self.ctx.calls.get("next", ()) if len(site.node.args) == 1
                    and self._instance_of(site.node.args[0].value, site.scope, cls)]
        return [site for site in sites if type(site.node.func) is cst.Attribute and (
            dotted(site.node.func.value) == "self" and site.scope.node is not None and self.ctx.class_of.get(id(site.scope.node)) is cls
            or self._instance_of(site.node.func.value, site.scope, cls))]

    def handed_to(self, function: cst.FunctionDef) -> list[CallSite]:
        """The calls of the source handing `function` by name to a function of the project that
        calls it (jepa's `gpu_timer(train_step)`, whose `closure()` runs the step): each runs it."""
        found = self._runs_handed.get(id(function))
        if found is None:
            name = function.name.value
            found = self._runs_handed[id(function)] = [
                site for site in self._handed_calls().get(name, ()) if maybe_project_call(self.ctx, site.node.func) and (
                    target := call_target(self.ctx, site.node.func, site.scope)) is not None and any(
                    type(arg.value) is cst.Name and arg.value.value == name and calls_argument(target, site.node, arg.value)
                    for arg in site.node.args)]
        return found

    def _handed_calls(self) -> dict[str, list[CallSite]]:
        """Function name -> the calls of the source given it by name as an argument (one pass)."""
        if self._handed is None:
            self._handed = {}
            for sites in self.ctx.calls.values():
                for site in sites:
                    for arg in site.node.args:
                        if type(arg.value) is cst.Name and arg.value.value in self.ctx.functions:
                            self._handed.setdefault(arg.value.value, []).append(site)
                            owner = site.loops[-1] if site.loops else site.scope.node
                            self._handed_in.setdefault(id(owner), set()).add(arg.value.value)
        return self._handed

    def _instance_of(self, expr: cst.BaseExpression, scope, cls: cst.ClassDef) -> bool:
        """`agent` bound to `SAC(...)`, an instance of the class `cls` of the source."""
        found = self.ctx.origin(expr, scope) if type(expr) is cst.Name and expr.value not in self.ctx.imports else None
        return found is not None and type(found[0]) is cst.Call and dotted(found[0].func) == cls.name.value

    def _steps_at(self, site: CallSite, depth: int) -> bool:
        caller = site.scope.node
        stepping = next((loop for loop in reversed(site.loops) if self.trains(loop)), None)
        if stepping is not None:
            if self.evaluates_every_iteration(stepping) or runs_once(stepping, site.loops, self.ctx, site.scope):
                return False  # (full-batch: the loop waits for its evaluation's results anyway; a loop run once)
            owner = stepping.body
        else:
            if site.loops or caller is None or not self.trains(caller) or self.explains(caller):
                return False
            if not (self.run_every_step(caller) or any(call.loops for call in self.callers(caller)) or (
                    depth < 2 and self.called_every_step(caller, depth + 1))):
                return False
            owner = caller.body
        return id(site.node) not in self._guarded_calls(owner, site)

    def _guarded_calls(self, body: cst.CSTNode, site: CallSite) -> set[int]:
        """Ids of the calls in `body` under an interval guard (`if step % 100 == 0:`) of the
        loops around `site` (sites share their loops' tuple), or in a branch that leaves the loop
        (litgpt's `if train_iterator.epoch >= train.epochs: generate_example(...); break`)."""
        key = (id(body), id(site.loops))
        found = self._intervals.get(key)
        if found is None:
            found = self._intervals[key] = calls_under_ifs(body, lambda branch: leaves_loop(branch) or interval_test(
                self.ctx, branch.test, site.loops, site.scope) and not self.accumulation_boundary(branch, site.loops, site.scope.node))
        return found

    def steps_here(self, loop: cst.CSTNode) -> bool:
        """Whether the body of `loop` (or of a function, outside its loops) itself runs a
        training step (`loss.backward()`, `optimizer.step()`), not only through the functions
        it calls."""
        return id(loop) in self._direct

    def stepped_elsewhere(self, function: cst.FunctionDef) -> bool:
        """Whether `function` runs a training step and the source never calls it, while other
        code does, once per step: a method (`agent.update(rollouts)` from another file), or a
        function a factory returns (`return perform_train_step_fn`, kept as `self.train_step_fn`)."""
        name = function.name.value
        if not self.trains(function) or any(
                type(call.node.func) is cst.Name or type(call.node.func) is cst.Attribute and (
                    dotted(call.node.func.value) == "self" or type(call.node.func.value) is cst.Call)  # (`super().update(...)`)
                for call in self.ctx.calls.get(name, ())):
            return False  # (not `losses.update(...)` of a meter: another method of that name)
        if id(function) in self.ctx.class_of:
            return not self.explains(function)
        parent = next((scope.parent for defined, scope in self.ctx.functions.get(name, ()) if defined is function), None)
        return parent is not None and parent.node is not None and any(
            type(value) is cst.Name and value.value == name for value in self.ctx.returns.get(id(parent.node), ()))

    def explains(self, method: cst.FunctionDef) -> bool:
        """Whether a method that backpropagates only computes gradients to read them: no method
        of its class steps (or names) an optimizer, and no module of the project importing it trains
        (pytorch-grad-cam's `GuidedBackpropReLUModel.__call__`, reading the input's gradient)."""
        cls, path = self.ctx.class_of.get(id(method)), self.ctx.path
        if cls is None or path is None or path.startswith("<"):
            return False
        found = self._optimizing.get(id(cls))
        if found is None:
            found = self._optimizing[id(cls)] = any(type(n) is cst.Call and call_name(n) == "step" or type(n) is cst.Name and (
                "optim" in n.value.lower() or n.value in ("opt", "opts")) for n in walk(cls))  # (or names an optimizer:
            # consistency_models' `self.mp_trainer.optimize(self.opt)`)
        return not found and not imported_to_train(path)

    def per_epoch(self, loop: cst.CSTNode) -> bool:
        """Whether `loop` runs no training step itself but holds a loop that does, or calls a
        function (of the source or of another module) that loops over training steps: it runs
        once per epoch."""
        return self._answer("per_epoch", self._per_epoch, loop)

    def _per_epoch(self, loop: cst.CSTNode) -> bool:
        if self.trains(loop):
            return False
        if id(loop) in self._outer:
            return True
        for name in self._callees.get(id(loop), ()):
            defs = self.ctx.functions.get(name)
            if defs and id(defs[-1][0]) in self._epochs:
                return True
        return any(steps_in_loops(call_target(self.ctx, site.node.func, site.scope)) for site in self._calls_elsewhere(loop))

    def per_run(self, loop: cst.CSTNode) -> bool:
        """Whether each pass of `loop` is a whole training run: it holds an epoch loop (one that
        runs no step itself, around a loop that does), as a sweep over settings does."""
        return id(loop) in self._outer and any(
            node is not loop and type(node) in (cst.For, cst.While) and id(node) in self._outer and id(node) not in self._direct
            for node in walk(cast(cst.For, loop).body))

    def self_test(self, node: cst.CSTNode) -> bool:
        """Whether `node` is in the `if __name__ == "__main__":` block of a module that other
        modules of the project import and that takes no command line (FastSpeech2's dataset.py,
        counting its batches; awd-lstm-lm's splitcross.py, training a toy loss on the CPU): a
        check of the module, not a job, and not run where its importers run it (stylegan2's
        calc_inception.py, whose `load_patched_inception_v3` fid.py imports, is a command)."""
        path = self.ctx.path
        if path is None or path.startswith("<") or self.ctx.argparse:
            return False
        if self._main_blocks is None:
            self._main_blocks = {id(n) for module in self.ctx.modules for statement in module.body
                                 if type(statement) is cst.If and main_guard(statement.test) for n in walk(statement.body)}
        return id(node) in self._main_blocks and imported(path)

    def anywhere(self) -> bool:
        """Whether the source trains at all: a training step in a loop or function of its own,
        in a function of another module it calls, or a framework's loop (ignite's Engine,
        Lightning's `fit`). Asked once per loader and loop: answered once."""
        if self._anywhere is None:
            targets = (call_target(self.ctx, site.node.func, site.scope)
                       for name, sites in self.ctx.calls.items() if name not in self.ctx.functions
                       for site in sites if maybe_project_call(self.ctx, site.node.func))
            self._anywhere = bool(self._direct or self.engines or self.ctx.calls.get("fit")) or any(
                map(trains_somewhere, targets))
        return self._anywhere

    def _trains_elsewhere(self, node: cst.CSTNode) -> bool:
        """Whether a call right in the loop or function runs a training step in a function or
        method of another module (`trainer.train_rlhf(batch)`, `train_step(model, batch)`); asked
        once per node, by `trains`."""
        return any(project_trains(call_target(self.ctx, site.node.func, site.scope)) for site in self._calls_elsewhere(node))

    def _calls_elsewhere(self, node: cst.CSTNode) -> list[CallSite]:
        """The calls right in the loop or function that may run a function or method of another
        module (names the source does not define), found for the loops and functions asked about."""
        if self._elsewhere is None:  # (every call of such a name, by its loop or function: one pass)
            self._elsewhere = {}
            for name, sites in self.ctx.calls.items():
                if name not in self.ctx.functions:
                    for site in sites:
                        owner = site.loops[-1] if site.loops else site.scope.node
                        if owner is not None:
                            self._elsewhere.setdefault(id(owner), []).append(site)
        if id(node) not in self._elsewhere_calls:
            self._elsewhere_calls[id(node)] = [site for site in self._elsewhere.get(id(node), ())
                                               if maybe_project_call(self.ctx, site.node.func, site.scope)]
        return self._elsewhere_calls[id(node)]


_INTERVAL_WORDS = ("step", "iter", "idx", "epoch", "batch")


def interval_test(ctx: Context, test: cst.BaseExpression, loops: tuple, scope: Scope) -> bool:
    """Whether an `if` test picks some iterations of the loops around it: a modulo
    (`step % 100 == 0`; not by a setting that is 1 or 2 by default), a function of the project returning one (`divisible_by(i,
    validate_every)`), or an equality naming a loop variable or a counter (`if epoch == 1:`,
    `i == len(loader) - 1`), or one of those in a collection (`if global_step in upsample_steps:`).
    Not the truth of a modulo (`if completed_steps % 50:`, `!= 0`): all iterations but one in 50."""
    left, comparison = (test.left, test.comparisons[0]) if type(test) is cst.Comparison and len(test.comparisons) == 1 else (
        test, None)
    if type(left) is cst.BinaryOperation and type(left.operator) is cst.Modulo and (comparison is None or type(
            comparison.operator) is cst.NotEqual and literal(comparison.comparator) == 0):
        return False
    if type(test) in (cst.Name, cst.BooleanOperation):
        named = _named_interval(ctx, test, loops, scope, 0)
        if named is not None:
            return named
    loop_names = {n for loop in loops if type(loop) is cst.For for n in names_in(loop.target)}
    found = False

    class Interval(cst.CSTVisitor):
        def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
            nonlocal found  # (not `% args.accumulation_steps` when that is 1 by default: every step; nor
            # `% args.policy_delay` when 2: every other step, TD3's delayed actor update)
            found = found or type(node.operator) is cst.Modulo and _setting(ctx, node.right, scope) not in (1, 2)

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            found = found or (bool(node.args) and maybe_project_call(ctx, node.func)
                              and tests_interval(call_target(ctx, node.func, scope)))

        def visit_Comparison(self, node: cst.Comparison) -> None:
            nonlocal found
            if type(node.left) is cst.BinaryOperation and type(node.left.operator) is cst.Modulo:
                return  # (`i % every == 0`: the modulo decides)
            if any(type(side) is cst.BinaryOperation and type(side.operator) is cst.Subtract and any(
                    _clock_read(ctx, operand, scope) for operand in (side.left, side.right))
                    for side in (node.left, *(c.comparator for c in node.comparisons))):
                found = True  # `current_time - last_logging > args.log_freq_time`: every so many seconds
                return
            if any(type(c.operator) in (cst.GreaterThan, cst.GreaterThanEqual) and _seconds_setting(c.comparator)
                   for c in node.comparisons):
                found = True  # `eval_delta > config.data.eval_every_seconds` (DALLE2's timers): every so many seconds
                return
            equal = any(type(c.operator) is cst.Equal for c in node.comparisons)
            if equal or len(node.comparisons) == 1 and type(node.comparisons[0].operator) is cst.In:
                names = names_in(node if equal else node.left)  # (`if global_step in upsample_steps:`)
                found = found or bool(names & loop_names) or any(
                    word in n.lower() for n in names for word in _INTERVAL_WORDS)

    test.visit(Interval())
    return found


def _seconds_setting(expr: cst.BaseExpression) -> bool:
    """Whether `expr` names a period of time between events (`config.data.eval_every_seconds`,
    `args.log_freq_time`, `save_interval_minutes`)."""
    last = (dotted(expr) or "").rpartition(".")[2].lower()
    return any(word in last for word in ("every", "interval", "freq", "period")) and any(
        word in last for word in ("sec", "minute", "hour", "time"))


def _named_interval(ctx: Context, test: cst.BaseExpression, loops: tuple, scope: Scope, depth: int) -> bool | None:
    """For a test of names only, joined by `and`/`or` (monodepth2's `if early_phase or
    late_phase:`, with `late_phase = self.step % 2000 == 0`): whether it picks some iterations,
    each name standing for the tests the scope assigns it (`or` needs every side to, `and`
    one); None for another test."""
    if depth > 4:
        return None
    if type(test) is cst.BooleanOperation:
        sides = [_named_interval(ctx, side, loops, scope, depth + 1) for side in (test.left, test.right)]
        if None in sides:
            return None
        return all(sides) if type(test.operator) is cst.Or else any(sides)
    if type(test) is not cst.Name:
        return None
    owner = scope.owner_of(test.value)
    if owner is None:
        return None
    values = owner.assignments.get(test.value, ())
    if not values or any(v is None or type(v) not in (cst.Comparison, cst.BooleanOperation, cst.Name) for v in values):
        return None
    return all(bool(_named_interval(ctx, v, loops, owner, depth + 1)) if type(v) is cst.Name else any(
        type(n) is cst.BinaryOperation and type(n.operator) is cst.Modulo for n in walk(v)) and interval_test(
        ctx, v, loops, owner) for v in values)  # (a modulo: not `acc = (out.argmax(1) == y).float().mean()`)


def _clock_read(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
    """`time.time()`, or a name the scope assigns only clock reads (`current_time = time.time()`)."""
    if type(expr) is cst.Name:
        owner = scope.owner_of(expr.value)
        values = owner.assignments.get(expr.value, ()) if owner is not None else ()
        return bool(values) and all(type(v) is cst.Call and (ctx.qualname(v.func) or "") in CLOCKS for v in values)
    return type(expr) is cst.Call and (ctx.qualname(expr.func) or "") in CLOCKS


def _setting(ctx: Context, expr: cst.BaseExpression, scope: Scope):
    """A value the source gives `expr`, its config class's default (`opt.d_every`, `opt = Config()`),
    or the default the source's parser gives an option read from a parameter (`def train(args)`:
    `args.gradient_accumulation_steps`, `--gradient_accumulation_steps` default 1)."""
    value = ctx.value(expr, scope)
    if value is UNKNOWN and type(expr) is cst.Attribute and type(expr.value) is cst.Name:
        owner = scope.owner_of(expr.value.value)
        if owner is not None and expr.value.value in owner.params:
            value = ctx.option_default(expr.attr.value)
            if value is UNKNOWN:  # (the parser of the module calling it: `train.train(..., args)` in main.py)
                value = importer_namespace_default(ctx, owner, expr.value.value, expr.attr.value)
    if value is UNKNOWN and type(expr) is cst.Attribute and dotted(expr.value) == "self" and scope.node is not None:
        value = _constructor_default(ctx, scope.node, expr.attr.value)
    return instance_default(ctx, expr, scope) if value is UNKNOWN else value


def _constructor_default(ctx: Context, method: cst.FunctionDef, attribute: str):
    """The constant the `__init__` of `method`'s class (or of a base class of the project) gives
    `self.<attribute>` (`self.d_cycle = 1`, which a setter may change later): its default; else UNKNOWN."""
    cls = ctx.class_of.get(id(method))
    if cls is None:
        return UNKNOWN
    init = next((s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__"), None) if (
        type(cls.body) is cst.IndentedBlock) else None
    values = [literal(line.body[0].value) for line in (init.body.body if init is not None and type(init.body) is cst.IndentedBlock else ())
              if type(line) is cst.SimpleStatementLine and type(line.body[0]) is cst.Assign and len(line.body[0].targets) == 1
              and code(line.body[0].targets[0].target) == f"self.{attribute}"]
    for _, layer in itertools.groupby(lineage(project_bases(ctx, cls), 3), key=operator.itemgetter(0)) if not values else ():
        values = [node.value.value for _, (klass, *_) in layer for init in klass.body  # (set by a base class of another
                  if type(init) is ast.FunctionDef and init.name == "__init__" for node in init.body  # module, three deep:
                  if type(node) is ast.Assign and len(node.targets) == 1 and ast.unparse(node.targets[0]) == f"self.{attribute}"
                  and type(node.value) is ast.Constant]  # `class Pix2PixTrainer(GANTrainer)`)
        if values:
            break
    return values[0] if len(values) == 1 and type(values[0]) is int else UNKNOWN


def iterates_dataloader(ctx: Context, loop: cst.For, scope: Scope) -> bool:
    """Whether a `for` loop takes its items (through `enumerate`, `tqdm`, ...) from a
    DataLoader the source makes: CPU batches, a pass over a dataset; also a parameter every
    call of its function in the source gives one (`test(args, epoch, net, testLoader)`), and
    loaders read together (`zip(val_loader1, val_loader2)`)."""
    source = iteration_source(loop.iter)
    if type(source) is cst.Call and call_name(source) == "zip" and source.args:
        return all(_a_loader(ctx, iteration_source(arg.value), scope) for arg in source.args)
    function = scope.node
    if type(source) is cst.Name and function is not None and source.value in scope.params and scope.assignments.get(
            source.value) == [None] and ctx.class_of.get(id(function)) is None:
        index = scope.params.index(source.value)
        calls = [site for site in ctx.calls.get(function.name.value, ()) if type(site.node.func) is cst.Name]
        given = [(argument(site.node, index, source.value), site.scope) for site in calls]
        return bool(given) and all(arg is not None and _a_loader(ctx, arg, where) for arg, where in given)
    return _a_loader(ctx, source, scope)


def _a_loader(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
    found = ctx.origin(expr, scope)
    return found is not None and type(found[0]) is cst.Call and (ctx.qualname(found[0].func) or "").endswith(".DataLoader")


def calls_under_ifs(root: cst.CSTNode, chosen) -> set[int]:
    """Ids of the calls under `root` in the body of an `if` for which `chosen(if)` holds."""
    return {id(call) for node in walk(root) if type(node) is cst.If and chosen(node)
            for call in walk(node.body) if type(call) is cst.Call}


def _steps_with(call: cst.Call) -> bool:
    """A call passed both an optimizer and a loss (by their names)."""
    names = [(root_name(arg.value) or "").lower() for arg in call.args]
    return any("optim" in name for name in names) and any("loss" in name for name in names)


def all_calls(body: cst.CSTNode) -> list[cst.Call]:
    """Every call under `body`, nested functions included, in visiting order."""
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    body.visit(Calls())
    return found


def calls_outside_loops(body: cst.CSTNode) -> list[cst.Call]:
    """Calls under `body`, not inside nested loops, functions, classes or lambdas."""
    out: list[cst.Call] = []
    stack = list(reversed(body.children))
    while stack:
        node = stack.pop()
        if type(node) in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.Call:
            out.append(node)
        stack.extend(reversed(node.children))
    return out


def iterations(loop: cst.For, ctx: Context, scope: Scope) -> int | None:
    """How many times a `for` loop runs (at most), when it iterates a literal sequence (also
    reversed or sorted) or a constant range() (of a name only ever given constants: the largest),
    or stops by a count (`stops_after`)."""
    iterable = loop.iter
    if type(iterable) is cst.Call and call_name(iterable) in ("reversed", "sorted") and len(iterable.args) == 1:
        iterable = iterable.args[0].value  # (`reversed([5.0, 10.0, 20.0, 40.0])`)
    if type(iterable) is cst.List or type(iterable) is cst.Tuple or type(iterable) is cst.Set:
        return len(iterable.elements)
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "range":
        values = [ctx.value(arg.value, scope) for arg in iterable.args]
        values = [parameter_constant(ctx, arg.value, scope) if value is UNKNOWN else value for arg, value in zip(iterable.args, values)]
        if len(values) == 1 and values[0] is UNKNOWN:
            values = [_largest_constant(ctx, iterable.args[0].value, scope)]  # (`n_steps = 5`, later `n_steps = 10`)
        if 1 <= len(values) <= 3 and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            if len(values) < 3 or values[2] != 0:
                return len(range(*values))
    return stops_after(loop, ctx, scope)


def _largest_constant(ctx: Context, expr: cst.BaseExpression, scope: Scope):
    """The largest of the int constants a name is assigned, when every assignment of it is one
    (a notebook setting `n_steps = 5`, then `n_steps = 10`); else UNKNOWN."""
    if type(expr) is not cst.Name or (owner := scope.owner_of(expr.value)) is None:
        return UNKNOWN
    values = [literal(v) if v is not None else UNKNOWN for v in owner.assignments[expr.value]]
    return max(values) if values and all(type(v) is int for v in values) else UNKNOWN


def _dead_module_branches(ctx: Context) -> set[int]:
    """Ids of the nodes in a branch of a module-level `if` that a constant of the module rules
    out (`use_attn = True`, then `if use_attn: train(..., use_attn=True) else: train(...)`)."""
    key = (_dead_module_branches,)
    if key not in ctx.shared:
        dead = set[int]()
        for statement in (s for module in ctx.modules for s in module.body):
            if type(statement) is not cst.If or type(statement.test) is not cst.Name:
                continue
            bound = ctx.module_scope.assignments.get(statement.test.value, ())
            value = literal(bound[0]) if len(bound) == 1 and bound[0] is not None else UNKNOWN
            branch = (statement.orelse if value else statement.body) if value in (True, False) else None
            dead.update(id(n) for n in (walk(branch) if branch is not None else ()))
        ctx.shared[key] = dead
    return ctx.shared[key]


def parameter_constant(ctx: Context, expr: cst.BaseExpression, scope: Scope):
    """The one constant every call of the function (of the source, by its name) gives its
    parameter `expr`, passed or left to its default (`def get_and_print_results(loader,
    num_to_avg=args.num_to_avg)`, `--num_to_avg` 1 by default, called without it); else UNKNOWN."""
    function = scope.node
    if type(expr) is not cst.Name or function is None or expr.value not in scope.params or scope.assignments.get(
            expr.value) != [None] or ctx.class_of.get(id(function)) is not None:
        return UNKNOWN
    params = function.params
    param = next(p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == expr.value)
    index = scope.params.index(expr.value) if param in params.params or param in params.posonly_params else -1
    dead = _dead_module_branches(ctx)
    calls = [site for site in ctx.calls.get(function.name.value, ()) if type(site.node.func) is cst.Name and id(site.node) not in dead]
    found = set()
    for site in calls:
        passed = argument(site.node, index, expr.value)
        if passed is None and (param.default is None or any(arg.star for arg in site.node.args)):
            return UNKNOWN
        value = ctx.value(passed, site.scope) if passed is not None else ctx.value(cast(cst.BaseExpression, param.default), scope.parent or scope)
        if value is UNKNOWN and type(passed) is cst.Attribute:
            value = _parsed_option(ctx, passed, site.scope)
        if value is UNKNOWN:
            return UNKNOWN
        found.add(repr(value))
        constant = value
    return constant if len(found) == 1 else UNKNOWN


def _parsed_option(ctx: Context, expr: cst.Attribute, scope: Scope):
    """`args.debug` where `args` is a parameter of the function that every call of it gives the
    parsed command line (`main(parser.parse_args())`): the option's default; else UNKNOWN."""
    function = scope.node
    if type(expr.value) is not cst.Name or function is None or expr.value.value not in scope.params:
        return UNKNOWN
    index = scope.params.index(expr.value.value)
    calls = [site for site in ctx.calls.get(function.name.value, ()) if type(site.node.func) is cst.Name]
    for site in calls:
        passed = argument(site.node, index, expr.value.value)
        found = ctx.origin(passed, site.scope) if type(passed) is cst.Name else (passed, site.scope) if passed is not None else None
        if found is None or type(found[0]) is not cst.Call or call_name(found[0]) not in ("parse_args", "parse_known_args"):
            return UNKNOWN
    return ctx.option_default(expr.attr.value) if calls else UNKNOWN


def stops_after(loop: cst.For, ctx: Context, scope: Scope) -> int | None:
    """How many items a loop takes at most when its body ends with `if count == n: ...; break`
    (or `>= n`, `> n`), `count` its `enumerate` index or a name it adds 1 to (`count += 1`), and
    `n` known (`args.n - 1` too, or a parameter every call leaves at, or gives, one constant)."""
    body = loop.body.body if type(loop.body) is cst.IndentedBlock else ()
    last = body[-1] if body else None
    if type(last) is not cst.If or last.orelse is not None or type(last.test) is not cst.Comparison or len(
            last.test.comparisons) != 1 or type(last.test.left) is not cst.Name:
        return None
    inner = last.body.body if type(last.body) is cst.IndentedBlock else ()
    if not inner or type(inner[-1]) is not cst.SimpleStatementLine or type(inner[-1].body[-1]) is not cst.Break:
        return None
    counter = last.test.left.value
    indexed = type(loop.target) is cst.Tuple and type(loop.iter) is cst.Call and call_name(loop.iter) == "enumerate" and \
        dotted(loop.target.elements[0].value) == counter
    counted = any(type(n) is cst.AugAssign and dotted(n.target) == counter and type(n.operator) is cst.AddAssign
                  and literal(n.value) == 1 for n in walk(loop.body))
    comparator = last.test.comparisons[0].comparator
    bound = ctx.value(comparator, scope)
    if type(comparator) is cst.BinaryOperation and type(comparator.operator) in (cst.Add, cst.Subtract):
        left, right = ctx.value(comparator.left, scope), ctx.value(comparator.right, scope)  # `if i == args.n - 1: break`
        bound = (left + right if type(comparator.operator) is cst.Add else left - right) \
            if type(left) is int and type(right) is int else UNKNOWN
    if bound is UNKNOWN:
        bound = parameter_constant(ctx, comparator, scope)
    if not (indexed or counted) or type(bound) is not int or bound < 0:
        return None
    operator = type(last.test.comparisons[0].operator)
    # (an index counts from 0, a counter added to first from 1)
    return {cst.Equal: bound + indexed, cst.GreaterThanEqual: bound + indexed, cst.GreaterThan: bound + 1 + indexed}.get(operator)


def runs_once(loop: cst.CSTNode, loops: tuple, ctx: Context, scope: Scope) -> bool:
    """Whether `loop` (one of `loops`, the loops around a site) runs its iterations once in all:
    its body ends with an unconditional `break` (one batch shown), or it counts a known number
    of iterations inside a loop that does (Grad-CAM's `for j in range(20):` over one batch)."""
    inside = loops[:loops.index(loop)] if loop in loops else ()
    return _breaks_at_end(loop) or type(loop) is cst.For and any(map(_breaks_at_end, inside)) and iterations(
        loop, ctx, scope) is not None


def _breaks_at_end(loop: cst.CSTNode) -> bool:
    body = getattr(getattr(loop, "body", None), "body", ())
    last = body[-1] if body else None
    return type(last) is cst.SimpleStatementLine and any(type(small) is cst.Break for small in last.body)


def never_taken(ctx: Context, owner: cst.CSTNode | None) -> set[int]:
    """Ids of the nodes of `owner` (a function; None: nothing) in a branch no run takes: under
    `if self.flag:` where the source only ever sets `self.flag` to false constants (minRF's
    `self.stratified = False`), or in the `else` of one it only sets to true ones (SlowFast's
    `self.swav_use_public_code = True`); `if not self.flag:` likewise; and under `if cfg.flag:`
    where the files of the project only ever set `flag` to false constants (yolact's
    `'use_objectness_score': False` in its dict of defaults: `never_on`); and under `if flag:` (or
    in its `else`) where `flag` is a parameter every call of the function gives one false (true)
    constant (`parameter_constant`)."""
    if owner is None:
        return set()
    memo = ctx.shared.setdefault(never_taken, {})
    found = memo.get(id(owner))
    if found is None:
        found = memo[id(owner)] = set[int]()
        path = ctx.path if ctx.path and not ctx.path.startswith("<") else None
        cls = ctx.class_of.get(id(owner))
        for branch in (n for n in walk(owner) if type(n) is cst.If):
            test, negated = branch.test, False
            if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test, negated = test.expression, True
            key = dotted(test) if type(test) is cst.Attribute else None
            values = ctx.attributes.get(key, ()) if key is not None and key.startswith("self.") else ()
            own = [(v, s) for v, s in values if s.node is not None and ctx.class_of.get(id(s.node)) is cls]
            values = own or values  # (the class's own assignments: yolov7's four loss classes each set `self.autobalance`)
            constants = [c for value, scope in values for c in _constants(ctx, value, scope)]
            if not values and key is not None and path is not None and never_on(path, key.rpartition(".")[2]):
                constants = [False]  # (a switch of the project's configuration that none turns on)
            if type(test) is cst.Name and id(owner) in ctx.scopes:  # (a parameter every call gives one constant:
                constants = [parameter_constant(ctx, test, ctx.scopes[id(owner)])]  # `train(..., use_attn)`, `use_attn = True`)
            if not constants or UNKNOWN in constants or len({bool(c) for c in constants}) != 1:
                continue
            dead = branch.orelse if bool(constants[0]) != negated else branch.body
            if dead is not None:
                found.update(id(n) for n in walk(dead))
    return found


def _constants(ctx: Context, value: cst.BaseExpression | None, scope: Scope) -> list:
    """The constants an attribute's value is: a literal, or a parameter of the `__init__` assigning
    it (`self.ln = ln`), as every construction of the class in the source passes it or leaves its
    default (`RF(model)`, `def __init__(self, model, ln=True)`), or, made nowhere in the source,
    every construction in the modules importing it (yolov5's `ComputeLoss(model)`, `autobalance=False`);
    [UNKNOWN] when not known."""
    found = literal(value) if value is not None else UNKNOWN
    init = scope.node
    if found is not UNKNOWN or type(value) is not cst.Name or init is None or init.name.value != "__init__":
        return [found]
    params = list(init.params.params)
    names = [p.name.value for p in params]
    cls = ctx.class_of.get(id(init))
    if value.value not in names[1:] or cls is None or scope.assignments.get(value.value) != [None]:
        return [UNKNOWN]
    index, default = names.index(value.value) - 1, params[names.index(value.value)].default
    made = ctx.calls.get(cls.name.value, ())
    if not made and ctx.path and not ctx.path.startswith("<"):  # (made by the modules importing it: yolov5's
        given = constructed_with(os.path.abspath(ctx.path), cls.name.value, value.value, index)  # `ComputeLoss(model)`)
        fallback = literal(default) if default is not None else UNKNOWN
        return [UNKNOWN] if given is None else [fallback if constant is None else constant for constant in given]
    passed = [keyword(call.node, value.value) or positional(call.node, index) for call in made]
    if not made or any(arg is None and default is None for arg in passed) or any(
            arg.star for call in made for arg in call.node.args):
        return [UNKNOWN]  # (an argument left out without a default, or `*args`/`**kwargs` given)
    return [literal(arg.value if arg is not None else cast(cst.BaseExpression, default)) for arg in passed]


def few_iterations(loop: cst.CSTNode, ctx: Context, scope: Scope, most: int = SHORT_LOOP) -> bool:
    """A `for` loop known to run at most `most` times (`for i in range(5):`)."""
    count = iterations(loop, ctx, scope) if type(loop) is cst.For else None
    return count is not None and count <= most


def _without_gradients(function: cst.FunctionDef) -> bool:
    """Whether a decorator runs `function` without gradients (`@torch.no_grad()`, `@torch.inference_mode()`)."""
    for decorator in function.decorators:
        found = decorator.decorator
        name = dotted(found.func if type(found) is cst.Call else found) or ""
        if "no_grad" in name or "inference_mode" in name:
            return True
    return False


_INFERENCE_PHASES = frozenset({"test", "eval", "val", "valid", "validation", "inference", "infer", "predict"})


def _phase_test(test: cst.BaseExpression) -> str | None:
    """"test" for `self.phase == "test"` (or "eval", "inference", ...: a module's inference
    branch), "train" for `mode == "train"`; None for other tests."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
        return None
    sides = [test.left, test.comparisons[0].comparator]
    phase = next((side.evaluated_value for side in sides if type(side) is cst.SimpleString), None)
    if not isinstance(phase, str):
        return None
    return "test" if phase.lower() in _INFERENCE_PHASES else "train" if phase.lower() == "train" else None
