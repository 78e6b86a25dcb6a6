"""Longer fuzzing run than the test suite: prints inputs tried and crashes found.

    python bench/fuzz.py [--examples N]
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hypothesmith  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.fuzzing import encodings, malformed_notebook, mutated_script  # noqa: E402
from tests.test_fuzz import check_source_bytes  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2000, help="inputs per generator")
    args = parser.parse_args()
    counts: dict[str, int] = {}
    crashes: list[str] = []

    def run(name, strategy, path, encode):
        @settings(max_examples=args.examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(strategy)
        def body(value):
            counts[name] = counts.get(name, 0) + 1
            data = encode(value)
            try:
                check_source_bytes(path, data)
            except Exception:  # noqa: BLE001 - a crash is what we count
                crashes.append(f"{name}: {data[:120]!r}\n{traceback.format_exc(limit=4)}")

        body()

    started = time.perf_counter()
    run("valid programs", hypothesmith.from_grammar(), "gen.py", lambda c: ("import torch\n" + c).encode())
    run("mutated scripts", mutated_script(), "train.py", lambda t: t.encode("utf-8", "surrogatepass"))
    run("encodings", mutated_script().flatmap(encodings), "train.py", lambda b: b)
    run("malformed notebooks", malformed_notebook(), "nb.ipynb", lambda b: b)
    for name, count in counts.items():
        print(f"{name:20} {count:6} inputs")
    print(f"{sum(counts.values())} inputs in {time.perf_counter() - started:.0f} s, {len(crashes)} crashes")
    for crash in crashes[:10]:
        print(crash)
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
