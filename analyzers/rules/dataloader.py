"""TPL1xx: the input pipeline (DataLoader workers, pinned memory, non-blocking copies)."""

from __future__ import annotations

import ast
import functools
import operator
import os
from collections.abc import Iterator
from typing import cast

import libcst as cst

from ..context import IF, CallSite, Site, paired
from ..nodes import (
    UNKNOWN, argument, assigned_in, call_name, children, code, dotted, iteration_source, keyword, literal, names_in,
    none_test, passed_for,
    trainer_gpu, positional, remembered, short_code, star_kwargs, trainer_device, walk,
)
from ..datasets import (
    CHEAP, EXPENSIVE, HF_METHODS, HF_TRANSFORMS, ON_DEVICE, ROWS, ROWS_BATCH, TENSOR_DATASET, UNKNOWN_DATASET, WRAPPERS,
    Cost, class_cost, combine, deciding, library_cost, returned_cost, tokenizes,
)
from ..findings import Related
from ..importers import (config_default, yaml_setting, gpu_importers, importer_namespace_default, importing, installable, project_option_default,
                         unused_function, uses_gpu)
from ..project import (FileNamespace, LoaderUses, SourceNamespace, coqui_model, derives_from, loader_overrides, from_afar, argparse_defaults, ast_dotted, bind, body_nodes, call_target, caller_uses, classes_made_by,
                       instance_default, method as method_of,
                       parsed_defaults,
                       device_moves, iterated, iterated_again, iterated_through, maybe_project_call, parameters, trains_somewhere,
                       used_arguments, used_by_all_fitting, yields)
from .base import CallNames, Example, FixPlan, Replace, Rule
from .edits import names_in_target, replace_argument, root_name, with_keywords
from .tracking import TrainingSteps, few_iterations, interval_test, stops_after
from ..vocabulary import (
    CAST_METHODS, CAST_TYPES, COLLATE_FN, COQUI_LOADER_HOOKS, DEVICE_LIKE, DTYPE_LIKE, EVERY_EPOCH_HOOKS, FIT_METHODS, HF_LOADER_HOOKS,
    HF_TRAINERS, HF_TRAINING_ARGUMENTS, ITER_WRAPPERS, NUM_WORKERS, PIN_MEMORY, SIZED_FACTORIES,
)

# torch's DataLoader, webdataset's WebLoader, which makes one of its arguments (`WebLoader(*args, **kw)`:
# `DataLoader(*args, **kw)` in a pipeline), and MONAI's, torch's with a collate that lists dictionaries
DATALOADER = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader", "webdataset.WebLoader",
              "webdataset.compat.WebLoader", "monai.data.DataLoader", "monai.data.dataloader.DataLoader",
              "torchdata.stateful_dataloader.StatefulDataLoader",  # (torchdata's drop-in replacement, resumable)
              "torchdata.stateful_dataloader.stateful_dataloader.StatefulDataLoader"}
# DataLoaders of libraries whose batches perf-lint cannot cost (PyG's, collating graphs; MONAI's
# ThreadDataLoader, whose thread prefetches without workers; torchmeta's, batching tasks): their workers are re-spawned like any
# loader's (TPL104); whether they need workers or pinning is not known
SUBCLASSES = {f"torch_geometric.{package}.{name}" for package in ("loader", "data") for name in (
    "DataLoader", "DataListLoader", "DenseDataLoader", "NeighborLoader", "NeighborSampler", "LinkNeighborLoader",
    "ClusterLoader", "GraphSAINTNodeSampler", "GraphSAINTEdgeSampler", "GraphSAINTRandomWalkSampler", "ShaDowKHopSampler",
    "RandomNodeLoader", "HGTLoader")} | {"monai.data.ThreadDataLoader", "monai.data.thread_buffer.ThreadDataLoader"} | {
    f"torchmeta.utils.data.{name}" for name in ("MetaDataLoader", "BatchMetaDataLoader")}
ITERABLE_DATASET = {"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"}
_LITERAL_TENSORS = {"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.as_tensor",
                    "numpy.array", "numpy.asarray"}
_COST_BUDGET = 200  # expressions followed to find one loader's dataset (names reassigned again and again)
_ONE_BATCH_HOOKS = {"test_dataloader": "test", "predict_dataloader": "predict"}  # Lightning hook -> Trainer method


_DEVICE_VARIABLE = "device variable"  # a move to a device we cannot resolve, named like one
_SAME_ROWS = {"clone", "contiguous", "long", "float", "int", "half", "detach", "cpu"}  # a tensor's methods keeping its rows
_ARRAY_METHODS = {"nonzero", "view", "flatten", "reshape", "squeeze", "unsqueeze", "argsort"}  # give a tensor (or array)


class _Move:
    """A `.to(...)`/`.cuda(...)` of something a loop got from an iterable."""

    def __init__(self, site: Site, loop: cst.For, cuda, non_blocking: bool, recast: bool = False, source=None,
                 rare: bool = False) -> None:
        self.site, self.loop, self.cuda, self.non_blocking = site, loop, cuda, non_blocking
        self.recast = recast  # what is moved is a copy the host cast it to (`x.type(torch.FloatTensor).cuda()`)
        self.source = source  # (iterator, scope) of `batch = next(iterator)` in the loop, for a batch taken so
        self.rare = rare  # a batch so taken every N iterations (`if i % 100 == 0: val = next(val_loader).cuda()`)

    def to_cuda(self, ctx) -> bool:
        """Provably to CUDA, or to a device variable in code that uses CUDA."""
        return self.cuda is True or (self.cuda == _DEVICE_VARIABLE and ctx.cuda_evidence is not None and not ctx.uses_rpc())


class _Transfer:
    """How a loader's batches reach the GPU when no loop of the source moves them: what
    does it (for a message) and the places of other files it depends on."""

    def __init__(self, said: str, related: tuple = (), framework: bool = True) -> None:
        self.said, self.related, self.framework = said, related, framework


# Lightning: the Trainer methods given loaders; FIT_METHODS and EVERY_EPOCH_HOOKS run every
# epoch (TPL104), all of them copy batches to the device (TPL102)
_RUN_METHODS = FIT_METHODS | {"test", "predict"}
_SUPERVISED = {"create_supervised_trainer", "create_supervised_evaluator"}  # ignite
# MONAI's engines (ignite Engines): class -> (position, name) of the loader they run, and of their epochs
MONAI_ENGINES = {"SupervisedTrainer": ((2, "train_data_loader"), (1, "max_epochs")),
                 "GanTrainer": ((2, "train_data_loader"), (1, "max_epochs")),
                 "SupervisedEvaluator": ((1, "val_data_loader"), None)}


