"""TPL501: tensors created on the CPU and copied to the GPU on every iteration."""

from __future__ import annotations

import libcst as cst

from ..context import Site, UNKNOWN, argument, call_name, code, dotted, keyword, star_kwargs
from .base import CallNames, Example, FixPlan, Replace
from .dataloader import _DEVICE_LIKE, _DTYPE_LIKE
from .edits import with_keywords
from .tracking import Nesting

_DETERMINISTIC = {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "tensor", "as_tensor"}
_RANDOM = {"randn", "rand", "randint", "randperm", "normal", "bernoulli"}
_PER_CALL = {"forward", "__call__", "training_step"}
_SAME_DATA = {
    "unsqueeze", "squeeze", "view", "reshape", "expand", "repeat", "flatten", "t", "float", "half", "bfloat16",
    "double", "long", "int", "bool", "contiguous",
}  # methods between the factory and the move that a tensor on the GPU supports alike


class CpuTensorMovedEachStep(Nesting):
    """
    ## What it does
    Finds a tensor created by a torch factory (`torch.zeros`, `torch.ones`, `torch.arange`,
    `torch.tensor`, `torch.randn`, ...) and moved with `.cuda()` or `.to(device)` (right
    away or after reshapes and casts: `torch.arange(n).unsqueeze(0).to(device)`), inside a
    loop or a module's `forward`. A device variable counts in code
    that uses CUDA; `.to(x.device)` (another tensor's device) always does, since creating
    the tensor there is never slower.

    ## Why is this bad?
    The tensor is allocated and filled on the CPU, then copied from pageable memory to the
    GPU: a synchronous host-to-device copy that blocks the CPU, on every iteration or
    forward call. Created with `device=`, it is allocated (and filled by a kernel)
    directly on the GPU, asynchronously.

    ## Example
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], 1).to(x.device)
    ```

    ## Fix
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], 1, device=x.device)
    ```
    No automatic fix for random factories (`randn`, `rand`, ...): on the GPU they draw
    from the CUDA generator, so the values change for a given seed.
    """

    code = "TPL501"
    name = "cpu-tensor-moved-each-step"
    summary = "torch.zeros(...).cuda() / .to(device) in a loop or forward: create it with device="
    triggers = (".cuda(", ".to(")
    calls = CallNames(frozenset({"cuda", "to"}))
    fixable = True
    probe = "syncs"
    VALID = (
        Example("import torch\nfor x in loader:\n    mask = torch.ones(8, 8, device='cuda')\n"),
        Example("import torch\nmask = torch.ones(8, 8).cuda()\nfor x in loader:\n    y = x * mask\n"),
        Example("import torch\nfor x in loader:\n    mask = torch.ones(8, 8).to(torch.float16)\n"),
        Example("import torch\nfor x in loader:\n    mask = torch.ones(8, 8).to(device)\n"),
    )
    INVALID = (
        Example(
            "import torch\nfor step in range(1000):\n    noise = torch.zeros(64, 128).cuda()\n",
            "import torch\nfor step in range(1000):\n    noise = torch.zeros(64, 128, device=\"cuda\")\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        pos = torch.arange(x.size(1)).to(x.device, non_blocking=True)\n        return x + pos\n",
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        pos = torch.arange(x.size(1), device=x.device)\n        return x + pos\n",
        ),
        Example("import torch\nfor x in loader:\n    eps = torch.randn(x.shape).cuda()\n"),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.moves: list[tuple[Site, cst.Call, cst.BaseExpression | None]] = []  # (move, factory, device)

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name not in ("cuda", "to") or type(node.func) is not cst.Attribute:
            return
        made = _factory_below(node.func.value)
        if made is None:
            return
        qualified = self.ctx.qualname(made.func) or ""
        if qualified.count(".") != 1 or not qualified.startswith("torch."):
            return
        site = self.ctx.site(node)
        function = self.function()
        if not site.loops and (function is None or function.name.value not in _PER_CALL):
            return
        device = argument(node, 0, "device")
        if name == "to" and device is None:
            return
        self.moves.append((site, made, device))

    def finish(self) -> None:
        for site, made, device in self.moves:
            if device is not None and not self._device(device, site):
                continue
            factory = call_name(made)
            where = "on every iteration" if site.loops else "on every forward call"
            fix = self._fix(site, made, device) if factory in _DETERMINISTIC else None
            self.report(
                site,
                f"torch.{factory}(...) is created on the CPU and then copied to the GPU {where}: an allocation, "
                "a fill and a blocking copy from pageable memory each time. Create it on the device directly: "
                f"torch.{factory}(..., device=...)."
                + ("" if factory in _DETERMINISTIC else " (Random values then come from the CUDA generator.)"),
                fix,
            )

    def _device(self, device: cst.BaseExpression, site: Site) -> bool:
        """Provably CUDA, or a device variable in code that uses CUDA."""
        cuda = self.ctx.is_cuda_device(device, site.scope)
        if cuda is not UNKNOWN:
            return cuda is True
        text = dotted(device) or ""
        last = text.rsplit(".", 1)[-1]
        if last == "device" and "." in text:
            return True  # another tensor's device: a copy whenever that tensor is on the GPU
        return bool(text) and not _DTYPE_LIKE.search(last) and bool(_DEVICE_LIKE.search(text)) and (
            self.ctx.cuda_evidence is not None
        )

    def _fix(self, site: Site, made: cst.Call, device) -> FixPlan | None:
        if keyword(made, "device") is not None or star_kwargs(made):
            return None
        others = [
            a for a in site.node.args
            if a.value is not device and not (a.keyword is not None and a.keyword.value == "non_blocking")
        ]
        if others:  # a dtype or copy= as well: not only a move
            return None
        created = with_keywords(made, {"device": '"cuda"' if device is None else code(device)})
        receiver = site.node.func.value
        new = created if receiver is made else receiver.deep_replace(made, created)
        return FixPlan("Create the tensor on the device", (Replace(site, new),))


def _factory_below(expr: cst.BaseExpression) -> cst.Call | None:
    """The torch factory call at the bottom of `torch.arange(n).unsqueeze(0)`-like chains."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in _SAME_DATA:
        expr = expr.func.value
    if type(expr) is cst.Call and call_name(expr) in _DETERMINISTIC | _RANDOM:
        return expr
    return None
