"""perf_lint.profiler: prove a finding by measurement.

`run_profile(ProfileRequest(path, ...))` runs the flagged code as written (A) and with the
finding's fix or probe (B) under torch.profiler in a child process of the chosen
interpreter, interleaved over several repeats, and returns a `ProfileResult` with
per-variant metrics, a verdict per finding, traces and a Markdown report. This package
never imports torch; only its child (`child.py`, run by path) does.
"""

from .harness import run_profile
from .request import ProfileRequest
from .result import ProfileResult

__all__ = ["ProfileRequest", "ProfileResult", "run_profile"]