class LoaderRule(Rule):
    """Collects DataLoader calls, the loops over them and the batches they move to a device.

    The first loader rule created for a source collects; the others (TPL101-104 share the
    facts) read its containers and stay out of the pass. What the moves go to, and which
    loaders a loop reads, is worked out in `finish`, once the whole source is known, and
    kept in `known` for every loader rule.
    """

    calls = CallNames(frozenset({"to", "cuda", "type", "DataLoaderX", *(name.rpartition(".")[2] for name in DATALOADER | SUBCLASSES)}),
                      suffix=("Loader", "Sampler", "loader_class", "loader_cls"))  # (and the project's subclasses:
    # `PositiveLinkNeighborSampler`, the prefetching `DataLoaderX` recipe; a name bound to the class, timm's `loader_class`)

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        first = ctx.shared.setdefault(LoaderRule, self)
        self.visits = first is self
        self.loaders: dict[cst.Call, Site] = first.loaders if first is not self else {}
        self.loops: dict[cst.For, tuple[Site, set[str]]] = first.loops if first is not self else {}
        self.pending: list[tuple] = first.pending if first is not self else []  # (site, loop, method, recast, source, rare)
        # loop id -> {name: (iterator, scope)} for `image, _ = next(dataset)` in the loop
        self.nexts: dict[int, dict[str, tuple]] = first.nexts if first is not self else {}
        self.known: dict = first.known if first is not self else {}  # what finish works out once for all
        self.modules: list[cst.Module] = first.modules if first is not self else []
        # name (or attribute) -> (value, index, scope) of the tuples unpacked into it
        self.unpacked: dict[str, list[tuple]] = first.unpacked if first is not self else {}
        # id of a call iterated where it is made (`for x in DataLoader(...)`, `[x for x in DataLoader(...)]`) -> the loop
        self.iterated_in_place: dict[int, cst.CSTNode] = first.iterated_in_place if first is not self else {}
        self.budget = _COST_BUDGET

    def visit_Module(self, node: cst.Module) -> None:
        self.modules.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name == "to" or name == "cuda" or name == "type" and len(node.args) == 1:
            self._move(node, name)
        elif (qualified := self.ctx.qualname(node.func)) in DATALOADER or qualified in SUBCLASSES or self._loader_class(node.func) \
                or self._loader_variable(node.func):
            self.loaders[node] = self.ctx.site(node)

    def _loader_class(self, func: cst.BaseExpression) -> bool:
        """A class of the source deriving from a DataLoader (OGB's `PositiveLinkNeighborSampler(NeighborSampler)`):
        a loader whose batches perf-lint does not cost, whose workers start again like any loader's."""
        return type(func) is cst.Name and derives_from(self.ctx, func.value, DATALOADER | SUBCLASSES)

    def _loader_variable(self, func: cst.BaseExpression) -> bool:
        """A name bound to torch's DataLoader class (timm's `loader_class = torch.utils.data.DataLoader`,
        `MultiEpochsDataLoader` when asked, then `loader_class(dataset, ...)`)."""
        if type(func) is not cst.Name:
            return False
        owner = self.ctx.scope.owner_of(func.value)
        return owner is not None and any(value is not None and type(value) in (cst.Name, cst.Attribute)
                                         and self.ctx.qualname(value) in DATALOADER for value in owner.assignments[func.value])

    def costed(self, call: cst.Call, loading: bool = False) -> bool:
        """Whether the loader is torch's, whose batches the rules can cost (not one of `SUBCLASSES`,
        nor one batching DGL graphs), or a class of the project passing its arguments on to it
        (YOLOP's `DataLoaderX`); for the cost of `loading` in the main process, not one
        iterating its own way (`DataLoaderX`'s prefetching thread)."""
        if self.ctx.qualname(call.func) not in DATALOADER:
            overrides = loader_overrides(self.ctx, call.func.value, DATALOADER) if type(call.func) is cst.Name else None
            if overrides is None or loading and "__iter__" in overrides:
                return False
        return not self.batches_graphs(self.loaders[call])

    def visit_For(self, node: cst.For) -> None:
        if type(node.iter) is cst.Call:
            self.iterated_in_place[id(node.iter)] = node
        outer = self._batch_loop(node.iter)
        if outer is not None:  # `for key, value in batch.items()`: parts of the batch
            self.loops[outer][1].update(names_in_target(node.target))
        else:
            self.loops[node] = (self.ctx.site(node), set(names_in_target(node.target)))

    def visit_Assign(self, node: cst.Assign) -> None:
        taken = node.value
        if type(taken) is cst.Call and type(taken.func) is cst.Name and taken.func.value == "next" and taken.args and self.ctx.loops:
            batches = self.nexts.setdefault(id(self.ctx.loops[-1]), {})
            for target in node.targets:
                batches.update(dict.fromkeys(names_in_target(target.target), (taken.args[0].value, self.ctx.scope)))
        for target in node.targets:
            unpacked = target.target
            # `train, val = random_split(ds, ...)` (`a, b = x, y`: the context has paired them)
            if (type(unpacked) is cst.Tuple or type(unpacked) is cst.List) and not any(paired(unpacked, node.value)):
                for index, element in enumerate(unpacked.elements):
                    key = dotted(element.value) if type(element) is cst.Element else None
                    if key is not None:
                        self.unpacked.setdefault(key, []).append((node.value, index, self.ctx.scope))
        for target in node.targets:
            whole: cst.BaseExpression = target.target
            given_each = paired(whole, node.value) if type(whole) is cst.Tuple or type(whole) is cst.List else [None]
            pairs = [(e.value, v) for e, v in zip(cast(cst.Tuple, whole).elements, given_each)] if any(given_each) else [
                (whole, node.value)]  # (`input, target = Variable(batch[0]), Variable(batch[1])`: each its own; `x, y = batch`: both)
            for bound, given in pairs:
                value = _variable_of(given) if given is not None else None
                if value is None or type(value) not in (cst.Name, cst.Subscript, cst.Attribute):
                    continue  # the cheaper test first: only a name, item or attribute of a batch passes it on
                loop = self._batch_loop(value)
                if loop is not None:
                    self.loops[loop][1].update(names_in_target(bound))

    def _comprehension(self, node) -> None:
        """`{k: v.to(device) for k, v in batch.items()}`: bind k, v before the element is visited."""
        comp = node.for_in
        while comp is not None:
            if type(comp.iter) is cst.Call:
                self.iterated_in_place[id(comp.iter)] = node
            loop = self._batch_loop(comp.iter)
            if loop is not None:
                self.loops[loop][1].update(names_in_target(comp.target))
            comp = comp.inner_for_in

    visit_DictComp = visit_ListComp = visit_SetComp = visit_GeneratorExp = _comprehension

    def _batch_loop(self, expr: cst.BaseExpression) -> cst.For | None:
        """The innermost enclosing `for` loop whose batch variables `expr` starts from."""
        base = root_name(_variable_of(expr))
        for loop in reversed(self.ctx.loops):
            if type(loop) is cst.For and loop in self.loops and base in self.loops[loop][1]:
                return loop
        return None

    def _move(self, call: cst.Call, name: str) -> None:
        if type(call.func) is cst.Attribute:
            loop = self._batch_loop(call.func.value)
            if loop is not None:
                self.pending.append((self.ctx.site(call), loop, name, self._recast(call.func.value, call), None, False))
                return
            taken = call.func.value
            while type(taken) is cst.Subscript:
                taken = taken.value
            if type(taken) is cst.Call and type(taken.func) is cst.Name and taken.func.value == "next" and taken.args \
                    and self.ctx.loops:  # `x_0 = next(datalooper).to(device)`
                self.pending.append((self.ctx.site(call), self.ctx.loops[-1], name, self._recast(call.func.value, call),
                                     (taken.args[0].value, self.ctx.scope), self._rare()))
                return
            base = root_name(_variable_of(call.func.value))
            for around in reversed(self.ctx.loops):  # `image, _ = next(dataset)` then `image.to(device)`
                source = self.nexts.get(id(around), {}).get(base or "")
                if source is not None:
                    self.pending.append((self.ctx.site(call), around, name, self._recast(call.func.value, call), source,
                                         self._rare()))
                    return

    def _rare(self) -> bool:
        """Whether the move being visited runs every N iterations of its loop (`if i % 100 == 0:`)."""
        return any(frame.kind == IF and interval_test(self.ctx, cast(cst.If, frame.node).test, self.ctx.loops, self.ctx.scope)
                   for frame in self.ctx.local_frames())

    # -- resolution at the end of the pass ------------------------------------------------
    @property
    def moves(self) -> list[_Move]:
        """The batch moves to a device, resolved once the whole source is known."""
        if "moves" not in self.known:
            self.known["moves"] = [move for move in map(self._resolve_move, self.pending) if move is not None]
        return self.known["moves"]

    def _resolve_move(self, pending: tuple) -> _Move | None:
        site, loop, name, recast, source, rare = pending
        call = cast(cst.Call, site.node)  # a .to()/.cuda() call (visit_Call)
        if name == "cuda":
            device = argument(call, 0, "device")
            cuda = True if device is None else self.ctx.is_cuda_device(device, site.scope)
        elif name == "type":  # `imgs.type(Tensor)`, `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`
            cuda = self.ctx.is_cuda_device(call.args[0].value, site.scope)
            if cuda is not True:
                return None
        else:
            device = argument(call, 0, "device")
            if device is None:
                return None
            cuda = self.ctx.is_cuda_device(device, site.scope)
            if cuda is UNKNOWN:
                text = dotted(device) or ""
                if DTYPE_LIKE.search(text.rsplit(".", 1)[-1]) or not DEVICE_LIKE.search(text):
                    return None
                cuda = _DEVICE_VARIABLE
        blocking = keyword(call, "non_blocking")
        non_blocking = blocking is not None and self.ctx.value(blocking.value, site.scope) is True
        return _Move(site, loop, cuda, non_blocking, recast, source, rare)

    def _recast(self, expr: cst.BaseExpression, move: cst.Call, depth: int = 0) -> bool:
        """Whether `expr` (what `move` moves) is the batch cast on the host (`x.float()`,
        `x.type(torch.FloatTensor)`, `x.to(torch.float32)`), or a name whose value before the
        move's statement is."""
        if type(expr) is cst.Name:
            values = [v for v in self.ctx.scope.assignments.get(expr.value, ()) if v is None or not any(n is move for n in walk(v))]
            return bool(values) and values[-1] is not None and depth < 2 and self._recast(values[-1], move, depth + 1)
        if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute:
            return False
        name = expr.func.attr.value
        if name in CAST_METHODS:
            return not expr.args
        if name in ("type", "to") and len(expr.args) == 1 and expr.args[0].keyword is None:
            qualified = self.ctx.qualname(expr.args[0].value) or ""
            return qualified.removeprefix("torch.") in CAST_TYPES
        return False

    def loaders_of(self, loop: cst.For) -> list[Site]:
        """The DataLoaders a loop iterates over (remembered for the analysis, by every loader rule)."""
        key = ("loaders_of", id(loop))
        if key not in self.known:
            self.known[key] = self._loaders_of(loop)
        return self.known[key]

    def _loaders_of(self, loop: cst.For) -> list[Site]:
        site, _ = self.loops[loop]
        iterable = loop.iter
        if type(iterable) is cst.Name:  # `batch_iter = enumerateWithEstimate(train_dl, ...)`, then a loop over it
            made = self.ctx.origin(iterable, site.scope)
            if made is not None and type(made[0]) is cst.Call and made[1] is site.scope:
                iterable = made[0]
        candidates = [iterable]
        while candidates and type(call := candidates[0]) is cst.Call:
            if call_name(call) in ITER_WRAPPERS:
                candidates[:1] = _wrapped(call)
                continue
            passed = self._yielded_from(call, site.scope)  # `metric_logger.log_every(loader, 10)`
            if passed is None:
                break
            candidates[0] = passed
        found: list[Site] = []
        for expr in candidates:
            found.extend(self._resolve_loader(expr, site.scope, 0))
        return list({id(s.node): s for s in found}.values())

    def _yielded_from(self, call: cst.Call, scope) -> cst.BaseExpression | None:
        """The argument a generator of the project yields the items of (`log_every(iterable,
        print_freq)`, a method of a logger class of another module), or None."""
        if not call.args or not maybe_project_call(self.ctx, call.func):
            return None
        target = call_target(self.ctx, call.func, scope)
        loops = iterated(target)
        if target is None or not loops or not yields(target):
            return None
        pairs = bind(call, parameters(target[0]), target[3] is not None)
        return next((cast(cst.BaseExpression, value) for name, value in pairs if name in loops), None)

    def _resolve_loader(self, expr: cst.BaseExpression, scope, depth: int) -> list[Site]:
        if depth > 4:
            return []
        if type(expr) is cst.Call and expr in self.loaders:
            return [self.loaders[expr]]
        if type(expr) is cst.Subscript and type(expr.value) in (cst.Name, cst.Attribute):
            held = self.ctx.origin(expr.value, scope)  # `dataloaders[phase]`, `{x: DataLoader(...) for x in ...}`
            if held is not None and type(held[0]) is cst.DictComp:
                return self._resolve_loader(held[0].value, held[1], depth + 1)
            if held is not None and type(held[0]) is cst.Dict:
                return [loader for element in held[0].elements if type(element) is cst.DictElement
                        for loader in self._resolve_loader(element.value, held[1], depth + 1)]
            return []
        origin = self.ctx.origin(expr, scope)
        if origin is not None and type(origin[0]) is cst.Call:
            call = origin[0]
            if call in self.loaders:
                return [self.loaders[call]]
            if call_name(call) in ITER_WRAPPERS:  # `progress = tqdm(enumerate(loader))`
                return [loader for value in _wrapped(call) for loader in self._resolve_loader(value, origin[1], depth + 1)]
            if type(call.func) is cst.Attribute and dotted(call.func.value) == "self":  # `train_dl = self.init_train_dl()`
                functions = self._called_functions(call.func, origin[1])
            elif type(call.func) is cst.Name:
                if _iterator_class(self.ctx.classes.get(call.func.value)):  # `InfiniteIterator(loader)`
                    return [loader for arg in call.args for loader in self._resolve_loader(arg.value, origin[1], depth + 1)]
                functions = [f for f, _ in self.ctx.functions.get(call.func.value, ())]
                if not functions and maybe_project_call(self.ctx, call.func):  # `datalooper = infiniteloop(dataloader)`, a
                    found = call_target(self.ctx, call.func, origin[1])  # generator of another module yielding its items
                    loops = iterated(found) if found is not None and found[3] is None and yields(found) else {}
                    items = [value for name, value in bind(call, parameters(found[0]), method=False) if name in loops] if loops else []
                    return [loader for value in items for loader in self._resolve_loader(cast(cst.BaseExpression, value), origin[1], depth + 1)]
            else:
                return []
            found = []  # `loader = make_loader(...)`: the loaders a function (a method) of the source returns, or yields the batches of
            for function in functions:
                for value in [*self.ctx.returns.get(id(function), ()), *_yielded_sources(function)]:
                    given = passed_for(call, function, value)  # (what this call passes it: `cycle(DataLoader(val_ds))`)
                    found += self._resolve_loader(given, origin[1], depth + 1) if given is not None else \
                        self._resolve_loader(value, self.ctx.scopes[id(function)], depth + 1)
            return found
        key = dotted(expr)
        if key is None:
            return []
        found = self._unpacked_loaders(expr, key, scope, depth) if type(expr) is cst.Name or key.startswith("self.") else []
        if type(expr) is cst.Name and scope.node is not None and expr.value in scope.params:
            found.extend(self._from_callers(scope, expr.value, depth))
        if not found:  # the same name (or attribute) bound to a DataLoader elsewhere in the source
            last = key.rsplit(".", 1)[-1]
            bound = list(self.ctx.by_name.get(last, []))
            values = [v for v, _ in bound]
            values += [v for k, vs in self.ctx.attributes.items() if k.rsplit(".", 1)[-1] == last for v, _ in vs]
            found.extend(self.loaders[v] for v in values if type(v) is cst.Call and v in self.loaders)
            if not found and type(expr) is cst.Name and bound and all(  # `loader_iter = iter(loader)`, made again
                    type(v) is cst.Call and call_name(v) == "iter" and len(v.args) == 1 for v, _ in bound):  # when it ends
                found.extend(loader for v, where in bound for loader in self._resolve_loader(
                    cast(cst.Call, v).args[0].value, where, depth + 1) if loader not in found)
            if not found and type(expr) is cst.Name:  # `active_dataloader = train_dataloader` in one branch
                found.extend(loader for v, where in bound if type(v) is cst.Name and v.value != expr.value
                             for loader in self._resolve_loader(v, where, depth + 1) if loader not in found)
        return found

    def _called_functions(self, func: cst.BaseExpression, scope) -> list[cst.FunctionDef]:
        """The functions of the source a call of `func` runs: those named `name`, or for
        `self.name`, the method of the enclosing class."""
        if type(func) is cst.Name:
            return [function for function, _ in self.ctx.functions.get(func.value, ())]
        if type(func) is not cst.Attribute or dotted(func.value) != "self" or scope.node is None:
            return []
        owner = self.ctx.class_of.get(id(scope.node))
        return [function for function, _ in self.ctx.functions.get(func.attr.value, ())
                if owner is not None and self.ctx.class_of.get(id(function)) is owner]

    def _unpacked_loaders(self, expr: cst.BaseExpression, key: str, scope, depth: int) -> list[Site]:
        """The loaders a name (or attribute, `key`) unpacked from what a method of the class or a
        function of the source returns holds: element `index` of its returned tuples (simpletransformers'
        `train_dataloader, train_sampler = self.load_and_cache_examples(...)`, torchtune's
        `self._sampler, self._dataloader = self._setup_data(...)`)."""
        owner = scope.owner_of(expr.value) if type(expr) is cst.Name else None
        found: list[Site] = []
        for value, index, where in self.unpacked.get(key, ()):
            if owner is not None and where is not owner or type(value) is not cst.Call:
                continue
            for returned, inner in self._returned(value.func, where):
                elements = returned.elements if type(returned) is cst.Tuple or type(returned) is cst.List else ()
                if index < len(elements):
                    found += self._resolve_loader(elements[index].value, inner, depth + 1)
        return found

    def _from_callers(self, scope, param: str, depth: int) -> list[Site]:
        """The loaders the calls of a function that pass `param` give it (of a notebook's name
        bound to several, the one its cells bound last before the call's)."""
        return [loader for value, where, unit in self._passed_by_callers(scope, param) if value is not None
                for loader in self.live_loaders(value, where, unit, depth + 1)]

    def live_loaders(self, value: cst.BaseExpression, scope, unit: int, depth: int = 0) -> list[Site]:
        """The loaders `value` is, used in cell `unit`: of those a name of the module's (a
        notebook's, cell after cell) own statements is bound to several times, the ones bound last
        before the use (all of them elsewhere)."""
        loaders = self._resolve_loader(value, scope, depth)
        if not loaders or type(value) is not cst.Name or scope is not self.ctx.module_scope:
            return loaders
        used = self._statement_at(value, unit)
        made = {id(loader.node): self._statement_at(loader.node, loader.unit) for loader in loaders}
        latest = max((where for where in made.values() if where <= used), default=None)
        if latest is None and any(self._bound_at(bound) <= used for bound in scope.assignments.get(value.value, ()) if bound is not None):
            return []  # (`trainer.fit(model, train_dl)` with a DataModule, before a later cell binds `train_dl` to a loader)
        return [loader for loader in loaders if made[id(loader.node)] == latest] or loaders

    def _bound_at(self, value: cst.CSTNode) -> tuple[int, int]:
        """(unit, index) of the module statement holding `value` (a name's assigned value)."""
        return next((at for unit, module in enumerate(self.ctx.modules) if (at := self._statement_at(value, unit))[1] < len(
            module.body)), (len(self.ctx.modules), 0))

    def _statement_at(self, node: cst.CSTNode, unit: int) -> tuple[int, int]:
        """(unit, index of the module statement holding `node`; past the end when none does)."""
        body = self.ctx.modules[unit].body if unit < len(self.ctx.modules) else ()
        return unit, next((i for i, statement in enumerate(body) if any(n is node for n in walk(statement))), len(body))

    def setting(self, site: Site, index: int, name: str):
        """A DataLoader keyword's value: a Python value, None when not passed, UNKNOWN
        (remembered for the analysis, by every loader rule)."""
        key = ("setting", id(site.node), index, name)
        if key not in self.known:
            self.known[key] = self._setting(site, index, name)
        return self.known[key]

    def _setting(self, site: Site, index: int, name: str):
        passed = self.ctx.call_argument(cast(cst.Call, site.node), index, name, site.scope)  # a loader call
        if passed is UNKNOWN:
            return self._star_parameter_setting(cast(cst.Call, site.node), name, site.scope)
        if passed is None:
            return passed
        expr, scope = passed
        value = self._resolved(expr, scope, 0)
        return UNKNOWN if value is None and name != "pin_memory" else value

    def _star_parameter_setting(self, call: cst.Call, name: str, scope):
        """A loader keyword that can only come through the function's own `**kwargs` (`def
        get10(batch_size, **kwargs): ... DataLoader(ds, batch_size=batch_size, **kwargs)`): the
        value every call of the function gives it by that name (in this module or the modules
        importing it; directly or in a `**mapping` it knows), else the function's
        `kwargs.setdefault(name, value)`, else None (not passed); UNKNOWN when the calls differ,
        none is found, or the function changes the mapping otherwise."""
        function = scope.node
        star = function.params.star_kwarg if function is not None else None
        stars = star_kwargs(call)
        if type(star) is not cst.Param or len(stars) != 1 or dotted(stars[0].value) != star.name.value or any(
                arg.star == "*" for arg in call.args) or self.ctx.class_of.get(id(function)) is not None:
            return UNKNOWN
        mapping = star.name.value
        default = self._star_default(function, mapping, name)
        if default is UNKNOWN:
            return UNKNOWN
        values = []
        for call_site in self.ctx.calls.get(function.name.value, []):
            if type(call_site.node.func) is not cst.Name:
                continue  # (`trainer.get10()` is not a call of the module's function)
            given = keyword(call_site.node, name)
            found = (given.value, call_site.scope) if given is not None else None
            for passed in star_kwargs(call_site.node) if given is None else ():
                known = self.ctx.kwargs(passed.value, call_site.scope)
                if known is UNKNOWN:
                    return UNKNOWN
                found = (known[0][name], known[1]) if name in known[0] else found
            values.append(self._resolved(*found, 1) if found is not None else
                          self._resolved(default, scope, 1) if default is not None else None)
        imported = self._imported_star_values(function.name.value, name)
        if imported is UNKNOWN:
            return UNKNOWN
        values += [value if value is not None else self._resolved(default, scope, 1) if default is not None else None
                   for value in imported]
        distinct = {repr(value) for value in values}
        return values[0] if len(distinct) == 1 and UNKNOWN not in values else UNKNOWN

    @staticmethod
    def _star_default(function: cst.FunctionDef, mapping: str, name: str):
        """What `kwargs.setdefault("name", value)` in the function gives a key no call passes
        (None when it sets none); UNKNOWN when the function uses the mapping otherwise than by
        `**`, `get`, `setdefault` and `pop` of other keys."""
        default = None
        for node in walk(function.body):
            if type(node) is cst.Attribute and dotted(node.value) == mapping:
                if node.attr.value not in ("get", "setdefault", "pop"):
                    return UNKNOWN
            elif type(node) is cst.Call and type(node.func) is cst.Attribute and dotted(node.func.value) == mapping:
                key = literal(node.args[0].value) if node.args else UNKNOWN
                if key == name and node.func.attr.value == "pop" or not isinstance(key, str):
                    return UNKNOWN
                if key == name and node.func.attr.value == "setdefault":
                    default = node.args[1].value if len(node.args) > 1 else UNKNOWN
            elif type(node) is cst.Subscript and dotted(node.value) == mapping:
                return UNKNOWN
        return default

    def _imported_star_values(self, function: str, name: str):
        """What the calls of this module's function `function` in the modules importing it
        pass as keyword `name`: constants (an argparse default of `args.x` as well), directly
        or in a `**mapping` assigned a dict once in the calling function, None where a call
        does not pass it; UNKNOWN when one passes what is not known."""
        found: list = []
        for namespace, owner, node in self._importer_calls(function):
            given = next((k.value for k in node.keywords if k.arg == name), None)
            for passed in (k.value for k in node.keywords if k.arg is None) if given is None else ():
                mapping = _assigned_dict(owner, passed)
                if mapping is None:
                    return UNKNOWN
                given = mapping.get(name, given)
            if given is not None and type(given) is not ast.Constant:
                given = _parsed_default(namespace, given, anywhere=True)
                if given is None:
                    return UNKNOWN
            found.append(None if given is None else given.value)
        return found

    def _resolved(self, expr: cst.BaseExpression, scope, depth: int):
        """The value of a loader setting: a constant, an argparse default (also through a
        namespace parameter) or a config class's, what every call of the function gives the parameter it is
        (passed or its default), or, for a number of worker processes made from the core
        count (`int(os.cpu_count() / 2)`), that code; else UNKNOWN."""
        value = self.ctx.value(expr, scope)
        option = _options_entry(self.ctx, expr, scope) if value is UNKNOWN and type(expr) is cst.Subscript else None
        if option is not None:  # `config['num_workers']`, `config = vars(parse_args())`
            return UNKNOWN if depth > 3 else self._resolved(option, scope, depth + 1)
        if value is UNKNOWN:
            value = self._namespace_setting(expr, scope, depth)
        if value is UNKNOWN:
            value = self._project_argparse(expr, scope)
        if value is UNKNOWN:
            value = instance_default(self.ctx, expr, scope)
        if value is UNKNOWN:
            value = self._yacs_default(expr)
        if value is UNKNOWN and from_afar(self.ctx, expr, scope):
            value = project_option_default(cast(str, self.ctx.path), cast(cst.Attribute, expr).attr.value)
        if value is not UNKNOWN or depth > 3:
            return value
        if type(expr) is cst.Call and call_name(expr) == "int" and len(expr.args) == 1 and type(expr.func) is cst.Name:
            inner = self._resolved(expr.args[0].value, scope, depth + 1)
            if type(inner) in (int, float):
                return int(inner)  # `int(args.workers)`, `int(num_workers / 2)`
        if type(expr) is cst.BinaryOperation and type(expr.operator) in _ARITHMETIC:  # `num_workers / 2`
            left, right = (self._resolved(side, scope, depth + 1) for side in (expr.left, expr.right))
            if type(left) in (int, float) and type(right) in (int, float) and not (
                    right == 0 and type(expr.operator) in (cst.Divide, cst.FloorDivide)):
                return _ARITHMETIC[type(expr.operator)](left, right)
        if type(expr) is cst.Call and call_name(expr) in ("min", "max") and type(expr.func) is cst.Name and expr.args:
            return self._bounded(expr, scope, depth)  # `min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])`
        if type(expr) is cst.IfExp:  # `2 if os.cpu_count() <= 4 else 4`: known when both agree
            windows = _on_windows(expr.test)
            if windows is not None:  # `0 if sys.platform.startswith("win") else 4`: what Linux and macOS run
                return self._resolved(expr.orelse if windows else expr.body, scope, depth + 1)
            taken = self._compared(expr.test, scope, depth)
            if taken is not None:  # `batch_size if batch_size > 1 else 0` with `batch_size = 16`
                return self._resolved(expr.body if taken else expr.orelse, scope, depth + 1)
            branches = [self._resolved(branch, scope, depth + 1) if not _scaled_when_set(branch, expr.test) else f"`{code(branch)}`"
                        for branch in (expr.body, expr.orelse)]
            if all(type(b) is int and b > 0 or type(b) is str and b.startswith("`") for b in branches):  # (code: a positive count)
                return branches[0] if branches[0] == branches[1] else f"`{code(expr)}`"
            return branches[0] if branches[0] == branches[1] else UNKNOWN
        found = self._assigned_once(expr, scope)
        if found is not None:
            assigned, where = found
            return self._resolved(assigned, where, depth + 1)
        if type(expr) is cst.Name and scope.node is not None and scope.assignments.get(expr.value) == [None]:
            given = self._parameter_values(scope, expr.value)
            values = {repr(v): v for v in (self._resolved(e, s, depth + 1) for e, s in given or ())}
            if len(values) > 1 and all(type(v) is int and v > 0 or type(v) is str and v.startswith("`") for v in values.values()):
                return f"`{code(expr)}`"  # (a positive count whatever the caller: 8 here, `os.cpu_count()` there)
            return next(iter(values.values())) if len(values) == 1 else UNKNOWN
        defaults = self.ctx.option_defaults(expr, scope)
        if defaults is not None and len(defaults) == 1 and _per_core(self.ctx.qualname, defaults[0]):
            return f"`{code(defaults[0])}`"  # `--workers` defaulting to `mp.cpu_count() - 1`
        if type(expr) is cst.Call and not expr.args and _returns_per_core(self.ctx, expr, scope):
            return f"`{code(expr)}`"  # (`get_num_workers()` returning `os.cpu_count()`, 0 only on Windows)
        return f"`{code(expr)}`" if _per_core(self.ctx.qualname, expr) else UNKNOWN

    def _bounded(self, call: cst.Call, scope, depth: int):
        """`min(...)`/`max(...)` of settings (also of one list or tuple): their value when all
        are known numbers, the code when each is a positive count or one made from the core count
        (a number of workers above zero), else UNKNOWN."""
        args = [arg.value for arg in call.args]
        if len(args) == 1 and type(args[0]) in (cst.List, cst.Tuple):
            args = [element.value for element in cast(cst.List, args[0]).elements]
        values = [self._resolved(arg, scope, depth + 1) for arg in args]
        if values and all(type(v) in (int, float) for v in values):
            return (min if call_name(call) == "min" else max)(values)
        if values and all(type(v) is int and v > 0 or type(v) is str and v.startswith("`") for v in values):
            return f"`{code(call)}`"
        return UNKNOWN

    def _compared(self, test: cst.BaseExpression, scope, depth: int) -> bool | None:
        """The outcome of a test comparing a setting with a number (`batch_size > 1`), None when
        either side is not a known number."""
        if type(test) is not cst.Comparison or len(test.comparisons) != 1:
            return None
        compare = _COMPARE.get(type(test.comparisons[0].operator))
        left, right = (self._resolved(side, scope, depth + 1) for side in (test.left, test.comparisons[0].comparator))
        if compare is None or type(left) not in (int, float) or type(right) not in (int, float):
            return None
        return compare(left, right)

    def _assigned_once(self, expr: cst.BaseExpression, scope):
        """The one value a name or attribute (`self.workers`) is assigned, and its scope: one step
        of `ctx.origin`, which stops short of a value that ends in a parameter."""
        if type(expr) is cst.Name and expr.value not in self.ctx.imports:
            owner = scope.owner_of(expr.value)
            one = self.ctx.one_value(owner.assignments[expr.value], owner) if owner is not None else None
            return None if one is None else (one, owner)
        key = dotted(expr) if type(expr) is cst.Attribute else None
        assigned = self.ctx.attributes.get(key, []) if key is not None else []
        return assigned[0] if len(assigned) == 1 and assigned[0][0] is not None else None

    def _parameter_values(self, scope, param: str, called: bool = False) -> list | None:
        """What each call of the function (a class's, for `__init__`) gives its parameter
        `param`: (the argument passed or the default, its scope); None when a call may pass
        it through a `*`/`**` of unknown content, or nothing in the source calls it (but for a
        function returning loaders that other modules call and use: its default, unless
        `called`)."""
        function = scope.node
        if param not in scope.params or any((dotted(d.decorator.func if type(d.decorator) is cst.Call else d.decorator) or "").rpartition(
                ".")[2] == "configurable" for d in function.decorators):
            return None  # (detectron2's `@configurable`: a call given a config takes its arguments from `from_config`)
        cls = self.ctx.class_of.get(id(function))
        init = function.name.value == "__init__" and cls is not None
        callee = cls.name.value if init and cls is not None else function.name.value
        default = next((p.default for p in _all_params(function.params) if p.name.value == param), None)
        index = scope.params.index(param)
        found = []
        for call_site in self.ctx.calls.get(callee, []):
            call = call_site.node
            method = init or (type(call.func) is cst.Attribute and scope.params[:1] in (["self"], ["cls"]))
            passed = self.ctx.call_argument(call, index - method, param, call_site.scope)
            if passed is UNKNOWN or (passed is None and default is None):
                return None
            found.append(passed if passed is not None else (default, scope.parent))
        if not found:  # called from other modules only: what they give it (`Cifar10DataModule(num_workers=4)`)
            found = self._importer_arguments(callee, init, index - init, param, default)
        if not found and not called and default is not None and any(
                self.returned_to(site) for site in self.loaders.values() if site.scope.node is function):
            return [(default, scope.parent)]  # a factory of loaders only other modules call: its default
        return found or None

    def _importer_arguments(self, name: str, init: bool, index: int, param: str, default) -> list:
        """What the calls of the function (the class, for `__init__`) `name` of this module in
        the modules of the project that import it give its parameter `param`
        (at `index` among the positional ones): constants, or the default where a call gives
        none; [] when one gives something else, or none calls it."""
        found = []
        for namespace, _, node in self._importer_calls(name, init):
            given = next((k.value for k in node.keywords if k.arg == param), None)
            if given is None and index < len(node.args) and not any(type(a) is ast.Starred for a in node.args[:index + 1]):
                given = node.args[index]
            if given is None and (default is None or any(k.arg is None for k in node.keywords)):
                return []
            if given is not None and type(given) is not ast.Constant:
                option = project_option_default(namespace.path, given.attr) if type(given) is ast.Attribute and type(
                    given.value) is ast.Name else UNKNOWN  # (`args.workers` of a namespace a function parses: timm's `_parse_args()`)
                given = _parsed_default(namespace, given) or (ast.Constant(option) if option is not UNKNOWN else None)
                if given is None:
                    return []
            found.append((default, self.ctx.module_scope) if given is None else
                         (cst.parse_expression(repr(given.value)), self.ctx.module_scope))
        return found

    def _importer_calls(self, name: str, init: bool = False):
        """(namespace, owner, call) for each call, in the modules of the project importing this
        one, of its function (its class, with `init`) `name`; `owner` is the module, function or
        class whose own statements hold the call."""
        path = self.ctx.path
        if not path or path.startswith("<"):
            return
        importers = self.ctx.shared.get(importing)
        if importers is None:
            importers = self.ctx.shared[importing] = importing(path)
        for namespace in importers:
            owners = [namespace.tree, *(n for n in ast.walk(namespace.tree) if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            for owner in owners:
                for node in body_nodes(owner, lambdas=True):
                    called = ast_dotted(node.func) if type(node) is ast.Call else None
                    if called is None or called.rpartition(".")[2] != name:
                        continue
                    target = namespace.klass(called) if init else namespace.function(called)
                    if target is not None and os.path.abspath(target[2].path) == os.path.abspath(path):
                        yield namespace, owner, node

    def _project_argparse(self, expr: cst.BaseExpression, scope):
        """`args.workers` where `args = parser.parse_args()` and `parser` is made by a function
        of the project (`parser = get_argument_parser()` from `utils`, then perhaps given to a
        library that adds its own arguments), or where a function of the project parses and
        returns `args` (`opt = parse_opts()`): that function's default."""
        if type(expr) is not cst.Attribute or type(expr.value) not in (cst.Name, cst.Call):
            return UNKNOWN
        parsed = self.ctx.origin(expr.value, scope) if type(expr.value) is cst.Name else (expr.value, scope)
        if parsed is None or type(parsed[0]) is not cst.Call:
            return UNKNOWN
        if call_name(parsed[0]) not in ("parse_args", "parse_known_args") or type(parsed[0].func) is cst.Name:  # `opt = parse_opts()` of the project
            found = call_target(self.ctx, parsed[0].func, parsed[1]) if maybe_project_call(self.ctx, parsed[0].func) else None
            return _agreed(parsed_defaults(found).get(expr.attr.value, []))
        func = parsed[0].func
        if type(func) is cst.Attribute and type(func.value) is cst.Call and maybe_project_call(self.ctx, func.value.func):
            # (`options.Options().init(argparse.ArgumentParser()).parse_args()`: the method adds the options)
            return _agreed(argparse_defaults(call_target(self.ctx, func.value.func, parsed[1])).get(expr.attr.value, []))
        if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
            return UNKNOWN
        parser = func.value.value  # (`parser = deepspeed.add_config_arguments(parser)` extends the same one)
        if parser in self.ctx.imports and self.ctx.assigned(parser, parsed[1]) is None:
            found = self._namespace().value(parser)  # `from opts import parser`: the parser opts.py builds at its top level
            namespace = found[1] if found is not None else None
            defaults = argparse_defaults(namespace.tree).get(expr.attr.value, []) if isinstance(namespace, FileNamespace) else []
            return defaults[0] if len(defaults) == 1 and defaults[0] is not None else UNKNOWN
        made = [v for v in self.ctx.assigned(parser, parsed[1]) or [None]
                if not (type(v) is cst.Call and any(type(a.value) is cst.Name and a.value.value == parser for a in v.args))]
        if len(made) != 1 or type(made[0]) is not cst.Call or type(made[0].func) is not cst.Name:
            return UNKNOWN
        return _agreed(argparse_defaults(self._namespace().function(made[0].func.value)).get(expr.attr.value, []))

    def _yacs_default(self, expr: cst.BaseExpression):
        """`config.DATA.NUM_WORKERS` (or `config.train.dataloader.num_workers`): the default a
        yacs config of the project sets (`_C.DATA.NUM_WORKERS = 8`), which a YAML file may
        change like a command line an argparse default; else what the project's YAML files set
        it to (`data:` `num_workers: 32`; `cfg.num_workers`, `cfg:` `num_workers: 8`), when all
        agree (or all are positive counts); so for string keys of a dict the program loads, two at
        least (`cfg["training"]["n_workers"]`, pytorch-semseg's `training:` `n_workers: 16`)."""
        indexed = _string_keys(expr)
        parts = indexed if len(indexed) > 2 else (dotted(expr) or "").split(".")
        keys: list[str] = []
        while len(indexed) <= 2 and len(parts) > 1 and parts[-1].isupper():
            keys.insert(0, parts.pop())
        if len(indexed) > 2:
            keys = parts[1:]
        if not keys and len(parts) > 2 and parts[0] != "self":  # (`config.train.dataloader.num_workers`: hysts')
            keys = parts[1:]
        elif not keys and len(parts) == 2 and parts[0] != "self":  # (`cfg.num_workers` of a YAML file's `cfg:`
            keys = parts  # section: MONAI's surgtoolloc; the name itself must be the section's key)
        path = self.ctx.path
        if not keys or len(keys) < 2 and parts[0] == "self" or not path or path.startswith("<"):
            return UNKNOWN  # (one key: `config.WORKERS`, HRNet's `_C.WORKERS = 4`)
        found = config_default(path, keys) if keys is not parts else None
        if found is not None:
            return found
        written = yaml_setting(path, keys)
        numbers = {int(value) for value in written if value.isdigit()}
        if not written or len(numbers) < len(set(written)):
            return UNKNOWN  # (none, or one that is no count: `${oc.env:WORKERS}`)
        return numbers.pop() if len(numbers) == 1 else f"`{code(expr)}`" if min(numbers) > 0 else UNKNOWN

    def _namespace_setting(self, expr: cst.BaseExpression, scope, depth: int = 0):
        """`args.workers` where `args` is a parameter of the function (`def main(args)`):
        the value when every call of the function passes a namespace whose attribute
        perf-lint knows, the same (`args = parser.parse_args()` ... `main(args)`)."""
        if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name or depth > 8:
            return UNKNOWN  # (nor deeper: `initialize(self, opt)` handing `opt` round a circle)
        param = expr.value.value
        if scope.node is None or param not in scope.params or len(scope.assignments.get(param, ())) != 1:
            return UNKNOWN
        callers = self._caller_arguments(scope, param)
        if not callers:
            return importer_namespace_default(self.ctx, scope, param, expr.attr.value)
        values = {repr(v): v for v in (self._resolved(expr.with_changes(value=arg), where, depth + 1) for arg, where in callers)}
        if len(values) != 1:
            return UNKNOWN
        return next(iter(values.values()))

    def cuda_moves(self) -> dict[int, list[_Move]]:
        """Loader (by id of its call) -> moves of its batches to CUDA."""
        if "cuda_moves" not in self.known:
            self.known["cuda_moves"] = self._by_loader()
        return self.known["cuda_moves"]

    def _by_loader(self) -> dict[int, list[_Move]]:
        result: dict[int, list[_Move]] = {}
        for move in self.moves:
            for loader in self.moved_from(move):
                result.setdefault(id(loader.node), []).append(move)
        return result

    def moved_from(self, move: _Move) -> list[Site]:
        """The loaders whose batch a move moves: those of its loop, or of the iterator the
        batch was taken from by `next()`."""
        return self._resolve_loader(move.source[0], move.source[1], 0) if move.source else self.loaders_of(move.loop)

    # -- batches moved elsewhere: by a function of the project, by a framework --------------
    def transfers(self) -> dict[int, _Transfer]:
        """Loader (by id of its call) -> how its batches reach the GPU, for loaders whose
        batches no loop of the source moves itself."""
        if "transfers" not in self.known:
            found: dict[int, _Transfer] = {}
            if self.ctx.assume_device != "cpu":
                self._called_moves(found)
                self._framework_moves(found)
                self._returned_moves(found)
            self.known["transfers"] = found
        return self.known["transfers"]

    def _called_moves(self, found: dict) -> None:
        """`train_step(model, batch)` in a loop over a loader, or `train(model, loader)`, where
        `train_step` (`train`: through the loop over the loader it is given) of this file or
        another of the project moves the batch to the GPU."""
        for sites in list(self.ctx.calls.values()):
            for site in sites:
                call = site.node
                if not call.args:
                    continue
                given = self._batches_given(site) or self._loaders_given(site)
                if not given:
                    continue
                callee, used = used_arguments(self.ctx, call, site.scope, device_moves)
                if callee is None:  # `model.set_input(data)`, `model = create_model(opt)`: every project method `set_input` moves it
                    used = [(value, uses[0]) for value, uses in used_by_all_fitting(self.ctx, call, site.scope, device_moves, made=True)]
                for value, use in used:
                    loaders = given.get(id(value))
                    if not loaders:
                        continue
                    if "cuda" not in use.code and (self.ctx.cuda_evidence is None and not (use.path and uses_gpu(use.path))
                                                   or self.ctx.uses_rpc()):
                        continue  # a device variable in code that never says CUDA, here or where it moves the batch
                        # (bat67's `train` in utils.py: `device = torch.device('cuda' if ...)`), or sends CPU tensors over RPC
                    if _cast_first(use.code):
                        continue  # (Informer's `batch_x.float().to(self.device)`: the copy moved is a new pageable tensor)
                    where = f", {use.where}" if use.where else ""
                    said = f"`{short_code(call)}` moves its batches to the GPU (`{use.code}` in `{use.via.split(' -> ')[-1]}`{where})"
                    related = (Related(use.path, use.line - 1, f"`{use.code}` moves the batch to the GPU"),) if use.path else ()
                    for loader in loaders:
                        found.setdefault(id(loader.node), _Transfer(said, related, framework=False))

    def _returned_moves(self, found: dict) -> None:
        """`return train_loader, test_loader` in a function of the source, whose batches a module
        of the project that calls it moves to the GPU (`train.py`: `X.to(device)`)."""
        for call, site in self.loaders.items():
            for moved in (uses.moved for uses in self.returned_to(site)) if id(call) not in found else ():
                if moved is not None and not moved.recast:  # (the host's cast of the batch: pinning would not reach it)
                    said = f"`{moved.code}`, {moved.where}"
                    related = (Related(moved.path, moved.line - 1, f"`{moved.code}` moves the batch to the GPU"),) \
                        if not moved.path.endswith(".ipynb") else ()
                    found[id(call)] = _Transfer(said, related, framework=False)
                    break

    def returned_to(self, site: Site) -> list[LoaderUses]:
        """For a loader a function of the source returns (`return train_loader, test_loader`),
        what each module of the project that calls it and uses a GPU does with it, when it
        moves its batches to a device or iterates it again and again."""
        key = ("returned", id(site.node))
        if key not in self.known:
            self.known[key] = self._returned_to(site)
        return self.known[key]

    def _returned_to(self, site: Site) -> list[LoaderUses]:
        function, path = site.scope.node, self.ctx.path
        if function is None or not path or path.startswith("<"):
            return []
        cls = self.ctx.class_of.get(id(function))
        if cls is not None:  # (kept by the instances a class's `__init__` makes: `self.train = DataLoader(...)`)
            kept = [key for key, values in self.ctx.attributes.items() if key.startswith("self.") and key.count(".") == 1
                    and any(value is site.node and scope is site.scope for value, scope in values)]
            if function.name.value != "__init__" or len(kept) != 1 or self.ctx.class_of.get(id(cls)) is not None:
                return []
            return self._used_by_importers(path, cls.name.value, None, kept[0][len("self."):])
        if not any(d is function for d, _ in self.ctx.functions.get(function.name.value, ())):
            return []
        names = {n for n, values in site.scope.assignments.items() if any(v is site.node for v in values)}
        index: int | None | bool = False  # (False: not returned)
        for value in self.ctx.returns.get(id(function), ()):
            elements = [e.value for e in value.elements] if type(value) is cst.Tuple else None
            for position, element in enumerate(elements if elements is not None else [value]):
                if element is site.node or type(element) is cst.Name and element.value in names:
                    index = position if elements is not None else None
            if type(value) is cst.Name and index is False:  # `ds.append(train_loader)` ... `return ds`: by the order of the appends
                appended = [call.node.args[0].value for call in self.ctx.calls.get("append", ()) if call.scope is site.scope
                            and len(call.node.args) == 1 and dotted(cast(cst.Attribute, call.node.func).value) == value.value]
                index = next((position for position, element in enumerate(appended) if element is site.node
                              or type(element) is cst.Name and element.value in names), False)
        if index is False:
            return []
        return self._used_by_importers(path, function.name.value, index, None)

    def _used_by_importers(self, path: str, name: str, index: int | None, attribute: str | None) -> list[LoaderUses]:
        """What each module of the project that uses a GPU and calls `name` of this source does
        with the loader it gets (see `caller_uses`), when it moves its batches to a device or
        iterates it again and again."""
        importers = self.ctx.shared.get("importers, on a GPU")
        if importers is None:  # (every importer, and whether it uses a GPU itself)
            on_gpu = {namespace.path for namespace in gpu_importers(path)}
            importers = self.ctx.shared["importers, on a GPU"] = [
                (namespace, namespace.path in on_gpu) for namespace in importing(path, any_text=True)]
        found = []
        for namespace, on_gpu in sorted(importers, key=lambda pair: pair[0].path.endswith(".ipynb")):  # (a script's lines can be named)
            uses = caller_uses(namespace, os.path.abspath(path), name, index, attribute)
            if not on_gpu and (uses.moved is None or not uses_gpu(uses.moved.path)):
                continue  # (moved, where a module of the project that uses a GPU moves it: a Trainer's `self.device`)
            if uses.moved is not None or uses.again is not None:
                found.append(uses)
        return found

    def _batches_given(self, site: Site) -> dict[int, list[Site]]:
        """Argument (by id) -> the loaders it is a batch of, for a call in a loop over loaders, or
        of a batch taken with `next()` in a loop around it (`batch = next(dataloader_iter)`)."""
        args = [arg.value for arg in cast(cst.Call, site.node).args]  # a call
        loop = next((loop for loop in reversed(site.loops) if loop in self.loops), None)
        batches = [value for value in args if root_name(value) in self.loops[loop][1]] if loop is not None else []
        loaders = self.loaders_of(loop) if loop is not None and batches else []
        given = {id(value): loaders for value in batches} if loaders else {}
        for around in reversed(site.loops):
            taken = self.nexts.get(id(around), {})
            for value in args if taken else ():
                source = taken.get(root_name(value) or "")
                if source is not None and id(value) not in given and (found := self._resolve_loader(source[0], source[1], 0)):
                    given[id(value)] = found
        return given

    def _loaders_given(self, site: Site) -> dict[int, list[Site]]:
        """Argument (by id) -> the loaders it is, for the arguments of a call that are loaders
        (of a call that may reach a function of the project)."""
        call = cast(cst.Call, site.node)  # a call site (_called_moves)
        if not self.loaders or not maybe_project_call(self.ctx, call.func):
            return {}
        given = {}
        for arg in call.args:
            if type(arg.value) in (cst.Name, cst.Attribute):
                loaders = self.live_loaders(arg.value, site.scope, site.unit)
                if loaders:
                    given[id(arg.value)] = loaders
        return given

    def _framework_moves(self, found: dict) -> None:
        """Lightning's Trainer (loaders of a LightningModule or DataModule, or given to `fit`),
        composer's Trainer (see `composer_runs`), Accelerate (`accelerator.prepare(loader)`) and ignite (`create_supervised_trainer(...,
        device=...)`, an Engine whose process function moves the batch) copy batches to the GPU."""
        ctx = self.ctx
        trainers = ctx.calls.get("Trainer", ())
        on_cpu = bool(trainers) and all(self._cpu_trainer(site) for site in trainers)  # (`gpus=1` if CUDA is there, else none)
        run = {name for name in _RUN_METHODS if any(self._lightning(site) for site in ctx.calls.get(name, ()))}
        hooks = self.epoch_hooks() | {f"{name}_dataloader" for name in run & {"test", "predict"}}  # (used when run)
        for call, site in self.loaders.items():
            if not on_cpu and self._lightning_hook(site) in hooks:
                found.setdefault(id(call), _Transfer("Lightning's Trainer copies its batches to the GPU when it trains on one"))
            elif self._coqui_hook(site):
                found.setdefault(id(call), _Transfer("coqui's Trainer copies its batches to the GPU when it trains on one"))
            elif self._hf_hook(site) in self.hf_passes():
                found.setdefault(id(call), _Transfer("Hugging Face's Trainer copies its batches to the GPU when it trains on one"))
        for name in run if not on_cpu else ():
            for site in ctx.calls.get(name, ()):
                if self._lightning(site):
                    self._passed(site, self.trainer_arguments(site), found,
                                 "Lightning's Trainer copies its batches to the GPU when it trains on one")
        for site, loaders, _, _ in self.composer_runs():
            self._passed(site, [cst.Arg(loader) for loader in loaders], found,
                         "composer's Trainer copies its batches to the GPU when there is one")
        for site in ctx.calls.get("prepare", ()):
            made = self._made_by(site)
            if made.startswith("accelerate.") and made.endswith("Accelerator"):
                self._passed(site, site.node.args, found, "`accelerator.prepare` makes it copy its batches to the accelerator's device")
        for site, engine in self.monai_engines():  # (`prepare_batch` copies each batch to `device`)
            device = argument(site.node, 0, "device")
            loader = self.monai_loader(site, engine)
            if device is not None and loader is not None and self._cuda_device(device, site.scope):
                self._passed(site, [cst.Arg(loader)], found, f"MONAI's `{engine}(device=...)` copies its batches to the GPU")
        engines = TrainingSteps.of(ctx).engines
        namespace = SourceNamespace.of(ctx)
        for site in ctx.calls.get("run", ()):
            func = site.node.func
            receiver = func.value if type(func) is cst.Attribute else None
            origin = ctx.origin(receiver, site.scope) if receiver is not None else None
            if origin is None or type(origin[0]) is not cst.Call:
                continue
            maker = origin[0]
            qualified = ctx.qualname(maker.func) or ""
            if not qualified.startswith("ignite."):
                continue
            if qualified.rpartition(".")[2] in _SUPERVISED:
                device = argument(maker, 3, "device")
                if device is not None and self._cuda_device(device, origin[1]):
                    said = f"ignite's `{qualified.rpartition('.')[2]}(..., device=...)` copies its batches to the GPU"
                    self._passed(site, site.node.args[:1], found, said)
            elif qualified.endswith(".Engine") and maker.args and type(maker.args[0].value) is cst.Name:
                process = maker.args[0].value.value
                definition = namespace.visible_function(process, origin[1]) if process in engines else None
                moved = device_moves((*definition, None)) if definition is not None else {}
                params = parameters(definition[0]).names if definition is not None else ()
                if len(params) >= 2 and params[1] in moved and ("cuda" in moved[params[1]].code or ctx.cuda_evidence):
                    said = f"the Engine's `{process}` moves its batches to the GPU (`{moved[params[1]].code}`)"
                    self._passed(site, site.node.args[:1], found, said)

    def composer_runs(self) -> list[tuple[CallSite, list[cst.BaseExpression], list[cst.BaseExpression], list[cst.BaseExpression]]]:
        """(call, the loaders whose batches it moves, those it iterates again and again, those it reads
        a few batches of) for each composer Trainer the source makes for the GPU (see `trainer_gpu`)
        and each `fit` call on one: its `train_dataloader` and `eval_dataloader` (a list of them, an
        `Evaluator` or `DataSpec` holding one), iterated every epoch. A few: the evaluation loaders
        when `eval_interval=0` or the run is one epoch (`max_duration="1ep"`: one pass after
        training), a loader the call limits to a few batches a pass (`eval_subset_num_batches=5`),
        and all of a demo's (`train_subset_num_batches=5`)."""
        key = ("composer runs",)
        if key not in self.known:
            found = []
            composer = [site for site in self.ctx.calls.get("Trainer", ()) if (self.ctx.qualname(site.node.func) or "").startswith(
                "composer.")]
            made = [site for site in composer if trainer_gpu(self.ctx.qualname(site.node.func) or "", site.node,
                                                             lambda expr, site=site: self.ctx.value(expr, site.scope))]
            fits = [site for site in self.ctx.calls.get("fit", ()) if self._made_by(site).startswith("composer.")] if len(
                made) == len(composer) else []  # (`fit` of a Trainer made for the CPU: nothing moved to a GPU)
            for site in [*made, *fits]:
                def setting(name: str, site: CallSite = site):
                    given = keyword(site.node, name)
                    return None if given is None else self.ctx.value(given.value, site.scope)
                once = setting("max_duration") in ("1ep", 1)
                moved: list[cst.BaseExpression] = []
                few: list[cst.BaseExpression] = []
                demo = False
                for kind in ("train", "eval"):
                    given = keyword(site.node, f"{kind}_dataloader")
                    subset = setting(f"{kind}_subset_num_batches")
                    limited = type(subset) is int and 0 < subset <= _FEW_BATCHES
                    demo = demo or limited and kind == "train"
                    if given is not None:
                        passes = few if demo or limited or kind == "eval" and (once or setting("eval_interval") == 0) else moved
                        passes += _composer_loaders(given.value, self.ctx)
                found.append((site, moved, [] if once else moved, few))
            self.known[key] = found
        return self.known[key]

    def monai_engines(self) -> list[tuple[CallSite, str]]:
        """(call, the engine it derives from) for each MONAI engine the source makes
        (`monai.engines.SupervisedTrainer(...)`, or a subclass of the project's: `DynUNetTrainer`)."""
        key = ("monai engines",)
        if key not in self.known:
            found = []
            bases = {f"monai.engines.{engine}": engine for engine in MONAI_ENGINES}
            for name, sites in self.ctx.calls.items():
                for site in sites if name[:1].isupper() else ():
                    qualified = self.ctx.qualname(site.node.func) or ""
                    engine = qualified.rpartition(".")[2] if qualified.startswith("monai.engines.") else None
                    if engine is None and type(site.node.func) is cst.Name and derives_from(self.ctx, name, bases):
                        engine = next(e for base, e in bases.items() if derives_from(self.ctx, name, {base}))
                    if engine in MONAI_ENGINES:
                        found.append((site, engine))
            self.known[key] = found
        return self.known[key]

    def monai_loader(self, site: CallSite, engine: str) -> cst.BaseExpression | None:
        """The loader a MONAI engine's call gives it."""
        index, name = MONAI_ENGINES[engine][0]
        return argument(site.node, index, name)

    def epoch_hooks(self) -> set[str]:
        """The hooks whose loaders Lightning's Trainer iterates every epoch: `train_dataloader`, and
        `val_dataloader` unless the LightningModules of the source define no `validation_step`
        (then the Trainer skips validation)."""
        return set(EVERY_EPOCH_HOOKS) if self._validates() else EVERY_EPOCH_HOOKS - {"val_dataloader"}

    def trainer_arguments(self, site: CallSite) -> list[cst.Arg]:
        """The arguments of a Lightning Trainer's `fit`/`validate`/`test`/`predict` call whose loaders
        it iterates: not `fit`'s validation loaders when the source's LightningModules define no
        `validation_step`."""
        call = site.node
        if call_name(call) != "fit" or self._validates():
            return list(call.args)
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        return [arg for arg in call.args if not (
            arg.keyword is not None and arg.keyword.value == "val_dataloaders" or len(positional) > 2 and arg is positional[2])]

    def _validates(self) -> bool:
        """False when the source defines LightningModules and none of them a `validation_step`."""
        key = "validates"
        if key not in self.known:
            modules = [cls for cls in self.ctx.classes.values()
                       if any((dotted(base.value) or "").endswith("LightningModule") for base in cls.bases)]
            self.known[key] = not modules or any(
                type(statement) is cst.FunctionDef and statement.name.value == "validation_step"
                for cls in self.ctx.classes.values() for statement in cls.body.body)
        return self.known[key]

    def _lightning_hook(self, loader: Site) -> str | None:
        """The Lightning hook (`train_dataloader`, ...: a method of a Lightning module or
        DataModule, or the method the class binds to one) a loader is made in, or that returns
        the loader made at the top of the module (a notebook's `train_dataloader = DataLoader(...)`,
        then `def train_dataloader(self): return train_dataloader`), or None."""
        function = loader.scope.node
        if function is None:
            return next((name for name, defs in self.ctx.functions.items() if name.endswith("_dataloader")
                         for hook, scope in defs if self._lightning_hook_returns(hook, scope, loader)), None)
        cls = self.ctx.class_of.get(id(function))
        if cls is None or not _lightning_class(cls):
            return None
        name = function.name.value
        for node in walk(cls):  # (a hook bound to a method in `__init__`: latent-diffusion's `self.train_dataloader =
            # self._train_dataloader`, `self.val_dataloader = partial(self._val_dataloader, shuffle=False)`)
            if type(node) is cst.Assign and len(node.targets) == 1 and type(target := node.targets[0].target) is cst.Attribute \
                    and dotted(target.value) == "self" and target.attr.value.endswith("_dataloader"):
                bound = node.value.args[0].value if type(node.value) is cst.Call and node.value.args and call_name(
                    node.value) == "partial" else node.value
                if dotted(bound) == f"self.{name}":
                    return target.attr.value
        return name

    def _lightning_hook_returns(self, hook: cst.FunctionDef, scope, loader: Site) -> bool:
        """Whether `hook`, a method of a Lightning class, returns the loader made at `loader`."""
        return _lightning_class(self.ctx.class_of.get(id(hook))) and self._returns(hook, scope, loader)

    def _returns(self, function: cst.FunctionDef, scope, loader: Site) -> bool:
        """Whether `function` returns, by name, the loader made at `loader`."""
        return any(type(value) is cst.Name and (found := self.ctx.origin(value, scope)) is not None and found[0] is loader.node
                   for value in self.ctx.returns.get(id(function), ()))

    def _coqui_hook(self, loader: Site) -> bool:
        """Whether a loader is made in the hook of a model of coqui's Trainer (`get_data_loader` of a
        class deriving from `trainer.TrainerModel`: coqui TTS's `BaseTTS`, through the project)."""
        function = loader.scope.node
        cls = self.ctx.class_of.get(id(function)) if function is not None else None
        return cls is not None and function is not None and function.name.value in COQUI_LOADER_HOOKS and coqui_model(self.ctx, cls)

    def _hf_hook(self, loader: Site) -> str | None:
        """The hook of a Hugging Face Trainer subclass (`get_train_dataloader`, `get_eval_dataloader`)
        a loader is made in, or that returns the loader made at the top of the module (a notebook's
        `train_dataloader = DataLoader(...)`, then `def get_train_dataloader(self): return
        train_dataloader`), or None."""
        function = loader.scope.node
        if function is not None:
            name = function.name.value
            return name if name in HF_LOADER_HOOKS and self._hf_trainer(self.ctx.class_of.get(id(function))) else None
        return next((name for name in HF_LOADER_HOOKS for hook, scope in self.ctx.functions.get(name, ())
                     if self._hf_trainer(self.ctx.class_of.get(id(hook))) and self._returns(hook, scope, loader)), None)

    def _hf_trainer(self, cls: cst.ClassDef | None) -> bool:
        """Whether a class of the source derives from Hugging Face's Trainer (through the project)."""
        return cls is not None and derives_from(self.ctx, cls.name.value, HF_TRAINERS)

    def hf_passes(self) -> set[str]:
        """The loader hooks of a Hugging Face Trainer subclass whose loaders the Trainer iterates
        again and again on the GPU: none when the source's `TrainingArguments` ask for the CPU
        (`use_cpu=True`, `no_cuda=True`); `get_train_dataloader`, and `get_eval_dataloader` when
        they evaluate during training (`eval_strategy="steps"` or `"epoch"`; "no" by default)."""
        key = "hf passes"
        if key not in self.known:
            made = [site for name, sites in self.ctx.calls.items() if name.endswith("TrainingArguments") for site in sites
                    if self.ctx.qualname(site.node.func) in HF_TRAINING_ARGUMENTS]

            def setting(site: CallSite, name: str):  # (`IntervalStrategy.STEPS`: "steps")
                given = keyword(site.node, name)
                value = self.ctx.value(given.value, site.scope) if given is not None else None
                return (dotted(given.value) or "").rpartition(".")[2].lower() if given is not None and value in (
                    None, UNKNOWN) else value

            passes = set()
            if not any(setting(site, flag) is True for site in made for flag in ("use_cpu", "no_cuda")):
                passes.add("get_train_dataloader")
                if any(str(setting(site, name)).lower() in ("steps", "epoch") for site in made
                       for name in ("eval_strategy", "evaluation_strategy")):
                    passes.add("get_eval_dataloader")
            self.known[key] = passes
        return self.known[key]

    def _lightning(self, site: Site) -> bool:
        """A method call on a Lightning Trainer."""
        return _lightning_trainer(self._made_by(site))

    def _made_by(self, site: Site) -> str:
        """The qualified name of what made the receiver of a method call (`trainer.fit`: `pl.Trainer`),
        also when the name is assigned again, each time by the same callable (a new Trainer a cell)."""
        func = cast(cst.Call, site.node).func  # a method call's site
        receiver = func.value if type(func) is cst.Attribute else None
        if type(receiver) is cst.Name and receiver.value not in self.ctx.imports:
            values = self.ctx.assigned(receiver.value, site.scope) or [None]
        else:
            origin = self.ctx.origin(receiver, site.scope) if receiver is not None else None
            values = [origin[0] if origin is not None else None]
        made = {self.ctx.qualname(v.func) or "" if type(v) is cst.Call else "" for v in values}
        return made.pop() if len(made) == 1 else ""

    def _passed(self, site: Site, args, found: dict, said: str) -> None:
        """Every loader given as one of `args` of the call at `site`."""
        for arg in args:
            for loader in self._resolve_loader(arg.value, site.scope, 0):
                found.setdefault(id(loader.node), _Transfer(said))

    def feeds_gpu(self, call: cst.Call) -> bool:
        """Whether the loader's batches may reach a GPU: the source names one (or a module
        importing it does), a framework moves them, or a Lightning Trainer picks the accelerator;
        in a source using `torch.distributed.rpc`, which sends CPU tensors, only a move to CUDA."""
        if self.ctx.uses_rpc():
            return id(call) in self.transfers() or any(m.to_cuda(self.ctx) for m in self.cuda_moves().get(id(call), ()))
        return self.ctx.cuda_evidence is not None or id(call) in self.transfers() or self._gpu_trainer()

    def _gpu_trainer(self) -> bool:
        """A Lightning or composer Trainer made for whatever accelerator is there (its keywords'
        values read in the call's scope)."""
        return any(trainer_gpu(self.ctx.qualname(site.node.func) or "", site.node, lambda expr, site=site: self.ctx.value(
            expr, site.scope)) for site in self.ctx.calls.get("Trainer", ()))

    def _cpu_trainer(self, site: Site) -> bool:
        """A Trainer made for the CPU (see `trainer_device`)."""
        return trainer_device(cast(cst.Call, site.node), lambda expr: self.ctx.value(expr, site.scope)) == "cpu"

    def _value_is(self, site: Site, name: str, value) -> bool:
        passed = keyword(cast(cst.Call, site.node), name)  # ctx.calls holds call sites
        return passed is not None and self.ctx.value(passed.value, site.scope) == value

    def _cuda_device(self, device: cst.BaseExpression, scope) -> bool:
        cuda = self.ctx.is_cuda_device(device, scope)
        if cuda is not UNKNOWN:
            return cuda is True
        return bool(DEVICE_LIKE.search(dotted(device) or "")) and self.ctx.cuda_evidence is not None

    def keyword_fix(self, site: Site, values: dict[str, str], title: str) -> FixPlan | None:
        """Add `values` as keywords to the loader call; None when a `**mapping` it is passed
        may hold one of them on some run (the call would then raise TypeError there)."""
        call = cast(cst.Call, site.node)  # a loader call
        for star in star_kwargs(call):
            mapping = self.ctx.kwargs(star.value, site.scope, certain=True)
            if mapping is UNKNOWN or not mapping[0].keys().isdisjoint(values):
                return None
        return FixPlan(title, (Replace(site, with_keywords(call, values)),))

    # -- what the loader loads --------------------------------------------------------------
    def dataset_cost(self, site: Site) -> Cost:
        """What an item of the loader's dataset costs to load (see perf_lint.analyzers.datasets),
        remembered for the analysis, by every loader rule."""
        key = ("cost", id(site.node))
        if key not in self.known:
            dataset = argument(cast(cst.Call, site.node), 0, "dataset")  # a loader call
            self.budget = _COST_BUDGET
            dataset = self._bound_before(dataset, site) if dataset is not None else None
            found = None if dataset is None else self._cost(dataset, site.scope, 0, frozenset())
            self.known[key] = found or UNKNOWN_DATASET
        return self.known[key]

    def _bound_before(self, dataset: cst.BaseExpression, site: Site) -> cst.BaseExpression:
        """For a name the module's own statements bind several times (outlier-exposure's
        `ood_data = ...` before each of its loaders), the value bound last before the loader's
        statement; else the name itself."""
        if type(dataset) is not cst.Name or site.scope is not self.ctx.module_scope:
            return dataset
        values = [v for v in self.ctx.module_scope.assignments.get(dataset.value, ()) if v is not None]
        if len(values) < 2 or len(values) != len(self.ctx.module_scope.assignments[dataset.value]):
            return dataset
        at = self._statement_at(site.node, site.unit)
        placed = [(self._placed(value), value) for value in values]
        before = [(where, value) for where, value in placed if where is not None and where < at]
        if not before or any(where is None for where, _ in placed):
            return dataset
        where, value = max(before, key=lambda pair: pair[0])
        statement = self.ctx.modules[where[0]].body[where[1]]
        return value if type(statement) is cst.SimpleStatementLine else dataset  # (not alternatives: `if ...: ds = A else: ds = B`)

    def _placed(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """(unit, index of the module statement holding `node`), or None."""
        for unit in range(len(self.ctx.modules)):
            where = self._statement_at(node, unit)
            if where[1] < len(self.ctx.modules[unit].body):
                return where
        return None

    def _namespace(self) -> SourceNamespace:
        return SourceNamespace.of(self.ctx)

    def _cost(self, expr: cst.BaseExpression, scope, depth: int, seen: frozenset) -> Cost | None:
        """The cost of the dataset `expr` evaluates to; None for a name met again while
        resolving it (`ds = ds.map(...)`: the other assignments decide)."""
        self.budget -= 1
        if depth > 8 or self.budget < 0:
            return UNKNOWN_DATASET
        if type(expr) in (cst.List, cst.Tuple, cst.ListComp):
            return Cost(CHEAP, "its items are a list held in memory")
        if type(expr) is cst.Subscript:  # a split of a DatasetDict, an element of a list of datasets
            return self._cost(expr.value, scope, depth + 1, seen)
        if type(expr) is cst.Call:
            return self._call_cost(expr, scope, depth, seen)
        if type(expr) is not cst.Name and type(expr) is not cst.Attribute:
            return UNKNOWN_DATASET
        if type(expr) is cst.Attribute and expr.attr.value == "values" and _table_column(expr.value):
            return Cost(CHEAP, "its items are rows of an array held in memory")  # `df.iloc[:n]["label"].values`
        if type(expr) is cst.Name and expr.value == "None":
            return None  # (`ds = None` then `ds = MyDataset(...)`: no data to load)
        key = (dotted(expr), id(scope))
        if key[0] is None:
            return UNKNOWN_DATASET
        if key in seen:
            return None
        seen = seen | {key}
        values = self._values(expr, scope)
        if values is None:
            if type(expr) is cst.Name and scope.node is not None and expr.value in scope.params:
                callers = self._caller_arguments(scope, expr.value)
                return combine(self._cost(v, s, depth + 1, seen) for v, s in callers) if callers else UNKNOWN_DATASET
            return UNKNOWN_DATASET
        cost = combine((self._cost(v, s, depth + 1, seen) if i is None else self._unpacked_cost(v, i, s, depth, seen)
                        for v, i, s in values), empty=None)  # None: all of them lead back here
        if cost is None:
            return None
        if cost.kind == ROWS:
            hf = self._transformed_on_access(key[0])
            if hf is not None:
                return hf
        return cost

    def _values(self, expr: cst.BaseExpression, scope):
        """Every value assigned to a name or attribute: (value, None, its scope), or (value,
        index, scope) for an element of a tuple unpacked from it (`a, b = split(ds)`); None if
        one is unknown (a parameter, a loop variable)."""
        if type(expr) is cst.Name:
            if expr.value in self.ctx.imports:
                return None
            owner = scope.owner_of(expr.value)
            values = [] if owner is None else [(v, owner) for v in owner.assignments[expr.value]]
            unpacked = [u for u in self.unpacked.get(expr.value, ()) if u[2] is owner]
        else:
            key = dotted(expr)
            if key is None:
                return None  # (nothing is assigned to it by name)
            values = self.ctx.attributes.get(key, [])
            unpacked = self.unpacked.get(key, [])
        if not values:
            return None
        found = [(v, None, s) for v, s in values if v is not None]
        if len(values) - len(found) != len(unpacked):
            return None
        return found + list(unpacked)

    def _unpacked_cost(self, value: cst.BaseExpression, index: int, scope, depth: int, seen: frozenset) -> Cost | None:
        """The cost of element `index` of the tuple `value` evaluates to."""
        if type(value) is cst.Tuple or type(value) is cst.List:
            elements = value.elements
            if index >= len(elements):
                return UNKNOWN_DATASET
            return self._cost(elements[index].value, scope, depth + 1, seen)
        if type(value) is not cst.Call:
            return UNKNOWN_DATASET
        qualified = self.ctx.qualname(value.func) or ""
        if qualified.rpartition(".")[2] == "random_split" and qualified.startswith("torch.utils.data"):
            inner = argument(value, 0, "dataset")
            return UNKNOWN_DATASET if inner is None else self._cost(inner, scope, depth + 1, seen)
        known = library_cost(qualified, False) if qualified else None
        if known is not None and known.kind == ROWS:
            return known  # load_dataset(..., split=["train", "test"])
        returned = self._returned(value.func, scope)
        tuples = [(item, where) for item, where in returned if type(item) in (cst.Tuple, cst.List)]
        if returned:  # (the returns that are tuples, when some are: `return dataset, window_counts` beside `return dataset`)
            return combine(self._unpacked_cost(item, index, where, depth + 1, seen) for item, where in tuples or returned)
        return self._imported_cost(value.func, index)

    def _caller_arguments(self, scope, param: str) -> list:
        """What the calls of a function pass as its parameter `param`: (expression, scope);
        empty when one of them does not pass it (a default, a **mapping: not known)."""
        found = [(value, where) for value, where, _ in self._passed_by_callers(scope, param)]
        return [] if any(value is None for value, _ in found) else found

    def _passed_by_callers(self, scope, param: str):
        """(what the call passes as `param` or None, the call's scope and unit) for each call of the
        function whose scope is `scope` (`self` left out of a method's positions), and for each
        ignite `engine.add_event_handler(event, function, *args)`, which calls it with
        `(engine, *args)`."""
        index = scope.params.index(param)
        name = scope.node.name.value
        namespace = self._namespace()
        method = id(scope.node) in self.ctx.class_of
        for call_site in self.ctx.calls.get(name, []):
            call = call_site.node
            if type(call.func) is cst.Name and namespace.redefined_run_by(call.func, call_site.unit) not in (None, scope.node):
                continue  # (a notebook's call of another definition of the function)
            if not method and type(call.func) is cst.Attribute:
                continue  # (`model.train()` is not a call of the module's function `train`)
            offset = 1 if type(call.func) is cst.Attribute and scope.params[:1] in (["self"], ["cls"]) else 0
            yield argument(call, index - offset, param), call_site.scope, call_site.unit
        for call_site in self.registrations(name):
            registration = call_site.node
            given = [arg.value for arg in registration.args[2:] if arg.keyword is None and arg.star == ""]
            yield (given[index - 1] if 0 < index <= len(given) else None), call_site.scope, call_site.unit
        for call_site, passed, first in self._started(name):
            elements = cast(cst.Tuple, passed).elements if type(passed) in (cst.Tuple, cst.List) else ()
            position = index - first
            yield (elements[position].value if 0 <= position < len(elements) else None), call_site.scope, call_site.unit

    def _started(self, name: str) -> list[tuple[CallSite, cst.BaseExpression | None, int]]:
        """The calls that start the function `name` in new processes, with the `args` they
        give it and the first parameter those fill: `torch.multiprocessing.spawn(name,
        args=(...))` passes the process index first; `multiprocessing.Process(target=name,
        args=(...))`."""
        found = []
        for site in self.ctx.calls.get("spawn", ()):
            if type(fn := argument(site.node, 0, "fn")) is cst.Name and fn.value == name:
                found.append((site, argument(site.node, 1, "args"), 1))
        for site in self.ctx.calls.get("Process", ()):
            if type(target := argument(site.node, 1, "target")) is cst.Name and target.value == name:
                found.append((site, argument(site.node, 3, "args"), 0))
        return found

    def registrations(self, name: str) -> list[CallSite]:
        """The ignite `engine.add_event_handler(event, name, ...)` calls that register the
        function `name` as an event handler."""
        return [
            site for site in self.ctx.calls.get("add_event_handler", ())
            if type(handler := argument(site.node, 1, "handler")) is cst.Name and handler.value == name
            and self._made_by(site).startswith("ignite.")
        ]

    def _transformed_on_access(self, name: str) -> Cost | None:
        """`ds.set_transform(fn)`: a Hugging Face dataset that runs `fn` on every row it reads."""
        for call_site in self.ctx.calls.get("set_transform", []):
            func = call_site.node.func
            if type(func) is cst.Attribute and dotted(func.value) == name:
                said = "`set_transform` runs a function on every item it reads"
                return Cost(EXPENSIVE, said, "", code(call_site.node))
        return None

    def _call_cost(self, call: cst.Call, scope, depth: int, seen: frozenset) -> Cost | None:
        func = call.func
        made = self.ctx.origin(func, scope) if type(func) is cst.Name and depth < 4 else None
        if made is not None and type(made[0]) is cst.Call and made[0].args and (
                self.ctx.qualname(made[0].func) or "") == "functools.partial":  # `dataset = partial(ReverseDataset, 10, 16)`
            bound = made[0]
            return self._call_cost(cst.Call(func=bound.args[0].value, args=[*bound.args[1:], *call.args]), made[1], depth + 1, seen)
        if made is not None and type(made[0]) is cst.Subscript:  # `Data = data_dict[args.data]`: one of a table's classes
            table = self.ctx.origin(made[0].value, made[1]) if type(made[0].value) is cst.Name else (made[0].value, made[1])
            if table is not None and type(table[0]) is cst.Dict and table[0].elements and all(
                    type(e) is cst.DictElement and type(e.value) in (cst.Name, cst.Attribute) for e in table[0].elements):
                classes = {code(cast(cst.DictElement, e).value): cast(cst.DictElement, e).value for e in table[0].elements}
                return combine(self._call_cost(call.with_changes(func=made_by), scope, depth + 1, seen) for made_by in classes.values())
        qualified = self.ctx.qualname(func)
        has_transform = any(
            arg.keyword is not None and "transform" in arg.keyword.value and literal(arg.value) is not None
            for arg in call.args
        )
        if qualified is not None:
            known = library_cost(qualified, has_transform)
            if known is not None:
                return known
            head, _, last = qualified.rpartition(".")
            if head.startswith("torch.utils.data") and last in WRAPPERS:
                inner = argument(call, 0, "datasets" if last in ("ConcatDataset", "ChainDataset") else "dataset")
                if inner is None:
                    return UNKNOWN_DATASET
                if type(inner) is cst.List or type(inner) is cst.Tuple:
                    return combine(self._cost(e.value, scope, depth + 1, seen) for e in inner.elements)
                return self._cost(inner, scope, depth + 1, seen)
            if qualified.startswith(("torch.", "numpy.")) and not qualified.startswith("torch.utils."):
                return Cost(CHEAP, "its items are rows of a tensor held in memory")
        if type(func) is cst.Name and func.value in ("range", "list", "tuple", "sorted"):
            return Cost(CHEAP, "its items are a sequence held in memory")
        if tokenizes(dotted(func) or ""):  # `train_encodings = tokenizer(texts, truncation=True, padding=True)`
            return Cost(CHEAP, "its items are token ids, tokenized once and held in memory")
        if type(func) is cst.Attribute and func.attr.value in HF_TRANSFORMS:
            return Cost(EXPENSIVE, f"`{func.attr.value}` runs a function on every item it reads", "", code(call))
        if type(func) is cst.Attribute and func.attr.value in HF_METHODS:
            base = self._cost(func.value, scope, depth + 1, seen)
            return base if base is None or base.kind in (ROWS, EXPENSIVE) else UNKNOWN_DATASET
        if type(func) is cst.Attribute and func.attr.value in _ARRAY_METHODS:  # `mask.nonzero().view(-1)`: indices
            return Cost(CHEAP, "its items are rows of a tensor held in memory")
        if type(func) is cst.Attribute and (func.attr.value in _SAME_ROWS or func.attr.value == "to" and len(call.args) == 1 and (
                self.ctx.qualname(call.args[0].value) or "").startswith("torch.")):
            return self._cost(func.value, scope, depth + 1, seen)  # `torch.from_numpy(x).clone()`, `d["label"].to(torch.long)`
        name = dotted(func)
        if name is None:
            return UNKNOWN_DATASET
        found = self._namespace().klass(name)
        if found is not None:
            decisive = deciding(found)
            cost = self._class_cost(found, has_transform, tuple(item for item in _constants_given(call) if item[0] in decisive))
            if not cost.passed:
                return cost
            # it indexes what it was passed: a tensor or a list is cheap, another dataset may not be
            passed = [argument(call, index, param) for param, index in cost.passed]
            items = combine((self._cost(arg, scope, depth + 1, seen) for arg in passed if arg is not None), empty=None)
            return cost if items is None or items.kind == CHEAP else items
        if _plugged_class(made[0] if made is not None else func):
            return None  # (`CustomDataset = args.dataset_class`: the user's own class, if any; the code's other datasets decide)
        returned = self._returned(func, scope)
        if returned:  # a function of the source, or a method of the class (`self.load_and_cache_examples(...)`), that makes it
            return combine(self._cost(value, where, depth + 1, seen) for value, where in returned)
        return self._imported_cost(func, None)

    def _returned(self, func: cst.BaseExpression, scope) -> list[tuple]:
        """What the functions a call of `func` runs return (`_called_functions`): (value, its
        scope) for each `return value`."""
        return [(value, self.ctx.scopes[id(function)]) for function in self._called_functions(func, scope)
                for value in self.ctx.returns.get(id(function), ())]

    def _imported_cost(self, func: cst.BaseExpression, index: int | None) -> Cost:
        """The cost of the dataset (element `index` of the tuple) a function of another module
        of the project returns (`create_dataset(...)` from `data_utils`)."""
        if type(func) is not cst.Name or func.value in self.ctx.functions:
            return UNKNOWN_DATASET
        found = self._namespace().function(func.value)
        key = ("returned cost", id(found[0]) if found else None, index)
        if found is not None and key not in self.known:
            self.known[key] = returned_cost(found, index)
        return self.known.get(key, UNKNOWN_DATASET)

    def _whole_dataset_batch(self, site: Site) -> bool:
        """`DataLoader(dev_data, batch_size=len(dev_data))`: the whole dataset in one batch, so a
        pass loads one batch, and nothing is there for workers or pinning to overlap."""
        call = cast(cst.Call, site.node)  # a loader call
        dataset, size = argument(call, 0, "dataset"), argument(call, 1, "batch_size")
        return dataset is not None and type(size) is cst.Call and type(size.func) is cst.Name and size.func.value == "len" \
            and len(size.args) == 1 and code(size.args[0].value) == code(dataset)

    def batch_size(self, site: Site) -> int | None:
        """The loader's batch size when perf-lint can prove it (passed through a parameter:
        the smallest its callers pass), else None."""
        passed = self.ctx.call_argument(cast(cst.Call, site.node), 1, "batch_size", site.scope)  # a loader call
        if passed is None:
            return 1
        if passed is UNKNOWN:
            return None
        expr, scope = passed
        candidates = [(expr, scope)]
        if type(expr) is cst.Name and scope.node is not None and expr.value in scope.params:
            candidates = self._caller_arguments(scope, expr.value)
        values = [self.ctx.value(e, s) for e, s in candidates]
        if not values or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            return None
        return min(values)

    def collate_moves(self, site: Site) -> str | None:
        """The code of a device move in the loader's collate_fn (workers cannot use CUDA), or None."""
        key = ("collate", id(site.node))
        if key not in self.known:
            self.known[key] = self._collate_moves(site)
        return self.known[key]

    def _collate_moves(self, site: Site) -> str | None:
        given = self._collate_function(site)
        if given is None or type(given[0]) is not cst.Name:
            return None
        for function, _ in self.ctx.functions.get(given[0].value, []):
            move = remembered(_device_move_in, function, lambda: _device_move_in(function))
            if move is not None:
                return move
        return None

    def collates_images(self, site: Site) -> bool:
        """Whether the loader's collate_fn, a function of the source, makes the batch's images
        (`processor(text=texts, images=images, return_tensors="pt")`, Hugging Face's multimodal
        fine-tuning notebooks): batches of pixels, not small whatever the dataset holds."""
        given = self._collate_function(site)
        return given is not None and type(given[0]) is cst.Name and any(
            type(node) is cst.Call and any(arg.keyword is not None and arg.keyword.value in _IMAGE_KEYWORDS for arg in node.args)
            for function, _ in self.ctx.functions.get(given[0].value, []) for node in walk(function))

    def batches_graphs(self, site: Site) -> bool:
        """Whether the loader's collate_fn batches DGL graphs (`dgl.batch` itself, or `dgl.batch(graphs)`
        in a function of the project, or a method of the dataset's class, `collate_fn=dataset.collate`), whose
        batches perf-lint cannot cost, like PyG's (and which pin_memory leaves unpinned)."""
        key = ("graphs", id(site.node))
        if key not in self.known:
            self.known[key] = self._batches_graphs(site)
        return self.known[key]

    def _batches_graphs(self, site: Site) -> bool:
        given = self._collate_function(site)
        if given is None:
            return False
        expr, scope = given
        namespace = self._namespace()
        if self.ctx.qualname(expr) == "dgl.batch":  # `collate_fn=dgl.batch`
            return True
        if type(expr) is cst.Name and self.ctx.functions.get(expr.value):
            return any(self.ctx.qualname(node.func) == "dgl.batch" for function, _ in self.ctx.functions[expr.value]
                       for node in walk(function) if type(node) is cst.Call)
        found = namespace.function(expr.value) if type(expr) is cst.Name else None
        if type(expr) is cst.Attribute:  # `dataset.collate`, `dataset` made by `LoadData(name)` here or by the callers
            receiver = self.ctx.origin(expr.value, scope)
            if receiver is None and type(expr.value) is cst.Name and expr.value.value in scope.params:
                passed = self._caller_arguments(scope, expr.value.value)
                receiver = self.ctx.origin(*passed[0]) if len(passed) == 1 and type(passed[0][0]) is cst.Name else None
            made = receiver[0] if receiver is not None else None
            classes = classes_made_by(namespace, made.func) if type(made) is cst.Call else []
            methods = [m for cls in classes if (m := method_of(cls[0], expr.attr.value, *cls[1:])) is not None]
            return bool(methods) and all(map(_batches_dgl_graphs, methods))
        return found is not None and _batches_dgl_graphs(found)

    def _collate_function(self, site: Site):
        """(expression, scope) of the function a loader call gives as collate_fn, through
        `functools.partial(collate, ...)`, lambdas and names; None when not given."""
        passed = self.ctx.call_argument(cast(cst.Call, site.node), COLLATE_FN, "collate_fn", site.scope)  # a loader call
        if passed is None or passed is UNKNOWN:
            return None
        expr, scope = passed
        for _ in range(4):
            found = self.ctx.origin(expr, scope) if type(expr) in (cst.Name, cst.Attribute) else (expr, scope)
            if found is None:
                break
            expr, scope = found
            if type(expr) is cst.Call and call_name(expr) == "partial" and expr.args:
                expr = expr.args[0].value  # functools.partial(collate, device=device)
            elif type(expr) is cst.Lambda and type(expr.body) is cst.Call:
                expr = expr.body.func
            else:
                break
        return expr, scope

    def loads_once(self, site: Site) -> bool:
        """Whether the loader loads one batch, or one pass that does not train, at most, so that
        no epoch of loading is there to speed up: it is read unnamed by a `next(iter(DataLoader(...)))`,
        or each use of its name (one at least) is a `next(iter(loader))`, a loop that breaks after its first batch, one that loads nothing
        (`len(loader)`, the name shown by a notebook cell), or, for a loader of the module (or of
        a function the module runs once, `main()`) of a source that trains, a loop of its own statements (not in a loop or function)
        that does not train, or a call of a function of the project that loops over it once and
        does not train, or a Lightning Trainer's `test` (`validate`, `predict`; also in a function
        that fits first) (a test pass after training: in a source that only evaluates, that pass
        is the job; so too for a loader a factory function returns, when each module calling it
        trains and only passes like those read it); or nothing reads it (in a function or a
        notebook: a module's loader may be imported; in a module, one it binds the name to again
        before any read, which no function of it names); or it is made by a Lightning `test_dataloader` (`predict_dataloader`) hook of
        a script that trains (`.fit(...)`) and never tests."""
        key = ("once", id(site.node))  # (asked by TPL101 and TPL102)
        if key not in self.known:
            self.known[key] = self._loads_once(site)
        return self.known[key]

    def _loads_once(self, site: Site) -> bool:
        if self._whole_dataset_batch(site):
            return True
        function = site.scope.node
        if function is not None and any(loader.node is site.node for source in _yielded_sources(function)
                                        for loader in self._resolve_loader(source, site.scope, 0)):
            return False  # (a generator handing out its batches: `yield next(loader)`, as many as asked)
        if function is not None and function.name.value in _ONE_BATCH_HOOKS:
            return bool(self.ctx.calls.get("fit")) and not self.ctx.calls.get(_ONE_BATCH_HOOKS[function.name.value])
        returned = self.returned_to(site)
        if returned and all(uses.again is None and not uses.trained and uses.module_trains for uses in returned):
            return True  # a factory's test loader, read by one pass after the training its callers run
        name = self._name_of(site)
        steps = TrainingSteps.of(self.ctx)
        if name is None and self._one_pass_in_place(site, steps):
            return True
        if name is None:  # (`next(iter(DataLoader(ds, batch_size=2)))`: one batch to look at)
            return any(call.node.args and type(made := call.node.args[0].value) is cst.Call and call_name(made) == "iter"
                       and len(made.args) == 1 and made.args[0].value is site.node for call in self.ctx.calls.get("next", ()))
        uses = self._segment_uses(site, name)
        if uses is None:
            return False
        once = (function is None or self._run_once(function)) and (  # a module's own statement runs once, and `main()`'s
            steps.anywhere() or steps.self_test(site.node))
        single = 0
        for one, other, passes, iterators, calls, few, tests in uses:
            if other or not all(self._short(loop, site.scope) for loop in few) or not all(
                    self._tested_after_fit(call, function) for call, function in tests):
                return False
            if passes or iterators or calls:
                if not once or any(steps.trains(loop) or steps.per_epoch(loop) for loop in passes):
                    if calls or not all(_shows_only(loop) or self._waits_for_user(loop) or self._short(loop, site.scope)
                                        for loop in passes):
                        return False  # (not when every pass only prints its batches, waits for a person at
                        # each or stops after a few: a demo of the loader, a viewer)
                if not all(map(self._next_once, iterators)) or not all(self._one_pass(call, name, site.scope) for call in calls):
                    return False
            single += one + len(passes) + len(iterators) + len(calls) + len(few) + len(tests)
        if single == 0 and function is None and self._rebound_unread(site, name):
            return True  # (bound again before anything reads it: lesson32's `train_loader`, remade over a split)
        return single > 0 or function is not None or any(unit.notebook for unit in self.ctx.units)

    def _rebound_unread(self, site: Site, name: str) -> bool:
        """Whether the module binds `name` again after the loader made at `site`, and no
        function or class of it names `name` (which could read it between the two)."""
        key = ("rebound", name)  # (once per name: a module binding it thousands of times stays linear)
        if key not in self.known:
            bindings = [binding for binding in self._segments(None, name) if binding != 0]
            named = any(type(node) is cst.Name and node.value == name for module in self.modules for statement in module.body
                        if type(statement) in (cst.FunctionDef, cst.ClassDef) for node in walk(statement))
            self.known[key] = set() if named else set(bindings[:-1])
        return id(site.node) in self.known[key]

    def _run_once(self, function: cst.FunctionDef) -> bool:
        """Whether a function of the module (not a method) that trains is run once: its one call
        is a statement of the module, outside loops (`main()` under `if __name__ == "__main__":`;
        not a `test()` the script runs instead of training, whose pass is the job)."""
        sites = self.ctx.calls.get(function.name.value, ())
        return self.ctx.class_of.get(id(function)) is None and len(sites) == 1 and not sites[0].loops and (
            sites[0].scope.node is None) and any(type(node) is cst.Call and TrainingSteps.of(self.ctx).steps(node) for node in walk(function))

    def _one_pass_in_place(self, site: Site, steps: TrainingSteps) -> bool:
        """Whether the loader is iterated once where it is made, by a loop or comprehension
        that does not train, in no loop, in a function no loop of the source calls: the
        normalisation statistics of `torch.cat([x for x, _ in DataLoader(train_set)])`."""
        loop = self.iterated_in_place.get(id(site.node))
        function = site.scope.node
        return loop is not None and not site.loops and not (type(loop) is cst.For and (
            steps.trains(loop) or steps.per_epoch(loop))) and (function is None or not steps.called_in_loop(function))

    def _name_of(self, site: Site) -> str | None:
        """The (first) name the loader made at `site` is assigned to in its scope."""
        key = ("names", id(site.scope))
        if key not in self.known:  # value -> the (first) name it is assigned to, once per scope
            names: dict[int, str] = {}
            for n, values in site.scope.assignments.items():
                for v in values:
                    names.setdefault(id(v), n)
            self.known[key] = names
        return self.known[key].get(id(site.node))

    def _lightning_limited(self, site: Site) -> bool:
        """Whether the loader comes from a Lightning hook whose passes every Lightning Trainer of
        the source limits to a few batches (`Trainer(limit_val_batches=5)` for `val_dataloader`)."""
        hook = self._lightning_hook(site)
        limit = f"limit_{hook.removesuffix('_dataloader')}_batches" if hook in _LIMITED_HOOKS else None
        trainers = [trainer for trainer in self.ctx.calls.get("Trainer", ())
                    if _lightning_trainer(self.ctx.qualname(trainer.node.func) or "")] if limit is not None else []
        values = [self.ctx.value(given.value, trainer.scope) if (given := keyword(trainer.node, cast(str, limit))) else None
                  for trainer in trainers]
        return bool(values) and all(type(value) is int and 0 < value <= _FEW_BATCHES for value in values)

    def reads_few(self, site: Site) -> bool:
        """Whether each pass over the loader reads a few batches at most: every read is a
        `next(iter(loader))` in a loop, or every use of the name it is bound to passes it to a
        function of the source whose every loop over that parameter stops after at most
        `_FEW_BATCHES` of them (hkproj's `run_validation(model, val_dataloader, ...)`, breaking
        when `count == num_examples`, 2 by default): nothing for workers or pinned memory to overlap."""
        key = ("few", id(site.node))  # (asked by TPL101 and TPL102)
        if key not in self.known:
            self.known[key] = self._reads_few(site)
        return self.known[key]

    def _reads_few(self, site: Site) -> bool:
        if self._lightning_limited(site):
            return True
        if any(loader.node is site.node for run, _, _, few in self.composer_runs() for value in few
               for loader in self.live_loaders(value, run.scope, run.unit)):
            return True  # (`eval_subset_num_batches=5`)
        scope = site.scope
        name = self._name_of(site)
        if name is not None and self._one_batch_each(site, name):
            return True
        if name is None or len(scope.assignments[name]) != 1 or scope.node is None:
            return False
        function = scope.node
        returned = [v for v in self.ctx.returns.get(id(function), ()) if v is not None]
        if returned:  # (`return train_dataloader, val_dataloader`: judged where the callers bind it)
            index = next((i for i, e in enumerate(returned[0].elements) if type(e.value) is cst.Name and e.value.value == name),
                         None) if len(returned) == 1 and type(returned[0]) is cst.Tuple else None
            callers = self.ctx.calls.get(function.name.value, [])
            bound = [next((n for (where, n), values in self.ctx.unpacked.items() if where == id(call.scope) and any(
                value is call.node and at == index for value, at in values)), None) for call in callers] if index is not None else []
            if not callers or len(bound) != len(callers) or None in bound:  # (`a, val_loader = get_ds()` in each)
                return False
            return all(self._passes_few(cast(str, b), call.scope) for b, call in zip(bound, callers))
        return self._passes_few(name, scope)

    def _one_batch_each(self, site: Site, name: str) -> bool:
        """Whether every read of the loader is a `next(iter(name))` in an epoch loop (a test
        batch each epoch; not a training batch each step): each makes a new iterator that loads
        one batch, so workers would only start and stop, and a single copy has nothing to overlap."""
        uses = self._segment_uses(site, name)
        if uses is None:
            return False
        found = False
        for _, other, passes, iterators, calls, few, tests in uses:
            if other or passes or iterators or calls or tests:
                return False
            if not all(map(TrainingSteps.of(self.ctx).per_epoch, few)):
                return False
            found = found or bool(few)
        return found

    def _passes_few(self, name: str, scope) -> bool:
        """Whether `name`, bound once in `scope` (a function's), is only passed to functions of the
        source whose every loop over it reads a few batches (see `reads_few`)."""
        body = scope.node
        if body is None or len(scope.assignments.get(name, ())) != 1:
            return False
        key = ("mentions", id(scope))
        if key not in self.known:  # name -> (its mentions, the calls given it), once per scope
            found: dict[str, tuple[int, list[cst.Call]]] = {}
            for n in walk(body):
                if type(n) is cst.Name:
                    count, calls = found.get(n.value, (0, []))
                    found[n.value] = (count + 1, calls)
                elif type(n) is cst.Call:
                    for given in {a.value.value for a in n.args if type(a.value) is cst.Name}:
                        found.setdefault(given, (0, []))[1].append(n)
            self.known[key] = found
        mentions, uses = self.known[key].get(name, (0, []))
        if not uses or mentions != len(uses) + 1:  # (its binding, and one argument of each call: no other use)
            return False
        for call in uses:
            defs = self.ctx.functions.get(call.func.value) if type(call.func) is cst.Name else None
            if not defs:
                return False
            function, inner = defs[-1]
            params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
            arg = next(a for a in call.args if type(a.value) is cst.Name and a.value.value == name)
            param = arg.keyword.value if arg.keyword is not None else params[call.args.index(arg)] \
                if call.args.index(arg) < len(params) and not any(a.star for a in call.args) else None
            loops = [n for n in walk(function.body) if type(n) is cst.For and _iterated(n.iter) == param]
            if param is None or not loops or any(
                    (stop := stops_after(loop, self.ctx, inner)) is None or stop > _FEW_BATCHES for loop in loops):
                return False
        return True

    def _waits_for_user(self, loop: cst.For) -> bool:
        """A loop that does not train and waits for a person at each batch: `input()`,
        `breakpoint()`, `pdb.set_trace()`, `cv2.waitKey(0)` (until a key is pressed), or in a
        script a blocking `plt.show()` (a viewer of the batches, whose loading time nobody waits on)."""
        if TrainingSteps.of(self.ctx).trains(loop):
            return False
        script = not any(unit.notebook for unit in self.ctx.units)
        for node in walk(loop.body):
            if type(node) is cst.Call:
                name = call_name(node)
                if name not in _WAITING and (type(node.func) is not cst.Name or name not in self.ctx.imports):
                    continue  # (the name a call ends with is its qualified name's last, but for an imported alias)
                qualified = self.ctx.qualname(node.func) or ""
                if name in ("input", "breakpoint") and type(node.func) is cst.Name or qualified == "pdb.set_trace" or (
                        script and qualified == "matplotlib.pyplot.show") or qualified == "cv2.waitKey" and (
                        not node.args or literal(node.args[0].value) == 0):
                    return True
        return False

    def never_made(self, site: Site) -> bool:
        """Whether the loader is made in a branch no call of its function takes: under
        `if param is None` (`is not None`, or the `else` of either) where every call of the
        function, in this module and the modules importing it, gives `param` a constant that
        decides the other way (stat453's `get_dataloaders_mnist(..., validation_fraction=0.1)`);
        or in a function nothing in the project runs (`load_celebA` of a utils.py no script calls),
        unless the project is a package others import (imagen-pytorch's `get_images_dataloader`)."""
        function = site.scope.node
        if function is None:
            return False
        if unused_function(self.ctx, function) and not installable(cast(str, self.ctx.path)):
            return True
        for test, holds in _enclosing_tests(function.body, site.node) or ():
            found = none_test(test)
            if found is None:
                continue
            tested, none_when = found
            if type(tested) is not cst.Name or tested.value not in site.scope.params:
                continue
            given = {_is_none(value) for value, _ in self._parameter_values(site.scope, tested.value, called=True) or ()}
            if len(given) == 1 and None not in given and (given.pop() == none_when) != holds:
                return True
        return False

    def _short(self, loop: cst.For, scope) -> bool:
        """A loop of a few iterations (`for j in range(num_epochs)`, 5) that does not train."""
        return few_iterations(loop, self.ctx, scope) and not TrainingSteps.of(self.ctx).trains(loop)

    def _segment_uses(self, site: Site, name: str) -> Iterator[tuple] | None:
        """`_loader_uses` of each statement after the binding of the loader made at `site` to
        `name`, until the name is bound again (computed as they are asked for); None when the
        name is bound again and not by a statement of its own (which uses are its is not known)."""
        segments = self._segments(site.scope.node, name)
        if len(site.scope.assignments[name]) > 1 and id(site.node) not in segments:
            return None
        return (remembered(_loader_uses, statement, functools.partial(_loader_uses, statement, name), name)
                for statement in segments.get(id(site.node), segments[0]))

    def _segments(self, function: cst.FunctionDef | None, name: str) -> dict[int, list[cst.CSTNode]]:
        """The statements of `function` (of the module's code when None) after each statement
        binding `name` (`name = DataLoader(...)`), until the next: by id of the value bound,
        and those before the first under 0 (once per function and name: a module rebinding a
        name thousands of times stays linear)."""
        key = ("segments", id(function), name)
        if key not in self.known:
            current: list[cst.CSTNode] = []
            found = {0: current}
            statements = function.body.body if function is not None else [s for module in self.modules for s in module.body]
            for statement in statements:
                binding = _bound(statement, name)
                if binding is None:
                    current.append(statement)
                else:
                    current = found[id(binding)] = []
            self.known[key] = found
        return self.known[key]

    def _tested_after_fit(self, call: cst.Call, function: cst.FunctionDef) -> bool:
        """`trainer.test(model, test_loader)` on a Lightning Trainer in a function that also
        fits (uvadlc's `train_model`): one pass per training run."""
        scope = self.ctx.scopes.get(id(function))
        return scope is not None and self._lightning(Site(call, 0, scope)) and any(
            type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "fit"
            for node in walk(function.body))

    def _one_pass(self, call: cst.Call, name: str, scope) -> bool:
        """Whether a function of the project `call` gives the loader `name` to loops over it once
        and does not train (`evaluate(model, test_loader)`, `get_predictions(model, test_loader)`),
        or the call is a Lightning Trainer's `test`, `validate` or `predict`: one pass."""
        if type(call.func) is cst.Attribute and call.func.attr.value in ("test", "validate", "predict") and self._lightning(
                Site(call, 0, scope)):
            return True
        found = call_target(self.ctx, call.func, self.ctx.module_scope)
        if found is None or trains_somewhere(found):
            return False
        given = [param for param, value in bind(call, parameters(found[0]), found[3] is not None)
                 if type(value) is cst.Name and value.value == name]
        looped = iterated_through(found)
        if found[0].name != "__init__":  # (or whose batches it moves, through the methods it calls:
            looped = {*looped, *device_moves(found)}  # widedeep's `trainer.predict(test_loader=...)`; not a constructor keeping it)
        return bool(given) and all(param in looped and param not in iterated_again(found) for param in given)

    def _next_once(self, iterator: str) -> bool:
        """Whether `next(iterator)` / `iterator.next()` is called by the module's own statements only,
        once per iterator assigned to that name (`dataiter = iter(loader)` in several cells)."""
        calls = [site for site in self.ctx.calls.get("next", ()) if site.node.args and code(site.node.args[0].value) == iterator
                 or type(site.node.func) is cst.Attribute and code(site.node.func.value) == iterator]
        made = len(self.ctx.module_scope.assignments.get(iterator, ()))
        return len(calls) <= made and all(not site.loops and site.scope.node is None for site in calls)

    def toy_data(self, site: Site) -> bool:
        """Whether the loader's dataset is a toy: data written out in the source
        (`ToyDataset(torch.tensor([[...], ...]), ...)`), or a class of the source that makes
        fewer than _TOY_NUMBERS numbers itself from sizes its constructor is given as literals
        (`XORDataset(size=1000)` making `torch.randint(0, 2, size=(self.size, 2))`)."""
        dataset = argument(cast(cst.Call, site.node), 0, "dataset")  # a loader call
        found = None if dataset is None else self.ctx.origin(dataset, site.scope)
        if found is None or type(found[0]) is not cst.Call:
            return False
        if self._literal_rows(*found) is not None:
            return True
        numbers = self._generated_numbers(found[0])
        return numbers is not None and numbers < _TOY_NUMBERS

    def _generated_numbers(self, call: cst.Call) -> int | None:
        """How many numbers a dataset class of the source makes with torch's factories
        (`torch.randn`, ...) in its methods, every size known (literals, the constructor's
        literal arguments, another generated tensor's `.shape`); None when it calls anything
        else that could bring data (a function, an I/O call) or a size is not known."""
        cls = self.ctx.classes.get(call.func.value) if type(call.func) is cst.Name else None
        if cls is None:
            return None
        methods = [s for s in (cls.body.body if type(cls.body) is cst.IndentedBlock else ()) if type(s) is cst.FunctionDef]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is None:
            return None
        found = self._namespace().klass(cls.name.value)
        cost = self._class_cost(found, False) if found is not None else None
        if cost is None or cost.kind != CHEAP or cost.passed:
            return None  # (not only indexing what it holds, or holding what it is given)
        sizes = self._literal_arguments(call, init)
        total = 0
        shapes: dict[str, int] = {}
        for method in methods:
            if method.name.value in ("__getitem__", "__len__"):
                continue
            scope = self.ctx.scopes[id(method)]
            given = set(scope.params[1:])  # (what it is given may hold data of any size)
            for node in _calls_in(method):
                root = root_name(node.func)
                if root in given:
                    return None
                qualified = "" if root in scope.assignments else self.ctx.qualname(node.func) or ""  # (a local `data`)
                if qualified in _FACTORIES:
                    count = _numbers(node, sizes, shapes)
                    if count is None:
                        return None
                    total += count
                    target = _assigned_name(method, node)
                    if target is not None:
                        shapes[target] = count
                elif qualified in _TORCH_IO or (qualified and not qualified.startswith("torch.")) or (
                        type(node.func) is cst.Name and node.func.value not in _PLAIN_BUILTINS):
                    return None
        return total or None

    def _class_cost(self, found: tuple, has_transform: bool, given: tuple = ()) -> Cost:
        """`class_cost` of a dataset class, judged once per analysis (loaders of one class
        constructed alike)."""
        key = ("class cost", id(found[0]), has_transform, given)
        if key not in self.known:
            self.known[key] = class_cost(found, has_transform, given=given)
        return self.known[key]

    def _literal_arguments(self, call: cst.Call, init: cst.FunctionDef) -> dict[str, int]:
        """The constructor's parameters given an int literal (or with one as default), also as
        the `self.<name>` attributes `__init__` copies them to."""
        params = list(_all_params(init.params))[1:]
        sizes = {}
        for index, param in enumerate(params):
            given = argument(call, index, param.name.value)
            source = given if given is not None else param.default
            value = literal(source) if source is not None else UNKNOWN
            if isinstance(value, int) and not isinstance(value, bool):
                sizes[param.name.value] = value
        for node in _calls_in(init, assignments=True):
            if type(node) is cst.Assign and type(node.value) is cst.Name and node.value.value in sizes:
                for target in node.targets:
                    name = dotted(target.target)
                    if type(target.target) is cst.Attribute and name == f"self.{target.target.attr.value}":
                        sizes[name] = sizes[node.value.value]
        return sizes

    def _literal_rows(self, call: cst.Call, scope) -> int | None:
        """The number of rows of tensors written out in the source a dataset is made from."""
        if type(call.func) not in (cst.Name, cst.Attribute) or not call.args:
            return None
        rows = []
        for arg in call.args:
            value = self.ctx.origin(arg.value, scope) if arg.keyword is None and arg.star == "" else None
            if value is None or type(value[0]) is not cst.Call:
                return None
            tensor = value[0]
            if self.ctx.qualname(tensor.func) not in _LITERAL_TENSORS or not tensor.args:
                return None
            data = tensor.args[0].value
            if not (type(data) is cst.List or type(data) is cst.Tuple) or not _literal_data(data):
                return None
            rows.append(len(data.elements))
        return max(rows)


_CORES = {"os.cpu_count", "multiprocessing.cpu_count"}
_FACTORIES = {f"torch.{name}" for name in SIZED_FACTORIES}
_TORCH_IO = {"torch.load", "torch.from_file"}
_PLAIN_BUILTINS = {"super", "len", "range", "int", "float", "list", "tuple", "min", "max", "abs", "round"}
# a dataset of fewer numbers than this (256 KB of float32) is a toy: pinning its batches buys nothing
_TOY_NUMBERS = 1 << 16


def _calls_in(function: cst.FunctionDef, assignments: bool = False):
    """The calls (and, with `assignments`, the assignments) of a function's body, not of the
    functions and classes it defines."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:  # (in the order of the source: a tensor is made before its `.shape` is read)
        node = stack.pop()
        if type(node) is cst.Call or (assignments and type(node) is cst.Assign):
            yield node
        if type(node) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(reversed(children(node)))


def _assigned_name(function: cst.FunctionDef, call: cst.Call) -> str | None:
    """The name `call` is assigned to (`data = torch.randint(...)`), or None."""
    for node in _calls_in(function, assignments=True):
        if type(node) is cst.Assign and node.value is call and len(node.targets) == 1:
            return dotted(node.targets[0].target)
    return None


def _numbers(call: cst.Call, sizes: dict[str, int], shapes: dict[str, int]) -> int | None:
    """How many numbers a torch factory call makes: the product of its size (`size=(n, 2)`,
    `randint(low, high, (n, 2))`, `randn(n, 2)`, `randn(other.shape)`), when every dimension
    is known."""
    size = keyword(call, "size")
    positional_args = [arg.value for arg in call.args if arg.keyword is None and arg.star == ""]
    name = call_name(call)
    if size is not None:
        dims = [size.value]
    elif name == "randint":
        dims = positional_args[2:3] if len(positional_args) >= 3 else positional_args[1:2]
    elif name == "full":
        dims = positional_args[:1]
    else:
        dims = positional_args
    sequence = dims[0] if len(dims) == 1 else None
    if type(sequence) is cst.Tuple or type(sequence) is cst.List:
        dims = [element.value for element in sequence.elements]
    count = 1
    for dim in dims:
        if type(dim) is cst.Attribute and dim.attr.value == "shape" and (held := dotted(dim.value) or "") in shapes:
            count *= shapes[held]
            continue
        value = literal(dim)
        value = sizes.get(dotted(dim) or "") if value is UNKNOWN else value
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        count *= value
    return count if dims else None


def _on_windows(test: cst.BaseExpression) -> bool | None:
    """Whether a test holds on Windows only (True: `sys.platform.startswith("win")`,
    `os.name == "nt"`, `platform.system() == "Windows"`) or everywhere else (False: their
    negations); None for any other test."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = _on_windows(test.expression)
        return None if inner is None else not inner
    text = code(test).replace("'", '"')
    if not any(word in text for word in ("sys.platform", "os.name", "platform.system()")):
        return None
    if type(test) is cst.Call and call_name(test) == "startswith" and '"win' in text:
        return True
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and any(
            w in code(test.comparisons[0].comparator) for w in ('"nt"', "'nt'", "win32", "Windows")):
        operator = type(test.comparisons[0].operator)
        return True if operator is cst.Equal else False if operator is cst.NotEqual else None
    return None


def _scaled_when_set(branch: cst.BaseExpression, test: cst.BaseExpression) -> bool:
    """`4 * args.gpus` under the test `args.gpus`: a positive constant times (or plus) the
    value the branch is taken for being set."""
    if type(branch) is not cst.BinaryOperation or type(branch.operator) not in (cst.Multiply, cst.Add):
        return False
    tested = code(test)
    sides = (branch.left, branch.right)
    return any(type(literal(a)) is int and literal(a) > 0 and code(b) == tested for a, b in (sides, sides[::-1]))


def _per_core(qualname, expr: cst.BaseExpression) -> bool:
    """`os.cpu_count()` (or `multiprocessing.cpu_count()`), alone or divided by, or bounded
    with, a positive number (`int(os.cpu_count() / 2)`, `min(8, os.cpu_count())`): worker
    processes on a machine with cores to train on a GPU."""
    if type(expr) is cst.Call:
        if not expr.args:
            return qualname(expr.func) in _CORES
        name = expr.func.value if type(expr.func) is cst.Name else None
        args = [arg.value for arg in expr.args]
        if name == "int" and len(args) == 1:
            return _per_core(qualname, args[0])
        if name in ("min", "max"):
            return any(_per_core(qualname, a) for a in args) and all(_per_core(qualname, a) or _positive(a) for a in args)
        return False
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Divide, cst.FloorDivide, cst.Subtract):
        return _per_core(qualname, expr.left) and _positive(expr.right) and (
            type(expr.operator) is not cst.Subtract or literal(expr.right) == 1)  # `mp.cpu_count() - 1`
    return False


def _returns_per_core(ctx, call: cst.Call, scope) -> bool:
    """Whether `call` calls a function of the project whose every return, but those under a
    test for Windows, is a positive count or one made from the core count (`def
    get_num_workers(): if platform.system() == "Windows": return 0 else: return os.cpu_count()`)."""
    found = call_target(ctx, call.func, scope)
    if found is None or type(found[0]) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return False
    values = list(_returns_off_windows(cast(ast.FunctionDef, found[0]).body))
    plain = {"mp.cpu_count": "multiprocessing.cpu_count"}  # (the other module's spelling: its imports are the usual ones)
    return bool(values) and all(value is not None and _per_core(lambda func: plain.get(dotted(func) or "", dotted(func)), (
        parsed := cst.parse_expression(ast.unparse(value)))) or value is not None and _positive(parsed) for value in values)


def _returns_off_windows(body: list) -> Iterator[ast.expr | None]:
    """The values a function's statements return, but in a branch only Windows takes."""
    for statement in body:
        if type(statement) is ast.Return:
            yield statement.value
        elif type(statement) is ast.If:
            windows = _on_windows(cst.parse_expression(ast.unparse(statement.test)))
            yield from _returns_off_windows(statement.body) if windows is not True else ()
            yield from _returns_off_windows(statement.orelse) if windows is not False else ()
        elif type(statement) in (ast.For, ast.While, ast.With, ast.Try):
            for field in ("body", "orelse", "finalbody"):
                yield from _returns_off_windows(getattr(statement, field, []))


def _positive(expr: cst.BaseExpression) -> bool:
    value = literal(expr)
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _iterator_class(cls: cst.ClassDef | None) -> bool:
    """A class of the source that defines `__iter__` or `__next__`: an iterator over what it is
    given (a loader wrapped to restart at its end), which iterates that when it is iterated."""
    body = cls.body.body if cls is not None and type(cls.body) is cst.IndentedBlock else ()
    return any(type(s) is cst.FunctionDef and s.name.value in ("__iter__", "__next__") for s in body)


def _parsed_default(namespace, expr: ast.expr, anywhere: bool = False) -> ast.Constant | None:
    """`args.num_workers` in a module that parses its command line at its top level (`args =
    parser.parse_args()`, perhaps then given to its `main(args)`; with `anywhere`, in one of
    its functions as well): the one constant default its parser gives that option
    (`--num_workers`, default 2)."""
    if type(expr) is not ast.Attribute or type(expr.value) is not ast.Name or not any(
            type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ("parse_args", "parse_known_args")
            for n in (ast.walk(namespace.tree) if anywhere else body_nodes(namespace.tree))):
        return None
    owners = [namespace.tree, *(n for n in ast.walk(namespace.tree) if type(n) is ast.FunctionDef)] if anywhere else [namespace.tree]
    defaults = [default for owner in owners for default in argparse_defaults(owner).get(expr.attr, [])]
    return ast.Constant(defaults[0]) if len(defaults) == 1 and defaults[0] is not None else None


def _yielded_sources(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What a generator yields the items of: `X` of `yield next(X)`, `yield from X`, and of `for
    batch in X: yield batch` (glow-pytorch's `sample_data`, guided-diffusion's `load_data`; a
    `DataLoader` made again when it runs out: `loader = iter(DataLoader(...))` in `except
    StopIteration:`)."""
    def sources() -> list[cst.BaseExpression]:
        nodes = walk(function.body)
        yielded = [node.value for node in nodes if type(node) is cst.Yield]
        if not yielded:
            return []  # (not a generator: most functions)
        loops = {name: loop.iter for loop in nodes if type(loop) is cst.For for name in names_in(loop.target)}
        found: list[cst.BaseExpression] = []
        for value in yielded:
            if type(value) is cst.From:
                found.append(value.item)
            elif type(value) is cst.Call and call_name(value) == "next" and type(value.func) is cst.Name and value.args:
                found.append(value.args[0].value)
            elif type(value) is cst.Name and value.value in loops:
                found.append(loops[value.value])
        return found

    return remembered(_yielded_sources, function, sources)


def _options_entry(ctx, expr: cst.Subscript, scope) -> cst.Attribute | None:
    """`options.key` for `config["key"]` where `config = vars(options)` (an argparse namespace as
    a dict: `config = vars(parse_args())`) and nothing assigns `config["key"]`; else None."""
    key = literal(expr.slice[0].slice.value) if len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index else None
    found = ctx.origin(expr.value, scope) if type(expr.value) is cst.Name and isinstance(key, str) else None
    if found is None or type(found[0]) is not cst.Call or call_name(found[0]) != "vars" or len(found[0].args) != 1:
        return None
    owner = found[1].node or ctx.modules[0]
    for n in walk(owner):
        target = n.target if type(n) is cst.AssignTarget else None
        if type(target) is cst.Subscript and dotted(target.value) == dotted(expr.value) and type(
                index := target.slice[0].slice) is cst.Index and literal(index.value) == key:
            return None  # (`config["num_workers"] = 0` somewhere)
    return cst.Attribute(value=found[0].args[0].value, attr=cst.Name(cast(str, key)))


def _assigned_dict(owner, expr: ast.expr) -> dict[str, ast.expr] | None:
    """The keys of the dict literal (string keys only) that the name `expr` is assigned once in
    `owner` (a function or module, nested definitions left out); None when it is not that."""
    if type(expr) is not ast.Name:
        return None
    values = [n.value for n in body_nodes(owner) if type(n) is ast.Assign
              and any(type(t) is ast.Name and t.id == expr.id for t in n.targets)]
    if len(values) != 1 or type(values[0]) is not ast.Dict or not all(
            type(k) is ast.Constant and type(k.value) is str for k in values[0].keys):
        return None
    return {str(cast(ast.Constant, k).value): v for k, v in zip(values[0].keys, values[0].values)}


_WAITING = frozenset({"input", "breakpoint", "set_trace", "show", "waitKey"})  # see _waits_for_user


def _enclosing_tests(tree: cst.CSTNode, node: cst.CSTNode) -> list[tuple[cst.BaseExpression, bool]] | None:
    """The tests of the `if` statements of `tree` around `node`, each with whether `node` runs
    when it holds; None when `node` is not in `tree` (remembered per tree and node)."""
    return remembered(_enclosing_tests, tree, lambda: _tests_around(tree, node), id(node))


def _tests_around(tree: cst.CSTNode, node: cst.CSTNode) -> list[tuple[cst.BaseExpression, bool]] | None:
    if tree is node:
        return []
    for child in children(tree):
        found = _tests_around(child, node)
        if found is not None:
            if type(tree) is cst.If and child is not tree.test:
                return [(tree.test, child is tree.body), *found]
            return found
    return None


def _is_none(value: cst.BaseExpression) -> bool | None:
    """Whether a constant is None; None for what is not a constant."""
    if type(value) is cst.Name and value.value in ("None", "True", "False"):
        return value.value == "None"
    return False if type(value) in (cst.Integer, cst.Float, cst.SimpleString) else None


def _all_params(params: cst.Parameters):
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def _literal_data(node: cst.BaseExpression, depth: int = 0) -> bool:
    """A list or tuple of numbers or constants (nested): data written out in the source."""
    if type(node) is cst.List or type(node) is cst.Tuple:
        return depth < 4 and all(type(e) is cst.Element and _literal_data(e.value, depth + 1) for e in node.elements)
    value = literal(node)
    return value is not UNKNOWN and not isinstance(value, str)


def _constants_given(call: cst.Call) -> tuple:
    """The constants a construction passes (`ModelNet40(partition='test', num_points=n)`):
    (keyword, or position, value) pairs, for `class_cost`."""
    if any(arg.star for arg in call.args):
        return ()
    return tuple((arg.keyword.value if arg.keyword is not None else index, value) for index, arg in enumerate(call.args)
                 if type(value := literal(arg.value)) in (str, bool, int, type(None)))


def _batches_dgl_graphs(found) -> bool:
    """Whether the function of the project `found` calls `dgl.batch` (a collate_fn batching graphs)."""
    return any(type(node) is ast.Call and found[1].qualname(ast_dotted(node.func) or "") == "dgl.batch"
               for node in body_nodes(found[0]))


def _device_move_in(function: cst.FunctionDef) -> str | None:
    """The code of the first `.cuda()`/`.to(<device>)` in a function's body, or None."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("to", "cuda"):
            if node.func.attr.value == "cuda":
                return code(node)
            device = argument(node, 0, "device")
            text = literal(device) if device is not None else None
            if isinstance(text, str):
                if text.startswith("cuda"):
                    return code(node)
            elif device is not None:
                last = (dotted(device) or "").rsplit(".", 1)[-1]
                if last and not DTYPE_LIKE.search(last) and DEVICE_LIKE.search(last):
                    return code(node)
        if type(node) not in (cst.FunctionDef, cst.ClassDef):
            stack.extend(reversed(children(node)))
    return None


def _bound(statement: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """What `statement` binds `name` to (`name = DataLoader(...)`), or None."""
    small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
    if type(small) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name for t in small.targets):
        return small.value
    return None


def _loader_uses(statement: cst.CSTNode, name: str) -> tuple[int, int, tuple[cst.For, ...], tuple[str, ...], tuple[cst.Call, ...],
                                                               tuple[cst.For | cst.While, ...], tuple[tuple[cst.Call, cst.FunctionDef], ...]]:
    """How `statement` uses the loader bound to `name`: (uses that take one batch at most: a
    `next(iter(name))` outside loops, a loop over it that breaks at the end of its first pass, `len(name)`,
    `name.dataset`, a statement showing it; other uses; the loops over it outside any loop or
    function, which run one pass; the names of iterators `it = iter(name)` made outside any
    loop or function; the calls given it outside any loop or function, `evaluate(model,
    name)`; the loops outside any loop or function that take a batch with `next(iter(name))`
    at each iteration, a few when they are short: `for j in range(5):` to show augmented
    images; the `x.test(..., name)` (`validate`, `predict`) calls in a function of the statement,
    outside its loops, with that function). What the passes, iterators and calls are worth
    depends on the rest of the source (`LoaderRule.loads_once`): this only reads the statement,
    and is remembered. A function or lambda with a parameter of that name is another variable."""
    single = other = 0
    passes: list[cst.For] = []
    iterators: list[str] = []
    calls: list[cst.Call] = []
    few: list[cst.For | cst.While] = []
    tests: list[tuple[cst.Call, cst.FunctionDef]] = []
    # (node, whether it may run again: the function when in its own statements, the loop of the
    # statement's own it runs in: not in another loop or function)
    stack: list[tuple[cst.CSTNode, bool | cst.FunctionDef, cst.For | cst.While | None]] = [(statement, False, None)]
    while stack:
        node, again, loop = stack.pop()
        if type(node) is cst.Name:
            if node.value == name:
                other += 1
            continue
        if type(node) is cst.Call and _next_iter(node, name):
            if not again:
                single += 1
            elif loop is not None:
                few.append(loop)  # (a batch at each iteration: a few when the loop is short)
            else:
                other += 1
            continue
        if not again and type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name \
                and _iter_of(node.value, name):
            iterators.append(node.targets[0].target.value)  # `dataiter = iter(test_loader)`
            continue
        if _loads_nothing(node, name):
            single += 1
            continue
        if type(again) is cst.FunctionDef and type(node) is cst.Call and type(node.func) is cst.Attribute and \
                node.func.attr.value in ("test", "validate", "predict") and any(
                    type(a.value) is cst.Name and a.value.value == name and not a.star for a in node.args):
            tests.append((node, again))  # `trainer.test(model, test_loader)` in `train_model`
            stack.extend((a.value, again, loop) for a in node.args if not (type(a.value) is cst.Name and a.value.value == name))
            continue
        if not again and type(node) is cst.Call and any(type(a.value) is cst.Name and a.value.value == name and not a.star
                                                         for a in node.args):
            calls.append(node)  # `evaluate(model, test_loader)`
            stack.extend((a.value, again, loop) for a in node.args if not (type(a.value) is cst.Name and a.value.value == name))
            stack.append((node.func, again, loop))
            continue
        if type(node) is cst.For and _iterated(node.iter) == name:
            if _breaks_after_one(node):
                single += 1
            elif not again:
                passes.append(node)
            else:
                other += 1
                continue
            stack.append((node.body, True, None))
            if node.orelse is not None:
                stack.append((node.orelse, again, loop))
            continue
        if (type(node) is cst.FunctionDef or type(node) is cst.Lambda) and name in _param_names(node.params):
            continue
        if type(node) is cst.AssignTarget and type(node.target) is cst.Name and node.target.value == name:
            continue  # (its binding)
        if type(node) is cst.Attribute:
            stack.append((node.value, again, loop))  # not `.attr`: a name of its own
        elif type(node) is cst.Arg:
            stack.append((node.value, again, loop))  # not the keyword
        else:
            repeats = type(node) in (cst.For, cst.While, cst.FunctionDef, cst.Lambda) and not _one_iteration(node)
            inner = node if (type(node) is cst.For or type(node) is cst.While) and not again else None
            body_again: bool | cst.FunctionDef = node if type(node) is cst.FunctionDef else True
            for child in children(node):
                if repeats and type(child) in (cst.IndentedBlock, cst.SimpleStatementSuite):
                    stack.append((child, body_again, inner))
                else:
                    stack.append((child, again, loop))
    return single, other, tuple(passes), tuple(iterators), tuple(calls), tuple(few), tuple(tests)


def _one_iteration(node: cst.CSTNode) -> bool:
    """`for i in range(1):`: a loop whose body runs once."""
    if type(node) is not cst.For or type(node.iter) is not cst.Call or call_name(node.iter) != "range":
        return False
    bounds = [literal(arg.value) for arg in node.iter.args]
    return bounds == [1] or bounds == [0, 1]


_SETTINGS_READ = frozenset({"dataset", "batch_size", "sampler", "num_workers", "collate_fn", "drop_last"})


def _wrapped(call: cst.Call) -> list[cst.BaseExpression]:
    """What an iterator wrapper (`enumerate(loader)`, `tqdm(loader, total=n)`) iterates:
    its first positional argument, or every argument of `zip`."""
    given = [arg.value for arg in call.args if arg.keyword is None and arg.star == ""]
    return given if call_name(call) == "zip" else given[:1]


def _iter_of(expr: cst.BaseExpression, name: str) -> bool:
    """`iter(name)`."""
    return (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "iter" and len(expr.args) == 1
            and type(expr.args[0].value) is cst.Name and expr.args[0].value.value == name)


def _loads_nothing(node: cst.CSTNode, name: str) -> bool:
    """`len(name)`, `name.dataset` (its dataset, batch size, sampler), or a statement that only
    shows names (`train_loader, test_loader` at the end of a notebook cell): uses that load no batch."""
    if type(node) is cst.Attribute:
        return type(node.value) is cst.Name and node.value.value == name and node.attr.value in _SETTINGS_READ
    if type(node) is cst.Call:
        return (type(node.func) is cst.Name and node.func.value == "len" and len(node.args) == 1
                and type(node.args[0].value) is cst.Name and node.args[0].value.value == name)
    if type(node) is not cst.Expr:
        return False
    shown = node.value.elements if type(node.value) is cst.Tuple else [node.value]
    return all(type(getattr(item, "value", item)) is cst.Name for item in shown)


def _param_names(params: cst.Parameters) -> set[str]:
    found = {p.name.value for p in _all_params(params)}
    found.update(star.name.value for star in (params.star_arg, params.star_kwarg) if type(star) is cst.Param)
    return found


def _next_iter(call: cst.Call, name: str) -> bool:
    """`next(iter(name))`, or MONAI's `first(name)` (`monai.utils.first(check_loader)`)."""
    if call_name(call) == "first" and len(call.args) == 1 and type(call.args[0].value) is cst.Name:
        return call.args[0].value.value == name
    if type(call.func) is not cst.Name or call.func.value != "next" or not call.args:
        return False
    return _iter_of(call.args[0].value, name)


def _agreed(defaults: list):
    """The default the parser's options agree on (one value, given once or more); else UNKNOWN."""
    return defaults[0] if len(set(map(repr, defaults))) == 1 else UNKNOWN


def _string_keys(expr: cst.BaseExpression) -> list[str]:
    """[name, key, ...] of `name["training"]["n_workers"]` (string keys only); else []."""
    keys: list[str] = []
    while type(expr) is cst.Subscript and len(expr.slice) == 1 and type(index := expr.slice[0].slice) is cst.Index \
            and isinstance(key := literal(index.value), str):
        keys.insert(0, key)
        expr = expr.value
    return [expr.value, *keys] if type(expr) is cst.Name and keys else []


def _variable_of(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`x` of `Variable(x)` (older scripts' autograd wrapper: the same tensor)."""
    while type(expr) is cst.Call and call_name(expr) == "Variable" and expr.args:
        expr = expr.args[0].value
    return expr


def _iterated(expr: cst.BaseExpression) -> str | None:
    """The name a `for` loop iterates over, through `enumerate`/`tqdm`/`iter`."""
    source = iteration_source(expr)
    return source.value if type(source) is cst.Name else None


_FEW_BATCHES = 10  # batches a pass may read and still be "a few" (a validation loop showing two examples)


def _breaks_after_one(loop: cst.For) -> bool:
    """A loop whose body ends with `break` and holds no `continue`: it takes one item."""
    body = loop.body.body if type(loop.body) is cst.IndentedBlock else ()
    if not body or type(body[-1]) is not cst.SimpleStatementLine or type(body[-1].body[-1]) is not cst.Break:
        return False
    stack: list[cst.CSTNode] = list(body)
    while stack:
        node = stack.pop()
        if type(node) is cst.Continue:
            return False
        if type(node) not in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef):
            stack.extend(children(node))
    return True


# PyG's DataLoader, whose graph batches perf-lint cannot cost: TPL101 and TPL102 leave it alone
_LIBRARY_LOADER = Example(
    """
    import torch
    from torch_geometric.loader import DataLoader
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = Net().cuda()
    for epoch in range(10):
        for data in loader:
            loss = model(data.cuda()).sum()
            loss.backward()
    """,
)


# An RPC trainer: its batches are sent to a parameter server as CPU tensors (`out.device` is the
# CPU there), so neither workers nor pinning is judged on a GPU's account
# DGL graphs batched by the dataset's collate: items perf-lint cannot cost, like PyG's (and
# pin_memory would leave the graphs unpinned)
_DGL_BATCHES = Example(
    """
    import dgl
    import torch
    from torch.utils.data import DataLoader
    class MoleculeDataset:
        def collate(self, samples):
            graphs, labels = map(list, zip(*samples))
            return dgl.batch(graphs), torch.tensor(labels)
    dataset = MoleculeDataset()
    loader = DataLoader(dataset.train, batch_size=128, shuffle=True, collate_fn=dataset.collate)
    for epoch in range(100):
        for g, y in loader:
            loss = model(g.to("cuda"), y.cuda()).sum()
            loss.backward()
            optimizer.step()
    """,
)
# the whole dev set in one batch, read every 100 steps: one batch per pass, nothing to overlap
_WHOLE_DATASET = Example(
    """
    import torch
    from torch.utils.data import DataLoader
    from torchvision import datasets
    dev_dataset = datasets.ImageFolder("dev", transform=transform)
    dev_iter = DataLoader(dev_dataset, batch_size=len(dev_dataset), shuffle=False)
    model.cuda()
    for step, (x, y) in enumerate(train_iter):
        model(x.cuda()).sum().backward()
        optimizer.step()
        if step % 100 == 0:
            with torch.no_grad():
                for dx, dy in dev_iter:
                    acc = (model(dx.cuda()).argmax(1) == dy.cuda()).float().mean()
    """,
)
_RPC_TRAINER = Example(
    """
    import torch
    import torch.distributed.rpc as rpc
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms

    class ParameterServer:
        def __init__(self):
            self.model = Net().to(torch.device("cuda:0"))

    def train(net, loader, opt):
        for data, target in loader:
            with dist_autograd.context() as cid:
                out = net(data)
                loss = F.nll_loss(out, target.to(out.device))
                dist_autograd.backward(cid, [loss])
                opt.step(cid)

    loader = DataLoader(datasets.MNIST("data", train=True, transform=transforms.ToTensor()), batch_size=32)
    for epoch in range(10):
        train(net, loader, opt)
    """,
)


class SynchronousDataLoader(LoaderRule):
    """
    ## What it does
    Finds a `torch.utils.data.DataLoader` (or webdataset's `WebLoader`, which makes one of
    its arguments; torchdata's `StatefulDataLoader`; a class of the project deriving from one
    that passes its arguments on and iterates like it) whose `num_workers` is omitted or resolves to
    0 (a literal, a constant, a `**kwargs` dict, also one chosen by a condition that
    cannot hold: a `torch.device` compared with a string, an argparse default, also
    through a parameter its callers pass the namespace to: `def main(args)`, also callers
    in the modules importing it that parse it (dlrm's `dp.make_loaders(args)`), or of a
    parser a function of the project builds, the default of a config class of the project
    whose one instance it reads (`opt.num_workers` with `opt = Config()`), the constant of a
    config module (`config.num_workers` with `from tools import config`), what the project's
    YAML files set (`opt.data.num_workers` with `data:` `num_workers: 0`, also `cfg["data"]["num_workers"]`), what every call of
    the function gives the parameter it is (in the file, or else in the modules that import
    it: `Cifar10DataModule(num_workers=4)` in a notebook, or `num_workers=args.num_workers`
    where that module parses `--num_workers` itself), or its default (not for a builder decorated
    with detectron2's `@configurable`, whose calls given a config take it from `from_config`); for a namespace that
    comes from afar, `self.args.num_workers`, the default every `--num_workers` option of the
    project gives, those of the file's top folder first), over a dataset
    that is not cheap to load.

    ## Why is this bad?
    With `num_workers=0` every batch is loaded, decoded and collated in the training
    process, between two steps, while the GPU waits. In the profile of a V100 job at 25%
    GPU utilisation, the DataLoader took 82 ms of each 10-step window; with 4 workers and
    pinned memory, utilisation rose to 78% and the epoch took 57% less time.

    What an item costs depends on the dataset, so perf-lint looks at it: the class made
    in the file, or in a local module the file imports (`from .data import MyDataset`,
    `from data import MyDataset`: the file next to it), or what a function of such a
    module returns (through its names, torch's `Subset`/`ConcatDataset`, the module's
    functions and classes, a method of the class making the loader, `self.load_and_cache_examples(...)`,
    a `torch.load` of the file it `torch.save`d the dataset to, each
    class of a table the dataset class is picked from: `Data = data_dict[args.data]`; a class an
    option holds, `args.dataset_class`, is the user's: the other datasets decide),
    and what its `__getitem__` calls
    (its own methods and the module's functions too). Per-item file I/O (`open`,
    `Image.open`, `cv2.imread`, `read_image`, audio loads, `np.load`, reading an HDF5/LMDB
    store), decoding, transforms and augmentation (`self.transform(x)`, torchvision
    transforms) and tokenization make it expensive, and the message says where. Library
    datasets are known by name: torchvision's (`ImageFolder`, and `MNIST`/`CIFAR10`,
    which make a PIL image of every item), Hugging Face `datasets` tables (with a
    `with_transform`/`set_transform`: expensive), transformers' `TextDataset` and
    `LineByLineTextDataset` (tokenized up front: cheap).

    Silent when:
    - the value is unknown (a function parameter, a `**kwargs` of unknown content);
    - the dataset is cheap to load in the training process, where workers would only
      add inter-process copies: a `TensorDataset`, a tensor (`mask.nonzero().view(-1)`:
      indices), list or `range`, a class
      whose `__getitem__` only indexes tensors, lists and arrays held in memory
      (pre-tokenized text: `return self.input_ids[idx], self.target_ids[idx]`, or the
      encodings a tokenizer made once, `tokenizer(texts, truncation=True)`, and a pandas
      column's `.values`), a Hugging
      Face table read with fewer than 256 rows a batch (tens of microseconds a row).
      Computing an item (random tensors, math over a whole image) is CPU work, not cheap;
    - the dataset's `__getitem__` or the `collate_fn` moves data to the GPU (`.cuda()`,
      `.to(device)`): worker processes cannot do that;
    - only one batch is taken: the batch is the whole dataset (`batch_size=len(dev_dataset)`),
      or every use of the loader is a `next(iter(loader))` (also MONAI's `first(loader)`,
      `it = iter(loader)` then one `next(it)` / `it.next()`, or
      `next(iter(DataLoader(...)))` itself, or one pass over `DataLoader(...)` where it is made,
      in no loop and not training: normalisation statistics), a loop that breaks after its
      first batch or only shows the batches (`print(x.size())`: a demo of the loader; a
      viewer waiting for a person at each batch: `input()`, `breakpoint()`, `cv2.waitKey(0)`,
      `plt.show()` in a script),
      a `next(iter(loader))` in each iteration of a short loop that does not train (`for j
      in range(5):`, to show a few batches), `len(loader.dataset)`, or it is a Lightning
      `test_dataloader`
      (`predict_dataloader`) in a script that calls `trainer.fit` but never `trainer.test`;
    - each pass reads a few batches only: every read is a `next(iter(loader))` in an epoch
      loop (one test batch each epoch), or the loader is only passed to functions of the source
      whose every loop over it stops after ten at most (`if count == num_examples: break`,
      `num_examples=2`: hkproj's `run_validation`, also for a loader a function returns), or
      every Lightning Trainer limits the passes of its hook to ten at most (`limit_val_batches=5`);
    - in a script or notebook that trains, the loader is made by the module's own code (or by
      a function that trains, which the module runs once: `main()` under `if __name__ == "__main__":`) and
      read by one pass that does not train, outside any loop or function, its own or that
      of a function of the project it is given to, or that it gives the loader on to
      (`test_acc = evaluate(model, test_loader)`: a test pass after training, nothing
      repeats it; a static method attached with `setattr(Class, "name", function)` in a
      notebook counts as the function it names; a Lightning Trainer's `test`, `validate` or
      `predict` given it, also in a function that first calls `trainer.fit`: one pass per
      training run). In a source that only
      evaluates, that pass is the job, and is reported, except in the `if __name__ ==
      "__main__":` block of a module other modules import that takes no command line (a
      dataset module counting its batches: a check of the module). The same for a loader a factory
      function returns (`return train_loader, valid_loader, test_loader`) when each module of
      the project calling it trains and reads that loader in such passes only (a
      `train_model(...)` of another file that reads its `test_loader` once, after its epochs);
    - in a notebook that never uses a GPU (nor does a framework it uses for the loader):
      a CPU session, where the worth of workers is rarely the question. A `.py` file that
      never names a GPU is reported, saying that the training loop waits (the profiler
      measures the gain on the CPU too), unless its dataset is one of torchvision's held
      in memory (MNIST, CIFAR10, ...): on the CPU, making an image of an item is small next
      to the step, and workers would take the step's cores;
    - for `IterableDataset` subclasses defined in the file, and for a loader given
      `batch_size=None` whose dataset is not known to read files (a stream of whole batches,
      torchrec's and datapipes'): workers would each replay the whole stream unless it
      shards itself;
    - for a library's DataLoader whose items it cannot cost (PyG's, batching graphs), and for
      one whose `collate_fn` batches DGL graphs (`dgl.batch` itself, or in a function of the project or
      a method of the dataset's class: `collate_fn=dataset.collate`);
    - in code using `torch.distributed.rpc` whose batches are not moved to CUDA itself (a
      trainer sending CPU tensors to a parameter server: `.to(out.device)` stays on the CPU),
      as in CPU-only code;
    - the loader is made in a branch no call of its function takes: under `if p is None:`
      (or `is not None`, or the `else`) where every call in the project gives the parameter
      `p` a constant deciding the other way (`get_loaders(..., validation_fraction=0.1)`), or
      in a function nothing in the project runs (a `load_celebA` no script calls; not in a
      package with a `setup.py` or `pyproject.toml`, whose functions are for its users);
    - the script binds the loader's name again before anything reads it (`train_loader` made
      again over a `random_split` of its dataset), and no function of it names it.

    When the dataset cannot be resolved (a name perf-lint cannot follow, a call it does
    not know), the rule reports as before.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    ```

    ## Fix
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
    ```
    Start from about the number of CPU cores per GPU (option `num-workers`, default 4).
    On spawn-based platforms (macOS, Windows) the dataset must then be picklable.
    """

    code = "TPL101"
    triggers = ("Loader",)  # (`DataLoader`, webdataset's `WebLoader`)
    name = "dataloader-sync-loading"
    summary = "DataLoader loads batches in the training process (num_workers=0)"
    probe = "dataloader"
    options = {"num-workers": 4}
    VALID = (
        # detectron2's `@configurable` builder: called with a config, it takes `num_workers` from
        # `from_config` (`cfg.DATALOADER.NUM_WORKERS`), not from its default
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            from detectron2.config import configurable
            def _train_loader_from_config(cfg):
                return {"dataset": get_dataset(cfg), "num_workers": cfg.DATALOADER.NUM_WORKERS}
            @configurable(from_config=_train_loader_from_config)
            def build_train_loader(dataset, *, num_workers=0):
                return DataLoader(dataset, batch_size=2, num_workers=num_workers)
            model = build_model(cfg).cuda()
            for data in build_train_loader(cfg):
                model(data.cuda()).sum().backward()
                optimizer.step()
            """
        ),
        # a class of the project loading in a thread of its own (YOLOP's prefetching `DataLoaderX`)
        Example(
            """
            from torch.utils.data import DataLoader
            from prefetch_generator import BackgroundGenerator
            class DataLoaderX(DataLoader):
                def __iter__(self):
                    return BackgroundGenerator(super().__iter__())
            loader = DataLoaderX(ImageFolder(root), batch_size=64, pin_memory=True)
            for epoch in range(100):
                for x, y in loader:
                    loss = model(x.to("cuda")).mean()
                    loss.backward()
                    opt.step()
            """,
        ),
        # the dataset a method of the class makes, in memory: a TensorDataset of features, or the
        # class the user plugs in through an option (simpletransformers' `load_and_cache_examples`)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            class Model:
                def load_and_cache_examples(self, examples):
                    if self.args.dataset_class:
                        CustomDataset = self.args.dataset_class
                        return CustomDataset(examples)
                    features = [self.tokenizer(e) for e in examples]
                    return TensorDataset(torch.tensor(features)), len(features)
                def predict(self, texts):
                    dataset, count = self.load_and_cache_examples(texts)
                    loader = DataLoader(dataset, batch_size=8)
                    preds = []
                    for batch in loader:
                        with torch.no_grad():
                            preds.append(self.model(batch[0].cuda()))
                    return preds
            """,
        ),
        # MONAI's `first(check_loader)`: one batch to look at
        Example(
            """
            import torch
            from monai.data import DataLoader
            from monai.utils import first
            from torchvision import datasets, transforms
            check_loader = DataLoader(datasets.MNIST(".", transform=transforms.ToTensor()), batch_size=2)
            check_data = first(check_loader)
            model = Net().cuda()
            for x, y in train_loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """
        ),
        # a loader bound again, over a split of its dataset, before anything reads it: never iterated
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            train_db = datasets.MNIST("data", train=True, transform=transforms.ToTensor())
            train_loader = torch.utils.data.DataLoader(train_db, batch_size=200, shuffle=True)
            train_db, val_db = torch.utils.data.random_split(train_db, [50000, 10000])
            train_loader = torch.utils.data.DataLoader(train_db, batch_size=200, shuffle=True, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for data, target in train_loader:
                    loss = criteon(net(data.cuda()), target.cuda())
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # DGL graphs batched by `dgl.batch` itself, whose batches perf-lint cannot cost
        Example(
            """
            import dgl
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(PPIDataset("train"), 2, collate_fn=dgl.batch)
            model = GAT().cuda()
            for epoch in range(100):
                for bg in train_dataloader:
                    bg = bg.to("cuda")
                    loss = model(bg, bg.ndata["feat"]).sum()
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # the test loader of a `main()` run once, read by one pass after training
        Example(
            """
            import torch
            import torchvision
            from torch.utils.data import DataLoader
            def train(loader):
                model = Net().cuda()
                for epoch in range(2):
                    for x, y in loader:
                        criterion(model(x.cuda()), y.cuda()).backward()
                        optimizer.step()
            def test(loader):
                net = Net()
                with torch.no_grad():
                    return sum((net(x).argmax(1) == y).sum().item() for x, y in loader)
            def main():
                train_loader = DataLoader(torchvision.datasets.CIFAR10("data", True, tf), batch_size=4, num_workers=4, persistent_workers=True)
                test_loader = DataLoader(torchvision.datasets.CIFAR10("data", False, tf), batch_size=4)
                train(train_loader)
                test(test_loader)
            if __name__ == "__main__":
                main()
            """,
        ),
        # one batch of a loader made on the spot, to look at (fastai's DDPM notebook)
        Example(("%matplotlib inline\nimport torch\nfrom torch.utils.data import DataLoader\nmodel = UNet().cuda()",
                 "next(iter(DataLoader(tds['train'], batch_size=2)))",
                 "for x in DataLoader(tds['train'], batch_size=512, num_workers=4, persistent_workers=True, pin_memory=True):\n"
                 "    model(x.cuda()).mean().backward()")),
        # a few test items read once, before training, to save them (melgan's reference audio)
        Example(
            """
            import argparse
            import torch
            from torch.utils.data import DataLoader
            from torchvision.datasets import ImageFolder
            parser = argparse.ArgumentParser()
            parser.add_argument("--n_test_samples", type=int, default=8)
            args = parser.parse_args()
            test_loader = DataLoader(ImageFolder("test"), batch_size=1)
            for i, x_t in enumerate(test_loader):
                save(x_t.cuda(), i)
                if i == args.n_test_samples - 1:
                    break
            """
        ),
        _WHOLE_DATASET,
        # a dataset class picked from a table of classes that all slice arrays held in memory (Pyraformer)
        Example(
            """
            import numpy as np
            import torch
            from torch.utils.data import DataLoader, Dataset
            class Hourly(Dataset):
                def __init__(self, path):
                    self.data = np.load(path)
                def __getitem__(self, index):
                    return self.data[index:index + 96]
            class Minutely(Hourly):
                pass
            Data = {"ETTh1": Hourly, "ETTm1": Minutely}[args.data]
            loader = DataLoader(Data(args.path), batch_size=32, shuffle=True, num_workers=0)
            for epoch in range(10):
                for x in loader:
                    model(x.cuda()).mean().backward()
            """,
        ),
        # a name the module binds again before each loader: the dataset the loader is given is the
        # one bound last (tensors in memory), not the image folder before it (outlier-exposure's test.py)
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            net = torch.nn.Linear(3, 3).cuda()
            def scores(loader):
                with torch.no_grad():
                    return [net(x.cuda()).max(1)[0].cpu() for x, _ in loader]
            ood_data = datasets.ImageFolder("icons", transform=transforms.ToTensor())
            ood_loader = torch.utils.data.DataLoader(ood_data, batch_size=200, num_workers=4, pin_memory=True)
            print(scores(ood_loader))
            ood_data = torch.utils.data.TensorDataset(torch.randn(2000, 3), torch.ones(2000))
            ood_loader = torch.utils.data.DataLoader(ood_data, batch_size=200, shuffle=True)
            print(scores(ood_loader))
            """,
        ),
        # a dataset module's self-check: two batches plotted, then the loop stops (deeplab's)
        Example(
            """
            import torch
            import matplotlib.pyplot as plt
            from PIL import Image
            class VOCSegmentation(torch.utils.data.Dataset):
                def __getitem__(self, index):
                    return Image.open(self.images[index])
            if __name__ == "__main__":
                dataloader = torch.utils.data.DataLoader(VOCSegmentation(), batch_size=5, shuffle=True, num_workers=0)
                for ii, sample in enumerate(dataloader):
                    plt.imshow(sample[0])
                    if ii == 1:
                        break
                plt.show(block=True)
            model = torch.nn.Linear(2, 2).cuda()
            """,
        ),
        # tensors loaded once with torch.load (a label cast `.to(torch.long)`), indexed per item
        Example(
            """
            import torch
            from torch.utils.data import Dataset, DataLoader
            class SimpleDataset(Dataset):
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __len__(self):
                    return self.x.size(0)
                def __getitem__(self, idx):
                    return self.x[idx], self.y[idx]
            data_dict = torch.load("data_dict.pt")
            x = data_dict["node_feat"]
            y = data_dict["label"].to(torch.long)
            loader = DataLoader(SimpleDataset(x[train_idx], y[train_idx]), batch_size=256, shuffle=True)
            for epoch in range(30):
                for xb, yb in loader:
                    model(xb.cuda()).sum().backward()
                    optimizer.step()
            """,
        ),
        _DGL_BATCHES,
        _RPC_TRAINER,
        # a stream of whole batches (batch_size=None): each worker would replay it
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            from torchrec.datasets.random import RandomRecDataset
            loader = DataLoader(RandomRecDataset(keys=KEYS, batch_size=64, hash_size=100), batch_size=None)
            for batch in loader:
                model(batch.to("cuda")).sum().backward()
            """,
        ),
        # a loop that only shows the batches (a demo of the loader); a loader of node indices
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device("cuda")
            loader = DataLoader(DogCat("data/"), batch_size=2, shuffle=True)
            for images, labels in loader:
                print(images.size(), labels.tolist())
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            train_idx = data.train_mask.nonzero(as_tuple=False).view(-1)
            for idx in DataLoader(train_idx, batch_size=1024, shuffle=True):
                loss = model(xs[idx].cuda()).sum()
                loss.backward()
            """,
        ),
        _LIBRARY_LOADER,  # a library's DataLoader whose batches perf-lint cannot cost: not judged
        # a notebook that makes `train_loader` again in later cells, to show one batch and to
        # encode the data once: those loaders are not the one its training loop iterates
        Example(
            (
                "%matplotlib inline\nimport torch\nfrom torchvision import datasets, transforms\n"
                "train_loader = torch.utils.data.DataLoader(datasets.MNIST('data', transform=transforms.ToTensor()), "
                "batch_size=256, num_workers=4)",
                "for epoch in range(5):\n    for x, y in train_loader:\n        model(x.cuda()).sum().backward()\n"
                "        optimizer.step()",
                "train_loader = torch.utils.data.DataLoader(datasets.MNIST('data', transform=transforms.ToTensor()), "
                "batch_size=15)\nfor images, labels in train_loader:\n    print(images.shape)\n    break",
                "train_loader = torch.utils.data.DataLoader(datasets.MNIST('data', transform=transforms.ToTensor()), "
                "batch_size=60000)\nfor x, y in train_loader:\n    X_train = model.encoder(x.cuda()).cpu().numpy()",
            )
        ),
        # a notebook's test loader that nothing reads (the notebook trains on its train loader)
        Example(
            (
                "%matplotlib inline\nimport torch\nfrom torchvision import datasets, transforms\n"
                "train_loader = torch.utils.data.DataLoader(datasets.MNIST('data', transform=transforms.ToTensor()), "
                "batch_size=256, num_workers=4)\n"
                "test_loader = torch.utils.data.DataLoader(datasets.MNIST('data', train=False, "
                "transform=transforms.ToTensor()), batch_size=256)",
                "for epoch in range(5):\n    for x, y in train_loader:\n        model(x.cuda()).sum().backward()\n"
                "        optimizer.step()",
            )
        ),
        # a script that never uses a GPU, over MNIST's arrays: on the CPU, making an image of an
        # item is small next to the step, and workers would take the step's cores
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            data = datasets.MNIST("data", download=True, transform=transforms.ToTensor())
            loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
            for x, y in loader:
                model(x).sum().backward()
            """
        ),
        # a notebook that never uses a GPU: it trains on the CPU as written, no GPU waits
        Example(
            (
                """
                %matplotlib inline
                import torch
                from torchvision import datasets, transforms
                data = datasets.MNIST("data", download=True, transform=transforms.ToTensor())
                loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
                """,
                """
                for epoch in range(5):
                    for images, labels in loader:
                        loss = criterion(model(images), labels)
                        loss.backward()
                        optimizer.step()
                """,
            )
        ),
        # a test pass after training (module level, once), a look at one batch, its dataset's size
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            train = torch.utils.data.DataLoader(datasets.MNIST("data", transform=transforms.ToTensor()), num_workers=4)
            test_loader = torch.utils.data.DataLoader(datasets.MNIST("data", train=False, transform=transforms.ToTensor()))
            model = Net().cuda()
            for epoch in range(5):
                for images, labels in train:
                    model(images.cuda()).sum().backward()
                    optimizer.step()
            with torch.no_grad():
                for images, labels in test_loader:
                    correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum()
            print(correct / len(test_loader.dataset))
            dataiter = iter(test_loader)
            images, labels = dataiter.next()
            """
        ),
        # a test pass after training through a function of the project that loops over it once
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            train = torch.utils.data.DataLoader(datasets.MNIST("data", transform=transforms.ToTensor()), num_workers=4)
            test_iterator = torch.utils.data.DataLoader(datasets.MNIST("data", train=False, transform=transforms.ToTensor()))
            def evaluate(model, iterator):
                with torch.no_grad():
                    return sum((model(x.cuda()).argmax(1) == y.cuda()).sum() for x, y in iterator)
            model = Net().cuda()
            for epoch in range(5):
                for images, labels in train:
                    model(images.cuda()).sum().backward()
                    optimizer.step()
            test_acc = evaluate(model, test_iterator)
            """
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64, num_workers=4)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def make(ds, workers):
                return DataLoader(ds, num_workers=workers)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def make(ds, **kw):
                return DataLoader(ds, **kw)
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            x = torch.randn(64, 3, device='cuda')
            loader = DataLoader(TensorDataset(x, x.cuda()))
            """,
        ),
        Example(
            """
            from my_lib import DataLoader
            loader = DataLoader(ds)
            """,
        ),
        Example(
            """
            import argparse
            from torch.utils.data import DataLoader
            p = argparse.ArgumentParser()
            p.add_argument('--workers', type=int, default=8)
            args = p.parse_args()
            loader = DataLoader(ds, num_workers=args.workers)
            """,
        ),
        # in-memory tensors: indexing them is cheap, workers would only add copies between processes
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            x, y = torch.randn(1000, 16), torch.randint(0, 2, (1000,))
            loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(range(1000), batch_size=10)
            """,
        ),
        # a pre-tokenized dataset: __getitem__ only indexes lists built in __init__
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset

            class GPTDataset(Dataset):
                def __init__(self, txt, tokenizer, max_length):
                    ids = tokenizer.encode(txt)
                    self.input_ids, self.target_ids = [], []
                    for i in range(0, len(ids) - max_length, max_length):
                        self.input_ids.append(torch.tensor(ids[i:i + max_length]))
                        self.target_ids.append(torch.tensor(ids[i + 1:i + max_length + 1]))

                def __len__(self):
                    return len(self.input_ids)

                def __getitem__(self, idx):
                    return self.input_ids[idx], self.target_ids[idx]

            loader = DataLoader(GPTDataset(text, tokenizer, 256), batch_size=8, shuffle=True)
            """,
        ),
        # a class indexing the tensors it is given, and given tensors
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset
            class Pairs(Dataset):
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __getitem__(self, i):
                    return self.x[i], self.y[i]
            loader = DataLoader(Pairs(torch.randn(100, 2), torch.zeros(100)), batch_size=10)
            """,
        ),
        # a Hugging Face table read 32 rows a batch
        Example(
            """
            from datasets import load_dataset
            from torch.utils.data import DataLoader
            ds = load_dataset('imdb', split='train')
            ds = ds.map(tokenize, batched=True)
            ds.set_format('torch')
            loader = DataLoader(ds, batch_size=32, shuffle=True)
            """,
        ),
        # the collate_fn moves batches to the GPU: workers could not
        Example(
            """
            from functools import partial
            import torch
            from torch.utils.data import DataLoader
            def collate(batch, device='cpu'):
                return torch.stack(batch).to(device)
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            loader = DataLoader(ds, batch_size=8, collate_fn=partial(collate, device=device))
            """,
        ),
        # __getitem__ computes on the GPU: workers could not
        Example(
            """
            import torch, torchaudio
            class Speech(torch.utils.data.Dataset):
                def __init__(self, device='cuda'):
                    self.dataset = torchaudio.datasets.LIBRISPEECH('.', url='test-clean')
                    self.device = device
                def __getitem__(self, item):
                    audio, rate, text, *_ = self.dataset[item]
                    return audio.to(self.device), text
            loader = torch.utils.data.DataLoader(Speech(), batch_size=16)
            """,
        ),
        # one batch only: nothing to overlap
        Example(
            """
            from torch.utils.data import DataLoader
            from torchvision.datasets import MNIST
            loader = DataLoader(MNIST('.', transform=to_tensor), batch_size=256)
            images, labels = next(iter(loader))
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def peek(ds):
                loader = DataLoader(ds, batch_size=4)
                for batch in loader:
                    print(batch.shape)
                    break
            """,
        ),
        # a **kwargs chosen by a condition perf-lint cannot decide: not known
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            kwargs = {'num_workers': 4} if device.type == 'cuda' else {}
            loader = DataLoader(ds, batch_size=32, **kwargs)
            """,
        ),
        # Lightning calls test_dataloader() from trainer.test() only, which this script never calls
        Example(
            """
            import lightning as L
            from torch.utils.data import DataLoader
            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train, batch_size=32, num_workers=4)
                def test_dataloader(self):
                    return DataLoader(self.test, batch_size=32)
            L.Trainer().fit(model, Data())
            """,
        ),
        # read once for statistics, through a static method attached to a class and another it calls
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            from torchvision.datasets import ImageFolder
            class StepByStep:
                @staticmethod
                def loader_apply(loader, func):
                    return torch.stack([func(x, y) for x, y in loader]).sum(0)
            def make_normalizer(loader):
                return StepByStep.loader_apply(loader, statistics)
            setattr(StepByStep, "make_normalizer", make_normalizer)
            stats_loader = DataLoader(ImageFolder("rps", transform=t), batch_size=16)
            normalizer = StepByStep.make_normalizer(stats_loader)
            model.cuda()
            for x, y in train_loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
        ),
        # items torch.load returned, given through a function whose name a module method shares (`model.train()`)
        Example(
            """
            import torch
            from torch.utils.data import Dataset, DataLoader
            class InstructionDataset(Dataset):
                def __init__(self, data):
                    self._data = data
                def __len__(self):
                    return len(self._data)
                def __getitem__(self, i):
                    return self._data[i]["input_ids"], self._data[i]["labels"]
            def main(data_dir, model):
                train_data = torch.load(data_dir + "/train.pt")
                train(model, train_data)
            def train(model, train_data):
                model.train()
                for x, y in DataLoader(InstructionDataset(train_data), batch_size=4):
                    model(x.cuda()).sum().backward()
            """,
        ),
        # a viewer of the batches that waits for a person at each one
        Example(
            """
            import matplotlib.pyplot as plt
            from torch.utils import data
            from torchvision.datasets import ImageFolder
            if __name__ == "__main__":
                loader = data.DataLoader(ImageFolder("images", transform=t), batch_size=4)
                for images, labels in loader:
                    plt.imshow(images[0].permute(1, 2, 0))
                    plt.show()
                    if input() == "q":
                        break
            """,
        ),
    )
    INVALID = (
        # a batch taken with `next(iter(loader))` at every step (a new iterator each time)
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            data = datasets.CIFAR10("data", transform=transforms.ToTensor())
            loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=True)
            for i in range(15000):
                x, _ = next(iter(loader))
                model(x.cuda()).sum().backward()
            """,
            """
            import torch
            from torchvision import datasets, transforms
            data = datasets.CIFAR10("data", transform=transforms.ToTensor())
            loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=True, num_workers=4, persistent_workers=True)
            for i in range(15000):
                x, _ = next(iter(loader))
                model(x.cuda()).sum().backward()
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64)
            """,
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True)
            """,
        ),
        Example(
            """
            import torch as T
            loader = T.utils.data.DataLoader(ds, num_workers=0)
            """,
            """
            import torch as T
            loader = T.utils.data.DataLoader(ds, num_workers=4, persistent_workers=True)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader as DL
            loader = DL(
                ds,
                batch_size=8,  # small
            )
            """,
            """
            from torch.utils.data import DataLoader as DL
            loader = DL(
                ds,
                batch_size=8,  # small
                num_workers=4,
                persistent_workers=True,
            )
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            WORKERS = 0
            loader = DataLoader(ds, num_workers=WORKERS)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            kw = dict(batch_size=4, num_workers=0)
            loader = DataLoader(ds, **kw)
            """,
        ),
        Example(
            """
            import argparse
            from torch.utils import data
            p = argparse.ArgumentParser()
            p.add_argument('--num-workers', type=int, default=0)
            args = p.parse_args()
            loader = data.DataLoader(ds, num_workers=args.num_workers)
            """,
        ),
        # a torch.device never equals a str: the **kwargs is always the empty one
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            kwargs = {'num_workers': 4} if device == 'cuda' else {}
            loader = DataLoader(ds, batch_size=32, **kwargs)
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            kwargs = {'num_workers': 4} if device == 'cuda' else {}
            loader = DataLoader(ds, batch_size=32, **kwargs, num_workers=4, persistent_workers=True)
            """,
        ),
        # torchvision's MNIST makes a PIL image of every item and runs the transform on it, which
        # a GPU's step is short enough to wait on
        Example(
            """
            from torch.utils.data import DataLoader
            from torchvision import datasets, transforms
            train = datasets.MNIST('data', train=True, transform=transforms.ToTensor())
            loader = DataLoader(train, batch_size=64, shuffle=True)
            model.cuda()
            """,
            """
            from torch.utils.data import DataLoader
            from torchvision import datasets, transforms
            train = datasets.MNIST('data', train=True, transform=transforms.ToTensor())
            loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
            model.cuda()
            """,
        ),
        # a class of the file that opens and transforms an image per item (through a method)
        Example(
            """
            from PIL import Image
            from torch.utils.data import DataLoader, Dataset
            class Images(Dataset):
                def __init__(self, paths, transform):
                    self.paths, self.transform = paths, transform
                def __getitem__(self, i):
                    return self.transform(self.load(self.paths[i]))
                def load(self, path):
                    return Image.open(path).convert('RGB')
            loader = DataLoader(Images(paths, tf), batch_size=32, num_workers=0)
            """,
            """
            from PIL import Image
            from torch.utils.data import DataLoader, Dataset
            class Images(Dataset):
                def __init__(self, paths, transform):
                    self.paths, self.transform = paths, transform
                def __getitem__(self, i):
                    return self.transform(self.load(self.paths[i]))
                def load(self, path):
                    return Image.open(path).convert('RGB')
            loader = DataLoader(Images(paths, tf), batch_size=32, num_workers=4, persistent_workers=True)
            """,
        ),
        # tokenization per item
        Example(
            """
            import torch
            class Texts(torch.utils.data.Dataset):
                def __init__(self, texts, tokenizer):
                    self.texts, self.tokenizer = texts, tokenizer
                def __getitem__(self, i):
                    return self.tokenizer(self.texts[i], truncation=True)
            train_ds = Texts(texts, tokenizer)
            loader = torch.utils.data.DataLoader(train_ds, batch_size=16)
            """,
            """
            import torch
            class Texts(torch.utils.data.Dataset):
                def __init__(self, texts, tokenizer):
                    self.texts, self.tokenizer = texts, tokenizer
                def __getitem__(self, i):
                    return self.tokenizer(self.texts[i], truncation=True)
            train_ds = Texts(texts, tokenizer)
            loader = torch.utils.data.DataLoader(train_ds, batch_size=16, num_workers=4, persistent_workers=True)
            """,
        ),
        # a split of an ImageFolder (through random_split and a wrapper class that indexes it)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset, random_split
            from torchvision.datasets import ImageFolder
            class Indexed(Dataset):
                def __init__(self, base):
                    self.base = base
                def __getitem__(self, i):
                    return self.base[i], i
            train, val = random_split(ImageFolder('images', transform=tf), [0.9, 0.1])
            loader = DataLoader(Indexed(train), batch_size=64)
            for epoch in range(10):
                for (x, y), i in loader:
                    step(x, y)
            """,
            """
            import torch
            from torch.utils.data import DataLoader, Dataset, random_split
            from torchvision.datasets import ImageFolder
            class Indexed(Dataset):
                def __init__(self, base):
                    self.base = base
                def __getitem__(self, i):
                    return self.base[i], i
            train, val = random_split(ImageFolder('images', transform=tf), [0.9, 0.1])
            loader = DataLoader(Indexed(train), batch_size=64, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for (x, y), i in loader:
                    step(x, y)
            """,
        ),
        # a Hugging Face table read 512 rows a batch, and one that transforms every row it reads
        Example(
            """
            from datasets import load_dataset
            from torch.utils.data import DataLoader
            train, test = load_dataset('imdb', split=['train', 'test'])
            train = train.with_format('torch')
            loader = DataLoader(train, batch_size=512, shuffle=True)
            """,
            """
            from datasets import load_dataset
            from torch.utils.data import DataLoader
            train, test = load_dataset('imdb', split=['train', 'test'])
            train = train.with_format('torch')
            loader = DataLoader(train, batch_size=512, shuffle=True, num_workers=4, persistent_workers=True)
            """,
        ),
        Example(
            """
            from datasets import load_dataset
            from torch.utils.data import DataLoader
            dataset = load_dataset('imagefolder', data_dir='images')
            train = dataset['train'].with_transform(preprocess)
            loader = DataLoader(train, batch_size=8)
            """,
            """
            from datasets import load_dataset
            from torch.utils.data import DataLoader
            dataset = load_dataset('imagefolder', data_dir='images')
            train = dataset['train'].with_transform(preprocess)
            loader = DataLoader(train, batch_size=8, num_workers=4, persistent_workers=True)
            """,
        ),
        # a next(iter(...)) peek does not make the loop over the same loader a single batch
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8)
            first = next(iter(loader))
            for batch in loader:
                step(batch)
            """,
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, num_workers=4, persistent_workers=True)
            first = next(iter(loader))
            for batch in loader:
                step(batch)
            """,
        ),
        # the test hook of a script that tests
        Example(
            """
            import lightning as L
            from torch.utils.data import DataLoader
            class Data(L.LightningDataModule):
                def test_dataloader(self):
                    return DataLoader(self.test, batch_size=32)
            trainer = L.Trainer()
            trainer.fit(model, Data())
            trainer.test(model, Data())
            """,
            """
            import lightning as L
            from torch.utils.data import DataLoader
            class Data(L.LightningDataModule):
                def test_dataloader(self):
                    return DataLoader(self.test, batch_size=32, num_workers=4, persistent_workers=True)
            trainer = L.Trainer()
            trainer.fit(model, Data())
            trainer.test(model, Data())
            """,
        ),
        # notebook: the dataset class in one cell, the loader in another
        Example(
            (
                """
                %load_ext autoreload
                import cv2
                import torch
                class Frames(torch.utils.data.Dataset):
                    def __getitem__(self, i):
                        return torch.from_numpy(cv2.imread(self.files[i]))
                """,
                """
                loader = torch.utils.data.DataLoader(Frames(), batch_size=4)
                """,
                """
                for frames in loader:
                    model(frames.cuda())
                """,
            ),
            (
                """
                %load_ext autoreload
                import cv2
                import torch
                class Frames(torch.utils.data.Dataset):
                    def __getitem__(self, i):
                        return torch.from_numpy(cv2.imread(self.files[i]))
                """,
                """
                loader = torch.utils.data.DataLoader(Frames(), batch_size=4, num_workers=4, persistent_workers=True)
                """,
                """
                for frames in loader:
                    model(frames.cuda())
                """,
            ),
        ),
    )

    def finish(self) -> None:
        workers = self.opts["num-workers"]
        for call, site in self.loaders.items():
            value = self.setting(site, NUM_WORKERS, "num_workers")
            if value is UNKNOWN or (value is not None and value != 0) or not self.costed(call, loading=True):
                continue
            gpu = self.feeds_gpu(call)
            if not gpu and self.ctx.units[0].notebook:
                continue  # a notebook that never uses a GPU: a CPU session, where workers are rarely worth it
            dataset = self._dataset(site)
            if self._gpu_tensor_dataset(dataset) or self._iterable_dataset(dataset):
                continue
            cost = self.dataset_cost(site)
            if _unbatched(call) and cost.kind != EXPENSIVE:
                continue  # (a stream of batches, not known to read files: each worker would replay it unless it shards)
            if cost.kind in (CHEAP, ON_DEVICE):
                continue  # indexing memory: workers would add IPC; moves to the GPU: workers cannot
            if cost.in_memory and not gpu:
                continue  # MNIST's arrays made images: small next to a step on the CPU, where workers take its cores
            rows = self.batch_size(site) if cost.kind == ROWS else None
            if cost.kind == ROWS and (rows is None or rows < ROWS_BATCH):
                continue  # a few Arrow rows per step: small next to the step
            if self.collate_moves(site) is not None or self.loads_once(site) or self.reads_few(site) or self.never_made(site):
                continue  # workers could not move batches to the GPU; one batch, or a few per pass: nothing to overlap
            passed_expr = self.ctx.call_argument(call, NUM_WORKERS, "num_workers", site.scope)
            if value is None:
                where = "is not set"
            elif type(passed_expr[0]) is cst.Integer:
                where = "is 0"
            else:
                where = f"`{code(passed_expr[0])}` resolves to 0"
            fix = None
            passed = keyword(call, "num_workers") or positional(call, NUM_WORKERS)
            extra = {} if keyword(call, "persistent_workers") else {"persistent_workers": "True"}
            title = f"Set num_workers={workers}" + (", persistent_workers=True" if extra else "")
            if passed is None and passed_expr is None:
                fix = self.keyword_fix(site, {"num_workers": str(workers), **extra}, title)
            elif passed is not None and self.ctx.value(passed.value, site.scope) == 0 and type(passed.value) is cst.Integer:
                new = replace_argument(call, passed, str(workers))
                fix = FixPlan(title, (Replace(site, with_keywords(new, extra)),))
            why = ""
            if cost.kind == EXPENSIVE:
                why = f" and {cost.described()}"
            elif cost.kind == ROWS:
                why = f" and its dataset reads {rows} rows a batch one at a time from a Hugging Face Arrow table"
            self.report(
                site,
                f"DataLoader loads every batch in the training process (num_workers {where}){why}, so the "
                f"{'GPU' if gpu else 'training loop'} waits on data: set num_workers={workers} "
                f"({'about the CPU cores per GPU' if gpu else 'about the CPU cores the training leaves free'}) and "
                "persistent_workers=True.",
                fix,
            )

    def _dataset(self, site: Site):
        """The loader's dataset: (expression, scope) where it was made, or None."""
        dataset = argument(cast(cst.Call, site.node), 0, "dataset")  # a loader call
        return None if dataset is None else self.ctx.origin(dataset, site.scope)

    def _gpu_tensor_dataset(self, found) -> bool:
        if found is None or type(found[0]) is not cst.Call:
            return False
        call, scope = found
        if self.ctx.qualname(call.func) not in TENSOR_DATASET or not call.args:
            return False
        return all(self._on_cuda(arg.value, scope, 0) for arg in call.args)

    def _on_cuda(self, expr: cst.BaseExpression, scope, depth: int) -> bool:
        if depth > 6:
            return False
        if type(expr) is cst.Name:
            found = self.ctx.origin(expr, scope)
            return found is not None and self._on_cuda(found[0], found[1], depth + 1)
        if type(expr) is not cst.Call:
            return False
        name = call_name(expr)
        if name == "cuda":
            return True
        if name == "to":
            device = argument(expr, 0, "device")
            return device is not None and self.ctx.is_cuda_device(device, scope) is True
        passed = keyword(expr, "device")
        return passed is not None and self.ctx.is_cuda_device(passed.value, scope) is True

    def _iterable_dataset(self, found) -> bool:
        if found is None or type(found[0]) is not cst.Call or type(found[0].func) is not cst.Name:
            return False
        cls = self.ctx.classes.get(found[0].func.value)
        return cls is not None and any(
            self.ctx.qualname(base.value) in ITERABLE_DATASET or (dotted(base.value) or "").endswith("IterableDataset")
            for base in cls.bases
        )


