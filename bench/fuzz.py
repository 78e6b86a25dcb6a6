"""Longer fuzzing run than the test suite: prints inputs tried, crashes found, the
slowest input of each generator and the peak memory.

    python bench/fuzz.py [--examples N] [--only NAME,...] [--seed N] [--memory-gb G] [--keep DIR]

--memory-gb caps this process's address space (RLIMIT_AS), so a runaway input fails
here (a MemoryError is a crash) instead of taking the machine down.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hypothesmith  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.fuzzing import deep_notebook, deep_script, encodings, malformed_notebook, mutated_script  # noqa: E402
from tests.test_fuzz import check_findings_survive, check_source_bytes  # noqa: E402


def _sketch(data: bytes) -> str:
    """An input in a line: its size, start and middle (where a deep statement is)."""
    middle = len(data) // 2
    return f"{len(data):,} bytes {data[:60]!r} ... {data[middle:middle + 60]!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2000, help="inputs per generator")
    parser.add_argument("--only", help="comma-separated generator names (default: all)")
    parser.add_argument("--seed", type=int, help="hypothesis seed (default: random)")
    parser.add_argument("--memory-gb", type=float, help="cap on this process's address space")
    parser.add_argument("--keep", type=Path, help="folder to write each crash's input and the slowest ones to")
    args = parser.parse_args()
    if args.memory_gb:
        limit = int(args.memory_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    warnings.simplefilter("ignore")  # the SyntaxWarnings of generated code
    counts: dict[str, int] = {}
    slowest: dict[str, tuple[float, str]] = {}
    crashes: list[str] = []

    def keep(label: str, path: str, data: bytes) -> None:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / (label.replace(" ", "-") + Path(path).suffix)).write_bytes(data)

    def run(name, strategy, path, encode, check=check_source_bytes):
        if args.only and name not in args.only.split(","):
            return

        @settings(max_examples=args.examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(strategy)
        def body(value):
            counts[name] = counts.get(name, 0) + 1
            data = encode(value)
            began, limit = time.perf_counter(), sys.getrecursionlimit()
            sys.setrecursionlimit(1000)  # Python's default, as `perf-lint check` runs (hypothesis raises it)
            try:
                check(path, data)
            except Exception:  # noqa: BLE001 - a crash is what we count
                crashes.append(f"{name}: {_sketch(data)}\n{traceback.format_exc(limit=4)}")
                keep(f"{name}-crash{len(crashes)}", path, data)
            finally:
                sys.setrecursionlimit(limit)
            took = time.perf_counter() - began
            if took > slowest.get(name, (0.0, ""))[0]:
                slowest[name] = (took, _sketch(data))
                keep(f"{name}-slowest", path, data)

        (body if args.seed is None else seed(args.seed)(body))()

    started = time.perf_counter()
    run("valid programs", hypothesmith.from_grammar(), "gen.py", lambda c: ("import torch\n" + c).encode())
    run("mutated scripts", mutated_script(), "train.py", lambda t: t.encode("utf-8", "surrogatepass"))
    run("encodings", mutated_script().flatmap(encodings), "train.py", lambda b: b)
    run("malformed notebooks", malformed_notebook(), "nb.ipynb", lambda b: b)
    run("deep scripts", deep_script(), "deep.py", str.encode, check_findings_survive)
    run("deep notebooks", deep_notebook(), "deep.ipynb", lambda b: b, check_findings_survive)
    if not counts:
        parser.error(f"no generator named {args.only!r}")
    for name, count in counts.items():
        took, sketch = slowest.get(name, (0.0, ""))
        print(f"{name:20} {count:6} inputs, slowest {took:5.1f} s: {sketch}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{sum(counts.values())} inputs in {time.perf_counter() - started:.0f} s, {len(crashes)} crashes, "
          f"peak memory {peak_mb:.0f} MB")
    for crash in crashes[:10]:
        print(crash)
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
