"""`--sweep`: the fix's value measured, not guessed.

A fix that writes a count (`num_workers=4` in a DataLoader call) is run with each candidate
count instead (1, 2, 4, ... up to the machine's cores, at most MAX_CANDIDATES of them) next to
the code as written, interleaved A B1 B2 ... per repeat. Each candidate is compared with the
code as written by the verdict's own rule (`stats.compare`: a ratio with a bootstrap interval
that must clear the noise band); the fastest is offered as the fix only when it is confirmed
faster than the code as written, so no "fastest" comes out of noise. On/off settings the fix
writes (persistent_workers, pin_memory) stay as it writes them: each is its own rule's A/B
(TPL104 over whole epochs, TPL102 on a GPU), not a ranking of counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import libcst as cst

from perf_lint.analyzers import Edit, Finding, Fix
from perf_lint.analyzers.rules.edits import with_keywords

from .judge import SPEEDUP, first_batches, samples, truncated
from .stats import compare, quantile

SETTINGS = ("num_workers",)  # keyword settings a fix writes as a count, swept over the machine's cores
MAX_CANDIDATES = 4
BUDGET_S = 60.0  # a sweep starts no repeat that would end past this (after the MIN_PAIRS repeats a verdict needs)


@dataclass(frozen=True)
class Candidate:
    variant: str  # "B1", "B2", ...
    setting: str
    value: int
    fix: Fix  # the finding's fix with this value

    @property
    def label(self) -> str:
        return self.fix.title[len("Set "):] if self.fix.title.startswith("Set ") else self.fix.title


@dataclass(frozen=True)
class Sweep:
    finding: Finding  # whose fix is swept
    setting: str
    candidates: tuple[Candidate, ...]


def counts(cpus: int) -> list[int]:
    """1, 2, 4, ... and the core count itself, up to the cores: the last MAX_CANDIDATES of them."""
    values = [1 << k for k in range(max(cpus, 1).bit_length()) if 1 << k <= cpus] or [1]
    if values[-1] != cpus and cpus > 1:
        values.append(cpus)
    return values[-MAX_CANDIDATES:]


def _call(edit: Edit) -> cst.Call | None:
    try:
        node = cst.parse_expression(edit.text)
    except cst.ParserSyntaxError:
        return None
    return node if type(node) is cst.Call else None


def setting_of(fix: Fix | None) -> str | None:
    """The count setting a fix writes as a whole number (`num_workers=4`), or None."""
    for edit in fix.edits if fix is not None else ():
        call = _call(edit)
        for arg in call.args if call is not None else ():
            if arg.keyword is not None and arg.keyword.value in SETTINGS and type(arg.value) is cst.Integer:
                return arg.keyword.value
    return None


def with_value(fix: Fix, setting: str, value: int) -> Fix:
    """`fix` writing `setting=value` instead of its own count; its title says so."""
    module = cst.Module([])
    edits = []
    for edit in fix.edits:
        call = _call(edit)
        if call is not None and any(a.keyword is not None and a.keyword.value == setting for a in call.args):
            edit = replace(edit, text=module.code_for_node(with_keywords(call, {setting: str(value)})))
        edits.append(edit)
    written = f"{setting}={value}"
    title, found = re.subn(rf"\b{setting}=\d+", written, fix.title)
    return Fix(title if found else f"{fix.title}, {written}", tuple(edits))


def plan(findings: list[Finding], cpus: int) -> Sweep | None:
    """The sweep of the first finding whose fix writes a count, or None."""
    for finding in findings:
        fix = finding.fix
        setting = setting_of(fix)
        if fix is not None and setting is not None:
            candidates = tuple(Candidate(f"B{i}", setting, value, with_value(fix, setting, value))
                               for i, value in enumerate(counts(cpus), 1))
            return Sweep(finding, setting, candidates)
    return None


def judged(result, sweep: Sweep, by_variant: dict) -> dict:
    """Each candidate against the code as written, and the winner (None unless confirmed faster)."""
    a = by_variant.get("A", [])
    every = [r for runs in by_variant.values() for r in runs]
    if truncated(every):  # epochs cut at the budget: the time to an epoch's first batch, as the verdict does
        times, name, what = first_batches, "start-up speed-up (A / B time to an epoch's first batch)", "first batch"
    else:
        times, name, what = (lambda run: samples(run, result.on_gpu)), SPEEDUP, "step"
    rows: list[dict[str, Any]] = []  # JSON: the report's table
    for candidate in sweep.candidates:
        runs = by_variant.get(candidate.variant, [])
        judgement = compare([times(r) for r in a], [times(r) for r in runs], name)
        mine = [x for r in runs for x in times(r)]
        rows.append({
            "variant": candidate.variant, "setting": candidate.setting, "value": candidate.value,
            "label": candidate.label, "title": candidate.fix.title, "median_ms": quantile(mine, 0.5) if mine else None,
            "verdict": judgement.verdict, "ratio": judgement.ratio, "low": judgement.low, "high": judgement.high,
            "reason": judgement.reason,
        })
    base = [x for r in a for x in times(r)]
    faster = [row for row in rows if row["verdict"] == "confirmed" and not result.failure]
    best = max(faster, key=lambda row: row["ratio"], default=None)
    finding = sweep.finding
    winner = None if best is None else {
        **best, "code": finding.code, "cell": finding.cell, "line": finding.range.start_line + 1, "fix": _texts(finding.fix),
        "as_fast": [row["label"] for row in faster if row is not best and row["high"] >= best["low"]],  # within the noise
    }
    closest = best or max(rows, key=lambda row: row["ratio"] or 0.0, default=None)  # the verdict's B
    return {"code": finding.code, "setting": sweep.setting, "measure": what, "ratio_name": name,
            "as_written_ms": quantile(base, 0.5) if base else None, "candidates": rows, "winner": winner,
            "versus": closest and closest["variant"]}


def _texts(fix: Fix | None) -> list[str]:
    return [edit.text for edit in fix.edits] if fix is not None else []


def winning_fix(finding: Finding, winner: dict) -> Fix | None:
    """The sweep's winner for `finding` as the code is now: its own fix with the winning count;
    None unless it is the measured finding (rule, cell, line) and its fix is still the one the
    sweep varied (the code it rewrites unchanged)."""
    if (finding.code, finding.cell, finding.range.start_line + 1) != (winner["code"], winner["cell"], winner["line"]):
        return None
    if finding.fix is None or _texts(finding.fix) != winner["fix"]:
        return None
    return with_value(finding.fix, winner["setting"], winner["value"])