_ARITHMETIC = {cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
               cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv}
_COMPARE = {cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge, cst.LessThan: operator.lt,
            cst.LessThanEqual: operator.le, cst.Equal: operator.eq, cst.NotEqual: operator.ne}


def _composer_loaders(value: cst.BaseExpression, ctx) -> list[cst.BaseExpression]:
    """The loaders a composer Trainer's `train_dataloader`/`eval_dataloader` holds: the value, the
    elements of a list, the loader of an `Evaluator(label=..., dataloader=...)` or `DataSpec(loader)`."""
    if type(value) in (cst.List, cst.Tuple):
        return [loader for element in cast(cst.List, value).elements for loader in _composer_loaders(element.value, ctx)]
    if type(value) is cst.Call:
        made = (ctx.qualname(value.func) or "").rpartition(".")[2]
        held = argument(value, 1, "dataloader") if made == "Evaluator" else argument(value, 0, "dataloader") if made == "DataSpec" else None
        return [] if held is None else _composer_loaders(held, ctx)
    return [value]


def _table_column(expr: cst.BaseExpression) -> bool:
    """A pandas selection: `df["label"]`, `df.iloc[:n]["sentiment"]`, `df.loc[mask, "y"]`."""
    while True:
        if type(expr) is cst.Attribute:
            if expr.attr.value in ("iloc", "loc"):
                return True
            expr = expr.value
        elif type(expr) is cst.Subscript:
            if any(type(e.slice) is cst.Index and type(literal(e.slice.value)) is str for e in expr.slice):
                return True
            expr = expr.value
        else:
            return False


