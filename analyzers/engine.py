"""Source text -> findings: each unit parsed by chunks (see `parse`), one pass for every rule."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections import defaultdict

import libcst as cst

from .config import Config
from .context import Context
from .nodes import children, remembered, use_memos
from .findings import Edit, Finding, Fix, Range, Related
from .importers import config_gpu, gpu_base, gpu_callee, gpu_importer, gpu_value
from .rules import enabled_rules
from .rules.base import Here, InsertLineBefore, MoveLinesBefore, Replace, Report, Rule
from .document import DocumentState
from .parse import MAX_LINE, Chunk, LongLine, Parsed, Split, parse, split
from .spans import Spans
from .source import Source, common_ends, dominant_newline, split_lines
from .vocabulary import OTHER_FRAMEWORKS, TORCH_PACKAGES

MAX_CODE = 4 * 2**20  # characters of Python in one file (notebook outputs aside)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*perf-lint:\s*ignore\[(?P<codes>[^\]]*)\]")


class _Pass:
    """One traversal of a unit that feeds the context, then each rule's visit_/leave_ methods.

    Each chunk's traversal is recorded once as the list of its events that some handler
    wants (whitespace and punctuation nodes are never visited, most other nodes have no
    handler), and replayed in later analyses: the same calls, in the same order, as a
    walk of the whole tree, at a fraction of the cost for the chunks an edit left alone.
    """

    def __init__(self, ctx: Context, rules: list[Rule]) -> None:
        visitors: dict[str, list] = defaultdict(list)
        leavers: dict[str, list] = defaultdict(list)
        self.ctx = ctx
        self.call_rules: dict[bool, list] = {False: [], True: []}  # leaving -> [(rule.calls, handler)]
        self.for_call: dict[tuple, tuple] = {}  # (leaving, name, imported as) -> the call's handlers
        for rule in (rule for rule in rules if rule.visits):
            rule_class: type = type(rule)  # `type`: mypy finds type[Rule] unhashable (python/mypy#11470)
            for attr in _handler_names(rule_class):
                if attr in ("visit_Call", "leave_Call"):
                    self.call_rules[attr == "leave_Call"].append((rule.calls, getattr(rule, attr)))
                elif attr.startswith("visit_"):
                    visitors[attr[6:]].append(getattr(rule, attr))
                elif attr.startswith("leave_"):
                    leavers[attr[6:]].append(getattr(rule, attr))
        specs = {leaving: tuple(calls for calls, _ in pairs) for leaving, pairs in self.call_rules.items()}
        self.specs = {leaving: _SPECS.setdefault(spec, spec) for leaving, spec in specs.items()}
        self.handlers: list[tuple | None] = [()] * len(_EVENTS)  # None: the call events
        for kind in {*visitors, *leavers, *ctx.visit_handlers, *ctx.leave_handlers} - {"Call"}:
            first = ctx.visit_handlers.get(kind)
            last = ctx.leave_handlers.get(kind)
            for leaving, handlers in (
                (False, (*([first] if first else []), *visitors.get(kind, ()))),
                (True, (*leavers.get(kind, ()), *([last] if last else []))),
            ):
                if handlers:
                    self.handlers[_event(kind, leaving)] = handlers
        calls = {_CALL: self.call_rules[False] or "Call" in ctx.visit_handlers,
                 _LEAVE_CALL: self.call_rules[True] or "Call" in ctx.leave_handlers}
        wanted = frozenset([*(code for code, handlers in enumerate(self.handlers) if handlers),
                            *(code for code, wanted in calls.items() if wanted)])
        self.wanted = _WANTED.setdefault(wanted, wanted)  # the chunks' key: one object, compared by identity
        self.handlers[_CALL] = self.handlers[_LEAVE_CALL] = None  # dispatched by callee: _call_handlers

    def run(self, parsed: Parsed) -> None:
        handlers = self.handlers
        module = parsed.module
        for handle in handlers[_event("Module", False)] or ():
            handle(module)
        call_handlers = self._call_handlers
        ctx = self.ctx
        for start, chunk in zip(parsed.starts, parsed.chunks):
            ctx.line = start
            events = chunk.events.get(self.wanted)
            if events is None:
                events = chunk.events[self.wanted] = _record(chunk, self.wanted, parsed.owners)
            pairs = iter(events)
            for event, node in zip(pairs, pairs):
                found = handlers[event]
                if found is None:
                    found = call_handlers(node, event)
                for handle in found:
                    handle(node)
        for handle in handlers[_event("Module", True)] or ():
            handle(module)

    def _call_handlers(self, call: cst.Call, event: int) -> tuple:
        """The handlers of this call event: the context's, and those of the rules whose
        `calls` take the callee's name (or, for a name imported under an alias, the
        imported name: what `ctx.qualname` resolves it to at this point of the pass)."""
        leaving = event == _LEAVE_CALL
        func = call.func
        key: tuple[bool, str | None, str | None]
        if type(func) is cst.Attribute:
            key = (leaving, func.attr.value, None)
        elif type(func) is cst.Name:
            key = (leaving, func.value, self.ctx.imports.get(func.value))
        else:
            key = (leaving, None, None)
        found = self.for_call.get(key)
        if found is None:
            call_rules = self.call_rules[leaving]
            chosen = _chosen(self.specs[leaving], *key)
            context = self.ctx.leave_handlers if leaving else self.ctx.visit_handlers
            rules = [call_rules[index][1] for index in chosen]
            own = [context["Call"]] if "Call" in context else []
            found = self.for_call[key] = (*rules, *own) if leaving else (*own, *rules)
        return found


_WANTED: dict[frozenset, frozenset] = {}  # one copy of each pass's wanted events (see Chunk.events)
_SPECS: dict[tuple, tuple] = {}  # one copy of each `calls` of a pass's call rules: _CHOSEN keys it by id
_CHOSEN: dict[tuple, tuple[int, ...]] = {}  # what _chosen found, for every analysis (names recur)


def _chosen(specs: tuple, leaving: bool, name: str | None, imported: str | None) -> tuple[int, ...]:
    """Which of the call rules (by their `calls`, `specs` as kept in _SPECS) a call of
    `name` (imported as `imported`) reaches."""
    key = (id(specs), leaving, name, imported)  # hashing CallNames is a Python call each
    found = _CHOSEN.get(key)
    if found is None:
        names = {name, imported.rpartition(".")[2] if imported else None} - {None}
        found = tuple(i for i, calls in enumerate(specs) if calls is None or any(n in calls for n in names))
        if len(_CHOSEN) > 100_000:
            _CHOSEN.clear()
        _CHOSEN[key] = found
    return found


@functools.lru_cache(maxsize=None)
def _handler_names(rule: type) -> tuple[str, ...]:
    """The rule class's visit_/leave_ methods (`dir` of a class is slow)."""
    return tuple(attr for attr in dir(rule) if attr.startswith(("visit_", "leave_")))


