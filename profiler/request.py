"""What to profile: the request that the CLI and the language server build."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_STEPS = (1, 2, 5)
RUNNERS = ("local", "ray")


@dataclass(frozen=True)
class ProfileRequest:
    """`path` is the file (`text` its unsaved editor text, notebook JSON for `.ipynb`);
    `cell` a notebook cell index (0-based in `cells`) or a `# %%` cell index (0-based; people
    see `cell_label`); `line` a
    1-based line (within the cell for notebooks); `rule` restricts the findings measured;
    `python` the interpreter that runs the code (default: this one); `steps` the profiler
    schedule (wait, warmup, active); `timeout_s` the limit of each run (one variant, one
    repeat); `repeats` the runs per variant, interleaved A B A B...; `out_dir` where
    traces and the report go (default `.perf-lint/traces/` next to the file); `runner`
    "local" (a child process here) or "ray" (a task on the Ray cluster at `address`, None:
    RAY_ADDRESS or a local Ray instance, asking for `num_gpus` GPUs, 0 on a CPU cluster);
    `sweep` runs the fix with each candidate count it writes (see profiler.sweep) instead of
    its own; `keep_traces` the run folders kept (default: the setting profiling.keep-traces)."""

    path: str
    text: str | None = None
    cell: int | None = None
    line: int | None = None
    rule: str | None = None
    python: str | None = None
    steps: tuple[int, int, int] | None = None
    timeout_s: float = 120.0
    repeats: int = 3
    out_dir: str | None = None
    runner: str = "local"
    address: str | None = None
    num_gpus: float = 1.0
    sweep: bool = False
    keep_traces: int | None = None

    @property
    def schedule(self) -> tuple[int, ...]:
        """The steps as given, or the default (`problems` says when they are not three)."""
        return tuple(self.steps) if self.steps is not None else DEFAULT_STEPS

    def problems(self) -> list[str]:
        """What is wrong with the request's numbers (empty when nothing is)."""
        found = []
        steps = self.schedule
        if len(steps) != 3 or any(not isinstance(n, int) or n < 0 for n in steps) or steps[2] < 1:
            found.append(f"steps must be three whole numbers wait,warmup,active with active >= 1, not {self.steps!r}")
        if not isinstance(self.repeats, int) or self.repeats < 1:
            found.append(f"repeats must be at least 1, not {self.repeats!r}")
        if not self.timeout_s or self.timeout_s <= 0:
            found.append(f"timeout must be positive, not {self.timeout_s!r}")
        if self.keep_traces is not None and (not isinstance(self.keep_traces, int) or self.keep_traces < 1):
            found.append(f"the run folders kept must be at least 1, not {self.keep_traces!r}")
        if self.cell is not None and self.cell < 0:
            found.append(f"cell must be 0 or more, not {self.cell}")
        if self.line is not None and self.line < 1:
            found.append(f"line must be 1 or more, not {self.line}")
        if self.runner not in RUNNERS:
            found.append(f"runner must be one of {', '.join(RUNNERS)}, not {self.runner!r}")
        if (isinstance(self.num_gpus, bool) or not isinstance(self.num_gpus, (int, float))
                or not 0 <= self.num_gpus < float("inf")):
            found.append(f"the GPUs per run must be a number >= 0, not {self.num_gpus!r}")
        if self.runner != "ray" and self.address:
            found.append("a Ray address is for the ray runner (--runner ray, setting profiling.runner)")
        if self.runner == "ray" and self.python:
            found.append("an interpreter (--python, setting profiling.python) is for local runs: a Ray task runs "
                         "in the Python of the cluster's workers")
        return found
