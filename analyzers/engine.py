"""Source text -> findings: one libcst parse per unit, one pass for every rule."""

from __future__ import annotations

import ast
import bisect
import contextlib
import dataclasses
import itertools
import re
import sys
from collections import defaultdict

import libcst as cst
from libcst._nodes.internal import CodegenState

from .config import Config
from .context import Context
from .findings import Edit, Finding, Fix, Range
from .rules import enabled_rules
from .rules.base import InsertLineBefore, MoveLinesBefore, Replace, Report, Rule
from .source import LINE_BREAK, Source, dominant_newline, split_lines

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*perf-lint:\s*ignore\[(?P<codes>[^\]]*)\]")


# Fields that hold only whitespace, punctuation or operators: no rule looks at them as nodes.
_SKIPPED_FIELDS = (
    "whitespace", "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma",
    "semicolon", "equal", "colon", "dot", "trailing_whitespace", "lbrace", "rbrace", "lbracket", "rbracket",
    "newline", "operator", "indent", "star", "asynchronous", "first_line", "empty_lines", "last_line",
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = tuple(f.name for f in dataclasses.fields(cls) if not f.name.startswith(_SKIPPED_FIELDS))
        _CHILD_FIELDS[cls] = fields
    return fields


class _Pass:
    """One traversal of a module that feeds the context, then each rule's visit_/leave_ methods.

    Iterative (deeply nested code cannot overflow the stack) and blind to whitespace and
    punctuation nodes, which is most of a libcst tree: far cheaper than `module.visit`.
    """

    def __init__(self, ctx: Context, rules: list[Rule]) -> None:
        self.ctx = ctx
        self.visitors: dict[str, list] = defaultdict(list)
        self.leavers: dict[str, list] = defaultdict(list)
        for rule in (rule for rule in rules if rule.visits):
            for attr in dir(type(rule)):
                if attr.startswith("visit_"):
                    self.visitors[attr[6:]].append(getattr(rule, attr))
                elif attr.startswith("leave_"):
                    self.leavers[attr[6:]].append(getattr(rule, attr))

    def run(self, module: cst.Module) -> None:
        ctx_visit, ctx_leave = self.ctx.on_visit, self.ctx.on_leave
        visitors, leavers = self.visitors, self.leavers
        node_type = cst.CSTNode
        stack: list = [(module, False)]
        while stack:
            node, leaving = stack.pop()
            kind = type(node).__name__
            if leaving:
                for leave in leavers.get(kind, ()):
                    leave(node)
                ctx_leave(node, kind)
                continue
            ctx_visit(node, kind)
            for visit in visitors.get(kind, ()):
                visit(node)
            stack.append((node, True))
            children = []
            for name in _child_fields(type(node)):
                value = getattr(node, name)
                if isinstance(value, node_type):
                    children.append(value)
                elif type(value) in (tuple, list):
                    children.extend(v for v in value if isinstance(v, node_type))
            stack.extend((child, False) for child in reversed(children))


_MAX_LINE = 10_000  # libcst's parser is quadratic on very long expressions (minified code)


def _finding_tpl000(unit, line: int, col: int, message: str) -> Finding:
    text = unit.line(line)
    col = min(max(col, 0), len(text))
    return Finding("TPL000", message, "error", unit.cell, Range(line, col, line, len(text) if col < len(text) else col))


def syntax_error(unit) -> Finding | None:
    """TPL000 when Python's own parser rejects the unit (position and message are Python's),
    or when it is too unusual to analyze; None when it parses."""
    if len(unit.code) > _MAX_LINE:
        for index, line in enumerate(split_lines(unit.code)):
            if len(line) > _MAX_LINE:
                return _finding_tpl000(
                    unit, index, 0, f"Not checked: line of {len(line):,} characters (perf-lint analyzes lines up to {_MAX_LINE:,})"
                )
    try:
        ast.parse(unit.code)
    except SyntaxError as err:
        version = "%d.%d" % sys.version_info[:2]
        line, col = max((err.lineno or 1) - 1, 0), max((err.offset or 1) - 1, 0)
        return _finding_tpl000(unit, line, col, f"File does not parse (Python {version}), so it was not checked: {err.msg}")
    except (ValueError, RecursionError, MemoryError) as err:
        return _finding_tpl000(unit, 0, 0, f"File does not parse, so it was not checked: {err or type(err).__name__}")
    return None


def parse_unit(code: str) -> cst.Module:
    return cst.parse_module(code)


def analyze(source: Source, config: Config | None = None) -> list[Finding]:
    """All findings for a source, sorted, with suppressions applied. Never raises: an
    internal failure is reported as one TPL000 finding."""
    config = config or Config()
    try:
        return _analyze(source, config)
    except Exception as exc:  # a bug of ours must not cost the user the other files
        return [
            Finding(
                "TPL000",
                f"perf-lint could not analyze this file (internal error, please report): {type(exc).__name__}: {exc}",
                "error",
                source.units[0].cell if source.units else None,
                Range(0, 0, 0, 0),
            )
        ]


def _analyze(source: Source, config: Config) -> list[Finding]:
    findings: list[Finding] = []
    units = []
    for index, unit in enumerate(source.units):
        if not unit.code.strip():
            continue
        error = syntax_error(unit)
        if error is None:
            units.append(index)
        elif config.enabled("TPL000", source.path):
            findings.append(error)
    rules_classes = [
        cls for cls in enabled_rules(config, source.path)
        if not cls.triggers or any(t in source.units[i].text for i in units for t in cls.triggers)
    ]
    if rules_classes and units:
        ctx = Context(source.units)
        rules = [cls(ctx, config.rule_options(cls.code)) for cls in rules_classes]
        modules: dict[int, cst.Module] = {}
        visitor = _Pass(ctx, rules)
        for index in units:
            try:
                module = parse_unit(source.units[index].code)
            except Exception as exc:  # Python accepted it; libcst did not (new syntax, say)
                findings.append(_finding_tpl000(source.units[index], 0, 0, f"perf-lint's parser cannot read this file: {exc}"))
                continue
            modules[index] = module
            ctx.unit = index
            ctx.scope = ctx.module_scope
            visitor.run(module)
        for rule in rules:
            rule.finish()
        reports = [r for rule in rules for r in rule.reports if r.site.unit in modules or r.range_override]
        findings.extend(_locate(source, modules, reports))
    findings = [f for f in findings if not suppressed(source, f)]
    return sorted(set(findings), key=Finding.sort_key)


class _Spans(CodegenState):
    """Code generation that remembers, for every node, which tokens it produced (its
    syntactic span, as libcst's PositionProvider defines it) and nothing else: lines and
    columns are computed afterwards for the few nodes that have findings. About a third
    of the cost of PositionProvider, which builds a CodeRange for every node."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(module.default_indent, module.default_newline)
        self.spans: dict[cst.CSTNode, tuple[int, int]] = {}
        self._starts: list[int] = []
        module._codegen(self)
        text = "".join(self.tokens)
        self._offsets = [0, *itertools.accumulate(len(token) for token in self.tokens)]
        self._line_starts = [0, *(m.end() for m in LINE_BREAK.finditer(text))]

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.spans:  # a syntactic span recorded inside wins
            self.spans[node] = (start, len(self.tokens))

    @contextlib.contextmanager
    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            self.spans[node] = (
                self.spans[start_node][0] if start_node is not None else start,
                self.spans[end_node][1] if end_node is not None else end,
            )

    def _point(self, token: int) -> tuple[int, int]:
        offset = self._offsets[min(token, len(self._offsets) - 1)]
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line, offset - self._line_starts[line]

    def range(self, node: cst.CSTNode) -> Range:
        start, end = self.spans[node]
        return Range(*self._point(start), *self._point(end))


def _locate(source: Source, modules: dict[int, cst.Module], reports: list[Report]) -> list[Finding]:
    spans: dict[int, _Spans] = {}

    def position(unit: int, node: cst.CSTNode) -> Range:
        if unit not in spans:
            spans[unit] = _Spans(modules[unit])
        return spans[unit].range(node)

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
    line, or on a comment line of its own above a finding that spans several lines."""
    unit = source.unit(finding.cell)
    r = finding.range
    lines = {r.start_line, r.end_line}
    if r.end_line > r.start_line and unit.line(r.start_line - 1).lstrip().startswith("#"):
        lines.add(r.start_line - 1)  # a comment line of its own above a multi-line finding
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