def _cast_first(moved: str) -> bool:
    """Whether the code of a move casts the batch on the host first (`batch_x.float().to(device)`),
    which makes a new pageable tensor to copy, pinned or not."""
    try:
        expr = cst.parse_expression(moved)
    except cst.ParserSyntaxError:
        return False
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in ("to", "cuda"):
        expr = expr.func.value
    return type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in CAST_METHODS and not expr.args


def _plugged_class(expr: cst.BaseExpression) -> bool:
    """A class an option holds (`args.dataset_class`, `config.dataset_cls`): one the user plugs in."""
    return type(expr) is cst.Attribute and expr.attr.value.lower().endswith(("_class", "_cls")) and dotted(expr) is not None


def _unbatched(call: cst.Call) -> bool:
    """`DataLoader(stream, batch_size=None)`: the dataset yields whole batches itself."""
    given = keyword(call, "batch_size")
    return given is not None and type(given.value) is cst.Name and given.value.value == "None"


class PinnedMemoryMissing(LoaderRule):
    """
    ## What it does
    Finds a DataLoader without `pin_memory=True` whose batches go to the GPU: moved by
    the file (or notebook) with `.cuda()` or `.to(device)`, by a function of the project
    it passes them, or the loader, to (`train_step(model, batch)`, `train(model, loader)`
    in another module), by a module of the project that calls the function returning the
    loader (`return train_loader, test_loader` in data_setup.py; `X.to(device)` in train.py or
    in a function it gives the loader to, or by a class of the project it gives the loader to,
    which keeps it and loops over it: `Solver(config, train_loader)` with `self.train_loader =
    train_loader` and `images.to(self.device)` in `Solver.train`; or by an object keeping the
    loader, which iterates it in its `__iter__`, that a function of the project returns: the pix2pix
    family's `dataset = create_dataset(opt)`, then `model.set_input(data)` on each batch, with a
    model class the project picks by name, each of whose `set_input` methods moves it: counted
    when the module moving the batches, or the module of its base class, uses a GPU), or by a framework:
    Lightning's Trainer (a LightningModule's or DataModule's `train_dataloader` and
    `val_dataloader`, also returning a loader made at the top of the module, a notebook's
    earlier cell; loaders given to `fit`), coqui's Trainer (the loaders of the `get_data_loader`
    of a model deriving from `trainer.TrainerModel`: coqui TTS), Hugging Face's Trainer (the loader a subclass's
    `get_train_dataloader` makes or returns, and its `get_eval_dataloader`'s when `TrainingArguments`
    evaluate during training, `eval_strategy="steps"` or `"epoch"`; not with `use_cpu=True`), composer's Trainer (its `train_dataloader` and
    `eval_dataloader`, unless told `device="cpu"`; not one it reads a few batches of a pass,
    `train_subset_num_batches=5`, nor its evaluation loaders in a run of one epoch), Accelerate
    (`accelerator.prepare(loader)`) and ignite (`create_supervised_trainer(..., device=...)`, an `Engine` whose process
    function, also one nested in the function that makes it, moves the batch; loaders
    given to a handler through `add_event_handler(event, handler, loader)`; MONAI's
    `SupervisedTrainer`, `GanTrainer` and `SupervisedEvaluator` with a CUDA `device`). MONAI's
    DataLoader is torch's (with a collate that lists dictionaries), and so are torchdata's
    `StatefulDataLoader` and a class of the project deriving from it that passes its
    arguments on (YOLOP's prefetching `DataLoaderX`). Batches are
    followed through `enumerate`/`tqdm`/`zip`, through a generator of the project that
    yields the items of the loader it is given (`metric_logger.log_every(loader, 10)`,
    `loader = sample_data(loader)` then `next(loader)`, also one another module defines:
    `next(infiniteloop(dataloader))`; an iterator made again when it runs
    out, `loader_iter = iter(loader)` in an `except StopIteration:`; a batch taken with
    `next()` and handed to a helper: torchtune's `batch_to_device(batch, device)`) and through functions of the project
    that take them apart or move them (`X, T = unpack_batch(batch)`, `dlrm_wrap(X, device)`). A move is
    also `imgs.type(Tensor)` where `Tensor` is a CUDA tensor type
    (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`, as older scripts do).

    ## Why is this bad?
    A host-to-device copy from pageable memory is staged through a pinned buffer by the
    driver and blocks the host; from pinned memory it is a direct DMA that can overlap
    with compute (and `non_blocking=True` can make it asynchronous). Silent for a loader each
    of whose passes reads a few batches (TPL101 says which), and silent in CPU-only
    code (a Lightning Trainer with `accelerator="cpu"` or `gpus=0`, or a 1.x Trainer, known by a keyword
    2.0 removed, that chooses no device: 1.x trained on the CPU by default; and in code using `torch.distributed.rpc`, which sends CPU tensors, unless the batches
    are moved to CUDA itself), when `pin_memory` is set from a value perf-lint cannot see, when the dataset's
    data is a few rows written out in the source (`TensorDataset(torch.tensor([[...],
    ...]), ...)`) or fewer than 65,536 numbers a class of the source generates itself
    from literal sizes (`XORDataset(size=1000)`): a toy example, nothing to overlap;
    when the loader is read by one test pass after training or made in a branch no call
    of its function takes (as TPL101 says); when the `collate_fn` already
    moves each batch to the GPU (a CUDA tensor cannot be pinned); when a framework moves the batches
    of a dataset held in memory (small batches: prompts), unless the `collate_fn` makes images of
    them (`processor(text=texts, images=images, return_tensors="pt")`); or when the batch is cast on the host
    before every move (`x.type(torch.FloatTensor).cuda()`, `x = x.float()` then `x.to(device)`: what
    is copied is a new pageable tensor; cast it on the GPU instead); when its only moves take one batch
    every N steps (`if i % 100 == 0: val = next(val_loader).cuda()`); and for a library's DataLoader
    whose batches it cannot size (PyG's graphs), and one whose `collate_fn` batches DGL graphs
    (`dgl.batch`), which pin_memory passes through unpinned.

    ## Example
    ```python
    loader = DataLoader(ds, batch_size=64, num_workers=4)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
    ```

    ## Fix
    ```python
    loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
    ```
    """

    code = "TPL102"
    triggers = ("Loader",)  # (`DataLoader`, webdataset's `WebLoader`)
    name = "pinned-memory-missing"
    summary = "DataLoader batches go to the GPU from pageable memory (no pin_memory=True)"
    probe = "dataloader"
    VALID = (
        # a Hugging Face Trainer told to run on the CPU; and its evaluation loader when it does not
        # evaluate during training (`eval_strategy` "no" by default: one `evaluate()` at the end)
        Example(
            """
            from torch.utils.data import DataLoader
            from transformers import Trainer, TrainingArguments
            class CpuTrainer(Trainer):
                def get_train_dataloader(self):
                    return DataLoader(self.train_dataset, batch_size=8, shuffle=True, num_workers=2)
            CpuTrainer(model=model, args=TrainingArguments(output_dir="out", use_cpu=True), train_dataset=data).train()
            """
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            from transformers import Trainer, TrainingArguments
            eval_dataloader = DataLoader(eval_dataset, batch_size=8)
            class CustomTrainer(Trainer):
                def get_eval_dataloader(self, eval_dataset=None):
                    return eval_dataloader
            trainer = CustomTrainer(model=model, args=TrainingArguments(output_dir="out"), train_dataset=data)
            trainer.train()
            trainer.evaluate()
            """
        ),
        # composer on the CPU; and a demo reading five batches an epoch, evaluated once after one epoch
        Example(
            """
            from composer import Trainer
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=8)
            eval_dataloader = DataLoader(eval_dataset, batch_size=128, num_workers=8)
            Trainer(model=model, train_dataloader=train_dataloader, max_duration="10ep", device="cpu").fit()
            trainer = Trainer(model=model, device="cpu")
            trainer.fit(train_dataloader=train_dataloader, duration="10ep")
            Trainer(model=model, train_dataloader=train_dataloader, max_duration="2ep", train_subset_num_batches=5).fit()
            Trainer(model=model, eval_dataloader=eval_dataloader, max_duration="1ep").fit()
            """
        ),
        # one test batch each epoch, from a new iterator (DTU's 02456 VAE notebook)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            train_loader = DataLoader(dset_train, batch_size=64, num_workers=4, pin_memory=True)
            test_loader = DataLoader(dset_test, batch_size=64)
            while epoch < 100:
                epoch += 1
                for x, y in train_loader:
                    loss = vi(vae, x.cuda())
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    x, y = next(iter(test_loader))
                    vi(vae, x.cuda())
            """
        ),
        # hkproj's pytorch-transformer: the validation loader is read for two examples per epoch
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            def run_validation(model, validation_ds, num_examples=2):
                count = 0
                with torch.no_grad():
                    for batch in validation_ds:
                        count += 1
                        print(model(batch["encoder_input"].cuda()).argmax(-1))
                        if count == num_examples:
                            print("-" * 80)
                            break
            def get_ds():
                train_dataloader = DataLoader(train_ds, batch_size=8, num_workers=4, pin_memory=True)
                val_dataloader = DataLoader(val_ds, batch_size=1, shuffle=True)
                return train_dataloader, val_dataloader
            def train_model():
                train_dataloader, val_dataloader = get_ds()
                for epoch in range(20):
                    for batch in train_dataloader:
                        model(batch["encoder_input"].cuda()).sum().backward()
                        optimizer.step()
                    run_validation(model, val_dataloader)
            """
        ),
        # one validation batch every 100 steps (x-transformers' `cycle(DataLoader(val_dataset))`)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            def cycle(loader):
                while True:
                    for data in loader:
                        yield data
            train_loader = cycle(DataLoader(train_set, batch_size=4, pin_memory=True))
            val_loader = cycle(DataLoader(val_set, batch_size=4))
            for i in range(100000):
                model(next(train_loader).to("cuda")).backward()
                optim.step()
                if i % 100 == 0:
                    with torch.no_grad():
                        model(next(val_loader).to("cuda"))
            """
        ),
        # a test loader read by one pass after training, in a loop of one iteration
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            train_loader = torch.utils.data.DataLoader(datasets.MNIST("data", transform=transforms.ToTensor()), batch_size=256, pin_memory=True, num_workers=2)
            test_loader = torch.utils.data.DataLoader(datasets.MNIST("data", train=False, transform=transforms.ToTensor()), batch_size=256, num_workers=2)
            model = Autoencoder().cuda()
            for epoch in range(10):
                for image, label in train_loader:
                    loss = loss_func(model(image.cuda()), image.cuda())
                    loss.backward()
                    optimizer.step()
            for i in range(1):
                for image, label in test_loader:
                    codes.append(model.encoder(image.cuda()).cpu())
            """,
        ),
        # a Lightning 1.x Trainer (`progress_bar_refresh_rate`, removed in 2.0) given no GPU: 1.x
        # trains on the CPU
        Example(
            """
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader
            class ConvNet(pl.LightningModule):
                def train_dataloader(self):
                    return DataLoader(MNIST(root, train=True, transform=ToTensor()), batch_size=32, num_workers=4)
            trainer = pl.Trainer(progress_bar_refresh_rate=20, max_epochs=10)
            trainer.fit(ConvNet())
            """,
        ),
        # the batch is cast on the host first (`ToTensorLab` makes float64): the copy is of a new
        # pageable tensor, which pinning the loader's output would not reach
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(SalObjDataset(paths), batch_size=12, num_workers=1)
            net = U2NET(3, 1).cuda()
            for epoch in range(epochs):
                for data in loader:
                    inputs = data['image']
                    inputs = inputs.type(torch.FloatTensor)
                    loss = net(inputs.cuda()).sum()
                    loss.backward()
            """,
        ),
        _WHOLE_DATASET,
        # a test loader read by one trainer.test after each fit (uvadlc's train_model)
        Example(
            """
            import pytorch_lightning as pl
            from torch.utils import data
            test_loader = data.DataLoader(test_set, batch_size=128, num_workers=4)
            def train_model(model):
                trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=180)
                trainer.fit(model, train_loader, val_loader)
                return trainer.test(model, test_loader, verbose=False)
            """,
        ),
        # RetinaNet's viewer: one image per key press
        Example(
            """
            import cv2
            import torch
            from torch.utils.data import DataLoader
            dataloader_val = DataLoader(dataset_val, num_workers=1, collate_fn=collater, batch_sampler=sampler_val)
            retinanet = torch.load(path).cuda()
            retinanet.eval()
            for idx, data in enumerate(dataloader_val):
                with torch.no_grad():
                    scores, labels, boxes = retinanet(data["img"].cuda().float())
                cv2.imshow("img", draw(data["img"], boxes.cpu()))
                cv2.waitKey(0)
            """,
        ),
        _DGL_BATCHES,
        _LIBRARY_LOADER,  # a library's DataLoader whose batches perf-lint cannot cost: not judged
        _RPC_TRAINER,
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for x, y in loader:
                x = x.cuda()
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)
            for x, y in loader:
                x = x.to('cpu')
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)
            for x, y in loader:
                out = model(x.to(torch.float16))
            """,
        ),
        # options passed through `**kw` from a mapping perf-lint cannot read: may hold pin_memory
        Example(
            """
            import json
            from torch.utils.data import DataLoader
            def make(ds, **kw):
                return DataLoader(ds, num_workers=2, **kw)
            loader = make(ds, **json.load(open("loader.json")))
            for x in loader:
                x.cuda()
            """,
        ),
        # a toy dataset written out in the source
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset
            class Toy(Dataset):
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __getitem__(self, i):
                    return self.x[i], self.y[i]
            x_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
            y_test = torch.tensor([0, 1])
            loader = DataLoader(Toy(x_test, y_test), batch_size=2)
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
            """,
        ),
        # the collate_fn puts batches on the GPU already
        Example(
            """
            from functools import partial
            import torch
            from torch.utils.data import DataLoader
            def collate(batch, device):
                return torch.stack(batch).to(device)
            device = torch.device('cuda')
            loader = DataLoader(ds, batch_size=8, num_workers=0, collate_fn=partial(collate, device=device))
            for x in loader:
                x = x.to(device)
            """,
        ),
    )
    INVALID = (
        # a class of the project passing its arguments on to torch's DataLoader (YOLOP's prefetching `DataLoaderX`)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            from prefetch_generator import BackgroundGenerator
            class DataLoaderX(DataLoader):
                def __iter__(self):
                    return BackgroundGenerator(super().__iter__())
            loader = DataLoaderX(ds, batch_size=64, num_workers=8)
            for epoch in range(100):
                for x, y in loader:
                    loss = model(x.to("cuda")).mean()
                    loss.backward()
                    opt.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            from prefetch_generator import BackgroundGenerator
            class DataLoaderX(DataLoader):
                def __iter__(self):
                    return BackgroundGenerator(super().__iter__())
            loader = DataLoaderX(ds, batch_size=64, num_workers=8, pin_memory=True)
            for epoch in range(100):
                for x, y in loader:
                    loss = model(x.to("cuda")).mean()
                    loss.backward()
                    opt.step()
            """,
        ),
        # a Lightning hook's loader over a dataset in memory, whose collate_fn makes images with a
        # processor (Hugging Face's multimodal fine-tuning notebooks); its validation reads five batches a pass
        Example(
            """
            import lightning as L
            from torch.utils.data import DataLoader
            def collate_fn(examples):
                images, texts = zip(*examples)
                return processor(text=list(texts), images=list(images), return_tensors="pt")
            class Module(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self.model(**batch).loss
                def train_dataloader(self):
                    return DataLoader(train_dataset, collate_fn=collate_fn, batch_size=2, num_workers=4)
                def val_dataloader(self):
                    return DataLoader(val_dataset, collate_fn=collate_fn, batch_size=2, num_workers=4)
            L.Trainer(accelerator="gpu", max_epochs=10, limit_val_batches=5).fit(Module())
            """,
            """
            import lightning as L
            from torch.utils.data import DataLoader
            def collate_fn(examples):
                images, texts = zip(*examples)
                return processor(text=list(texts), images=list(images), return_tensors="pt")
            class Module(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self.model(**batch).loss
                def train_dataloader(self):
                    return DataLoader(train_dataset, collate_fn=collate_fn, batch_size=2, num_workers=4, pin_memory=True)
                def val_dataloader(self):
                    return DataLoader(val_dataset, collate_fn=collate_fn, batch_size=2, num_workers=4)
            L.Trainer(accelerator="gpu", max_epochs=10, limit_val_batches=5).fit(Module())
            """,
        ),
        # a loader a Lightning hook returns from the top of the module (a notebook's cell before)
        Example(
            """
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=4, num_workers=4)
            class Module(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self.model(**batch).loss
                def train_dataloader(self):
                    return train_dataloader
            pl.Trainer(accelerator="gpu", max_epochs=30).fit(Module())
            """,
            """
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=4, num_workers=4, pin_memory=True)
            class Module(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self.model(**batch).loss
                def train_dataloader(self):
                    return train_dataloader
            pl.Trainer(accelerator="gpu", max_epochs=30).fit(Module())
            """,
        ),
        # a batch taken with `next()` and handed to a helper that moves it (torchtune's recipes)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            def batch_to_device(batch, device):
                for k, v in batch.items():
                    batch[k] = v.to(device)
            loader = DataLoader(ds, batch_size=8, num_workers=4)
            device = torch.device("cuda")
            for epoch in range(10):
                batches = iter(loader)
                while True:
                    try:
                        batch = next(batches)
                    except StopIteration:
                        break
                    batch_to_device(batch, device)
                    model(**batch).backward()
                    opt.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            def batch_to_device(batch, device):
                for k, v in batch.items():
                    batch[k] = v.to(device)
            loader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)
            device = torch.device("cuda")
            for epoch in range(10):
                batches = iter(loader)
                while True:
                    try:
                        batch = next(batches)
                    except StopIteration:
                        break
                    batch_to_device(batch, device)
                    model(**batch).backward()
                    opt.step()
            """,
        ),
        # a Hugging Face Trainer subclass handing the Trainer a loader made in a notebook's earlier
        # cell: the Trainer copies each batch to `args.device` (its own loaders would pin memory)
        Example(
            """
            from torch.utils.data import DataLoader
            from transformers import Trainer, TrainingArguments
            train_dataloader = DataLoader(train_dataset, batch_size=2, shuffle=True, num_workers=2)
            class CustomTrainer(Trainer):
                def get_train_dataloader(self):
                    return train_dataloader
            CustomTrainer(model=model, args=TrainingArguments(output_dir="out", num_train_epochs=30)).train()
            """,
            """
            from torch.utils.data import DataLoader
            from transformers import Trainer, TrainingArguments
            train_dataloader = DataLoader(train_dataset, batch_size=2, shuffle=True, num_workers=2, pin_memory=True)
            class CustomTrainer(Trainer):
                def get_train_dataloader(self):
                    return train_dataloader
            CustomTrainer(model=model, args=TrainingArguments(output_dir="out", num_train_epochs=30)).train()
            """,
        ),
        # a loader a method returns beside its sampler, unpacked into attributes (torchtune's
        # `self._sampler, self._dataloader = self._setup_data(...)`)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, DistributedSampler
            class Recipe:
                def setup(self, ds):
                    self._device = torch.device("cuda")
                    self._sampler, self._dataloader = self._setup_data(ds)
                def _setup_data(self, ds):
                    sampler = DistributedSampler(ds)
                    return sampler, DataLoader(ds, batch_size=8, sampler=sampler, num_workers=4)
                def train(self):
                    for epoch in range(10):
                        for batch in self._dataloader:
                            self._model(batch.to(self._device)).backward()
                            self._optimizer.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader, DistributedSampler
            class Recipe:
                def setup(self, ds):
                    self._device = torch.device("cuda")
                    self._sampler, self._dataloader = self._setup_data(ds)
                def _setup_data(self, ds):
                    sampler = DistributedSampler(ds)
                    return sampler, DataLoader(ds, batch_size=8, sampler=sampler, num_workers=4, pin_memory=True)
                def train(self):
                    for epoch in range(10):
                        for batch in self._dataloader:
                            self._model(batch.to(self._device)).backward()
                            self._optimizer.step()
            """,
        ),
        # a model of coqui's Trainer (coqui TTS's `BaseTTS`): the Trainer gets its loader from
        # `get_data_loader` and copies each batch to the GPU when it trains on one
        Example(
            """
            from torch.utils.data import DataLoader
            from trainer import TrainerModel
            class BaseTTS(TrainerModel):
                def get_data_loader(self, config, assets, is_eval, samples, verbose, num_gpus, rank=None):
                    dataset = TTSDataset(samples, self.tokenizer)
                    return DataLoader(dataset, batch_size=config.batch_size, collate_fn=dataset.collate_fn, pin_memory=False)
            """,
            """
            from torch.utils.data import DataLoader
            from trainer import TrainerModel
            class BaseTTS(TrainerModel):
                def get_data_loader(self, config, assets, is_eval, samples, verbose, num_gpus, rank=None):
                    dataset = TTSDataset(samples, self.tokenizer)
                    return DataLoader(dataset, batch_size=config.batch_size, collate_fn=dataset.collate_fn, pin_memory=True)
            """,
        ),
        # a DataModule binding its hooks to other methods in `__init__` (latent-diffusion's `DataModuleFromConfig`)
        Example(
            """
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader
            class DataModuleFromConfig(pl.LightningDataModule):
                def _train_dataloader(self):
                    return DataLoader(self.datasets["train"], batch_size=8, num_workers=4)
                def __init__(self, train=None):
                    super().__init__()
                    if train is not None:
                        self.train_dataloader = self._train_dataloader
            pl.Trainer(accelerator="gpu", devices=1).fit(model, DataModuleFromConfig(train=config))
            """,
            """
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader
            class DataModuleFromConfig(pl.LightningDataModule):
                def _train_dataloader(self):
                    return DataLoader(self.datasets["train"], batch_size=8, num_workers=4, pin_memory=True)
                def __init__(self, train=None):
                    super().__init__()
                    if train is not None:
                        self.train_dataloader = self._train_dataloader
            pl.Trainer(accelerator="gpu", devices=1).fit(model, DataModuleFromConfig(train=config))
            """,
        ),
        # a loader a method returns beside its sampler, unpacked by the method that trains
        # (simpletransformers' ConvAI `load_and_cache_examples`)
        Example(
            """
            from torch.utils.data import DataLoader
            class ConvAIModel:
                def load_and_cache_examples(self, dataset):
                    return DataLoader(dataset, batch_size=8), None
                def train_model(self, dataset):
                    train_dataloader, train_sampler = self.load_and_cache_examples(dataset)
                    for batch in train_dataloader:
                        self.model(*(t.to("cuda") for t in batch)).loss.backward()
            """,
            """
            from torch.utils.data import DataLoader
            class ConvAIModel:
                def load_and_cache_examples(self, dataset):
                    return DataLoader(dataset, batch_size=8, pin_memory=True), None
                def train_model(self, dataset):
                    train_dataloader, train_sampler = self.load_and_cache_examples(dataset)
                    for batch in train_dataloader:
                        self.model(*(t.to("cuda") for t in batch)).loss.backward()
            """,
        ),
        # PyTorch 0.3's `Variable` around each part of the batch, unpacked in one statement
        Example(
            """
            from torch.autograd import Variable
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=128, num_workers=4)
            for batch in loader:
                input, target = Variable(batch[0]), Variable(batch[1], requires_grad=False)
                criterion(model(input.cuda()), target.cuda()).backward()
            """,
            """
            from torch.autograd import Variable
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=128, num_workers=4, pin_memory=True)
            for batch in loader:
                input, target = Variable(batch[0]), Variable(batch[1], requires_grad=False)
                criterion(model(input.cuda()), target.cuda()).backward()
            """,
        ),
        # composer's Trainer takes the GPU when there is one and copies each batch to it
        Example(
            """
            from composer import Trainer
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=8)
            trainer = Trainer(model=model, train_dataloader=train_dataloader, max_duration="10ep")
            trainer.fit()
            """,
            """
            from composer import Trainer
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=8, pin_memory=True)
            trainer = Trainer(model=model, train_dataloader=train_dataloader, max_duration="10ep")
            trainer.fit()
            """,
        ),
        # MONAI's trainer copies each batch to its device
        Example(
            """
            import torch
            from monai.data import DataLoader
            from monai.engines import SupervisedTrainer
            train_loader = DataLoader(train_ds, batch_size=16, shuffle=True, num_workers=4)
            trainer = SupervisedTrainer(device=torch.device("cuda:0"), max_epochs=5, train_data_loader=train_loader,
                                        network=net, optimizer=opt, loss_function=loss)
            trainer.run()
            """,
            """
            import torch
            from monai.data import DataLoader
            from monai.engines import SupervisedTrainer
            train_loader = DataLoader(train_ds, batch_size=16, shuffle=True, num_workers=4, pin_memory=True)
            trainer = SupervisedTrainer(device=torch.device("cuda:0"), max_epochs=5, train_data_loader=train_loader,
                                        network=net, optimizer=opt, loss_function=loss)
            trainer.run()
            """,
        ),
        # pytorch-ood's examples: the loader iterated through a progress bar's context
        Example(
            """
            from torch.utils.data import DataLoader
            from tqdm import tqdm
            loader = DataLoader(dataset, batch_size=64, num_workers=16)
            for epoch in range(10):
                with tqdm(loader, desc=f"Epoch {epoch}") as bar:
                    for x, y in bar:
                        loss = criterion(model(x.to("cuda:0")), y.cuda())
                        loss.backward()
                        optimizer.step()
            """,
            """
            from torch.utils.data import DataLoader
            from tqdm import tqdm
            loader = DataLoader(dataset, batch_size=64, num_workers=16, pin_memory=True)
            for epoch in range(10):
                with tqdm(loader, desc=f"Epoch {epoch}") as bar:
                    for x, y in bar:
                        loss = criterion(model(x.to("cuda:0")), y.cuda())
                        loss.backward()
                        optimizer.step()
            """,
        ),
        # deeplab-pytorch: an iteration-based loop taking batches from `iter(loader)`, made again
        # when it runs out
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=5, num_workers=4, shuffle=True)
            loader_iter = iter(loader)
            for iteration in range(20000):
                try:
                    _, images, labels = next(loader_iter)
                except StopIteration:
                    loader_iter = iter(loader)
                    _, images, labels = next(loader_iter)
                loss = criterion(model(images.cuda()), labels.cuda())
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=5, num_workers=4, shuffle=True, pin_memory=True)
            loader_iter = iter(loader)
            for iteration in range(20000):
                try:
                    _, images, labels = next(loader_iter)
                except StopIteration:
                    loader_iter = iter(loader)
                    _, images, labels = next(loader_iter)
                loss = criterion(model(images.cuda()), labels.cuda())
                loss.backward()
                optimizer.step()
            """,
        ),
        # batches a generator cycling the loader hands out, moved as `next(...)` gives them (pytorch-ddpm)
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            def infiniteloop(dataloader):
                while True:
                    for x, y in iter(dataloader):
                        yield x
            loader = torch.utils.data.DataLoader(datasets.CIFAR10("data", transform=transforms.ToTensor()), batch_size=128, num_workers=4, persistent_workers=True)
            datalooper = infiniteloop(loader)
            model = UNet().to("cuda")
            for step in range(800000):
                x_0 = next(datalooper).to("cuda")
                model(x_0).mean().backward()
                optim.step()
            """,
            """
            import torch
            from torchvision import datasets, transforms
            def infiniteloop(dataloader):
                while True:
                    for x, y in iter(dataloader):
                        yield x
            loader = torch.utils.data.DataLoader(datasets.CIFAR10("data", transform=transforms.ToTensor()), batch_size=128, num_workers=4, persistent_workers=True, pin_memory=True)
            datalooper = infiniteloop(loader)
            model = UNet().to("cuda")
            for step in range(800000):
                x_0 = next(datalooper).to("cuda")
                model(x_0).mean().backward()
                optim.step()
            """,
        ),
        # a model a factory picks by name, whose every project method `set_input` moves the batch (pix2pix's)
        Example(
            """
            import torch
            from torchvision import datasets, transforms
            class Pix2PixModel:
                def set_input(self, data):
                    self.real_A = data[0].cuda()
                def optimize_parameters(self):
                    self.loss = self.netG(self.real_A).mean()
                    self.loss.backward()
                    self.optimizer.step()
            def create_model(name):
                return {"pix2pix": Pix2PixModel}[name]()
            model = create_model("pix2pix")
            loader = torch.utils.data.DataLoader(datasets.ImageFolder("data", transform=transforms.ToTensor()), batch_size=4, num_workers=4, persistent_workers=True)
            for epoch in range(200):
                for data in loader:
                    model.set_input(data)
                    model.optimize_parameters()
            """,
            """
            import torch
            from torchvision import datasets, transforms
            class Pix2PixModel:
                def set_input(self, data):
                    self.real_A = data[0].cuda()
                def optimize_parameters(self):
                    self.loss = self.netG(self.real_A).mean()
                    self.loss.backward()
                    self.optimizer.step()
            def create_model(name):
                return {"pix2pix": Pix2PixModel}[name]()
            model = create_model("pix2pix")
            loader = torch.utils.data.DataLoader(datasets.ImageFolder("data", transform=transforms.ToTensor()), batch_size=4, num_workers=4, persistent_workers=True, pin_memory=True)
            for epoch in range(200):
                for data in loader:
                    model.set_input(data)
                    model.optimize_parameters()
            """,
        ),
        # batches a generator hands out with `yield next(loader)`, taken by `next()` in the training loop (glow-pytorch)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            from torchvision import datasets, transforms
            def sample_data(path, batch_size):
                dataset = datasets.ImageFolder(path, transform=transforms.ToTensor())
                loader = iter(DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=4))
                while True:
                    yield next(loader)
            dataset = iter(sample_data("images", 16))
            for i in range(200000):
                image, _ = next(dataset)
                image = image.to("cuda")
                model(image).mean().backward()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            from torchvision import datasets, transforms
            def sample_data(path, batch_size):
                dataset = datasets.ImageFolder(path, transform=transforms.ToTensor())
                loader = iter(DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=4, pin_memory=True))
                while True:
                    yield next(loader)
            dataset = iter(sample_data("images", 16))
            for i in range(200000):
                image, _ = next(dataset)
                image = image.to("cuda")
                model(image).mean().backward()
            """,
        ),
        # options passed through the factory's `**kwargs`: no call gives pin_memory
        Example(
            """
            from torch.utils.data import DataLoader
            def get_loader(ds, batch_size, **kwargs):
                kwargs.setdefault("num_workers", 1)
                return DataLoader(ds, batch_size=batch_size, shuffle=True, **kwargs)
            loader = get_loader(ds, 64, num_workers=4)
            for epoch in range(10):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
            """,
        ),
        # older scripts wrap the batch in `Variable` before moving it
        Example(
            """
            import torch
            from torch.autograd import Variable
            loader = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=2)
            for x, y in loader:
                b_x = Variable(x).cuda()
                model(b_x).sum().backward()
            """,
            """
            import torch
            from torch.autograd import Variable
            loader = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=2, pin_memory=True)
            for x, y in loader:
                b_x = Variable(x).cuda()
                model(b_x).sum().backward()
            """,
        ),
        # batches read through a generator that yields the loader's items (a logger's log_every)
        Example(
            """
            from torch.utils.data import DataLoader
            class MetricLogger:
                def log_every(self, iterable, print_freq):
                    for obj in iterable:
                        yield obj
            loader = DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for x, y in MetricLogger().log_every(loader, 10):
                    x = x.cuda()
            """,
            """
            from torch.utils.data import DataLoader
            class MetricLogger:
                def log_every(self, iterable, print_freq):
                    for obj in iterable:
                        yield obj
            loader = DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True, pin_memory=True)
            for epoch in range(10):
                for x, y in MetricLogger().log_every(loader, 10):
                    x = x.cuda()
            """,
        ),
        # webdataset's WebLoader makes a torch DataLoader of its arguments
        Example(
            """
            import webdataset as wds
            loader = wds.WebLoader(dataset, batch_size=None, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for images, texts in loader:
                    images = images.cuda()
            """,
            """
            import webdataset as wds
            loader = wds.WebLoader(dataset, batch_size=None, num_workers=4, persistent_workers=True, pin_memory=True)
            for epoch in range(10):
                for images, texts in loader:
                    images = images.cuda()
            """,
        ),
        # batches moved by `.type()` to a CUDA tensor type, as older scripts do
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            cuda = torch.cuda.is_available()
            loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            for epoch in range(10):
                for imgs, _ in loader:
                    real = imgs.type(Tensor)
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            cuda = torch.cuda.is_available()
            loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            for epoch in range(10):
                for imgs, _ in loader:
                    real = imgs.type(Tensor)
            """,
        ),
        # Lightning copies the batches of a module's training and validation loaders
        Example(
            """
            import lightning as L
            from torch.utils.data import DataLoader
            from torchvision.datasets import MNIST
            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(MNIST('.'), batch_size=128, num_workers=4)
                def test_dataloader(self):
                    return DataLoader(MNIST('.', train=False), batch_size=128)
            """,
            """
            import lightning as L
            from torch.utils.data import DataLoader
            from torchvision.datasets import MNIST
            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(MNIST('.'), batch_size=128, num_workers=4, pin_memory=True)
                def test_dataloader(self):
                    return DataLoader(MNIST('.', train=False), batch_size=128)
            """,
        ),
        # Accelerate's prepared loader copies each batch to the accelerator's device
        Example(
            """
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            accelerator = Accelerator()
            loader = DataLoader(images, batch_size=32, num_workers=4)
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            """,
            """
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            accelerator = Accelerator()
            loader = DataLoader(images, batch_size=32, num_workers=4, pin_memory=True)
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            loader = DataLoader(ds, batch_size=64, num_workers=4)
            for i, (x, y) in enumerate(loader):
                x, y = x.to(device), y.to(device)
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for i, (x, y) in enumerate(loader):
                x, y = x.to(device), y.to(device)
            """,
        ),
        # an ignite process function nested in the function that makes the Engine
        Example(
            """
            import torch
            from ignite.engine import Engine
            from torch.utils.data import DataLoader
            def fit(model, device):
                loader = DataLoader(ds, batch_size=64, num_workers=4)
                def step(engine, batch):
                    x, y = batch
                    return model(x.to(device), y)
                trainer = Engine(step)
                trainer.run(loader, max_epochs=5)
            fit(model, torch.device('cuda'))
            """,
            """
            import torch
            from ignite.engine import Engine
            from torch.utils.data import DataLoader
            def fit(model, device):
                loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
                def step(engine, batch):
                    x, y = batch
                    return model(x.to(device), y)
                trainer = Engine(step)
                trainer.run(loader, max_epochs=5)
            fit(model, torch.device('cuda'))
            """,
        ),
        # a loader wrapped in an iterator class that restarts it; the batch moved a part at a time
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            class Forever:
                def __init__(self, loader):
                    self.loader, self.it = loader, iter(loader)
                def __iter__(self):
                    return self
                def __next__(self):
                    return next(self.it)
            def make(ds):
                return Forever(DataLoader(ds, batch_size=16, num_workers=2))
            device = torch.device('cuda')
            for step, batch in enumerate(make(ds)):
                for key, value in batch.items():
                    batch[key] = value.to(device)
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            class Forever:
                def __init__(self, loader):
                    self.loader, self.it = loader, iter(loader)
                def __iter__(self):
                    return self
                def __next__(self):
                    return next(self.it)
            def make(ds):
                return Forever(DataLoader(ds, batch_size=16, num_workers=2, pin_memory=True))
            device = torch.device('cuda')
            for step, batch in enumerate(make(ds)):
                for key, value in batch.items():
                    batch[key] = value.to(device)
            """,
        ),
        # a new Trainer a cell: the name is assigned again by the same class
        Example(
            """
            import lightning as L
            from torch.utils.data import DataLoader
            loader = DataLoader(images, batch_size=64, num_workers=4)
            trainer = L.Trainer(max_epochs=1)
            trainer.fit(model, loader)
            trainer = L.Trainer(max_epochs=3)
            trainer.fit(model, loader)
            """,
            """
            import lightning as L
            from torch.utils.data import DataLoader
            loader = DataLoader(images, batch_size=64, num_workers=4, pin_memory=True)
            trainer = L.Trainer(max_epochs=1)
            trainer.fit(model, loader)
            trainer = L.Trainer(max_epochs=3)
            trainer.fit(model, loader)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def train(model, train_loader):
                for batch in train_loader:
                    inputs = batch['x']
                    model(inputs.cuda())
            train(model, DataLoader(ds, num_workers=4, pin_memory=False))
            """,
            """
            from torch.utils.data import DataLoader
            def train(model, train_loader):
                for batch in train_loader:
                    inputs = batch['x']
                    model(inputs.cuda())
            train(model, DataLoader(ds, num_workers=4, pin_memory=True))
            """,
        ),
    )

    def finish(self) -> None:
        moves = self.cuda_moves()
        for call, site in self.loaders.items():
            if not self.costed(call):
                continue
            cuda = [m for m in moves.get(id(call), []) if m.to_cuda(self.ctx)]
            if cuda and all(m.recast or m.rare for m in cuda):
                continue  # (what is copied is the host's cast of the batch: pinning the batch would not reach it;
                # or one batch every N steps, `if i % 100 == 0: val = next(val_loader).cuda()`: little to gain)
            transfer = None if cuda else self.transfers().get(id(call))
            if not cuda and (transfer is None or transfer.framework and self.dataset_cost(site).kind == CHEAP
                             and not self.collates_images(site)):
                continue  # (items held in memory, moved by a framework: prompts, small batches, little to gain;
                # not images a processor turns into pixels in the collate_fn)
            pinned = self.setting(site, PIN_MEMORY, "pin_memory")
            if pinned is UNKNOWN or pinned is True:
                continue
            if self.toy_data(site) or self.collate_moves(site) is not None or self.loads_once(site) or self.reads_few(site) \
                    or self.never_made(site):
                continue  # a few rows written in the source; batches already on the GPU cannot be pinned; one pass (or a few batches each)
            fix = None
            passed = keyword(call, "pin_memory") or positional(call, PIN_MEMORY)
            if passed is None and self.ctx.call_argument(call, PIN_MEMORY, "pin_memory", site.scope) is None:
                fix = self.keyword_fix(site, {"pin_memory": "True"}, "Set pin_memory=True")
            elif passed is not None and type(passed.value) is cst.Name:
                fix = FixPlan("Set pin_memory=True", (Replace(site, replace_argument(call, passed, "True")),))
            if transfer is None:
                self.report(
                    site,
                    "Batches from this DataLoader are copied to the GPU from pageable memory, which "
                    "blocks the host on every copy: set pin_memory=True (and use non_blocking=True "
                    "in .to()).",
                    fix,
                )
            else:
                self.report(
                    site,
                    f"Batches from this DataLoader are copied to the GPU from pageable memory ({transfer.said}), "
                    "which blocks the host on every copy: set pin_memory=True.",
                    fix,
                    related=transfer.related,
                )


