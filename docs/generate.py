"""Write docs/rules/<CODE>.md from the rules' own docs (the test suite checks they match)."""

from __future__ import annotations

import json
import pathlib

from perf_lint.analyzers import CATALOG

RULES_DIR = pathlib.Path(__file__).parent / "rules"
# `python bench/accuracy.py --corpus bench/.corpus --json`, committed with the labels it measures
ACCURACY = pathlib.Path(__file__).parent.parent / "bench" / "results" / "accuracy.json"


def measured(code: str) -> dict | None:
    """The rule's figures on the development corpus, or None when it has no labelled case."""
    figures = json.loads(ACCURACY.read_text(encoding="utf-8"))["rules"].get(code)
    return figures if figures and (figures["pitfalls"] or figures["near_misses"] or figures["findings"]) else None


def precision(code: str) -> str:
    """The README's precision cell: "94% (75/79)", or "-" without findings to judge."""
    figures = measured(code)
    if not figures or not figures["judged"]:
        return "-"
    return f"{100 * figures['right'] / figures['judged']:.0f}% ({figures['right']}/{figures['judged']})"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "none labelled"


def rule_page(rule) -> str:
    facts = (
        f"- Family: {rule.family()}\n- Default severity: {rule.severity}\n"
        f"- Fix: {'yes' if rule.fixable else 'no'}\n- Profiler probe: {rule.probe or 'none'}\n"
        f"- Enabled by default: {'yes' if rule.default_enabled else 'no'}\n"
    )
    options = "".join(f"- `{k}` (default `{v}`)\n" for k, v in rule.options.items())
    figures = measured(rule.code)
    if figures is None:
        accuracy = "No labelled case of this rule in the development corpus yet.\n"
    else:
        accuracy = (
            "On the development corpus (`bench/accuracy/`: public repositories labelled by reading the code, "
            "measured by `bench/accuracy.py`): "
            f"recall {_share(figures['found'], figures['pitfalls'])}, "
            f"near-misses flagged {_share(figures['flagged'], figures['near_misses'])}, "
            f"precision {_share(figures['right'], figures['judged'])}.\n"
        )
    text = rule.docs().rstrip() + "\n\n## Measured on real code\n" + accuracy + "\n## Facts\n" + facts
    if options:
        text += f"\n## Options (`[tool.perf-lint.{rule.code}]`)\n{options}"
    return text


def main() -> None:
    RULES_DIR.mkdir(exist_ok=True)
    for rule in CATALOG:
        (RULES_DIR / f"{rule.code}.md").write_text(rule_page(rule), encoding="utf-8")


if __name__ == "__main__":
    main()