# (node kind, leaving) -> a small number, fixed at import (analyses run in threads too)
_EVENTS: dict[tuple[str, bool], int] = {
    (name, leaving): index
    for index, (name, leaving) in enumerate(
        (name, leaving)
        for name in sorted(n for n in dir(cst) if isinstance(getattr(cst, n), type) and issubclass(getattr(cst, n), cst.CSTNode))
        for leaving in (False, True)
    )
}


def _event(kind: str, leaving: bool) -> int:
    return _EVENTS[kind, leaving]


_CALL, _LEAVE_CALL = _event("Call", False), _event("Call", True)  # dispatched by callee (see Rule.calls)


def _record(chunk: Chunk, wanted: frozenset, owners: dict) -> list:
    """The chunk's statements walked depth first: [event, node, ...] for the events in
    `wanted`; the chunk's nodes are noted on the way (in `chunk.nodes` and `owners`)."""
    events: list = []
    nodes = []
    stack: list = [(statement, False) for statement in reversed(chunk.module.body)]
    while stack:
        node, leaving = stack.pop()
        kind = type(node).__name__
        if leaving:
            events.extend((_event(kind, True), node))
            continue
        nodes.append(node)
        if _event(kind, False) in wanted:
            events.extend((_event(kind, False), node))
        if _event(kind, True) in wanted:
            stack.append((node, True))
        stack.extend((child, False) for child in reversed(children(node)))
    if chunk.nodes is None:
        chunk.nodes = frozenset(map(id, nodes))
        owners.update(dict.fromkeys(chunk.nodes, chunk))
    return events


