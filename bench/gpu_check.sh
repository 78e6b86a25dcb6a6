#!/usr/bin/env bash
# GPU check of perf-lint's profiler (see bench/gpu_check.py), under 5 minutes on a CUDA
# machine. Usage, from the repository root, without installing perf-lint:
#   PYTHONPATH=<dir with libcst> bash bench/gpu_check.sh [OUT.json]
# OUT defaults to bench/results/gpu_check.json; PYTHON picks the interpreter (python3).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$repo/bench/results/gpu_check.json}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
exec "${PYTHON:-python3}" "$repo/bench/gpu_check.py" "$out" --budget "${GPU_CHECK_BUDGET:-270}"
