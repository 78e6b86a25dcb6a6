"""The profiler's child processes misbehaving: `os._exit`, a flood of output, a crash by
signal, a fork bomb, subprocesses left running. Each ends well within its timeout with a clear result and leaves nothing running."""

from __future__ import annotations

import time

import pytest

from perf_lint.profiler import ProfileRequest, run_profile

from .test_profiler import SLOW_DATASET, SMALL, live_members
from .timeouts import timeout

CASES = {
    "os._exit": ("import os\nfor x, y in loader:\n    os._exit(3)\n", ("crash", "exception")),
    "huge stdout": ("import sys\nfor x, y in loader:\n    sys.stdout.write('x' * 50_000_000)\n    break\n", None),
    "killed by a signal": ("import os, signal\nfor x, y in loader:\n    os.kill(os.getpid(), signal.SIGKILL)\n", ("crash",)),
    "fork bomb": ("import os, time\nfor x, y in loader:\n    while True:\n        try:\n            os.fork()\n"
                  "        except OSError:\n            time.sleep(0.01)\n", ("processes",)),
    "own subprocesses": ("import subprocess\nfor x, y in loader:\n    kids = [subprocess.Popen(['sleep', '300']) "
                         "for _ in range(3)]\n    break\n", None),
}


@timeout(200)
@pytest.mark.parametrize("name", CASES)
def test_misbehaving_child_ends_with_a_clear_result(tmp_path, name):
    body, failures = CASES[name]
    script = tmp_path / "cell.py"
    script.write_text(SLOW_DATASET + body)
    started = time.monotonic()
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=SMALL, repeats=1, timeout_s=60))
    assert time.monotonic() - started < 60 + 2 + 60  # the runs (A and B) each end within the timeout + 2 s
    if failures is not None:
        assert result.failure in failures, (result.failure, result.error)
        assert result.error
    assert result.summary()
    for run in result.runs:
        assert live_members(run["pgid"]) == []