def _finding_tpl000(unit, line: int, col: int, message: str) -> Finding:
    text = unit.line(line)
    col = min(max(col, 0), len(text))
    return Finding("TPL000", message, "error", unit.cell, Range(line, col, line, len(text) if col < len(text) else col))


def split_unit(unit, index: int, state: DocumentState) -> Split | Finding:
    """The unit cut into chunks (kept in `state` for its next version), or its TPL000:
    Python's own parser rejects it (position and message are Python's) or it is too
    unusual to analyze."""
    try:
        previous = state.splits.pop(index, None)  # (none kept for a version that does not split)
        made = state.splits[index] = split(unit.code, previous)
        return made
    except LongLine as err:
        return _finding_tpl000(
            unit, err.line, 0, f"Not checked: line of {err.length:,} characters (perf-lint analyzes lines up to {MAX_LINE:,})"
        )
    except SyntaxError as err:
        version = "%d.%d" % sys.version_info[:2]
        line, col = max((err.lineno or 1) - 1, 0), max((err.offset or 1) - 1, 0)
        return _finding_tpl000(unit, line, col, f"{_what(unit)} does not parse (Python {version}), so it was not checked: {err.msg}")
    except (RecursionError, MemoryError) as err:  # Python 3.11's parser says MemoryError for deep nesting too
        why = f"Python's parser ran out of {'stack' if isinstance(err, RecursionError) else 'memory'}"
        return _finding_tpl000(unit, 0, 0, f"Not checked: too large or too deeply nested to analyse ({why})")
    except ValueError as err:
        return _finding_tpl000(unit, 0, 0, f"{_what(unit)} does not parse, so it was not checked: {err}")


def _what(unit) -> str:
    """What a unit is to its user: a notebook's cell (the rest of the notebook is still
    checked) or a file."""
    return "File" if unit.cell is None else "Cell"


def _skipped(unit, unit_split: Split) -> list[Finding]:
    """A TPL000 for each statement left out of the analysis (see parse.Split.skipped),
    marked `extra["statement"]`: unlike a unit that does not parse, it comes with findings."""
    findings, lines = [], unit_split.lines
    for index, why in sorted(unit_split.skipped.items()):
        line = unit_split.starts[index]  # the statement's first line: after its chunk's comments and blank lines
        while line + 1 < len(lines) and (lines[line].strip() in ("", "\\") or lines[line].lstrip().startswith("#")):
            line += 1
        finding = _finding_tpl000(unit, line, 0, f"Not checked: {why} (line {line + 1})")
        finding.extra["statement"] = True  # the rest of the unit was analyzed (the server shows it)
        findings.append(finding)
    return findings


def analyze(source: Source, config: Config | None = None, state: DocumentState | None = None) -> list[Finding]:
    """All findings for a source, sorted, with suppressions applied. Never raises: an
    internal failure is reported as one TPL000 finding. `state` is what the analyses of
    earlier versions of the same source (the editor's) kept for reuse."""
    config = config or Config()
    if state is not None and not state.lock.acquire(blocking=False):
        state = None  # another analysis is using it: start afresh rather than wait
    work = state or DocumentState()
    try:
        try:
            return _analyze(source, config, work)
        except Exception as exc:
            if not _out_of_stack(exc):
                raise
        return _analyze(source, config, work, shallow=True)  # (out of the block: the failed pass freed)
    except Exception as exc:  # a bug of ours must not cost the user the other files
        said = str(exc) if all(isinstance(a, (str, int, float)) for a in exc.args) else ""  # no node's repr
        return [
            Finding(
                "TPL000",
                f"perf-lint could not analyze this file (internal error, please report): {type(exc).__name__}: {said[:300]}",
                "error",
                source.units[0].cell if source.units else None,
                Range(0, 0, 0, 0),
            )
        ]
    finally:
        use_memos({})  # the document's memos stay with its state, not with this thread
        if state is not None:
            state.lock.release()


