"""Numbers to verdicts: quartiles, and a difference that must beat the noise between runs.

A difference is *confirmed* when the expected side is larger by more than MARGIN in every
pairing of one variant's runs with the other's (worst run against best run) and the
quartiles of the pooled steps do not overlap; *not confirmed* when it is not larger by
MARGIN in any pairing; otherwise the noise is too large to tell (*inconclusive*).
"""

from __future__ import annotations

from dataclasses import dataclass

MARGIN = 0.05
MIN_SAMPLES = 3


def ms(value: float | None) -> str:
    """A duration for people: 3 significant digits, whole milliseconds from 100 ms."""
    if value is None:
        return "-"
    return f"{value:.3g} ms" if value < 100 else f"{value:.0f} ms"


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: list[float]) -> dict | None:
    """median, quartiles, min/max and n of a sample (None when empty)."""
    if not values:
        return None
    return {
        "median": quantile(values, 0.5),
        "q1": quantile(values, 0.25),
        "q3": quantile(values, 0.75),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


@dataclass
class Judgement:
    verdict: str  # "confirmed", "not confirmed", "inconclusive"
    ratio: float | None  # larger side / smaller side, pooled medians
    low: float | None  # worst pairing of run medians
    high: float | None  # best pairing
    reason: str


def compare(larger: list[list[float]], smaller: list[list[float]], what: str) -> Judgement:
    """Is `larger` (runs of samples) larger than `smaller`? `what` names the quantity."""
    larger = [run for run in larger if run]
    smaller = [run for run in smaller if run]
    pooled_l = [x for run in larger for x in run]
    pooled_s = [x for run in smaller for x in run]
    if len(pooled_l) < MIN_SAMPLES or len(pooled_s) < MIN_SAMPLES:
        return Judgement("inconclusive", None, None, None,
                         f"too few measured steps ({len(pooled_l)} and {len(pooled_s)}; at least {MIN_SAMPLES} each)")
    med_s = quantile(pooled_s, 0.5)
    if med_s <= 0:
        return Judgement("inconclusive", None, None, None, f"{what} too small to compare")
    ratio = quantile(pooled_l, 0.5) / med_s
    runs_l = [quantile(run, 0.5) for run in larger]
    runs_s = [quantile(run, 0.5) for run in smaller]
    low = min(runs_l) / max(runs_s) if max(runs_s) > 0 else None
    high = max(runs_l) / min(runs_s) if min(runs_s) > 0 else None
    if low is None or high is None:
        return Judgement("inconclusive", ratio, low, high, f"{what} too small to compare")
    separated = quantile(pooled_l, 0.25) > quantile(pooled_s, 0.75)
    pairs = f"{len(runs_l)}x{len(runs_s)} run pairs"
    if low > 1 + MARGIN and separated:
        return Judgement("confirmed", ratio, low, high,
                         f"{what} differs by {low:.2f}x to {high:.2f}x over all {pairs}, quartiles apart")
    if high < 1 + MARGIN:
        if ratio < 1 - MARGIN:
            return Judgement("not confirmed", ratio, low, high, f"the opposite: {what} is {1 / ratio:.2f}x the other way")
        return Judgement("not confirmed", ratio, low, high,
                         f"{what} differs by less than {MARGIN:.0%} in every one of {pairs} ({low:.2f}x to {high:.2f}x)")
    return Judgement("inconclusive", ratio, low, high,
                     f"noise larger than the difference: {what} ratio {low:.2f}x to {high:.2f}x across {pairs}"
                     + ("" if separated else ", quartiles overlap"))
