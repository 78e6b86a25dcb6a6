"""What a profile leaves for people: the text table, the SVG chart, traces that TensorBoard's
torch-tb-profiler opens as runs A and B, old runs pruned, and a timeout that says where the
child was. The last two tests really run torch."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.dom.minidom
from types import SimpleNamespace

import pytest

from perf_lint.analyzers import ConfigError
from perf_lint.analyzers.config import KEEP_TRACES, parse_config
from perf_lint.profiler import ProfileRequest, ProfileResult, report, run_profile
from perf_lint.profiler.harness import prune_runs
from perf_lint.profiler.process import stack_of
from perf_lint.profiler.stats import spread

from .test_profiler import SLOW_DATASET, SMALL, TRAIN_LOOP
from .timeouts import timeout


def metrics(label: str, runs: list[list[float]]) -> dict:
    return {"label": label, "runs": len(runs), "step_ms": spread([x for r in runs for x in r]),
            "run_medians_ms": [sorted(r)[len(r) // 2] for r in runs], "dataloader_share": 0.5}


def result_with(verdict: str, metric: str = "step") -> ProfileResult:
    summary = f"TPL101 {verdict}: speed-up (A time / B time) 1.9x, 95% interval 1.5-2.4x (CPU, n=6)"
    return ProfileResult(
        path="/x/train.py", steps=(1, 1, 3), repeats=2, device="cpu",
        variants={"A": metrics("as written", [[1250.0, 1312.5, 1400.0], [1201.0, 1250.0, 1333.0]]),
                  "B": metrics("with the fix", [[650.0, 700.0, 720.0], [0.5, 0.75, 1.0]])},
        verdicts=[{"code": "TPL101", "verdict": verdict, "metric": metric, "ratio": 1.9, "reason": "", "summary": summary}])


def test_text_table_stays_aligned_over_a_second():
    lines = result_with("confirmed").to_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split() == ["A", "B"])
    table = lines[header:lines.index("", header)]
    for column in (table[0].index("A"), table[0].index("B")):  # every cell starts in its column
        assert all(line[column - 1] == " " and line[column] != " " for line in table[1:]), table
    text = "\n".join(table)
    assert "1250-1328 ms" in text and "1201-1400 ms" in text and "e+0" not in text


def texts(svg: str) -> list[str]:
    return [node.firstChild.data for node in xml.dom.minidom.parseString(svg).getElementsByTagName("text")]


def fills(svg: str) -> list[str]:
    return [node.getAttribute("fill") for node in xml.dom.minidom.parseString(svg).getElementsByTagName("rect")]


def test_svg_has_an_axis_a_legend_and_the_verdict():
    svg = report.svg(result_with("inconclusive"))
    words = texts(svg)
    assert "ms" in words and {"0", "500", "1000"} <= set(words)  # the axis, in round steps of ms
    assert {"bar: median", "quartiles (25-75%)", "median of each run"} <= set(words)
    assert "TPL101 inconclusive: speed-up (A time / B time) 1.9x, 95% interval 1.5-2.4x (CPU, n=6)" in " ".join(words)
    assert "#5cb85c" not in fills(svg) and "#d9534f" not in fills(svg)  # no winner's colours


@pytest.mark.parametrize("verdict, metric, coloured", [
    ("confirmed", "step", True), ("not confirmed", "step", False), ("confirmed", "kernels", False)])
def test_svg_colours_a_winner_only_for_a_confirmed_speed_up(verdict, metric, coloured):
    shown = set(fills(report.svg(result_with(verdict, metric))))
    assert ({"#d9534f", "#5cb85c"} <= shown) is coloured and ("#5cb85c" in shown) is coloured


FAULTHANDLER = '''\
loading...
Fatal Python error: Aborted

Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap

Current thread 0x00007f0000000000 (most recent call first):
  File "/run/programs/A-script.py", line 9 in hang
  File "/venv/torch/_dynamo/convert_frame.py", line 700 in _compile
  File "/run/programs/A-script.py", line 24 in <module>
  File "/perf_lint/profiler/child.py", line 465 in run
  File "/perf_lint/profiler/child.py", line 513 in <module>

Extension modules: torch._C (total: 1)
'''


def test_stack_of_reads_the_main_threads_frames_from_a_faulthandler_dump():
    frames = stack_of("Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
                      '  File "old.py", line 1 in <module>\n\n' + FAULTHANDLER)
    assert frames[0] == ("/perf_lint/profiler/child.py", 513, "<module>")
    assert frames[-2:] == [("/venv/torch/_dynamo/convert_frame.py", 700, "_compile"), ("/run/programs/A-script.py", 9, "hang")]
    assert stack_of("no dump here\n") == []


def test_pruning_keeps_the_newest_runs_and_nothing_else_is_touched(tmp_path):
    runs = [f"2026010{i}-120000-train-TPL101" for i in range(1, 6)]
    for name in runs:
        (tmp_path / name / "programs").mkdir(parents=True)
    (tmp_path / "20250101-000000-not-a-run").mkdir()  # no programs folder
    (tmp_path / "notes").mkdir()
    (tmp_path / "19990101-000000-link").symlink_to(tmp_path / runs[0], target_is_directory=True)
    prune_runs(str(tmp_path), 2)
    assert sorted(os.listdir(tmp_path)) == sorted(["19990101-000000-link", "20250101-000000-not-a-run", "notes", *runs[-2:]])


def test_keep_traces_setting():
    assert parse_config({}).keep_traces == KEEP_TRACES and parse_config({"keep-traces": 3}).keep_traces == 3
    for bad in (0, "5", True):
        with pytest.raises(ConfigError, match="'keep-traces' must be a positive number of runs"):
            parse_config({"keep-traces": bad})


def tensorboard_runs(logdir: str) -> dict:
    """{run name: Run}, as torch-tb-profiler's plugin finds and loads them under `logdir`."""
    from torch_tb_profiler import io
    from torch_tb_profiler.plugin import TorchProfilerPlugin
    from torch_tb_profiler.profiler.loader import RunLoader

    plugin = SimpleNamespace(logdir=logdir)
    cache = io.Cache()
    runs = {}
    for run_dir in TorchProfilerPlugin._get_run_dirs(plugin):
        name = TorchProfilerPlugin._get_run_name(plugin, run_dir)
        runs[name] = RunLoader(name, run_dir, cache).load()
    return runs


