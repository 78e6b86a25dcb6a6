"""Accuracy of perf-lint on hand-labelled repositories: the development corpus
(bench/accuracy/labels), or a held-out set's labels given with --labels.

    python bench/accuracy.py --corpus DIR [--labels DIR] [--findings DIR] [--rule TPL101] [--list] [--json]

DIR holds each labelled repository as DIR/OWNER__NAME, a clone at the labelled commit.
Each repository is checked (its `.scope` paths, else all of it) with `perf-lint check
--no-config`; a finding matches a label row with the same path, cell and rule within
`SLACK` lines (a TPL501 move within six lines of the factory it moves, a TPL502 model call
or TPL301 wrap within twenty of the loop or compile labelled), or whose related location
(the helper of another file it names, a further read of its statement) is the row's line; it is judged by the rows it
matches at the smallest distance. Per rule and overall it prints: recall (labelled
pitfalls found), near-misses flagged (labelled near-misses reported), precision (findings
on pitfalls among findings that match a row) and the findings no row judges. Files that do
not parse (TPL000: Python 2 code, a cell's syntax error) are left out on both sides: they
are not a performance pitfall, and the rules cannot read them; a file perf-lint failed on
(an internal error) is left out too, and named in the notes. Not a pass/fail test.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

LABELS = Path(__file__).resolve().parent / "accuracy" / "labels"
SLACK = 2  # lines between a finding and the row it matches
WIDER = {"TPL501": 6, "TPL502": 20, "TPL301": 20}  # rules whose finding and labelled line may lie further apart


def rows(labels: Path = LABELS) -> list[dict]:
    found = []
    for table in sorted(labels.glob("*.csv")):
        with open(table, newline="") as handle:
            for row in csv.DictReader(handle):
                row["cell"] = int(row["cell"]) if row["cell"] else None
                row["line"] = int(row["line"])
                found.append(row)
    return found


def findings(clone: Path, labels: Path = LABELS, saved: Path | None = None) -> tuple[list[dict], str]:
    """perf-lint's findings in a clone (related paths made relative to it) and its stderr; with `saved`, those of `saved/OWNER__NAME.json` (the JSON output of an
    earlier version's run over the same scope) instead."""
    if saved is not None:
        out, stderr = json.loads((saved / f"{clone.name}.json").read_text()), ""
    else:
        scope_file = labels / f"{clone.name}.scope"
        scope = [line.strip() for line in scope_file.read_text().splitlines() if line.strip()] if scope_file.exists() else ["."]
        run = subprocess.run([sys.executable, "-m", "perf_lint", "check", "--format", "json", "--no-config", *scope],
                             cwd=clone, capture_output=True, text=True, timeout=3600)
        out, stderr = json.loads(run.stdout or "[]"), run.stderr
    for finding in out:
        finding["related"] = [{**r, "path": os.path.relpath(r["path"], clone) if os.path.isabs(r["path"]) else r["path"]}
                              for r in finding.get("related", ())]
    return out, stderr


def distance(finding: dict, row: dict) -> int | None:
    """Lines between a finding (or a related location of it) and a row it matches, or None."""
    if finding["code"] != row["rule"]:
        return None
    places = [(finding["path"], finding["cell"], finding["line"], WIDER.get(row["rule"], SLACK))]
    places += [(r["path"], r.get("cell"), r["line"], 0) for r in finding["related"]]
    found = [abs(line - row["line"]) for path, cell, line, slack in places
             if os.path.normpath(path) == os.path.normpath(row["path"]) and cell == row["cell"]
             and abs(line - row["line"]) <= slack]
    return min(found, default=None)


def nearest(finding: dict, rows: list[dict]) -> list[dict]:
    """The rows a finding is judged by: those it matches at the smallest distance (a
    finding on a labelled line is not also taken for the row on the next line)."""
    found = [(d, r) for r in rows if r["repo"] == finding["repo"] and (d := distance(finding, r)) is not None]
    closest = min((d for d, _ in found), default=0)
    return [r for d, r in found if d == closest]