class NonBlockingWithoutPinnedMemory(LoaderRule):
    """
    ## What it does
    Finds `.to(..., non_blocking=True)` / `.cuda(non_blocking=True)` on batches from a
    DataLoader that does not pin memory, or on a tensor the loop makes from a pinned batch
    with `torch.cat`/`torch.stack` (a new tensor, in pageable memory) before copying it.

    ## Why is this bad?
    A copy from pageable memory is synchronous whatever `non_blocking` says: the code
    looks asynchronous and is not, so the expected overlap of copy and compute never
    happens.

    ## Example
    ```python
    loader = DataLoader(ds, num_workers=4)
    for x, y in loader:
        x = x.cuda(non_blocking=True)
    ```

    ## Fix
    Add `pin_memory=True` to the DataLoader (the quick fix does).
    """

    code = "TPL103"
    triggers = ("Loader",)  # (`DataLoader`, webdataset's `WebLoader`)
    name = "non-blocking-without-pinned-memory"
    summary = "non_blocking=True copy of batches from a DataLoader that does not pin memory"
    probe = "dataloader"
    VALID = (
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for x, y in loader:
                x = x.cuda(non_blocking=True)
            """,
        ),
        Example(
            """
            def step(x):
                return x.cuda(non_blocking=True)
            import torch
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=args.pin)
            for x, y in loader:
                x = x.cuda(non_blocking=True)
            """,
        ),
    )
    INVALID = (
        # the two views of a pinned batch joined on the host: a new, pageable tensor
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for images, labels in loader:
                images = torch.cat([images[0], images[1]], dim=0)
                images = images.cuda(non_blocking=True)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)
            for x, y in loader:
                x = x.cuda(non_blocking=True)
                y = y.cuda(non_blocking=True)
            """,
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for x, y in loader:
                x = x.cuda(non_blocking=True)
                y = y.cuda(non_blocking=True)
            """,
            count=2,
        ),
    )

    def finish(self) -> None:
        for move in self.moves:
            if not move.non_blocking:
                continue
            loaders = self.moved_from(move)
            unpinned = [s for s in loaders if self.setting(s, PIN_MEMORY, "pin_memory") in (None, False)]
            if loaders and not unpinned and all(self.setting(s, PIN_MEMORY, "pin_memory") is True for s in loaders):
                joined = _joined_on_host(move)
                if joined is not None:
                    self.report(
                        move.site,
                        f"non_blocking=True has no effect here: `{short_code(joined)}` copies the pinned batch into a "
                        "new tensor in pageable memory, so the copy to the GPU is synchronous. Move the parts with "
                        f"non_blocking=True and join them on the GPU.",
                    )
                continue
            if not loaders or len(unpinned) != len(loaders):
                continue
            fix = None
            calls = [(s, cast(cst.Call, s.node)) for s in unpinned]  # loader calls
            if all(keyword(call, "pin_memory") is None and positional(call, PIN_MEMORY) is None for _, call in calls):
                steps = tuple(Replace(s, with_keywords(call, {"pin_memory": "True"})) for s, call in calls)
                fix = FixPlan("Set pin_memory=True on the DataLoader", steps)
            self.report(
                move.site,
                "non_blocking=True has no effect here: the batch comes from a DataLoader without "
                "pin_memory=True, so the copy is synchronous. Set pin_memory=True on the DataLoader.",
                fix,
            )


_JOINS = ("cat", "concat", "concatenate", "stack", "vstack", "hstack")
def _lightning_class(cls: cst.ClassDef | None) -> bool:
    """Whether a class of the source derives from a Lightning class (a LightningModule or DataModule)."""
    return cls is not None and any("Lightning" in (dotted(base.value) or "") for base in cls.bases)


def _lightning_trainer(qualified: str) -> bool:
    """Whether a qualified name is Lightning's Trainer (`pytorch_lightning.Trainer`, `lightning.Trainer`)."""
    return qualified.endswith("Trainer") and qualified.startswith(("lightning", "pytorch_lightning"))


