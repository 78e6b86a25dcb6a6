"""How each rule's finding is proven: what variant B is, what is compared, what needs a GPU.

Variant A is the code as written. Variant B is the same code with the findings' fixes
applied by the fix code the CLI uses; a finding without a fix gets the probe's own B
(`synthetic_b`) or none: its probe then reads A alone (syncs per step, compilations
during the steps, the first timed run against the later ones, the share of allocations).
`Finding.probe` names the probe; some codes refine it. A finding whose rule has no probe
is not a step-time effect of the code, and nothing is run for it.
"""

from __future__ import annotations

from dataclasses import dataclass

_NO_SYNC_ON_CPU = "CPU operations finish before they return, so a clock read already includes the work"


@dataclass(frozen=True)
class Probe:
    name: str
    metric: str  # "step": A/B step time; "epochs": A/B whole-epoch time (else time to first batch);
    # "interval": a timed region A/B; "kernels": kernel choice across runs; "memory": A/B peak memory
    # per step; A alone: "syncs" per step, "compiles" during the steps,
    # "warmup" (first timed run vs the later ones), "alloc-share" (tensor creation share of the step)
    gpu_only: frozenset | bool = False  # True, or the codes whose effect needs a GPU
    cpu_gap: str = ""  # why a CPU run cannot show the effect
    cpu_confirms: bool = False  # on CPU a confirmation stands, anything else is inconclusive
    steps: str = "iterations"  # "iterations" of the training loop; "epochs": the loop around it, its inner
    # loop capped; "in-place": the finding's own loop, function or cell (a timed region)
    synthetic_b: str | None = None  # B for a finding without a fix: "sync-clocks", or None
    distributed: bool = False  # runs on a one-process group
    profile_memory: bool = False  # record allocations (per-step peak memory)

    def needs_gpu(self, code: str) -> bool:
        return self.gpu_only is True or (isinstance(self.gpu_only, frozenset) and code in self.gpu_only)


PROBES = {
    "dataloader": Probe(
        "dataloader", "step", frozenset({"TPL102", "TPL103"}),
        "pinned memory and non-blocking copies only change host-to-device copies",
    ),
    "timing": Probe("timing", "interval", True, _NO_SYNC_ON_CPU, steps="in-place", synthetic_b="sync-clocks"),
    "syncs": Probe("syncs", "syncs", True,
                   "a host read only waits when work is queued on a GPU (on CPU the value is already there)"),
    "compile-ddp": Probe(
        "compile-ddp", "step", True,
        "DDP's bucketed all-reduce overlapping backward needs NCCL on GPUs (a one-process gloo group has "
        "nothing to overlap)",
        distributed=True,
    ),
    "cudnn": Probe("cudnn", "kernels", True, "cuDNN and its autotuner only run on NVIDIA GPUs"),
    "compile": Probe("compile", "compiles"),
    "memory": Probe("memory", "memory", cpu_confirms=True, profile_memory=True,
                    cpu_gap="the CPU allocator reports allocations made since profiling began, not the memory "
                            "held, so buffers a fix frees may not show"),
}
BY_CODE = {
    "TPL104": Probe("dataloader", "epochs", steps="epochs"),
    "TPL204": Probe("timing", "warmup", cpu_confirms=True, steps="in-place",
                    cpu_gap="CUDA context creation and kernel loading only happen on a GPU"),
    "TPL205": Probe("timing", "alloc-share", steps="in-place"),
    "TPL405": Probe("syncs", "step", cpu_confirms=True,
                    cpu_gap="CUDA_LAUNCH_BLOCKING and per-operator device syncs only cost time on a GPU"),
    "TPL501": Probe("syncs", "step", True, "a CPU tensor moved to the CPU is not copied"),
}


def probe_for(code: str, probe: str | None) -> Probe | None:
    """The probe of a finding; None when its rule has none. An unknown probe name with a fix
    compares step times."""
    if code in BY_CODE:
        return BY_CODE[code]
    if probe is None:
        return None
    return PROBES.get(probe, Probe(probe, "step"))