def ratio(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100 * part / whole:.0f}%" if whole else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, type=Path, help="folder of OWNER__NAME clones")
    parser.add_argument("--labels", type=Path, default=LABELS, help="folder of label CSVs (default: the development corpus's)")
    parser.add_argument("--findings", type=Path, help="score the saved findings DIR/OWNER__NAME.json (`perf-lint check "
                        "--format json --no-config` over the scope, run by another version) instead of running perf-lint")
    parser.add_argument("--rule", help="only this rule")
    parser.add_argument("--list", action="store_true", help="list the misses, flagged near-misses and unjudged findings")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    labelled = [r for r in rows(args.labels) if not args.rule or r["rule"] == args.rule]
    by_repo = defaultdict(list)
    for row in labelled:
        by_repo[row["repo"]].append(row)
    reported, notes = [], []
    for repo, repo_rows in sorted(by_repo.items()):
        clone = args.corpus / repo.replace("/", "__")
        if not clone.is_dir():
            print(f"accuracy: no clone of {repo} at {clone} (git clone it at {repo_rows[0]['commit']})", file=sys.stderr)
            return 2
        head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        if head != repo_rows[0]["commit"]:
            notes.append(f"{repo}: clone at {head[:12]}, labelled at {repo_rows[0]['commit'][:12]}")
        found, _ = findings(clone, args.labels, args.findings)
        unread = {(os.path.normpath(f["path"]), f["cell"]) for f in found if f["code"] == "TPL000"}
        notes += [f"{repo}: {f['path']} left out: {f['message']}" for f in found if f["code"] == "TPL000" and "internal error" in f["message"]]
        kept = [r for r in repo_rows if (os.path.normpath(r["path"]), r["cell"]) not in unread and r["rule"] != "TPL000"]
        labelled = [r for r in labelled if r["repo"] != repo] + kept
        reported += [{**f, "repo": repo} for f in found if f["code"] != "TPL000" and (not args.rule or f["code"] == args.rule)]

    judged_by = [(f, nearest(f, labelled)) for f in reported]

    def hit(row):
        return any(row in rs for _, rs in judged_by)

    table, listing = {}, []
    for rule in sorted({r["rule"] for r in labelled} | {f["code"] for f in reported}):
        mine = [r for r in labelled if r["rule"] == rule]
        pitfalls = [r for r in mine if r["verdict"] == "pitfall" and r["source"] == "label"]
        near = [r for r in mine if r["verdict"] == "near-miss" and r["source"] == "label"]
        found = [f for f in reported if f["code"] == rule]
        judged = [(f, rs) for f, rs in judged_by if f["code"] == rule]
        right = sum(1 for _, rs in judged if any(r["verdict"] == "pitfall" for r in rs))
        unjudged = [f for f, rs in judged if not rs]
        table[rule] = {"pitfalls": len(pitfalls), "found": sum(map(hit, pitfalls)), "near_misses": len(near),
                       "flagged": sum(map(hit, near)), "findings": len(found), "judged": len(found) - len(unjudged),
                       "right": right, "unjudged": len(unjudged)}
        listing += [f"miss      {r['repo']} {r['path']}:{r['cell'] or ''}:{r['line']} {rule}: {r['why']}" for r in pitfalls if not hit(r)]
        listing += [f"flagged   {r['repo']} {r['path']}:{r['cell'] or ''}:{r['line']} {rule}: {r['why']}" for r in near if hit(r)]
        listing += [f"unjudged  {f['repo']} {f['path']}:{f['cell'] or ''}:{f['line']} {rule}" for f in unjudged]
    total = {key: sum(t[key] for t in table.values()) for key in next(iter(table.values()), {})}
    if args.json:
        print(json.dumps({"rules": table, "overall": total, "notes": notes}, indent=2))
        return 0
    print(f"{'rule':8} {'recall':>16} {'near-misses flagged':>20} {'precision':>16} {'unjudged':>9}")
    for rule, t in [*table.items(), ("overall", total)]:
        print(f"{rule:8} {ratio(t['found'], t['pitfalls']):>16} {ratio(t['flagged'], t['near_misses']):>20} "
              f"{ratio(t['right'], t['judged']):>16} {t['unjudged']:>9}")
    for note in notes:
        print(f"note: {note}")
    if args.list:
        print("\n".join(sorted(listing)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
