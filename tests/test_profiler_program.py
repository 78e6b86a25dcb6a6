"""The profiler's parent side without running anything: which code is the target, which
loop becomes the steps, how it is rewritten, and how numbers become verdicts."""

from __future__ import annotations

import ast
import json

from perf_lint.analyzers import analyze, notebook_source, python_source
from perf_lint.profiler import ProfileRequest, run_profile
from perf_lint.profiler.harness import apply_fixes
from perf_lint.profiler.instrument import clock_names, line_map, mark_magic, rewrite
from perf_lint.profiler.program import Program, segments_of, find_target, tree_of
from perf_lint.profiler.stats import compare, spread

from .timeouts import timeout


SCRIPT = """\
import torch
from torch.utils.data import DataLoader

def build():
    layers = []
    for i in range(4):
        layers.append(torch.nn.Linear(8, 8))
    return torch.nn.Sequential(*layers)

model = build()
loader = DataLoader(ds, batch_size=8)
for epoch in range(10):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
    print(epoch)
"""


def plan(text: str, line: int | None, cell_segment: int = 0, notebook=None):
    source = notebook_source(notebook, "nb.ipynb") if notebook else python_source(text, "train.py")
    segments = segments_of(source)
    parsed = [tree_of(c.code) for c in segments]
    cells = source.kind == "notebook" or bool(source.percent_cells)
    target = find_target(segments, parsed, cell_segment, line, cells)
    program = Program(segments, parsed)
    return segments, parsed, target, program


@timeout(30)
def test_top_level_line_measures_the_batch_loop_inside_the_epoch_loop():
    segments, parsed, target, program = plan(SCRIPT, 10)  # the DataLoader line (0-based 10)
    assert target.kind == "script"
    measure = program.measure(target)
    assert (measure.how, measure.line) == ("loop", 12)  # `for x, y in loader`, not `for epoch`
    epochs = program.measure(target, descend=False)
    assert epochs.line == 11


@timeout(30)
def test_line_inside_a_function_without_a_loop_repeats_the_function():
    text = "import torch\n\ndef step(x):\n    y = x @ x\n    return y.sum()\n\nstep(torch.ones(2, 2))\n"
    segments, parsed, target, program = plan(text, 3)
    assert target.kind == "function" and target.line == 2
    assert program.measure(target).how == "repeat-function"


@timeout(30)
def test_training_loop_reached_through_a_call():
    text = (
        "import torch\n"
        "def train_one_epoch(model, loader, opt):\n"
        "    for x, y in loader:\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n"
        "loader = torch.utils.data.DataLoader(ds)\n"
        "for epoch in range(3):\n"
        "    train_one_epoch(model, loader, opt)\n"
    )
    segments, parsed, target, program = plan(text, 5)
    measure = program.measure(target)
    assert (measure.how, measure.line) == ("loop", 2)


@timeout(30)
def test_notebook_cell_without_a_loop_uses_the_loop_of_a_later_cell():
    notebook = {"cells": [
        {"cell_type": "code", "source": "import torch\nloader = make_loader()\n"},
        {"cell_type": "markdown", "source": "# train"},
        {"cell_type": "code", "source": "for x in loader:\n    model(x).sum().backward()\n"},
    ]}
    segments, parsed, target, program = plan("", None, 0, notebook)
    assert target.kind == "cell" and target.description == "cell 1"
    measure = program.measure(target)
    assert measure.how == "loop" and segments[measure.segment].cell == 2


@timeout(30)
def test_rewrite_instruments_the_measured_loop_caps_heavy_loops_and_maps_lines():
    segments, parsed, target, program = plan(SCRIPT, 10)
    measure = program.measure(target)
    out = rewrite(segments[0].code, parsed[0], measured_line=measure.line)
    ast.parse(out.code)
    lines = out.code.split("\n")
    step = lines.index("        if __perf_lint__.step(): break")
    assert lines[step - 1] == "    for x, y in loader:"
    assert "    __perf_lint__.finish()" in lines
    assert "    if __perf_lint__.tick(0): break" in lines  # the epoch loop is capped
    assert "__perf_lint__.tick(" not in lines[5]  # the layer-building loop is not
    original = SCRIPT.split("\n")
    for number, text in enumerate(lines):  # every unchanged line maps to itself
        if "__perf_lint__" not in text:
            assert original[out.lines[number]] == text


