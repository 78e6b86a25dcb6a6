"""How each rule's finding is proven: what variant B is, what is compared, what needs a GPU.

Variant A is the code as written. Variant B is the same code with the findings' fixes
applied by the fix code the CLI uses; a finding without a fix gets the probe's own B
(`synthetic_b`), or none (A alone, e.g. counting syncs). `Finding.probe` names the probe;
a few codes refine it (TPL104's cost is per epoch, not per batch).
"""

from __future__ import annotations

from dataclasses import dataclass

_NO_SYNC_ON_CPU = "CPU operations finish before they return, so a clock read already includes the work"


@dataclass(frozen=True)
class Probe:
    name: str | None
    metric: str  # "step" (A/B step time), "interval" (a timed region), "kernels" (kernel choice across runs),
    # "syncs" (host-device syncs per step of A)
    gpu_only: frozenset | bool = False  # True, or the codes whose effect needs a GPU
    cpu_gap: str = ""  # why a CPU run cannot show the effect
    steps: str = "iterations"  # "iterations" of the training loop; "epochs": the loop around it, its inner
    # loop capped; "in-place": the finding's own loop, function or cell (a timed region)
    synthetic_b: str | None = None  # B for a finding without a fix: "sync-clocks", or None (A only)
    distributed: bool = False  # runs on a one-process group

    def needs_gpu(self, code: str) -> bool:
        return self.gpu_only is True or (isinstance(self.gpu_only, frozenset) and code in self.gpu_only)


PROBES = {
    "dataloader": Probe(
        "dataloader", "step", frozenset({"TPL102", "TPL103"}),
        "pinned memory and non-blocking copies only change host-to-device copies",
    ),
    "timing": Probe("timing", "interval", True, _NO_SYNC_ON_CPU, steps="in-place", synthetic_b="sync-clocks"),
    "syncs": Probe(
        "syncs", "syncs", True,
        "a host read only waits when work is queued on a GPU (on CPU the value is already there)",
    ),
    "compile-ddp": Probe(
        "compile-ddp", "step", True,
        "DDP's bucketed all-reduce overlapping backward needs NCCL on GPUs (a one-process gloo group has "
        "nothing to overlap)",
        distributed=True,
    ),
    "cudnn": Probe("cudnn", "kernels", True, "cuDNN and its autotuner only run on NVIDIA GPUs"),
}
BY_CODE = {
    "TPL104": Probe("dataloader", "step", steps="epochs"),
}
GENERIC = Probe(None, "step")


def probe_for(code: str, probe: str | None) -> Probe:
    return BY_CODE.get(code) or PROBES.get(probe or "", GENERIC)