def _out_of_stack(exc: BaseException | None) -> bool:
    """Whether a statement nested too deep for the rules' recursion raised `exc` (a
    RecursionError, maybe turned into another error as the stack unwound)."""
    while exc is not None and not isinstance(exc, RecursionError):
        exc = exc.__context__
    return exc is not None


def _analyze(source: Source, config: Config, state: DocumentState, shallow: bool = False) -> list[Finding]:
    state.shallow = shallow = state.shallow or shallow  # once deep statements were met, for the document's life
    state.begin()
    use_memos(state.memos)
    findings: list[Finding] = []
    splits: dict[int, Split] = {}
    size = sum(len(unit.code) for unit in source.units)
    if size > MAX_CODE:  # (its trees would take gigabytes): one finding says so
        if not config.enabled("TPL000", source.path):
            return []
        return [Finding("TPL000", f"perf-lint did not analyze this file: {size / 2**20:.1f} MiB of Python code is "
                        f"over the {MAX_CODE // 2**20} MiB it analyzes (the largest hand-written modules are "
                        "about 1.5 MiB)", "error", source.units[0].cell, Range(0, 0, 0, 0))]
    for index, unit in enumerate(source.units):
        if not unit.code.strip():
            continue
        result = split_unit(unit, index, state)
        if isinstance(result, Split):
            splits[index] = result
        elif config.enabled("TPL000", source.path):
            findings.append(result)
    enabled = enabled_rules(config, source.path)
    triggers = {t for cls in enabled for t in cls.triggers}
    places = [_places(source.units[i].text, triggers, state.places, i) for i in splits]
    name = os.path.basename(source.path or "")  # (rules read the file's name too: an `eval.py` script)
    present = {t: t in name or any(found[t] >= 0 for found in places) for t in triggers}
    rules_classes = [cls for cls in enabled if not cls.triggers or any(present[t] for t in cls.triggers)]
    parsed: dict[int, Parsed] = {}
    if rules_classes:  # else libcst never parses the source
        for index, unit_split in splits.items():
            try:
                parsed[index] = parse(unit_split, state.chunks, shallow)
            except Exception as exc:  # Python accepted it; libcst did not (new syntax, say)
                findings.append(_finding_tpl000(source.units[index], 0, 0, f"perf-lint's parser cannot read this file: {exc}"))
    for index, unit_split in splits.items():
        if unit_split.skipped and config.enabled("TPL000", source.path):
            findings.extend(_skipped(source.units[index], unit_split))
    if parsed:
        ctx = Context(source.units, source.path)
        ctx.texts = {id(chunk.module.body[0]): chunk.text for unit_parsed in parsed.values() for chunk in unit_parsed.chunks
                     if len(chunk.module.body) == 1}
        rules = [cls(ctx, config.rule_options(cls.code)) for cls in rules_classes]
        visitor = _Pass(ctx, rules)
        for index, unit_parsed in parsed.items():
            ctx.unit = index
            ctx.scope = ctx.module_scope
            visitor.run(unit_parsed)
        ctx.final = True
        ctx.assume_device = config.assume_device
        if config.assume_device != "auto":  # the user says where the code runs
            ctx.cuda_evidence = parsed[min(parsed)].module if config.assume_device == "cuda" else None
        else:
            if ctx.displayed_device_only():
                ctx.cuda_evidence = None  # (a device named and printed, nothing put on it: it runs on the CPU)
            if ctx.cuda_evidence is None and source.path and any(q.split(".")[0] == "torch" for q in ctx.imports.values()):
                ctx.gpu_importer = gpu_importer(source.path) or gpu_callee(ctx) or gpu_value(ctx) or gpu_base(ctx) or config_gpu(
                    ctx)  # a module that runs this one on a GPU, picks the GPU for it, names the GPU device it moves
                # work to, or a base class's module does; or one making a class of it (or of an importer) from a YAML config
                if ctx.gpu_importer is not None:
                    ctx.cuda_evidence = parsed[min(parsed)].module
        if other_framework(ctx.imports.values()):
            rules = []  # (MXNet's gluon scripts beside a project's torch code: not PyTorch, nothing to say)
        for rule in rules:
            rule.finish()
        reports = [r for rule in rules for r in rule.reports if r.site.unit in parsed or r.range_override]
        findings.extend(_locate(source, parsed, reports, state.located))
        ctx.close()
        for rule in rules:
            rule.reports = []  # a report refers to its rule
    findings = [f for f in findings if not suppressed(source, f)]
    return sorted(set(findings), key=Finding.sort_key)


