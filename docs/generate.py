"""Write docs/rules/<CODE>.md from the rules' own docs (the test suite checks they match)."""

from __future__ import annotations

import pathlib

from perf_lint.analyzers import CATALOG

RULES_DIR = pathlib.Path(__file__).parent / "rules"


def rule_page(rule) -> str:
    facts = (
        f"- Family: {rule.family()}\n- Default severity: {rule.severity}\n"
        f"- Fix: {'yes' if rule.fixable else 'no'}\n- Profiler probe: {rule.probe or 'none'}\n"
        f"- Enabled by default: {'yes' if rule.default_enabled else 'no'}\n"
    )
    options = "".join(f"- `{k}` (default `{v}`)\n" for k, v in rule.options.items())
    text = rule.docs().rstrip() + "\n\n## Facts\n" + facts
    if options:
        text += f"\n## Options (`[tool.perf-lint.{rule.code}]`)\n{options}"
    return text


def main() -> None:
    RULES_DIR.mkdir(exist_ok=True)
    for rule in CATALOG:
        (RULES_DIR / f"{rule.code}.md").write_text(rule_page(rule), encoding="utf-8")


if __name__ == "__main__":
    main()
