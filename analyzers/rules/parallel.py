"""TPL304: single-process multi-GPU training with nn.DataParallel."""

from __future__ import annotations

import re
from typing import cast

import libcst as cst

from ..context import IF, Site
from ..importers import imported_to_train, unused_function
from ..nodes import aborts, call_name, children, dotted, keyword, walk
from ..project import call_target, derives_from, evaluates, maybe_project_call
from .base import Example, Rule
from .gradients import NO_GRAD
from .tracking import TrainingSteps

DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}


class DataParallelTraining(Rule):
    """
    ## What it does
    Finds models wrapped in `torch.nn.DataParallel` (or in a subclass of it the project
    defines: Transformer-XL's `BalancedDataParallel`).

    ## Why is this bad?
    DataParallel runs one Python process that, on every step, scatters the batch from
    GPU 0, replicates the model's parameters to every GPU, gathers the outputs back on
    GPU 0 and reduces gradients there. GPU 0 does extra work and holds extra memory, the
    GIL serializes the per-GPU threads, and nothing overlaps communication with backward.
    PyTorch recommends `DistributedDataParallel` even on a single machine: one process
    per GPU, gradients all-reduced in buckets while backward still runs. It is usually
    much faster from two GPUs on.

    ## Example
    ```python
    model = nn.DataParallel(model).cuda()
    ```

    ## Fix
    ```python
    # torchrun --nproc-per-node=NUM_GPUS train.py
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    ```
    and a `DistributedSampler` for the training DataLoader. There is no automatic fix:
    the script has to be launched once per GPU.

    A script that only evaluates (it calls `.eval()` or opens `torch.no_grad()` /
    `inference_mode()`, or hands the wrap to a function of the project that does, and trains nothing: no `backward()`, optimizer step or framework
    training loop, here or in a function of another module it calls, and imported by no
    module of the project that trains; likewise one that only runs the wrapped model, as
    PyTorch's DataParallel tutorial prints shapes) is left alone: with no gradients there is nothing for
    DistributedDataParallel to overlap. So is a wrap in a function that evaluates and trains
    nothing (a `sample()` beside `train()`), and one of a module put in evaluation mode as it
    is wrapped (`DataParallel(FAN(...).eval())`, a frozen network), and one through which
    nothing runs, only a checkpoint's `module.`-prefixed keys pass (`psp = DataParallel(psp)`,
    then `psp.state_dict()`; RAFT's `model.load_state_dict(...)`, then `model.module` run
    unwrapped), one over a single GPU (`device_ids=[0]`, or `CUDA_VISIBLE_DEVICES` set to one
    device: DataParallel then calls the module itself), and one in the branch a run
    without CUDA takes (the `else:` of `if torch.cuda.is_available():`).
    """

    code = "TPL304"
    name = "data-parallel"
    summary = "nn.DataParallel for multi-GPU training (use DistributedDataParallel)"
    triggers = ("DataParallel",)
    VALID = (
        # a test-only mode that evaluates a checkpoint and exits before the training (wide-resnet.pytorch)
        Example(
            """
            import sys
            import torch
            if args.testOnly:
                net = torch.load("checkpoint.t7")["net"].cuda()
                net = torch.nn.DataParallel(net, device_ids=range(torch.cuda.device_count()))
                net.eval()
                with torch.no_grad():
                    for inputs, targets in testloader:
                        correct += (net(inputs.cuda()).argmax(1) == targets.cuda()).sum()
                sys.exit(0)
            net = WideResNet().cuda()
            for epoch in range(200):
                for inputs, targets in trainloader:
                    loss = criterion(net(inputs.cuda()), targets.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # wrapped only to save the converted weights with `module.` keys
        Example(
            """
            import torch
            psp = PSPNet()
            psp.load_pretrained_model("pspnet101_cityscapes.caffemodel")
            psp.cuda()
            psp = torch.nn.DataParallel(psp, device_ids=range(torch.cuda.device_count()))
            torch.save({"model_state": psp.state_dict()}, "pspnet.pth")
            """,
        ),
        # one GPU: DataParallel calls the module itself
        Example(
            """
            import torch
            generator = torch.nn.DataParallel(Generator(), device_ids=[0]).cuda()
            for z in loader:
                generator(z.cuda()).mean().backward()
                optimizer.step()
            """,
        ),
        Example(
            """
            import os
            import torch
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            model = torch.nn.DataParallel(CNN().cuda())
            for x, y in loader:
                torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """,
        ),
        # wrapped only to load a checkpoint saved from a wrap: the unwrapped module runs
        Example(
            """
            import torch
            model = torch.nn.DataParallel(RAFT(args))
            model.load_state_dict(torch.load(args.model))
            model.cuda()
            finetune(model.module, args)
            """,
        ),
        # PyTorch's DataParallel tutorial: the wrapped model only runs, printing shapes
        Example(
            """
            import torch
            from torch import nn
            model = Model(input_size, output_size)
            if torch.cuda.device_count() > 1:
                model = nn.DataParallel(model)
            model.to("cuda")
            for data in rand_loader:
                output = model(data.to("cuda"))
                print("Outside: input size", data.size(), "output_size", output.size())
            """,
        ),
        # a sampling function beside the training one, and a frozen network wrapped as it is made
        Example(
            """
            import torch
            def train(model, loader):
                for x in loader:
                    model(x.cuda()).mean().backward()
                    optimizer.step()
            def sample(model):
                model = torch.nn.DataParallel(model)
                model.eval()
                with torch.no_grad():
                    return model(torch.randn(8, 3, 32, 32, device="cuda"))
            fan = torch.nn.DataParallel(FAN(path).eval())
            """,
        ),
        # a script that only evaluates: no gradients for DistributedDataParallel to overlap
        Example(
            """
            import torch
            model = create_model(args.model).cuda()
            if args.num_gpu > 1:
                model = torch.nn.DataParallel(model, device_ids=list(range(args.num_gpu)))
            model.eval()
            with torch.no_grad():
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
            """,
        ),
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model.cuda(rank), device_ids=[rank])
            """,
        ),
        Example(
            """
            import torch
            if isinstance(model, torch.nn.DataParallel):
                model = model.module
            """,
        ),
        Example(
            """
            import torch
            from mylib import DataParallel
            model = DataParallel(model)
            """,
        ),
    )
    INVALID = (
        # the path for several GPUs, taken when the user asks for them (outlier-exposure's `--ngpu`)
        Example(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--ngpu", type=int, default=1)
            args = parser.parse_args()
            net = WideResNet().cuda()
            if args.ngpu > 1:
                net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))
            for x, y in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
            """,
        ),
        # a training function that also validates (`model.eval()` every few hundred steps)
        Example(
            """
            import torch
            def train(model, loader, val_loader):
                model = torch.nn.DataParallel(model).cuda()
                for step, (x, y) in enumerate(loader):
                    model.train()
                    model(x.cuda()).sum().backward()
                    optimizer.step()
                    if step % 500 == 0:
                        model.eval()
                        with torch.no_grad():
                            scores = [model(v.cuda()) for v, _ in val_loader]
            """,
        ),
        # trains, then evaluates
        Example(
            """
            import torch
            model = torch.nn.DataParallel(model).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                evaluate(model)
            """,
        ),
        Example(
            """
            import torch
            from torch import nn
            if torch.cuda.device_count() > 1:
                model = nn.DataParallel(model)
            model.to('cuda')
            """,
        ),
        Example(
            """
            import torch
            net = torch.nn.parallel.DataParallel(net, device_ids=[0, 1]).cuda()
            """,
        ),
        # the wrap on the GPU, not its twin in the branch a run without CUDA takes (a pass-through there)
        Example(
            """
            import torch
            if torch.cuda.is_available():
                retinanet = torch.nn.DataParallel(retinanet).cuda()
            else:
                retinanet = torch.nn.DataParallel(retinanet)
            for data in loader:
                retinanet([data["img"].cuda(), data["annot"]]).mean().backward()
                optimizer.step()
            """,
        ),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sites: list[Site] = []
        self.branches: dict[int, list[cst.If]] = {}  # wrap id -> the `if`s whose bodies hold it

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node) or ""
        if name.endswith("DataParallel") and not _frozen(node) and (
                self.ctx.qualname(node.func) in DATA_PARALLEL or self._subclass(node.func)):
            self.sites.append(self.ctx.site(node))
            self.branches[id(node)] = [cast(cst.If, frame.node) for frame in self.ctx.local_frames() if frame.kind == IF]

    def _subclass(self, func: cst.BaseExpression) -> bool:
        """A class of the project deriving from DataParallel (Transformer-XL's `BalancedDataParallel`)."""
        return derives_from(self.ctx, dotted(func), DATA_PARALLEL)

    def finish(self) -> None:
        if not self.sites or self._evaluates_only():
            return
        for site in self.sites:
            if self._samples(site.scope.node) or self._runs_nothing(site) or self.ctx.gpu_skips(site.node) or unused_function(
                    self.ctx, site.scope.node) or \
                    self._one_device(cast(cst.Call, site.node)) or self._tests_and_exits(site):
                continue
            wrap = call_name(cast(cst.Call, site.node))
            self.report(
                site,
                ("nn.DataParallel" if wrap == "DataParallel" else f"`{wrap}` (an nn.DataParallel)") + " drives every GPU from one process: each step scatters the batch, replicates "
                "the parameters and gathers outputs through GPU 0, under the GIL, without overlapping gradient "
                "communication with backward. Use DistributedDataParallel (one process per GPU, launched "
                "with torchrun), which PyTorch recommends even on one machine.",
            )

    def _samples(self, function: cst.FunctionDef | None) -> bool:
        """Whether the wrap is in a function that evaluates and trains nothing (ddim's `sample()`
        beside its `train()`)."""
        steps = TrainingSteps.of(self.ctx)
        return function is not None and not steps.trains(function) and not any(
            type(node) in (cst.For, cst.While) and steps.trains(node) for node in walk(function.body)) and self._evaluates(function)

    def _tests_and_exits(self, site: Site) -> bool:
        """Whether the wrap is in a branch that evaluates, trains nothing and ends the program
        (`if args.testOnly: ... net = nn.DataParallel(net) ... sys.exit(0)`)."""
        steps = TrainingSteps.of(self.ctx)
        return any(aborts(branch) and not any(type(node) in (cst.For, cst.While) and steps.trains(node) for node in walk(branch.body))
                   and any(type(node) is cst.Call and call_name(node) in ("eval", "no_grad", "inference_mode") for node in walk(branch.body))
                   for branch in self.branches.get(id(site.node), ()))

    def _evaluates(self, function: cst.FunctionDef | None = None) -> bool:
        """Whether the source (or `function`) puts a module in evaluation mode (`model.eval()`, not
        `FAN(...).eval()`: a frozen part made) or opens `no_grad`/`inference_mode`."""
        def inside(site) -> bool:
            return function is None or site.scope.node is function
        return any(inside(site) and not site.node.args and type(site.node.func) is cst.Attribute
                   and type(site.node.func.value) is not cst.Call for site in self.ctx.calls.get("eval", ())) or any(
            inside(site) and self.ctx.qualname(site.node.func) in NO_GRAD
            for name in ("no_grad", "inference_mode") for site in self.ctx.calls.get(name, ()))

    def _evaluates_only(self) -> bool:
        """Whether the source evaluates a model (or runs a wrapped one: the tutorial's forward-only
        demo printing shapes) and trains nothing."""
        return (self._evaluates() or self._runs_wrapped() or self._handed_to_evaluation()) and not TrainingSteps.of(
            self.ctx).anywhere() and not (self.ctx.path and imported_to_train(self.ctx.path))

    def _handed_to_evaluation(self) -> bool:
        """Whether a name bound to a wrap is given to a function of the project that puts a
        module in evaluation mode or opens `no_grad` (HRNet's tools/test.py: `testval(config,
        test_dataset, testloader, model)` of function.py)."""
        names = {name for site in self.sites for name, values in site.scope.assignments.items()
                 if any(value is site.node or type(value) is cst.Call and type(value.func) is cst.Attribute
                        and value.func.value is site.node for value in values)}
        for name, sites in self.ctx.calls.items():
            for site in sites:
                if any(type(arg.value) is cst.Name and arg.value.value in names for arg in site.node.args) and \
                        maybe_project_call(self.ctx, site.node.func):
                    found = call_target(self.ctx, site.node.func, site.scope)
                    if found is not None and evaluates(found):
                        return True
        return False

    def _runs_wrapped(self) -> bool:
        """Whether a name the source binds a DataParallel wrap to (`model = nn.DataParallel(model)`)
        is called (`output = model(input)`)."""
        names = {name for site in self.sites for name, values in site.scope.assignments.items()
                 if any(value is site.node or type(value) is cst.Call and type(value.func) is cst.Attribute
                        and value.func.value is site.node for value in values)}
        return any(type(site.node.func) is cst.Name for name in names for site in self.ctx.calls.get(name, ()))


    def _one_device(self, call: cst.Call) -> bool:
        """A wrap over one GPU (`device_ids=[0]`, or the source sets `CUDA_VISIBLE_DEVICES` to one
        device): DataParallel then calls the module itself, replicating and gathering nothing."""
        ids = keyword(call, "device_ids")
        if ids is not None and type(ids.value) in (cst.List, cst.Tuple):
            return len(cast(cst.List, ids.value).elements) == 1
        return any(_ONE_VISIBLE.search(unit.text) for unit in self.ctx.units)

    def _runs_nothing(self, site: Site) -> bool:
        """`psp = nn.DataParallel(psp)` read after only as `psp.state_dict()`, or as
        `model.load_state_dict(...)` then `model.module`: a wrap whose checkpoint keys have the
        `module.` prefix, with nothing run through it."""
        names = [name for name, values in site.scope.assignments.items() if any(value is site.node for value in values)]
        if len(names) != 1:
            return False
        after, uses = False, []
        pending: list[cst.CSTNode] = list(reversed(self.ctx.bodies(site.scope)))
        while pending:  # in source order
            node = pending.pop()
            if node is site.node:
                after = True
                continue  # (what it wraps is read before it is bound)
            if after and type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == names[0]:
                uses.append(node.attr.value)
                continue
            elif after and type(node) is cst.Name and node.value == names[0]:
                uses.append("")
            pending.extend(reversed(children(node)) if type(node) is not cst.Attribute else (node.value,))  # (not `args.model`'s attr)
        return all(use in _NOT_RUN for use in uses) and any(use.endswith("state_dict") for use in uses)


# `os.environ["CUDA_VISIBLE_DEVICES"] = "0"`, `%env CUDA_VISIBLE_DEVICES=1`: one GPU visible
_ONE_VISIBLE = re.compile(r"""CUDA_VISIBLE_DEVICES['"]\s*\]\s*=\s*['"]\s*\d+\s*['"]|%env\s+CUDA_VISIBLE_DEVICES\s*=\s*\d+\s*$""", re.M)

# what a wrap is read as when nothing runs through it: its checkpoint, the module it wraps, its placement
_NOT_RUN = frozenset({"state_dict", "load_state_dict", "module", "cuda", "to", "eval"})


def _frozen(call: cst.Call) -> bool:
    """`DataParallel(FAN(...).eval())`: a module wrapped as it is put in evaluation mode (a
    frozen network, run without gradients)."""
    wrapped = call.args[0].value if call.args else None
    return type(wrapped) is cst.Call and type(wrapped.func) is cst.Attribute and call_name(wrapped) == "eval"
