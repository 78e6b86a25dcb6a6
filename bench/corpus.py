"""Lint real code nobody here wrote and round-trip every fix over it.

    python bench/corpus.py [ROOT ...]      (default: the installed torch package)

Prints files, lines, findings per code, crashes (must be 0), seconds; then applies every
available fix and checks that each changed file parses, that a second --fix changes
nothing, and that only lines near finding sites changed.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import time
from collections import Counter

from perf_lint.analyzers import SourceError, analyze, fix_source, read_source


def python_files(root: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith((".py", ".ipynb")))


def default_roots() -> list[str]:
    import importlib.util

    spec = importlib.util.find_spec("torch")  # only its location: torch is not imported
    return [os.path.dirname(spec.origin)] if spec and spec.origin else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("roots", nargs="*")
    args = parser.parse_args()
    roots = args.roots or default_roots()
    files = [p for root in roots for p in python_files(root)]
    codes: Counter = Counter()
    lines = crashes = unreadable = changed = applied = failures = 0
    started = time.perf_counter()
    fixable = []
    for path in files:
        try:
            source = read_source(path)
        except (SourceError, OSError):
            unreadable += 1
            continue
        lines += sum(u.text.count("\n") + 1 for u in source.units)
        try:
            findings = analyze(source)
        except Exception as exc:  # noqa: BLE001 - counted, must be 0
            crashes += 1
            print(f"CRASH {path}: {type(exc).__name__}: {exc}")
            continue
        codes.update(f.code for f in findings)
        if any(f.fix for f in findings):
            fixable.append((path, source, findings))
    elapsed = time.perf_counter() - started
    print(f"linted {len(files)} files ({lines:,} lines) in {elapsed:.1f} s: {lines / elapsed:,.0f} lines/s, "
          f"{sum(codes.values())} findings, {crashes} crashes, {unreadable} unreadable")
    print("findings per code:", dict(sorted(codes.items())))
    for path, source, findings in fixable:
        result = fix_source(source)
        if not result.changed:
            continue
        changed += 1
        applied += len(result.applied)
        problems = []
        for old, unit in zip(source.units, result.source.units):
            if not _parses(old.code):
                continue  # (an unfinished exercise cell: TPL000, left as it was)
            try:
                ast.parse(unit.code)
            except SyntaxError as exc:
                problems.append(f"does not parse: {exc}")
        if fix_source(result.source).changed:
            problems.append("second --fix changed it again")
        spans = [e.range for f in result.applied for e in f.fix.edits] + [f.range for f in findings]
        sites = {line for span in spans for line in range(span.start_line, span.end_line + 1)}  # (a call over many lines)
        before, after = source.units[0].text.splitlines(), result.source.units[0].text.splitlines()
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
            if tag != "equal" and not any(abs(i - s) <= 12 for i in range(i1, max(i2, i1 + 1)) for s in sites):
                problems.append(f"changed lines {i1 + 1}-{i2} far from any finding")
        if problems:
            failures += 1
            print(f"FIX FAILURE {path}: {'; '.join(problems)}")
    print(f"fixes: {changed} files changed, {applied} fixes applied, {failures} failures")
    return 1 if crashes or failures else 0


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
