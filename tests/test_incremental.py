"""Incremental analysis (the editor's: statements an edit left alone are reused) gives
exactly the findings of a fresh analysis, version after version, and really reuses."""

from __future__ import annotations

import ast
import gc
import io
import json
import pickle
import random
import textwrap
import tokenize
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import libcst as cst

from perf_lint.analyzers import ALL_RULES, analyze, notebook_source, python_source
from perf_lint.analyzers.engine import _record
from perf_lint.analyzers.context import Context
from perf_lint.analyzers.document import DocumentState
from perf_lint.analyzers.parse import Chunk, ChunkPool, lines_of, parse, patched, split
from perf_lint.analyzers.rules.base import Rule
from perf_lint.analyzers.spans import Spans

from .fuzzing import SEEDS
from .lsp_client import NEOVIM, edit, open_py, pull, replace_all, session, timed

ROOT = Path(__file__).resolve().parent.parent
TRAIN = (ROOT / "examples" / "train.py").read_text()
SNIPPETS = [
    "\n\n# moved here\n",
    "    x = model(x)\n",
    "@torch.no_grad()\n",
    "def evaluate(model, loader):\n    for x, y in loader:\n        print(model(x).item())\n",
    "loader = DataLoader(ds, batch_size=8)\n",
    "torch.backends.cudnn.benchmark = True\n",
    "from __future__ import annotations\n",
    "(\n",
    ")\n",
    "\\\n",
    '"""\n',
    "if True:\n\tpass\n",
    "x = 1; y = 2\r\n",
    "start = time.time()\nmodel(x)\nprint(time.time() - start)\n",
]


def mutate(text: str, rng: random.Random) -> str:
    """One editor-sized change: a line or a few characters inserted, deleted or replaced."""
    lines = lines_of(text) or [""]
    at = rng.randrange(len(lines) + 1)
    choice = rng.random()
    if choice < 0.35:
        lines.insert(at, rng.choice(SNIPPETS))
    elif choice < 0.55 and lines:
        del lines[min(at, len(lines) - 1): min(at, len(lines) - 1) + rng.randint(1, 3)]
    elif choice < 0.75 and text:
        start = rng.randrange(len(text))
        return text[:start] + rng.choice(["", "1", " ", ":", "0", "(", "item()", "\n"]) + text[start + rng.randint(0, 3):]
    else:
        line = min(at, len(lines) - 1)
        lines[line] = lines[line].replace("0", "1", 1).replace("True", "False", 1)
    return "".join(lines)


def same_as_fresh(source_of, versions: list[str], size: int = 4096) -> None:
    state = DocumentState(ChunkPool(size))
    for text in versions:
        incremental = analyze(source_of(text), state=state)
        assert incremental == analyze(source_of(text)), text


@pytest.mark.parametrize("seed", range(8))
def test_random_edit_sessions_match_fresh_analyses(seed):
    rng = random.Random(seed)
    text = rng.choice([TRAIN, *SEEDS])
    versions = [text]
    for _ in range(40):
        versions.append(mutate(versions[-1], rng))
    same_as_fresh(lambda t: python_source(t, "train.py"), versions)


