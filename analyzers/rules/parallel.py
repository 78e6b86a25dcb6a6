"""TPL304: single-process multi-GPU training with nn.DataParallel."""

from __future__ import annotations

import libcst as cst

from ..nodes import call_name
from .base import Example, Rule

DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}


class DataParallelTraining(Rule):
    """
    ## What it does
    Finds models wrapped in `torch.nn.DataParallel`.

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
    """

    code = "TPL304"
    name = "data-parallel"
    summary = "nn.DataParallel for multi-GPU training (use DistributedDataParallel)"
    triggers = ("DataParallel",)
    VALID = (
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
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) == "DataParallel" and self.ctx.qualname(node.func) in DATA_PARALLEL:
            self.report(
                self.ctx.site(node),
                "nn.DataParallel drives every GPU from one process: each step scatters the batch, replicates "
                "the parameters and gathers outputs through GPU 0, under the GIL, without overlapping gradient "
                "communication with backward. Use DistributedDataParallel (one process per GPU, launched "
                "with torchrun), which PyTorch recommends even on one machine.",
            )
