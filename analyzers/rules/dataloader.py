"""TPL1xx: the input pipeline (DataLoader workers, pinned memory, non-blocking copies)."""

from __future__ import annotations

import re

import libcst as cst

from ..context import Site, UNKNOWN, argument, call_name, code, dotted, keyword, positional
from .base import CallNames, Example, FixPlan, Replace, Rule
from .edits import names_in_target, replace_argument, root_name, with_keywords

DATALOADER = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
TENSOR_DATASET = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
ITERABLE_DATASET = {"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"}
_NUM_WORKERS, _PIN_MEMORY = 5, 7  # positions in DataLoader's signature
_ITER_WRAPPERS = {"enumerate", "tqdm", "iter", "zip", "track", "progress_bar"}
_DEVICE_LIKE = re.compile(r"(device|dev|gpu|cuda|rank)", re.IGNORECASE)
_DTYPE_LIKE = re.compile(r"dtype|float|half|bfloat|int\d|long|double", re.IGNORECASE)


_DEVICE_VARIABLE = "device variable"  # a move to a device we cannot resolve, named like one


class _Move:
    """A `.to(...)`/`.cuda(...)` of something a loop got from an iterable."""

    def __init__(self, site: Site, loop: cst.For, cuda, non_blocking: bool) -> None:
        self.site, self.loop, self.cuda, self.non_blocking = site, loop, cuda, non_blocking

    def to_cuda(self, ctx) -> bool:
        """Provably to CUDA, or to a device variable in code that uses CUDA."""
        return self.cuda is True or (self.cuda == _DEVICE_VARIABLE and ctx.cuda_evidence is not None)


