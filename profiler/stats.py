"""Numbers to verdicts: quartiles, and a ratio whose confidence interval must clear the noise.

Runs come in pairs, run i of one side against run i of the other (A and B of one repeat
ran one after the other, so a machine that slows down slows both). A run is the unit: its
steps share one process and one spell of machine load. Each pair gives the ratio of its two
runs' medians; the ratio is their geometric mean, and its 95% interval a bootstrap over the
pairs (fixed seed: the same numbers give the same interval; with 2 or 3 pairs it spans
them all). *Confirmed*: the whole interval above the noise band 1 +- MARGIN; *not
confirmed*: the whole interval in the band (no difference), or below 1 with every pair
below 1 (the opposite); otherwise *inconclusive*. One pair never decides: it cannot show
the noise from run to run.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

MARGIN = 0.05
MIN_SAMPLES = 3
MIN_PAIRS = 2
LEVEL = 0.95
RESAMPLES = 2000
SEED = 20
UNSTEADY = 0.25  # repeats of the same code further apart than this: the machine's speed changed


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
class Comparison:
    verdict: str  # "confirmed", "not confirmed", "inconclusive"
    ratio: float | None  # geometric mean over pairs of runs of larger-side median / smaller-side median
    low: float | None  # the ratio's 95% interval
    high: float | None
    reason: str
    name: str = ""  # what the ratio is: "speed-up (A time / B time)"
    pairs: int = 0
    opposite: bool = False  # not confirmed: the other side is larger

    @property
    def text(self) -> str:
        """The ratio, named, with its interval."""
        return f"{self.name} {self.ratio:.2f}x, {LEVEL:.0%} interval {self.low:.2f}-{self.high:.2f}x"


def geomean(values: list[float]) -> float:
    return math.prod(values) ** (1 / len(values))


def interval(ratios: list[float], seed: int = SEED) -> tuple[float, float]:
    """The LEVEL bootstrap interval of the geometric mean of the pairs' ratios."""
    rng = random.Random(seed)
    means = [geomean(rng.choices(ratios, k=len(ratios))) for _ in range(RESAMPLES)]
    return quantile(means, (1 - LEVEL) / 2), quantile(means, (1 + LEVEL) / 2)


def compare(larger: list[list[float]], smaller: list[list[float]], name: str) -> Comparison:
    """Is `larger` (runs of samples) larger than `smaller`, run i against run i? `name` names
    the ratio larger / smaller."""
    pairs = [(l, s) for l, s in zip(larger, smaller) if l and s]
    count_l, count_s = sum(len(l) for l, _ in pairs), sum(len(s) for _, s in pairs)
    if count_l < MIN_SAMPLES or count_s < MIN_SAMPLES:
        return Comparison("inconclusive", None, None, None,
                         f"too few measured steps ({count_l} and {count_s}; at least {MIN_SAMPLES} each)", name)
    if min(quantile(s, 0.5) for _, s in pairs) <= 0:
        return Comparison("inconclusive", None, None, None, f"{name}: a value too small to compare", name)
    ratios = [quantile(l, 0.5) / quantile(s, 0.5) for l, s in pairs]
    value, (low, high) = geomean(ratios), interval(ratios)

    def judged(verdict: str, why: str, opposite: bool = False) -> Comparison:
        j = Comparison(verdict, value, low, high, "", name, len(pairs), opposite)
        j.reason = f"{why}: {j.text}, from {len(pairs)} interleaved pair{'s' * (len(pairs) > 1)} of runs"
        return j

    band = f"the {MARGIN:.0%} noise band"
    if len(pairs) < MIN_PAIRS:
        return judged("inconclusive",
                      f"one pair of runs cannot show the noise from run to run (give {MIN_PAIRS} or more repeats)")
    if low > 1 + MARGIN:
        return judged("confirmed", f"the whole interval is above {band}")
    if low >= 1 - MARGIN and high <= 1 + MARGIN:
        return judged("not confirmed", f"no difference: the whole interval is within {band}")
    if high < 1 and max(ratios) < 1:
        return judged("not confirmed", "the opposite: every pair and the whole interval below 1", True)
    return judged("inconclusive", f"noise larger than the difference: the interval reaches into {band}")


def busy(loads: list[float], cpus: int | None, runs: list[list[list[float]]]) -> str | None:
    """Why timings here may not hold, or None: a 1-minute load (`loads`, before and during the
    runs) above the CPUs, or repeats of the same code (`runs`: per variant, per run, samples)
    further apart than UNSTEADY."""
    why = []
    peak = max(loads, default=None)
    if cpus and peak is not None and peak > cpus:
        why.append(f"busy machine (load {peak:.1f} on {cpus} CPUs)")
    medians = [[quantile(run, 0.5) for run in variant if run] for variant in runs]
    apart = max((max(m) / min(m) - 1 for m in medians if len(m) > 1 and min(m) > 0), default=0.0)
    if apart > UNSTEADY:
        why.append(f"unsteady timings (repeats of the same code {apart:.0%} apart)")
    return ", ".join(why) or None
