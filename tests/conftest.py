"""Shared fixtures."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.fixture
def cli(tmp_path):
    """Run `python -m perf_lint ARGS...` in `tmp_path` (or `cwd`) as a real process."""

    def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONUTF8": "1"}
        return subprocess.run(
            [sys.executable, "-m", "perf_lint", *args],
            cwd=cwd or tmp_path, env=env, capture_output=True, text=True, timeout=60,
        )

    return run