class _LoaderRule(Rule):
    """Collects DataLoader calls, the loops over them and the batches they move to a device.

    The first loader rule created for a source collects; the others (TPL101-104 share the
    facts) read its containers and stay out of the pass. What the moves go to, and which
    loaders a loop reads, is worked out in `finish`, once the whole source is known, and
    kept in `known` for every loader rule.
    """

    calls = CallNames(frozenset({"to", "cuda", *(name.rpartition(".")[2] for name in DATALOADER)}))

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        first = ctx.shared.setdefault(_LoaderRule, self)
        self.visits = first is self
        self.loaders: dict[cst.Call, Site] = first.loaders if first is not self else {}
        self.loops: dict[cst.For, tuple[Site, set[str]]] = first.loops if first is not self else {}
        self.pending: list[tuple[Site, cst.For, str]] = first.pending if first is not self else []
        self.known: dict = first.known if first is not self else {}  # what finish works out once for all
        self.dataset_classes: dict[str, cst.ClassDef] = first.dataset_classes if first is not self else {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.dataset_classes[node.name.value] = node

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name == "to" or name == "cuda":
            self._move(node, name)
        elif self.ctx.qualname(node.func) in DATALOADER:
            self.loaders[node] = self.ctx.site(node)

    def visit_For(self, node: cst.For) -> None:
        self.loops[node] = (self.ctx.site(node), set(names_in_target(node.target)))

    def visit_Assign(self, node: cst.Assign) -> None:
        if type(node.value) not in (cst.Name, cst.Subscript, cst.Attribute):
            return  # the cheaper test first: only a name, item or attribute of a batch passes it on
        loop = self._batch_loop(node.value)
        if loop is not None:
            for target in node.targets:
                self.loops[loop][1].update(names_in_target(target.target))

    def _comprehension(self, node) -> None:
        """`{k: v.to(device) for k, v in batch.items()}`: bind k, v before the element is visited."""
        comp = node.for_in
        while comp is not None:
            loop = self._batch_loop(comp.iter)
            if loop is not None:
                self.loops[loop][1].update(names_in_target(comp.target))
            comp = comp.inner_for_in

    visit_DictComp = visit_ListComp = visit_SetComp = visit_GeneratorExp = _comprehension

    def _batch_loop(self, expr: cst.BaseExpression) -> cst.For | None:
        """The innermost enclosing `for` loop whose batch variables `expr` starts from."""
        base = root_name(expr)
        for loop in reversed(self.ctx.loops):
            if type(loop) is cst.For and loop in self.loops and base in self.loops[loop][1]:
                return loop
        return None

    def _move(self, call: cst.Call, name: str) -> None:
        if type(call.func) is cst.Attribute:
            loop = self._batch_loop(call.func.value)
            if loop is not None:
                self.pending.append((self.ctx.site(call), loop, name))

    # -- resolution at the end of the pass ------------------------------------------------
    @property
    def moves(self) -> list[_Move]:
        """The batch moves to a device, resolved once the whole source is known."""
        if "moves" not in self.known:
            self.known["moves"] = [move for move in map(self._resolve_move, self.pending) if move is not None]
        return self.known["moves"]

    def _resolve_move(self, pending: tuple[Site, cst.For, str]) -> _Move | None:
        site, loop, name = pending
        call = site.node
        if name == "cuda":
            device = argument(call, 0, "device")
            cuda = True if device is None else self.ctx.is_cuda_device(device, site.scope)
        else:
            device = argument(call, 0, "device")
            if device is None:
                return None
            cuda = self.ctx.is_cuda_device(device, site.scope)
            if cuda is UNKNOWN:
                text = dotted(device) or ""
                if _DTYPE_LIKE.search(text.rsplit(".", 1)[-1]) or not _DEVICE_LIKE.search(text):
                    return None
                cuda = _DEVICE_VARIABLE
        blocking = keyword(call, "non_blocking")
        non_blocking = blocking is not None and self.ctx.value(blocking.value, site.scope) is True
        return _Move(site, loop, cuda, non_blocking)

    def loaders_of(self, loop: cst.For) -> list[Site]:
        """The DataLoaders a loop iterates over (remembered for the analysis, by every loader rule)."""
        key = ("loaders_of", id(loop))
        if key not in self.known:
            self.known[key] = self._loaders_of(loop)
        return self.known[key]

    def _loaders_of(self, loop: cst.For) -> list[Site]:
        site, _ = self.loops[loop]
        iterable = loop.iter
        candidates = [iterable]
        while candidates and type(candidates[0]) is cst.Call and call_name(candidates[0]) in _ITER_WRAPPERS:
            call = candidates.pop(0)
            candidates[:0] = [arg.value for arg in call.args if arg.keyword is None and arg.star == ""][:1] if call_name(call) != "zip" else [arg.value for arg in call.args]
        found: list[Site] = []
        for expr in candidates:
            found.extend(self._resolve_loader(expr, site.scope, 0))
        return list({id(s.node): s for s in found}.values())

    def _resolve_loader(self, expr: cst.BaseExpression, scope, depth: int) -> list[Site]:
        if depth > 4:
            return []
        if type(expr) is cst.Call and expr in self.loaders:
            return [self.loaders[expr]]
        origin = self.ctx.origin(expr, scope)
        if origin is not None and type(origin[0]) is cst.Call:
            return [self.loaders[origin[0]]] if origin[0] in self.loaders else []
        key = dotted(expr)
        if key is None:
            return []
        found = []
        if type(expr) is cst.Name and scope.node is not None and expr.value in scope.params:
            found.extend(self._from_callers(scope, expr.value, depth))
        if not found:  # the same name (or attribute) bound to a DataLoader elsewhere in the source
            last = key.rsplit(".", 1)[-1]
            values = [v for v, _ in self.ctx.by_name.get(last, [])]
            values += [v for k, vs in self.ctx.attributes.items() if k.rsplit(".", 1)[-1] == last for v, _ in vs]
            found.extend(self.loaders[v] for v in values if type(v) is cst.Call and v in self.loaders)
        return found

    def _from_callers(self, scope, param: str, depth: int) -> list[Site]:
        function = scope.node
        index = scope.params.index(param)
        found = []
        for call_site in self.ctx.calls.get(function.name.value, []):
            call = call_site.node
            offset = 1 if type(call.func) is cst.Attribute and scope.params[:1] in (["self"], ["cls"]) else 0
            value = argument(call, index - offset, param)
            if value is not None:
                found.extend(self._resolve_loader(value, call_site.scope, depth + 1))
        return found

    def setting(self, site: Site, index: int, name: str):
        """A DataLoader keyword's value: a Python value, None when not passed, UNKNOWN
        (remembered for the analysis, by every loader rule)."""
        key = ("setting", id(site.node), index, name)
        if key not in self.known:
            self.known[key] = self._setting(site, index, name)
        return self.known[key]

    def _setting(self, site: Site, index: int, name: str):
        passed = self.ctx.call_argument(site.node, index, name, site.scope)
        if passed is None or passed is UNKNOWN:
            return passed
        value = self.ctx.value(*passed)
        return UNKNOWN if value is None and name != "pin_memory" else value

    def cuda_moves(self) -> dict[int, list[_Move]]:
        """Loader (by id of its call) -> moves of its batches to CUDA."""
        if "cuda_moves" not in self.known:
            self.known["cuda_moves"] = self._by_loader()
        return self.known["cuda_moves"]

    def _by_loader(self) -> dict[int, list[_Move]]:
        result: dict[int, list[_Move]] = {}
        for move in self.moves:
            for loader in self.loaders_of(move.loop):
                result.setdefault(id(loader.node), []).append(move)
        return result

    def keyword_fix(self, site: Site, values: dict[str, str], title: str) -> FixPlan:
        return FixPlan(title, (Replace(site, with_keywords(site.node, values)),))


class SynchronousDataLoader(_LoaderRule):
    """
    ## What it does
    Finds a `torch.utils.data.DataLoader` whose `num_workers` is omitted or resolves to
    0 (a literal, a constant, a `**kwargs` dict, an argparse default).

    ## Why is this bad?
    With `num_workers=0` every batch is loaded, decoded and collated in the training
    process, between two steps, while the GPU waits. In the profile of a V100 job at 25%
    GPU utilisation, the DataLoader took 82 ms of each 10-step window; with 4 workers and
    pinned memory, utilisation rose to 78% and the epoch took 57% less time.

    Silent when the value is unknown (a function parameter, a `**kwargs` of unknown
    content), when the dataset is a `TensorDataset` of tensors already on the GPU
    (nothing to load), and for `IterableDataset` subclasses defined in the file (workers
    would each replay the whole stream unless it shards itself).

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
    triggers = ("DataLoader",)
    name = "dataloader-sync-loading"
    summary = "DataLoader loads batches in the training process (num_workers=0)"
    fixable = True
    probe = "dataloader"
    options = {"num-workers": 4}
    VALID = (
        Example("from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64, num_workers=4)\n"),
        Example("from torch.utils.data import DataLoader\ndef make(ds, workers):\n    return DataLoader(ds, num_workers=workers)\n"),
        Example("from torch.utils.data import DataLoader\ndef make(ds, **kw):\n    return DataLoader(ds, **kw)\n"),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "x = torch.randn(64, 3, device='cuda')\nloader = DataLoader(TensorDataset(x, x.cuda()))\n"
        ),
        Example("from my_lib import DataLoader\nloader = DataLoader(ds)\n"),
        Example(
            "import argparse\nfrom torch.utils.data import DataLoader\np = argparse.ArgumentParser()\n"
            "p.add_argument('--workers', type=int, default=8)\nargs = p.parse_args()\n"
            "loader = DataLoader(ds, num_workers=args.workers)\n"
        ),
    )
    INVALID = (
        Example(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n",
            "from torch.utils.data import DataLoader\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4, persistent_workers=True)\n",
        ),
        Example(
            "import torch as T\nloader = T.utils.data.DataLoader(ds, num_workers=0)\n",
            "import torch as T\nloader = T.utils.data.DataLoader(ds, num_workers=4, persistent_workers=True)\n",
        ),
        Example(
            "from torch.utils.data import DataLoader as DL\nloader = DL(\n    ds,\n    batch_size=8,  # small\n)\n",
            "from torch.utils.data import DataLoader as DL\nloader = DL(\n    ds,\n    batch_size=8,  # small\n"
            "    num_workers=4,\n    persistent_workers=True,\n)\n",
        ),
        Example("from torch.utils.data import DataLoader\nWORKERS = 0\nloader = DataLoader(ds, num_workers=WORKERS)\n"),
        Example("from torch.utils.data import DataLoader\nkw = dict(batch_size=4, num_workers=0)\nloader = DataLoader(ds, **kw)\n"),
        Example(
            "import argparse\nfrom torch.utils import data\np = argparse.ArgumentParser()\n"
            "p.add_argument('--num-workers', type=int, default=0)\nargs = p.parse_args()\n"
            "loader = data.DataLoader(ds, num_workers=args.num_workers)\n"
        ),
    )

    def finish(self) -> None:
        workers = self.opts["num-workers"]
        for call, site in self.loaders.items():
            value = self.setting(site, _NUM_WORKERS, "num_workers")
            if value is UNKNOWN or (value is not None and value != 0):
                continue
            dataset = self._dataset(site)
            if self._gpu_tensor_dataset(dataset) or self._iterable_dataset(dataset):
                continue
            passed_expr = self.ctx.call_argument(call, _NUM_WORKERS, "num_workers", site.scope)
            if value is None:
                where = "is not set"
            elif type(passed_expr[0]) is cst.Integer:
                where = "is 0"
            else:
                where = f"`{code(passed_expr[0])}` resolves to 0"
            fix = None
            passed = keyword(call, "num_workers") or positional(call, _NUM_WORKERS)
            extra = {} if keyword(call, "persistent_workers") else {"persistent_workers": "True"}
            title = f"Set num_workers={workers}" + (", persistent_workers=True" if extra else "")
            if passed is None and passed_expr is None:
                fix = self.keyword_fix(site, {"num_workers": str(workers), **extra}, title)
            elif passed is not None and self.ctx.value(passed.value, site.scope) == 0 and type(passed.value) is cst.Integer:
                new = replace_argument(call, passed, str(workers))
                fix = FixPlan(title, (Replace(site, with_keywords(new, extra)),))
            self.report(
                site,
                f"DataLoader loads every batch in the training process (num_workers {where}), so the "
                f"GPU waits on data: set num_workers={workers} (about the CPU cores per GPU) and "
                "persistent_workers=True.",
                fix,
            )

    def _dataset(self, site: Site):
        """The loader's dataset: (expression, scope) where it was made, or None."""
        dataset = argument(site.node, 0, "dataset")
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
        device = keyword(expr, "device")
        return device is not None and self.ctx.is_cuda_device(device.value, scope) is True

    def _iterable_dataset(self, found) -> bool:
        if found is None or type(found[0]) is not cst.Call or type(found[0].func) is not cst.Name:
            return False
        cls = self.dataset_classes.get(found[0].func.value)
        return cls is not None and any(
            self.ctx.qualname(base.value) in ITERABLE_DATASET or (dotted(base.value) or "").endswith("IterableDataset")
            for base in cls.bases
        )


class PinnedMemoryMissing(_LoaderRule):
    """
    ## What it does
    Finds a DataLoader without `pin_memory=True` whose batches the same file (or
    notebook) moves to the GPU with `.cuda()` or `.to(device)`.

    ## Why is this bad?
    A host-to-device copy from pageable memory is staged through a pinned buffer by the
    driver and blocks the host; from pinned memory it is a direct DMA that can overlap
    with compute (and `non_blocking=True` can make it asynchronous). Silent in CPU-only
    code, and when `pin_memory` is set from a value perf-lint cannot see.

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
    triggers = ("DataLoader",)
    name = "pinned-memory-missing"
    summary = "DataLoader batches go to the GPU from pageable memory (no pin_memory=True)"
    fixable = True
    probe = "dataloader"
    VALID = (
        Example(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for x, y in loader:\n    x = x.cuda()\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
            "for x, y in loader:\n    x = x.to('cpu')\n"
        ),
        Example(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\n"
            "for x, y in loader:\n    out = model(x.to(torch.float16))\n"
        ),
        Example(
            "from torch.utils.data import DataLoader\ndef make(ds, **kw):\n    return DataLoader(ds, num_workers=2, **kw)\n"
            "loader = make(ds)\nfor x in loader:\n    x.cuda()\n"
        ),
    )
    INVALID = (
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4)\n"
            "for i, (x, y) in enumerate(loader):\n    x, y = x.to(device), y.to(device)\n",
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
            "for i, (x, y) in enumerate(loader):\n    x, y = x.to(device), y.to(device)\n",
        ),
        Example(
            "from torch.utils.data import DataLoader\n"
            "def train(model, train_loader):\n    for batch in train_loader:\n"
            "        inputs = batch['x']\n        model(inputs.cuda())\n"
            "train(model, DataLoader(ds, num_workers=4, pin_memory=False))\n",
            "from torch.utils.data import DataLoader\n"
            "def train(model, train_loader):\n    for batch in train_loader:\n"
            "        inputs = batch['x']\n        model(inputs.cuda())\n"
            "train(model, DataLoader(ds, num_workers=4, pin_memory=True))\n",
        ),
    )

    def finish(self) -> None:
        moves = self.cuda_moves()
        for call, site in self.loaders.items():
            cuda = [m for m in moves.get(id(call), []) if m.to_cuda(self.ctx)]
            if not cuda:
                continue
            pinned = self.setting(site, _PIN_MEMORY, "pin_memory")
            if pinned is UNKNOWN or pinned is True:
                continue
            fix = None
            passed = keyword(call, "pin_memory") or positional(call, _PIN_MEMORY)
            if passed is None and self.ctx.call_argument(call, _PIN_MEMORY, "pin_memory", site.scope) is None:
                fix = self.keyword_fix(site, {"pin_memory": "True"}, "Set pin_memory=True")
            elif passed is not None and type(passed.value) is cst.Name:
                fix = FixPlan("Set pin_memory=True", (Replace(site, replace_argument(call, passed, "True")),))
            self.report(
                site,
                "Batches from this DataLoader are copied to the GPU from pageable memory, which "
                "blocks the host on every copy: set pin_memory=True (and use non_blocking=True "
                "in .to()).",
                fix,
            )


class NonBlockingWithoutPinnedMemory(_LoaderRule):
    """
    ## What it does
    Finds `.to(..., non_blocking=True)` / `.cuda(non_blocking=True)` on batches from a
    DataLoader that does not pin memory.

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
    triggers = ("DataLoader",)
    name = "non-blocking-without-pinned-memory"
    summary = "non_blocking=True copy of batches from a DataLoader that does not pin memory"
    fixable = True
    probe = "dataloader"
    VALID = (
        Example(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n"
        ),
        Example("def step(x):\n    return x.cuda(non_blocking=True)\nimport torch\n"),
        Example(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=args.pin)\n"
            "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n"
        ),
    )
    INVALID = (
        Example(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
            "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n    y = y.cuda(non_blocking=True)\n",
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n    y = y.cuda(non_blocking=True)\n",
            count=2,
        ),
    )

    def finish(self) -> None:
        for move in self.moves:
            if not move.non_blocking:
                continue
            loaders = self.loaders_of(move.loop)
            unpinned = [s for s in loaders if self.setting(s, _PIN_MEMORY, "pin_memory") in (None, False)]
            if not loaders or len(unpinned) != len(loaders):
                continue
            fix = None
            if all(keyword(s.node, "pin_memory") is None and positional(s.node, _PIN_MEMORY) is None for s in unpinned):
                steps = tuple(Replace(s, with_keywords(s.node, {"pin_memory": "True"})) for s in unpinned)
                fix = FixPlan("Set pin_memory=True on the DataLoader", steps)
            self.report(
                move.site,
                "non_blocking=True has no effect here: the batch comes from a DataLoader without "
                "pin_memory=True, so the copy is synchronous. Set pin_memory=True on the DataLoader.",
                fix,
            )