@pytest.mark.parametrize("size", [1, 3])
def test_edit_sessions_with_a_small_chunk_pool_match_fresh_analyses(size):
    """Chunks evicted between versions (an unchanged chunk of the previous version may be
    gone from the pool) are parsed again, and nothing else changes."""
    rng = random.Random(size)
    versions = [TRAIN]
    for _ in range(25):
        versions.append(mutate(versions[-1], rng))
    same_as_fresh(lambda t: python_source(t, "train.py"), versions, size)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_rule_examples_edited_match_fresh_analyses(data):
    rule = data.draw(st.sampled_from(ALL_RULES))
    example = data.draw(st.sampled_from([*rule.VALID, *rule.INVALID]))
    seed = data.draw(st.integers(0, 2**16))
    rng = random.Random(seed)
    if isinstance(example.code, tuple):  # a notebook: edit one cell at a time
        cells = list(example.code)
        versions = [list(cells)]
        for _ in range(6):
            index = rng.randrange(len(cells))
            cells[index] = mutate(cells[index], rng)
            versions.append(list(cells))
        notebook = lambda cells: notebook_source({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
            {"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells]})
        state = DocumentState()
        for version in versions:
            assert analyze(notebook(version), state=state) == analyze(notebook(version))
        return
    versions = [example.code]
    for _ in range(6):
        versions.append(mutate(versions[-1], rng))
    same_as_fresh(lambda t: python_source(t, "example.py"), versions)


TRIGGERED = [rule for rule in ALL_RULES if rule.triggers and any(isinstance(e.code, str) for e in rule.INVALID)]


@pytest.mark.parametrize("rule", TRIGGERED, ids=lambda rule: rule.code)
def test_trigger_words_typed_and_deleted_match_fresh_analyses(rule):
    """A rule's trigger word vanishes and comes back one keystroke at a time, at its first
    place and at all of them (an analysis searches only the changed text for triggers)."""
    text = next(e.code for e in rule.INVALID if isinstance(e.code, str))
    trigger = next(t for t in rule.triggers if t in text)
    at = text.index(trigger)
    cut = [text[:at] + trigger[:k] + text[at + len(trigger):] for k in range(len(trigger), -1, -1)]
    everywhere = [text.replace(trigger, trigger[:k]) for k in range(len(trigger), -1, -1)]
    versions = [*cut, *reversed(cut), *everywhere, *reversed(everywhere), "", text]
    same_as_fresh(lambda t: python_source(t, "example.py"), versions)
    state = DocumentState()
    for version in versions:  # where each trigger first occurs, as kept for the next analysis
        analyze(python_source(version, "example.py"), state=state)
        searched, places = state.places[0]  # (a version that does not parse is not searched)
        assert places == {t: searched.find(t) for t in places}


def test_an_edit_parses_only_the_statement_it_touched():
    state = DocumentState()
    analyze(python_source(TRAIN, "train.py"), state=state)
    before = set(map(id, (chunk for pool in state.chunks.chunks.values() for chunk in pool)))
    line = next(i for i, text in enumerate(TRAIN.splitlines()) if "num_workers" in text or "DataLoader(" in text)
    lines = TRAIN.splitlines(keepends=True)
    lines[line] = lines[line].replace("batch_size=", "batch_size= ", 1)
    edited = "".join(lines)
    assert edited != TRAIN
    findings = analyze(python_source(edited, "train.py"), state=state)
    after = {id(chunk) for pool in state.chunks.chunks.values() for chunk in pool}
    assert len(after - before) == 1  # one chunk parsed anew, every other one reused
    assert findings == analyze(python_source(edited, "train.py"))


def _token_edit(text: str, rng: random.Random) -> str:
    """A keystroke inside (or at the edge of) a name, number or string: a character typed,
    deleted or replaced, whether or not the token keeps its kind."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)]
    token = rng.choice(tokens)
    lines = lines_of(text)
    offset = sum(map(len, lines[:token.start[0] - 1])) + token.start[1]
    at = offset + rng.randint(0, len(token.string))
    typed = rng.choice(["", "1", "0", "x", "_", ".", "e", "j", '"', "'", " ", "(", "\\", "if", "f"])
    return text[:at] + typed + text[at + rng.choice([0, 0, 1]):]


@pytest.mark.parametrize("seed", range(6))
def test_keystrokes_in_tokens_give_the_tree_and_findings_of_a_fresh_parse(seed):
    """An edit inside one token rebuilds the statement from its previous version (see
    parse.patched); the tree must equal a fresh parse's, and the findings a fresh analysis'."""
    rng = random.Random(seed)
    text = rng.choice([TRAIN, *SEEDS])
    state = DocumentState()
    analyze(python_source(text, "t.py"), state=state)
    for _ in range(20):
        edited = _token_edit(text, rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes and the like, typed on purpose
                ast.parse(edited)
        except (SyntaxError, ValueError):
            continue  # the editor's broken versions are covered above
        incremental = analyze(python_source(edited, "t.py"), state=state)
        assert incremental == analyze(python_source(edited, "t.py")), edited
        parsed = parse(split(edited, state.splits.get(0)), state.chunks)
        assert parsed.module.deep_equals(parse(split(edited), ChunkPool()).module), edited
        for chunk in parsed.chunks:  # the traversals it inherited are those of its own tree
            for wanted, events in chunk.events.items():
                walked = Chunk(chunk.module, chunk.text)
                assert _record(walked, wanted, {}) == events and walked.nodes == chunk.nodes
        text = edited


@pytest.mark.parametrize("old, new", [
    ("def f(lr=0.01):\n    return step(lr, x)  # note\n", "def f(lr=0.02):\n    return step(lr, x)  # note\n"),
    ("def f(lr=0.01):\n    return step(lr, x)\n", "def f(lr=0.01):\n    return stepper(lr, x)\n"),
    ('x = f("""a\nb""", 1)\ny = 2\n', 'x = f("""a\n\nb""", 1)\ny = 2\n'),
    ("for i in range(10):\n    total += i\n", "for i in range(1):\n    total += i\n"),
])
def test_a_patched_statement_has_the_spans_of_its_code(old, new):
    """`patched`'s module spells the new text and its derived spans are a code generation's."""
    donor = Chunk(cst.parse_module(old), old)
    chunk = patched(donor, new)
    module, spans = chunk.module, chunk.spans
    assert module.code == new and module.deep_equals(cst.parse_module(new))
    fresh = Spans.of(module)
    assert set(spans.spans) == set(fresh.spans)
    assert all(spans.range(node) == fresh.range(node) for node in fresh.spans)


@pytest.mark.parametrize("old, new", [
    ("x = 1\n", "x = 1.5\n"),  # another kind of number
    ("x = a\n", "x = if\n"),  # a keyword
    ("x = ab\n", "x = a b\n"),  # two tokens
    ('x = "a"\n', 'x = f"a"\n'),  # an f-string
    ("x = a + b\n", "x = a - b\n"),  # not a leaf
])
def test_other_edits_are_parsed(old, new):
    assert patched(Chunk(cst.parse_module(old), old), new) is None


def test_a_keystroke_in_a_number_keeps_the_rest_of_its_statement():
    """The statements of a function an edit left alone are the same nodes as before (a
    parse would make new ones), so what was computed about them is reused."""
    state = DocumentState()
    analyze(python_source(TRAIN, "train.py"), state=state)
    before = {id(s): s for pool in state.chunks.chunks.values() for chunk in pool for s in _statements(chunk.module)}
    edited = TRAIN.replace("lr=0.1)", "lr=0.2)", 1)
    assert edited != TRAIN
    findings = analyze(python_source(edited, "train.py"), state=state)
    assert findings == analyze(python_source(edited, "train.py"))
    changed = next(chunk for pool in state.chunks.chunks.values() for chunk in pool if "lr=0.2)" in chunk.text)
    statements = _statements(changed.module)
    kept = [s for s in statements if id(s) in before and before[id(s)] is s]
    assert kept and len(kept) < len(statements)  # the edited statement (and its parents) are new
    assert not any("lr=0.1)" in chunk.text for pool in state.chunks.chunks.values() for chunk in pool)


def test_findings_an_edit_did_not_touch_are_the_same_objects():
    """A finding made of the same parts as one of the last analysis (same rule, message,
    range and fix) is handed out again; one the edit moved or changed is made afresh."""
    state = DocumentState()
    text = TRAIN + "\nloader2 = DataLoader(ds, batch_size=8)\n"
    first = analyze(python_source(text, "train.py"), state=state)
    last = max(first, key=lambda f: f.range.start_line)
    assert last.code == "TPL101" and last.fix is not None and len(first) > 3
    edited = text.replace("batch_size=8)", "batch_size=9)")
    second = analyze(python_source(edited, "train.py"), state=state)
    assert second == analyze(python_source(edited, "train.py"))
    kept = [f for f in second if any(f is g for g in first)]
    assert len(kept) == len(first) - 1  # all but the edited loader's
    assert "batch_size=9" in max(second, key=lambda f: f.range.start_line).fix.edits[0].text
    moved = "# a comment line\n" + edited
    third = analyze(python_source(moved, "train.py"), state=state)
    assert third == analyze(python_source(moved, "train.py"))
    assert not any(f is g for f in third for g in second)  # every range moved down a line
    assert third == [replace(f, range=shifted(f.range), fix=shifted_fix(f.fix)) for f in second]


def shifted(r):
    return type(r)(r.start_line + 1, r.start_col, r.end_line + 1, r.end_col)


def shifted_fix(fix):
    return fix and replace(fix, edits=tuple(replace(e, range=shifted(e.range)) for e in fix.edits))


def test_what_an_analysis_builds_is_freed_when_it_returns():
    """The context and rules of a document's analysis do not outlive it, and are freed by
    reference counting (a server's analyses run with the cyclic collector paused): only
    the document's state (chunks, memos, findings) is kept for the next version."""
    state = DocumentState()
    gc.collect()
    gc.disable()
    try:
        assert analyze(python_source(TRAIN, "train.py"), state=state)
        left = [o for o in gc.get_objects() if isinstance(o, (Context, Rule))]
    finally:
        gc.enable()
    assert left == []


def test_findings_hash_once_and_travel_without_their_hash():
    """A finding's hash is kept (servers and analyses hash every finding each time), but
    not pickled: another process (the CLI's workers) hashes strings differently."""
    finding = analyze(python_source(TRAIN, "train.py"))[0]
    assert hash(finding) == hash((finding.code, finding.message, finding.severity, finding.cell, finding.range,
                                  finding.fix, finding.probe, finding.related))
    assert "_hash" in vars(finding)
    copy = pickle.loads(pickle.dumps(finding))
    assert copy == finding and "_hash" not in vars(copy) and hash(copy) == hash(finding)


def _statements(module) -> list:
    found, stack = [], list(module.body)
    while stack:
        node = stack.pop()
        found.append(node)
        body = getattr(node, "body", None)
        stack.extend(getattr(body, "body", ()) if not isinstance(body, (list, tuple)) else ())
    return found


def test_duplicate_statements_stay_distinct_nodes():
    text = "import time, torch\nmodel = torch.compile(model)\nmodel(x)\nstart = time.perf_counter()\nmodel(x)\n" \
           "torch.cuda.synchronize()\nelapsed = time.perf_counter() - start\n"
    state = DocumentState()
    for _ in range(3):  # the equal `model(x)` lines come from the state as two chunks
        assert analyze(python_source(text, "t.py"), state=state) == analyze(python_source(text, "t.py")) == []


def test_a_document_state_in_use_is_not_shared():
    state = DocumentState()
    with state.lock:  # another thread's analysis holds it: this one parses afresh
        findings = analyze(python_source(TRAIN, "train.py"), state=state)
    assert findings == analyze(python_source(TRAIN, "train.py"))
    assert not state.chunks.chunks


@timed(120)
async def test_server_edit_session_matches_the_cli(tmp_path, cli):
    """Edits through a real server (which reuses statements between versions) against
    `perf-lint check --format json` of the same text, version after version."""
    rng = random.Random(5)
    text = good = TRAIN
    compared = 0
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", text)
        for step in range(16):
            if step:  # each step edits the last text that parsed: broken versions come and go
                text = mutate(good, rng)
                replace_all(client, uri, text) if step % 3 == 0 else _edit_lines(client, uri, text)
            served = sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
                            for d in await pull(client, uri))
            (tmp_path / "train.py").write_text(text, newline="")
            report = json.loads(cli("check", "--format", "json", "--no-cache", "train.py").stdout)
            if any(f["code"] == "TPL000" for f in report):
                continue  # the server keeps showing the last good findings while the text does not parse
            good, compared = text, compared + 1
            expected = sorted((f["code"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1)
                              for f in report)
            assert served == expected, (step, text)
    assert compared >= 6


def _edit_lines(client, uri: str, text: str) -> None:
    """The change from the client's text to `text` as one incremental edit of whole lines."""
    old, new = client.texts[uri].splitlines(keepends=True), text.splitlines(keepends=True)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    edit(client, uri, (start, 0), (end_old, 0), "".join(new[start:end_new]))
    assert client.texts[uri] == text


_IMPORTS = "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nfrom torchvision import datasets\n"
_LOADER_AND_TRAINING = textwrap.dedent('''
    model = Net().cuda()
    loader = DataLoader(datasets.ImageFolder("train"), batch_size=32)
    for epoch in range(100):
        for x, y in other:
            model(x.cuda()).sum().backward()
            optimizer.step()
''')


def _tpl101_after_each_edit(versions: list[tuple[str, list[str]]]) -> None:
    """Each text analysed in turn with one kept document state gives the TPL101 findings of a
    fresh analysis, which are those expected."""
    state = DocumentState()
    for text, expected in versions:
        kept = [f.code for f in analyze(python_source(text, "train.py"), state=state) if f.code == "TPL101"]
        fresh = [f.code for f in analyze(python_source(text, "train.py")) if f.code == "TPL101"]
        assert kept == fresh == expected


def test_a_test_pass_becomes_training_when_a_function_it_calls_starts_to_train():
    """Whether a loader's loop at the top of a module is a one-pass test (TPL101 silent) depends
    on the functions it calls, defined in other statements: an edit there must be seen even
    though the loop's statement, and what is remembered of it, did not change."""
    evaluates = "def step(x):\n    return model(x.cuda())\n"
    trains = "def step(x):\n    model(x.cuda()).sum().backward()\n    optimizer.step()\n"
    tail = "for x, y in loader:\n    step(x)\n"
    _tpl101_after_each_edit([(_IMPORTS + _LOADER_AND_TRAINING + step + tail, expected)
                             for step, expected in ((evaluates, []), (trains, ["TPL101"]))])


@pytest.mark.parametrize("through", ["", "def step(x):\n    return inner(x)\n"])
def test_a_method_becomes_training_when_a_function_it_calls_starts_to_train(through):
    """What is learnt of a class's method (whether a call of the module runs a training step) may
    hang on a function of another statement: after an edit there, the class's statement, kept
    as it was, is judged again (a loop calling the model through `forward` -> `step`, or
    `forward` -> `step` -> `inner` with `inner` edited)."""
    head = _IMPORTS + "class Net(nn.Module):\n    def forward(self, x):\n        return step(x)\n" + _LOADER_AND_TRAINING
    name = "inner" if through else "step"
    evaluates = f"def {name}(x):\n    return x.cuda() * 2\n"
    trains = f"def {name}(x):\n    x.cuda().sum().backward()\n    optimizer.step()\n"
    tail = "for x, y in loader:\n    model(x)\n"
    _tpl101_after_each_edit([(head + through + step + tail, expected)
                             for step, expected in ((evaluates, []), (trains, ["TPL101"]), (evaluates, []))])