@timeout(400)
def test_traces_open_in_tensorboard_as_runs_a_and_b(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.perf-lint]\nkeep-traces = 5\n")  # --keep-traces 2 wins
    (tmp_path / "train.py").write_text(SLOW_DATASET + TRAIN_LOOP)
    base = tmp_path / ".perf-lint" / "traces"
    for i in range(3):
        (base / f"2000010{i}-000000-train-TPL101" / "programs").mkdir(parents=True)
    (base / "notes").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    python = os.path.relpath(sys.executable, elsewhere)  # relative to the current directory, not the script's
    ran = subprocess.run([sys.executable, "-m", "perf_lint", "profile", "../train.py", "--rule", "TPL101", "--python", python,
                          "--steps", "1,1,3", "--repeats", "2", "--format", "json", "--keep-traces", "2"],
                         cwd=elsewhere, capture_output=True, text=True, timeout=360)
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["error"] is None and data["python"] == os.path.normpath(sys.executable)
    run_dir = data["trace_dir"]
    assert sorted(os.listdir(base)) == sorted(["20000102-000000-train-TPL101", os.path.basename(run_dir), "notes"])
    for run in data["runs"]:
        (trace,) = run["traces"]
        assert os.path.dirname(trace) == os.path.join(run_dir, run["variant"])
        assert f"- {run['variant']}, repeat {run['repeat']}: `{os.path.relpath(trace, run_dir)}`" in open(data["report_path"]).read()
    pytest.importorskip("torch_tb_profiler")
    runs = tensorboard_runs(run_dir)
    assert sorted(runs) == ["A", "B"]
    for name, run in runs.items():
        assert run.get_workers("Overview") == [name] and run.get_spans() == ["1", "2"]  # the repeats
        shares = sorted(part["extra"] / 100 for profile in run.profiles.values()
                        for part in profile.overview["performance"][0]["children"] if part["name"] == "DataLoader")
        assert len(shares) == 2
        assert sum(shares) / 2 == pytest.approx(data["variants"][name]["dataloader_share"], abs=0.02)  # the median of 2
    assert data["variants"]["A"]["dataloader_share"] > 0.5


HANGS_IN_COMPILE = SLOW_DATASET + '''\


def backend(graph, inputs):
    time.sleep(3600)


forward = torch.compile(lambda x: model(x).sum(), backend=backend)
for x, y in loader:
    forward(x)
'''


@timeout(200)
def test_a_timeout_says_where_the_child_was(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(HANGS_IN_COMPILE)
    result = run_profile(ProfileRequest(str(script), rule="TPL101", steps=SMALL, repeats=1, timeout_s=60))
    assert result.failure == "timeout"
    stopped = re.search(r"ran past the 60 s timeout and was killed with its whole process group; it was at line 21, "
                        r"inside torch.compile \(compiling\); torch.compile had compiled for ([\d.]+) s \(0 compilations "
                        r"finished\) and was compiling when stopped\nTraceback of the child when stopped \(most recent "
                        r"call last\):\n", result.error)
    assert stopped, result.error
    assert 1 < float(stopped[1]) < 60  # the compile began after the imports and the loader's first batch
    assert f'  File "{script}", line 26, in <module>\n    forward(x)\n' in result.error
    assert result.error.endswith(f'  File "{script}", line 21, in backend\n    time.sleep(3600)')
    assert result.error_location["line"] == 21