_LIMITED_HOOKS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"})
_IMAGE_KEYWORDS = frozenset({"images", "videos", "pixel_values"})  # what a processor call turns into pixel tensors


def _joined_on_host(move: _Move) -> cst.Call | None:
    """The `torch.cat(...)` (`stack`, ...) the moved tensor is made by in the loop, before the
    move (`images = torch.cat([images[0], images[1]])`, then `images.cuda(non_blocking=True)`):
    a new tensor, in pageable memory whatever the loader pinned."""
    moved = cst.ensure_type(cst.ensure_type(move.site.node, cst.Call).func, cst.Attribute).value
    if type(moved) is cst.Name:
        values = [v for v in assigned_in(move.loop.body, moved.value, move.site.node)
                  if not (type(v) is cst.Call and call_name(v) in ("to", "cuda"))]
        moved = values[-1] if values and values[-1] is not None else moved
    if type(moved) is cst.Call and call_name(moved) in _JOINS and (dotted(moved.func) or "").split(".")[0] == "torch":
        return moved
    return None


def _shows_only(loop: cst.For) -> bool:
    """Whether every statement of a loop's body prints (`print(x.size(), y.tolist())`): a demo of
    the loader, with nothing on a device waiting for the batches."""
    statements = [line for statement in loop.body.body
                  for line in (statement.body if type(statement) is cst.SimpleStatementLine else (statement,))]
    return bool(statements) and all(
        type(line) is cst.Expr and type(line.value) is cst.Call and call_name(line.value) == "print" for line in statements)
