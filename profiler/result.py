"""What a profile run returns, and its text, JSON and Markdown forms."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import report

CPU_LIMITS = (
    "pinned memory and non-blocking host-to-device copies (TPL102, TPL103)",
    "unsynchronized timing of asynchronous CUDA work (TPL201, TPL202)",
    "cuDNN algorithm choice with cudnn.benchmark (TPL401)",
    "overlap of DDP's gradient all-reduce with backward (TPL301)",
)


@dataclass
class ProfileResult:
    path: str
    steps: tuple = ()
    repeats: int = 0
    python: str | None = None
    target: str = ""  # what was profiled ("loop at line 12", "cell 3", ...)
    measure: str = ""  # what a step is ("iterations of the loop at line 14")
    findings: list = field(default_factory=list)  # measured findings (Finding.to_dict() + probe)
    skipped: list = field(default_factory=list)  # findings there that another run must measure
    verdicts: list = field(default_factory=list)  # {code, verdict, ratio, reason, metric, n, summary}
    variants: dict = field(default_factory=dict)  # "A"/"B" -> metrics
    runs: list = field(default_factory=list)  # one entry per child run
    device: str | None = None  # "cpu" or "cuda: <name>"
    machine: dict = field(default_factory=dict)
    report_path: str | None = None
    trace_dir: str | None = None
    error: str | None = None  # user-code error (traceback mapped to the user's lines) or setup problem
    error_location: dict | None = None  # {path, cell, line, label} of the innermost user frame
    failure: str | None = None  # None, or what failed. Nothing ran: source, config, request, no-finding,
    # interpreter, no-torch, output, internal. The code's run: exception, oom, timeout, crash, processes, cancelled
    notes: list = field(default_factory=list)
    sweep: dict | None = None  # --sweep: each candidate against A, and the winner (see profiler.sweep)

    @property
    def on_gpu(self) -> bool:
        return bool(self.device and self.device.startswith("cuda"))

    def summary(self) -> str:
        if self.verdicts:
            return "; ".join(v["summary"] for v in self.verdicts) + self.sweep_summary()
        if self.error:
            return f"profile failed: {self.error.splitlines()[0]}"
        return "nothing was measured"

    def sweep_summary(self) -> str:
        """The sweep's outcome after the verdicts: its winner with the speed-up, or that there is none."""
        if not self.sweep:
            return ""
        best = self.sweep["winner"]
        if best is None:
            return "; sweep: no winner"
        return f"; fastest: {best['label']} ({best['ratio']:.2f}x)"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["steps"] = list(self.steps)
        data["summary"] = self.summary()
        data["cpu_limits"] = [] if self.on_gpu or self.device is None else list(CPU_LIMITS)
        return data

    def to_text(self) -> str:
        return report.text(self)

    def to_markdown(self) -> str:
        return report.markdown(self)
