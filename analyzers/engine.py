"""Source text -> findings: one libcst parse per unit, one pass for every rule."""

from __future__ import annotations

import ast
import re
from collections import defaultdict

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .config import Config
from .context import Context
from .findings import Edit, Finding, Fix, Range
from .rules import enabled_rules
from .rules.base import InsertLineBefore, MoveLinesBefore, Replace, Report, Rule
from .source import Source, dominant_newline

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*perf-lint:\s*ignore\[(?P<codes>[^\]]*)\]")
_TRIGGERS = ("torch", "cuda")


class _Pass(cst.CSTVisitor):
    """Dispatches every node to the context, then to each rule's visit_/leave_ method."""

    def __init__(self, ctx: Context, rules: list[Rule]) -> None:
        super().__init__()
        self.ctx = ctx
        self.visitors: dict[str, list] = defaultdict(list)
        self.leavers: dict[str, list] = defaultdict(list)
        for rule in rules:
            for attr in dir(type(rule)):
                if attr.startswith("visit_"):
                    self.visitors[attr[6:]].append(getattr(rule, attr))
                elif attr.startswith("leave_"):
                    self.leavers[attr[6:]].append(getattr(rule, attr))

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node).__name__
        self.ctx.on_visit(node, kind)
        for visit in self.visitors.get(kind, ()):
            visit(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        kind = type(original_node).__name__
        for leave in self.leavers.get(kind, ()):
            leave(original_node)
        self.ctx.on_leave(original_node, kind)


def syntax_error(source: Source, unit_index: int, exc: Exception) -> Finding:
    """TPL000 for a unit that does not parse, at Python's own position and message."""
    unit = source.units[unit_index]
    line, col, message = 0, 0, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    try:
        ast.parse(unit.code)
    except SyntaxError as err:
        line = max((err.lineno or 1) - 1, 0)
        col = max((err.offset or 1) - 1, 0)
        message = err.msg
    except (ValueError, RecursionError, MemoryError) as err:
        message = str(err) or type(err).__name__
    else:
        if isinstance(exc, cst.ParserSyntaxError):
            line, col, message = exc.raw_line - 1, exc.raw_column, exc.message
    text = unit.line(line)
    col = min(col, len(text))
    return Finding(
        "TPL000",
        f"File does not parse, so it was not checked: {message}",
        "error",
        unit.cell,
        Range(line, col, line, len(text) if col < len(text) else col),
    )


def parse_unit(code: str) -> cst.Module:
    return cst.parse_module(code)


def analyze(source: Source, config: Config | None = None) -> list[Finding]:
    """All findings for a source, sorted, with suppressions applied."""
    config = config or Config()
    if not any(any(t in unit.code for t in _TRIGGERS) for unit in source.units):
        return []
    ctx = Context(source.units)
    rules = [cls(ctx, config.rule_options(cls.code)) for cls in enabled_rules(config, source.path)]
    findings: list[Finding] = []
    modules: dict[int, cst.Module] = {}
    visitor = _Pass(ctx, rules)
    for index, unit in enumerate(source.units):
        if not unit.code.strip():
            continue
        try:
            module = parse_unit(unit.code)
        except Exception as exc:  # libcst raises more than ParserSyntaxError on odd input
            if config.enabled("TPL000", source.path):
                findings.append(syntax_error(source, index, exc))
            continue
        modules[index] = module
        ctx.unit = index
        ctx.scope = ctx.module_scope
        try:
            module.visit(visitor)
        except RecursionError:
            findings.append(syntax_error(source, index, RecursionError("nesting too deep to analyze")))
            modules.pop(index)
    for rule in rules:
        rule.finish()
    reports = [r for rule in rules for r in rule.reports if r.site.unit in modules or r.range_override]
    findings.extend(_locate(source, modules, reports))
    findings = [f for f in findings if not suppressed(source, f)]
    return sorted(set(findings), key=Finding.sort_key)


def _locate(source: Source, modules: dict[int, cst.Module], reports: list[Report]) -> list[Finding]:
    positions: dict[int, dict] = {}

    def position(unit: int, node: cst.CSTNode):
        if unit not in positions:
            positions[unit] = MetadataWrapper(modules[unit], unsafe_skip_copy=True).resolve(PositionProvider)
        code_range = positions[unit][node]
        return Range(code_range.start.line - 1, code_range.start.column, code_range.end.line - 1, code_range.end.column)

    findings = []
    for report in reports:
        if report.range_override is not None:
            unit_index, rng = report.range_override
        else:
            unit_index, rng = report.site.unit, position(report.site.unit, report.site.node)
        fix = None
        if report.fix is not None:
            edits = [_edits(source, modules, step, position) for step in report.fix.steps]
            if all(e is not None for e in edits):
                fix = Fix(report.fix.title, tuple(e for group in edits for e in group))
        findings.append(
            Finding(
                report.rule.code,
                report.message,
                report.severity,
                source.units[unit_index].cell,
                rng,
                fix,
                report.rule.probe,
                report.extra,
            )
        )
    return findings


def _edits(source: Source, modules, step, position) -> list[Edit] | None:
    """The text edits of one fix step, or None when it cannot be done safely."""
    if isinstance(step, Edit):
        return [step]
    unit = source.units[step.site.unit]
    rng = position(step.site.unit, step.site.node)
    if isinstance(step, Replace):
        new = step.new if isinstance(step.new, str) else modules[step.site.unit].code_for_node(step.new)
        return [Edit(unit.cell, rng, new)]
    if isinstance(step, InsertLineBefore):
        line = unit.line(rng.start_line)
        if line[: rng.start_col].strip():
            return None  # the statement shares its line with other code: no safe place
        indent = line[: len(line) - len(line.lstrip())]
        newline = dominant_newline(unit.text)
        at = Range(rng.start_line, 0, rng.start_line, 0)
        return [Edit(unit.cell, at, f"{indent}{step.code}{newline}")]
    if isinstance(step, MoveLinesBefore):
        target = position(step.target.unit, step.target.node)
        first, last = unit.line(rng.start_line), unit.line(rng.end_line)
        tail = last[rng.end_col :].strip()
        if step.target.unit != step.site.unit or first[: rng.start_col].strip() or (tail and not tail.startswith("#")):
            return None
        if unit.line(target.start_line)[: target.start_col].strip() or target.start_line >= rng.start_line:
            return None
        newline = dominant_newline(unit.text)
        moved = newline.join(unit.line(i) for i in range(rng.start_line, rng.end_line + 1)) + newline
        return [
            Edit(unit.cell, Range(target.start_line, 0, target.start_line, 0), moved),
            Edit(unit.cell, Range(rng.start_line, 0, rng.end_line + 1, 0), ""),
        ]
    raise TypeError(step)


def suppressed(source: Source, finding: Finding) -> bool:
    """`# noqa`, `# noqa: CODE` or `# perf-lint: ignore[CODE]` on the finding's first or last
    line, or on the line above a finding that spans several lines."""
    unit = source.unit(finding.cell)
    r = finding.range
    lines = {r.start_line, r.end_line}
    if r.end_line > r.start_line:
        lines.add(r.start_line - 1)
    for index in lines:
        text = unit.line(index)
        if "#" not in text:
            continue
        for pattern in (_NOQA, _IGNORE):
            for match in pattern.finditer(text):
                codes = match.group("codes")
                if codes is None and pattern is _NOQA:
                    return True
                if codes and finding.code in {c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c}:
                    return True
    return False
