"""The rule model: one small class per rule, Fixit-style.

A rule's class docstring is its documentation (what it does, why it matters,
example, fix), `VALID`/`INVALID` hold inline examples that the test suite runs,
and `visit_<Node>`/`leave_<Node>` methods are called during the one shared
libcst pass. Rules that need the whole source (loaders used after their
definition, say) record sites while visiting and report in `finish`. A rule whose
`visit_Call`/`leave_Call` is about some callees only names them in `calls`, so the
pass does not call it for every other call.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple, Union

import libcst as cst

from ..context import Context, Site
from ..findings import Edit

FAMILIES = {
    "TPL0": "meta",
    "TPL1": "input pipeline",
    "TPL2": "synchronization & timing",
    "TPL3": "compile & distributed",
    "TPL4": "profiling hygiene",
    "TPL5": "memory & devices",
    "TPL9": "notebooks",
}


@dataclass(frozen=True)
class Example:
    """An inline example: Python text, or a notebook given as its code cells.

    For INVALID examples `fixed` is the text after `--fix` (None: no fix offered)
    and `count` the number of findings expected. Text written as an indented block (a
    line break, then indented lines: Fixit's style) is dedented here.
    """

    code: str | tuple[str, ...]
    fixed: str | tuple[str, ...] | None = None
    count: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _dedented(self.code))
        object.__setattr__(self, "fixed", _dedented(self.fixed))


def _dedented(text):
    """A block written indented in the rule's source, as code; other text as it is."""
    if isinstance(text, tuple):
        return tuple(_dedented(cell) for cell in text)
    return textwrap.dedent(text[1:]) if isinstance(text, str) and text.startswith("\n ") else text


@dataclass(frozen=True)
class CallNames:
    """The callees a rule's visit_Call/leave_Call are about, by their last name (`x.item()`:
    "item"; a name imported under an alias also goes by its own): these names, and any
    that ends with `suffix` (or one of them)."""

    names: frozenset[str] = frozenset()
    suffix: str | tuple[str, ...] | None = None

    def __contains__(self, name: str) -> bool:
        return name in self.names or (self.suffix is not None and name.endswith(self.suffix))


@dataclass(frozen=True)
class Replace:
    """Replace a node with new code (a string or a libcst node rendered in place)."""

    site: Site
    new: str | cst.CSTNode


@dataclass(frozen=True)
class InsertLineBefore:
    """Insert a statement on its own line above the line where `site` starts, same indent."""

    site: Site
    code: str


@dataclass(frozen=True)
class MoveLinesBefore:
    """Move the whole lines of statement `site` (comments kept) above the line where
    `target` starts; both must be alone on their lines, in the same unit."""

    site: Site
    target: Site


FixStep = Union[Replace, InsertLineBefore, MoveLinesBefore, Edit]


@dataclass(frozen=True)
class FixPlan:
    title: str
    steps: tuple[FixStep, ...]


@dataclass
class Report:
    rule: "Rule"
    site: Site
    message: str
    severity: str
    fix: FixPlan | None = None
    range_override: tuple | None = None  # (unit, Range) for findings not tied to a node
    extra: dict = field(default_factory=dict)
    related: tuple = ()  # Related places in other files, and Here ones of the finding's own unit


class Here(NamedTuple):
    """A place of the finding's own unit (file or cell) it also names: a Related there once
    the engine knows the node's line."""

    site: Site
    message: str


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for `perf-lint rules`
    severity: ClassVar[str] = "warning"
    fixable: ClassVar[bool] = False  # derived: whether an INVALID example shows a fix
    probe: ClassVar[str | None] = None  # what `perf-lint profile` measures for it
    default_enabled: ClassVar[bool] = True
    options: ClassVar[dict[str, object]] = {}
    # Substrings one of which must occur in the source for the rule to be able to fire;
    # a source with none of any enabled rule's triggers is not even parsed. Empty: always run.
    triggers: ClassVar[tuple[str, ...]] = ()
    # The calls visit_Call/leave_Call are about; None: every call. An instance may widen it.
    calls: CallNames | None = None
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.fixable = any(example.fixed is not None for example in cls.INVALID)

    def __init__(self, ctx: Context, options: dict | None = None) -> None:
        self.ctx = ctx
        self.opts = {**self.options, **(options or {})}
        self.reports: list[Report] = []
        self.visits = True  # False: another rule instance collects this rule's facts

    @classmethod
    def family(cls) -> str:
        return FAMILIES.get(cls.code[:4], "other")

    @classmethod
    def docs(cls) -> str:
        """The rule's Markdown documentation."""
        import inspect

        body = inspect.cleandoc(cls.__doc__ or "")
        return f"# {cls.code} {cls.name}\n\n{body}\n"

    def report(
        self,
        site: Site,
        message: str,
        fix: FixPlan | None = None,
        severity: str | None = None,
        at: tuple | None = None,
        related: tuple = (),
        **extra,
    ) -> None:
        """Report at `site`'s node, or at `at` = (unit index, Range) for text that is not a
        node; `related`: the `Related` places of other files it depends on."""
        self.reports.append(Report(self, site, message, severity or self.severity, fix, at, extra, related))

    def finish(self) -> None:
        """Called once after the pass over every unit."""