def other_framework(imported) -> bool:
    """Whether the qualified names a source imports are another framework's (MXNet, TensorFlow,
    Paddle, JAX, ...) and none of torch or a package built on it."""
    roots = {name.split(".")[0] for name in imported}
    return bool(roots & OTHER_FRAMEWORKS) and not roots & TORCH_PACKAGES


def _places(text: str, triggers: set[str], known: dict, slot: int) -> dict[str, int]:
    """Where each trigger first occurs in the unit's text (-1: nowhere). `known[slot]` keeps
    the answer for the unit's previous text: only what an edit changed is searched again."""
    old, before = known.get(slot, ("", {}))
    prefix, suffix = common_ends(old, text)
    found = {}
    for t in triggers:
        first = before.get(t)
        if first is None or (first >= 0 and first + len(t) > prefix):
            first = text.find(t)  # not known, or its first place may have changed
        elif first < 0:  # absent before: only text that overlaps the change can hold it
            start = max(prefix - len(t) + 1, 0)
            first = text.find(t, start, len(text) - suffix + len(t) - 1)
        found[t] = first
    known[slot] = (text, found)
    return found


class _Positions:
    """Node -> Range in its unit, from the code generation of the node's chunk alone
    (kept on the chunk, so an edit costs only the chunks it touched)."""

    def __init__(self, source: Source, parsed: dict[int, Parsed]) -> None:
        self.source, self.parsed = source, parsed
        self.indexes = {unit: {id(chunk): i for i, chunk in enumerate(p.chunks)} for unit, p in parsed.items()}

    def __call__(self, unit: int, node: cst.CSTNode) -> Range:
        parsed = self.parsed[unit]
        if node is parsed.module:
            lines = split_lines(self.source.units[unit].code)
            return Range(0, 0, len(lines) - 1, len(lines[-1]))
        key = id(node)  # chunks keep their nodes alive; libcst's node hash is a Python method
        owner = parsed.owners.get(key)
        index = self.indexes[unit].get(id(owner))
        if index is None:  # an id noted for a chunk gone since (a chunk of this parse keeps its nodes alive)
            index = next(i for i, chunk in enumerate(parsed.chunks) if chunk.nodes is not None and key in chunk.nodes)
        chunk = parsed.chunks[index]
        offset = parsed.starts[index]
        if chunk.offset != offset:  # the chunk moved: its ranges in the unit are made again
            chunk.offset, chunk.placed = offset, {}
        placed = chunk.placed.get(key)
        if placed is None:
            found = chunk.positions.get(key)  # the node's range within its chunk, kept with it
            if found is None:
                if chunk.spans is None:
                    chunk.spans = Spans.of(chunk.module)
                found = chunk.positions[key] = chunk.spans.range(node)
            placed = chunk.placed[key] = Range(found.start_line + offset, found.start_col,
                                               found.end_line + offset, found.end_col)
        return placed


