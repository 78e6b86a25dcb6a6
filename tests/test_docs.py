"""The rule docs on disk and in the README stay in step with the rule classes."""

from __future__ import annotations

import importlib.util
import pathlib

from perf_lint.analyzers import CATALOG

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rule_pages_are_generated_from_the_rules():
    """Every code's page exists (TPL000's too: diagnostics link to it) and matches its docs."""
    generate = _generator()
    for rule in CATALOG:
        page = ROOT / "docs" / "rules" / f"{rule.code}.md"
        assert page.read_text(encoding="utf-8") == generate.rule_page(rule), f"run python docs/generate.py ({rule.code})"


def test_readme_shows_each_rules_measured_precision():
    """The README's Precision column is bench/results/accuracy.json's, as the rule pages are."""
    generate = _generator()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for rule in CATALOG:
        row = next(line for line in readme.splitlines() if line.startswith(f"| {rule.code} | {rule.name} |"))
        assert row.rstrip(" |").rsplit("|", 1)[1].strip() == generate.precision(rule.code), rule.code


def test_readme_rule_table_lists_every_rule():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for rule in CATALOG:
        assert f"| {rule.code} | {rule.name} |" in readme, rule.code
