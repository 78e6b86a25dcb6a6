"""The rule catalog. Codes are public API: stable, documented, never reused."""

from __future__ import annotations

import importlib
import pkgutil

from .base import Example, Rule
from .syntax import SyntaxErrorRule


def _discovered() -> tuple[type[Rule], ...]:
    """Every rule class of this package's modules (a class naming its own `code`), by code;
    a rule's module is all it takes to add one."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    found, classes = [], [Rule]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if isinstance(vars(cls).get("code"), str) and cls.__module__.startswith(f"{__name__}."):
            found.append(cls)
    codes = [rule.code for rule in found]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"two rules share a code: {sorted(c for c in codes if codes.count(c) > 1)}")
    return tuple(sorted(found, key=lambda rule: rule.code))


# every code perf-lint reports: TPL000 (the engine's own) and the rules of the pass
CATALOG: tuple[type[Rule], ...] = _discovered()
# the rules of the pass
ALL_RULES: tuple[type[Rule], ...] = tuple(rule for rule in CATALOG if rule is not SyntaxErrorRule)
_BY_CODE = {rule.code: rule for rule in CATALOG}


def rule_by_code(code: str) -> type[Rule] | None:
    return _BY_CODE.get(code.upper())


def enabled_rules(config, path: str | None = None) -> list[type[Rule]]:
    return [rule for rule in ALL_RULES if config.enabled(rule.code, path)]


__all__ = ["ALL_RULES", "CATALOG", "Example", "Rule", "enabled_rules", "rule_by_code"]
