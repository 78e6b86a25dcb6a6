"""GPU check of perf-lint's profiler: profile the bundled scenarios with `run_profile` and
write their verdicts and numbers to a JSON file.

    PYTHONPATH=<dir with libcst> python3 bench/gpu_check.py OUT.json [--budget SECONDS]

Scenarios (examples/profile/): num_workers=0 (TPL101) and no pinned memory (TPL102), a
matmul timed without synchronize (TPL201), compile before DDP on a one-process group
(TPL301), cudnn.benchmark under the profiler (TPL401), then workers started again every
epoch (TPL104, whole epochs), `.item()` every step (TPL203) and `%%time` in a notebook
(TPL202) while the time budget lasts. perf-lint need not be
installed: its packages are imported from this source tree. On a machine without CUDA it
runs too, and the GPU-only effects come out inconclusive.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples", "profile")
PACKAGES = {  # import name -> directory in the source tree (as pyproject.toml maps them)
    "perf_lint": "perf_lint",
    "perf_lint.analyzers": "analyzers",
    "perf_lint.server": "server",
    "perf_lint.profiler": "profiler",
}
# (file, rule, request options): the brief's scenarios first, extras while time remains
SCENARIOS = (
    ("dataloader_sync.py", "TPL101", {"repeats": 3}),
    ("dataloader_sync.py", "TPL102", {"repeats": 2}),
    ("unsync_timing.py", "TPL201", {"repeats": 3}),
    ("compile_ddp.py", "TPL301", {"repeats": 2, "timeout_s": 120}),
    ("cudnn_profile.py", "TPL401", {"repeats": 3}),
    ("workers_respawned.py", "TPL104", {"repeats": 2, "steps": (1, 1, 3)}),
    ("item_every_step.py", "TPL203", {"repeats": 2}),
    ("timing_magic.ipynb", "TPL202", {"repeats": 2, "cell": 2}),
)


class SourceTree(importlib.abc.MetaPathFinder):
    """Finds perf_lint and its subpackages in the source tree (no install needed)."""

    def find_spec(self, name, path, target=None):
        if name not in PACKAGES:
            return None
        directory = os.path.join(REPO, PACKAGES[name])
        return importlib.util.spec_from_file_location(
            name, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory])


def machine() -> dict:
    info = {"python": platform.python_version(), "executable": sys.executable, "cpus": os.cpu_count()}
    probe = ("import json, torch; print(json.dumps({'torch': torch.__version__, 'cuda': torch.cuda.is_available(), "
             "'gpu': torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}))")
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
        info.update(json.loads(done.stdout.strip().splitlines()[-1]))
    except (subprocess.SubprocessError, ValueError, IndexError) as exc:
        info["torch_error"] = str(exc)
    return info


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=os.path.join(REPO, "bench", "results", "gpu_check.json"))
    parser.add_argument("--budget", type=float, default=270.0, help="seconds; later scenarios are skipped past it")
    parser.add_argument("--traces", help="where traces and reports go (default: a temporary directory)")
    parser.add_argument("--rules", help="comma-separated codes: only these scenarios")
    args = parser.parse_args(argv)
    sys.meta_path.insert(0, SourceTree())
    from perf_lint.profiler import ProfileRequest, run_profile

    traces = args.traces or tempfile.mkdtemp(prefix="perf-lint-gpu-check-")
    started = time.monotonic()
    report = {"machine": machine(), "budget_s": args.budget, "traces": traces, "scenarios": []}
    runs_done = 0
    wanted = set(args.rules.upper().split(",")) if args.rules else None
    for name, rule, options in SCENARIOS:
        if wanted is not None and rule not in wanted:
            continue
        entry = {"file": f"examples/profile/{name}", "rule": rule, "options": options}
        spent = time.monotonic() - started
        per_run = spent / runs_done if runs_done else 0.0
        if spent + 2 * options["repeats"] * per_run > args.budget:
            entry["skipped"] = f"time budget: {spent:.0f} s spent, about {2 * options['repeats'] * per_run:.0f} s more needed"
            report["scenarios"].append(entry)
            continue
        t0 = time.monotonic()
        request = ProfileRequest(os.path.join(EXAMPLES, name), rule=rule, out_dir=traces,
                                 timeout_s=options.get("timeout_s", 90.0), repeats=options["repeats"],
                                 cell=options.get("cell"), steps=options.get("steps"))
        result = run_profile(request, progress=lambda message, rule=rule: print(f"[{rule}] {message}", flush=True))
        runs_done += len(result.runs)
        entry.update(elapsed_s=round(time.monotonic() - t0, 1), summary=result.summary(), result=result.to_dict())
        report["scenarios"].append(entry)
        print(f"[{rule}] {result.summary()} ({entry['elapsed_s']} s)", flush=True)
    report["elapsed_s"] = round(time.monotonic() - started, 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=1)
    print(f"wrote {args.out} ({report['elapsed_s']} s)")
    failed = [s for s in report["scenarios"] if s.get("result", {}).get("failure")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