def _locate(source: Source, parsed: dict[int, Parsed], reports: list[Report], known: dict) -> list[Finding]:
    """The reports' findings. One made of the same parts as a finding of the document's last
    analysis (`known`, which this analysis's replace) is that finding, not a copy: an edit
    rebuilds only what it touched, and the server recognizes the rest by identity."""
    position = _Positions(source, parsed)
    modules = {index: unit.module for index, unit in parsed.items()}
    newlines: dict[int, str] = {}

    def newline(unit: int) -> str:
        found = newlines.get(unit)
        if found is None:
            found = newlines[unit] = dominant_newline(source.units[unit].text)
        return found

    made: dict = {}
    findings = []
    for report in reports:
        if report.range_override is not None:
            unit_index, rng = report.range_override
        else:
            unit_index, rng = report.site.unit, position(report.site.unit, report.site.node)
        plan = report.fix
        steps = () if plan is None else tuple(_step_key(source, modules, step, position, newline) for step in plan.steps)
        related = tuple(Related(None, position(r.site.unit, r.site.node).start_line, r.message) if type(r) is Here else r
                        for r in report.related)
        key = None if report.extra or None in steps else (
            report.rule.code, report.message, report.severity, source.units[unit_index].cell, rng,
            plan and plan.title, steps, related)
        finding = known.get(key)
        if finding is None:
            fix = None
            if plan is not None:
                edits = [_edits(source, modules, step, position, newline) for step in plan.steps]
                groups = [group for group in edits if group is not None]
                if len(groups) == len(edits):
                    fix = Fix(plan.title, tuple(e for group in groups for e in group))
            finding = Finding(report.rule.code, report.message, report.severity, source.units[unit_index].cell,
                              rng, fix, report.rule.probe, related, report.extra)
        if key is not None:
            made[key] = finding
        findings.append(finding)
    known.clear()
    known.update(made)
    return findings


def _render(module: cst.Module, node: cst.CSTNode) -> str:
    return remembered(_render, node, lambda: module.code_for_node(node), module.default_indent, module.default_newline)


def _replacement(modules, step: Replace) -> str:
    return step.new if isinstance(step.new, str) else _render(modules[step.site.unit], step.new)


def _step_key(source: Source, modules, step, position, newline) -> tuple | Edit | None:
    """All a fix step's edits depend on (with its finding's own parts), or None: made afresh."""
    if isinstance(step, Edit):
        return step
    unit = step.site.unit
    rng = position(unit, step.site.node)
    if isinstance(step, Replace):
        return (Replace, source.units[unit].cell, rng, _replacement(modules, step))
    if isinstance(step, InsertLineBefore):
        return (InsertLineBefore, source.units[unit].cell, rng, step.code, source.units[unit].line(rng.start_line), newline(unit))
    return None  # MoveLinesBefore: whole lines on both sides


def _edits(source: Source, modules, step, position, newline) -> list[Edit] | None:
    """The text edits of one fix step, or None when it cannot be done safely."""
    if isinstance(step, Edit):
        return [step]
    unit = source.units[step.site.unit]
    rng = position(step.site.unit, step.site.node)
    if isinstance(step, Replace):
        return [Edit(unit.cell, rng, _replacement(modules, step))]
    if isinstance(step, InsertLineBefore):
        line = unit.line(rng.start_line)
        if line[: rng.start_col].strip():
            return None  # the statement shares its line with other code: no safe place
        indent = line[: len(line) - len(line.lstrip())]
        at = Range(rng.start_line, 0, rng.start_line, 0)
        return [Edit(unit.cell, at, f"{indent}{step.code}{newline(step.site.unit)}")]
    if isinstance(step, MoveLinesBefore):
        target = position(step.target.unit, step.target.node)
        first, last = unit.line(rng.start_line), unit.line(rng.end_line)
        tail = last[rng.end_col :].strip()
        if step.target.unit != step.site.unit or first[: rng.start_col].strip() or (tail and not tail.startswith("#")):
            return None
        if unit.line(target.start_line)[: target.start_col].strip() or target.start_line >= rng.start_line:
            return None
        ending = newline(step.site.unit)
        moved = ending.join(unit.line(i) for i in range(rng.start_line, rng.end_line + 1)) + ending
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
