"""Lines per second of perf-lint against TorchFix and ruff on the same corpus, in one run.

    python bench/speed.py [--corpus DIR ...] [--jobs N]

The peers are installed into their own virtualenv (bench/.peers, from PyPI) so they
never share perf-lint's. The default corpus is real code nobody here wrote: the
installed torch package's nn/, optim/ and utils/ trees (about 110,000 lines) plus the
repository's examples. Prints a table and the ratios the speed targets are about:
cold perf-lint vs TorchFix (target >= 10x), warm (cached) perf-lint vs
`ruff check --no-cache` (target >= 1x). The cold run and TorchFix's are timed once; the
warm run and ruff's, a tenth of a second each, are the median of seven taken in turns.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "bench" / ".peers"
DEFAULT_TREES = ("nn", "optim", "utils")


def peers() -> Path:
    """bench/.peers with torchfix and ruff (created on first use)."""
    bin_dir = PEERS / "bin"
    if not (bin_dir / "torchfix").exists() or not (bin_dir / "ruff").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        subprocess.run([str(bin_dir / "pip"), "install", "-q", "torchfix", "ruff"], check=True)
    return bin_dir


def default_corpus() -> list[Path]:
    spec = importlib.util.find_spec("torch")  # its location only: torch is not imported
    torch_dir = Path(spec.origin).parent
    return [torch_dir / tree for tree in DEFAULT_TREES if (torch_dir / tree).is_dir()] + [ROOT / "examples"]


def copy_corpus(trees: list[Path], into: Path) -> int:
    """Copy the trees (Python files only) so every tool sees the same files; returns lines."""
    lines = 0
    for index, tree in enumerate(trees):
        for path in tree.rglob("*.py"):
            target = into / f"{index}_{tree.name}" / path.relative_to(tree)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            with open(path, "rb") as handle:
                lines += handle.read().count(b"\n")
    return lines


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="*", type=Path, help="folders to lint (default: parts of torch + examples)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes for every tool (default: all CPUs)")
    args = parser.parse_args()
    bin_dir = peers()
    perf_lint = [sys.executable, "-m", "perf_lint", "check", "--exit-zero", "-q", "--jobs", str(args.jobs), "."]
    with tempfile.TemporaryDirectory() as temp:
        corpus = Path(temp)
        lines = copy_corpus(args.corpus or default_corpus(), corpus)
        files = sum(1 for _ in corpus.rglob("*.py"))
        runs = {
            "perf-lint cold (--no-cache)": timed(perf_lint + ["--no-cache"], corpus),
        }
        timed(perf_lint, corpus)  # fill the cache
        runs["TorchFix"] = timed([str(bin_dir / "torchfix"), "--jobs", str(args.jobs), "."], corpus)
        ruff = [str(bin_dir / "ruff"), "check", "--no-cache", "--exit-zero", "--quiet", "--isolated", "."]
        warm, plain = [], []
        for _ in range(7):  # a tenth of a second each: the median of runs taken in turns, same machine load
            warm.append(timed(perf_lint, corpus))
            plain.append(timed(ruff, corpus))
        runs["perf-lint warm (cached)"] = statistics.median(warm)
        runs["ruff check --no-cache"] = statistics.median(plain)
    print(f"corpus: {files} files, {lines:,} lines; {args.jobs} jobs; {os.cpu_count()} CPUs")
    for name, seconds in runs.items():
        print(f"  {name:30} {seconds:7.2f} s  {lines / seconds:>12,.0f} lines/s")
    cold, warm = runs["perf-lint cold (--no-cache)"], runs["perf-lint warm (cached)"]
    print(f"cold perf-lint vs TorchFix: {runs['TorchFix'] / cold:.1f}x faster (target >= 10x)")
    print(f"warm perf-lint vs ruff --no-cache: {runs['ruff check --no-cache'] / warm:.2f}x (target >= 1x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