@timeout(30)
def test_clock_reads_are_wrapped_with_sites_in_original_lines():
    text = "from time import perf_counter as pc\nimport time\nt0 = pc()\ny = f()\nt1 = time.time() - t0\n"
    tree = tree_of(text)
    out = rewrite(text, tree, clocks=clock_names([tree]))
    assert "t0 = __perf_lint__.clock('0:2:5', pc)" in out.code
    assert "t1 = __perf_lint__.clock('0:4:5', time.time) - t0" in out.code


@timeout(30)
def test_timing_magics_become_marks():
    source = notebook_source({"cells": [
        {"cell_type": "code", "source": "%%time\ny = x @ x\n"},
        {"cell_type": "code", "source": "a = 1\n%timeit -n 3 y = x @ x\n"},
    ]})
    first, second = segments_of(source)
    marked = mark_magic(first.code, first.magics, 0)
    assert marked.split("\n")[0] == '__perf_lint__.mark("start")'
    assert marked.rstrip().split("\n")[-1] == '__perf_lint__.mark("end")'
    marked = mark_magic(second.code, second.magics, 1)
    assert marked.split("\n")[1:3] == ['__perf_lint__.mark("start"); y = x @ x', '__perf_lint__.mark("end")']
    ast.parse(marked)


def test_line_map_sends_inserted_lines_to_the_next_original_line():
    old = "a\nb\nc"
    new = "a\nX\nb\nc\nY"
    assert line_map(old, new) == [0, 1, 1, 2, 2]


def test_compare_confirms_only_beyond_the_noise():
    slow = [[10.0, 10.5, 9.8], [10.2, 10.1, 10.4], [9.9, 10.3, 10.0]]
    fast = [[5.0, 5.2, 4.9], [5.1, 5.0, 5.3], [4.8, 5.2, 5.0]]
    judged = compare(slow, fast, "step time")
    assert judged.verdict == "confirmed" and 1.9 < judged.ratio < 2.1
    assert compare(slow, slow, "step time").verdict == "not confirmed"
    noisy = [[5.0, 15.0, 5.1], [14.0, 5.2, 13.0], [5.1, 14.5, 6.0]]
    assert compare(noisy, fast, "step time").verdict == "inconclusive"
    assert compare([[1.0]], [[1.0]], "step time").verdict == "inconclusive"  # too few steps
    assert compare(fast, slow, "step time").reason.startswith("the opposite")
    assert spread([3.0, 1.0, 2.0]) == {"median": 2.0, "q1": 1.5, "q3": 2.5, "min": 1.0, "max": 3.0, "n": 3}


@timeout(30)
def test_requests_that_name_no_profilable_finding_fail_before_running(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    result = run_profile(ProfileRequest(str(script), line=2))
    assert result.failure == "no-finding" and "line 2" in result.error
    assert run_profile(ProfileRequest(str(script), cell=1)).failure == "request"
    assert run_profile(ProfileRequest(str(tmp_path / "missing.py"))).failure == "source"
    assert run_profile(ProfileRequest(str(script), steps=(1, 1, 0))).failure == "request"
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nfor x in :\n")
    assert run_profile(ProfileRequest(str(broken))).failure == "source"
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "import torch\n"}], "nbformat": 4,
                                    "nbformat_minor": 5, "metadata": {}}))
    assert "needs its cell" in run_profile(ProfileRequest(str(notebook), line=1)).error
    assert not (tmp_path / ".perf-lint").exists()  # nothing ran, nothing was written


@timeout(30)
def test_misplaced_cell_magic_is_inconclusive_without_running(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": "import torch\nx = torch.ones(3).cuda()\n"},
        {"cell_type": "code", "source": "torch.cuda.synchronize()\n%%time\ny = x * 2\n"},
    ], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    result = run_profile(ProfileRequest(str(notebook), cell=1, rule="TPL202"))
    assert [v["verdict"] for v in result.verdicts] == ["inconclusive"]
    assert "IPython refuses the cell" in result.verdicts[0]["reason"]
    assert result.runs == [] and result.report_path is None


def test_overlapping_fixes_of_one_call_are_all_applied():
    source = python_source(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "loader = DataLoader(ds, batch_size=8)\n"
        "for x, y in loader:\n    x = x.to(device)\n", "train.py")
    findings = [f for f in analyze(source) if f.code in ("TPL101", "TPL102")]
    assert [f.code for f in findings] == ["TPL101", "TPL102"]
    fixed, missed = apply_fixes(source, findings, None)
    assert missed == []
    assert "loader = DataLoader(ds, batch_size=8, num_workers=4, persistent_workers=True, pin_memory=True)" in fixed.text
