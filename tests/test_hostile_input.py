"""`perf-lint check` on a hostile or huge repository: it never hangs, crashes or goes
silent; each bad file is one error and the rest is checked; nothing it prints can be
taken for a CI workflow command. Every run is bounded: 120 s and 2 GiB of address space."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from urllib.parse import unquote

import pytest

resource = pytest.importorskip("resource")  # POSIX: FIFOs, /dev/zero, newlines in file names

LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
FINDING = "train.py:2:10: TPL101 "
MEMORY = 2 * 1024**3


@pytest.fixture
def check(tmp_path):
    """Run `python -m perf_lint check ARGS...` in `tmp_path`, bounded in time and memory."""

    def run(*args: str, close_stdout: bool = False) -> subprocess.CompletedProcess:
        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
            if close_stdout:
                os.close(1)

        return subprocess.run(
            [sys.executable, "-m", "perf_lint", "check", "--no-cache", *args], cwd=tmp_path,
            env={**os.environ, "PYTHONUTF8": "1"}, capture_output=True, text=True, timeout=120, preexec_fn=limits,
        )

    (tmp_path / "train.py").write_text(LOADER)
    return run


def notebook(metadata: str) -> str:
    """A notebook with a fixable cell (in a notebook that uses a GPU) and `metadata` as the JSON
    text of its metadata."""
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": LOADER + "model = Net().cuda()\nfor x in loader:\n    model(x)\n"}
    return '{"cells": [%s], "metadata": %s, "nbformat": 4, "nbformat_minor": 5}' % (json.dumps(cell), metadata)


# -- what is read ------------------------------------------------------------------------
@pytest.mark.parametrize("named", [False, True], ids=["walked", "named"])
def test_fifo_and_device_are_skipped_never_read(check, tmp_path, named):
    os.mkfifo(tmp_path / "fifo.py")  # reading it would wait forever for a writer
    (tmp_path / "zero.py").symlink_to("/dev/zero")  # reading it would never end
    result = check(*(["fifo.py", "zero.py", "train.py"] if named else ["."]))
    assert result.returncode == 2, result.stderr
    assert result.stdout.startswith(FINDING)
    for name in ("fifo.py", "zero.py"):
        assert f"{name}: error: skipped: not a regular file (a FIFO, a device or a socket)\n" in result.stderr


def test_file_over_the_size_cap_is_skipped_unread(check, tmp_path):
    (tmp_path / "huge.py").write_text("x\n" * 6_000_000)  # ~10 GB in Python's parser
    with open(tmp_path / "sparse.py", "wb") as handle:
        handle.truncate(64 * 1024**3)  # 64 GiB of NUL bytes, taking no disk space
    result = check(".")
    assert result.returncode == 2, result.stderr
    assert result.stdout.startswith(FINDING)
    assert "huge.py: error: skipped: 12,000,000 bytes, over max-file-size (10,485,760)\n" in result.stderr
    assert "sparse.py: error: skipped: 68,719,476,736 bytes, over max-file-size (10,485,760)\n" in result.stderr


def test_max_file_size_is_a_setting(check, tmp_path):
    (tmp_path / "two.py").write_text(LOADER + LOADER.replace("loader = ", "second = "))  # 158 bytes, two loaders
    (tmp_path / "pyproject.toml").write_text("[tool.perf-lint]\nmax-file-size = 100\n")
    result = check(".")
    assert result.returncode == 2 and result.stdout.startswith(FINDING)
    assert "two.py: error: skipped: 158 bytes, over max-file-size (100)\n" in result.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.perf-lint]\nmax-file-size = 158\n")
    result = check(".")
    assert result.returncode == 1 and "error" not in result.stderr
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["train.py", "two.py", "two.py"]


# -- bad notebooks and code ----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_bad_notebooks_are_one_error_each_in_every_format(check, tmp_path, fmt):
    (tmp_path / "deep.ipynb").write_text(notebook("[" * 3000 + "]" * 3000))
    (tmp_path / "digits.ipynb").write_text(notebook('{"n": %s}' % ("9" * 5000)))
    result = check("--format", fmt, ".")
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert errors == [
        "deep.ipynb: error: not a notebook: its JSON is nested too deeply",
        "digits.ipynb: error: not a notebook: Exceeds the limit (4300 digits) for integer string conversion: "
        "value has 5000 digits",
    ]
    if fmt == "text":
        assert result.stdout.startswith(FINDING)
    elif fmt == "github":
        assert result.stdout.startswith("::warning file=train.py,line=2,col=10,")
    elif fmt == "json":
        assert [(f["path"], f["code"]) for f in json.loads(result.stdout)] == [("train.py", "TPL101")]
    else:
        (run,) = json.loads(result.stdout)["runs"]
        assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]] == ["train.py"]
        (invocation,) = run["invocations"]
        assert invocation["executionSuccessful"] is False
        notified = [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    for n in invocation["toolExecutionNotifications"]]
        assert notified == ["deep.ipynb", "digits.ipynb"]


def test_deeply_nested_notebook_metadata_is_fixed_and_kept(check, tmp_path):
    path = tmp_path / "nested.ipynb"
    path.write_text(notebook("[" * 900 + "]" * 900))  # as deep as Python's JSON reader goes
    result = check("--fix", "nested.ipynb")
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    fixed = json.loads(path.read_text())
    assert "num_workers=4" in "".join(fixed["cells"][0]["source"])
    assert json.dumps(fixed["metadata"]) == "[" * 900 + "]" * 900


def test_code_too_deep_for_pythons_parser_says_so(check, tmp_path):
    (tmp_path / "deep.py").write_text("x = " + "-\\\n" * 100_000 + "1\ndef (\n")
    result = check("deep.py")
    assert result.returncode == 1, result.stderr
    assert re.fullmatch(
        r"deep\.py:1:1: TPL000 Not checked: too large or too deeply nested to analyse "
        r"\(Python's parser ran out of (memory|stack)\)\n", result.stdout
    )


# -- configuration -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "toml, message",
    [
        (b'[tool.perf-lint]\nselect = ["TPL\xff"]\n', "invalid TOML: not UTF-8 (invalid start byte at byte 31)"),
        (b"[tool.perf-lint]\nselect = " + b"[" * 3000 + b"]" * 3000 + b"\n", "invalid TOML: nested too deeply"),
        (b"[tool.perf-lint]\nmax-file-size = 1" + b"0" * 5000 + b"\n", "invalid TOML: Exceeds the limit"),
        (b"[tool.perf-lint.TPL101]\nnum-workers = -5\n", "'num-workers' must be a positive integer, got -5"),
        (b"[tool.perf-lint.TPL205]\nmin-elements = 0\n", "'min-elements' must be a positive integer, got 0"),
        (b"[tool.perf-lint]\nmax-file-size = 0\n", "'max-file-size' must be a positive number of bytes, got 0"),
        (b'[tool.perf-lint]\nmax-file-size = "10MB"\n', "'max-file-size' must be a positive number of bytes"),
        (b"[tool.perf-lint]\nmax-file-size = true\n", "'max-file-size' must be a positive number of bytes"),
    ],
)
def test_configuration_errors_exit_2_and_fix_nothing(check, tmp_path, toml, message):
    (tmp_path / "pyproject.toml").write_bytes(toml)
    result = check("--fix", "train.py")
    assert result.returncode == 2
    assert result.stderr.startswith(f"perf-lint: error: {tmp_path / 'pyproject.toml'}") and message in result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "train.py").read_text() == LOADER


def test_explicit_config_file_errors_exit_2(check, tmp_path):
    (tmp_path / "settings.toml").write_bytes(b"select = ['\xff']\n")
    result = check("--config", "settings.toml", "train.py")
    assert result.returncode == 2
    assert result.stderr == "perf-lint: error: settings.toml: invalid TOML: not UTF-8 (invalid start byte at byte 11)\n"


def test_pyproject_whose_tool_is_not_a_table_configures_nothing(check, tmp_path):
    (tmp_path / "pyproject.toml").write_text('tool = "x"  # [tool.perf-lint]\n')
    result = check("train.py")
    assert result.returncode == 1 and result.stdout.startswith(FINDING), result.stderr


# -- output --------------------------------------------------------------------------------
HOSTILE = ["a\n::error file=x.py,line=1::forged.py", "::add-mask::secret.py", "##[stop-commands]token.py", "e\x1b[2J,%:.py"]


def workflow_commands(text: str) -> list[str]:
    """The lines GitHub's runner takes for workflow commands: `::name` at the start, after
    blanks, or the legacy `##[name]` anywhere."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def unescape_github(value: str) -> str:
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(escaped, raw)
    return value


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "diff"])
def test_file_names_cannot_forge_workflow_commands(check, tmp_path, fmt):
    for name in HOSTILE:
        (tmp_path / name).write_text(LOADER)
    os.mkfifo(tmp_path / "b\n::error::fifo.py")  # an error line on stderr
    result = check("--diff", ".") if fmt == "diff" else check("--format", fmt, "--select", "TPL101", ".")
    assert result.returncode == 2
    assert workflow_commands(result.stderr) == []
    assert [line for line in result.stderr.splitlines() if ": error: " in line] == [
        "b\\n::error::fifo.py: error: skipped: not a regular file (a FIFO, a device or a socket)"
    ]
    names = set(HOSTILE) | {"train.py"}
    if fmt == "github":
        annotations = result.stdout.splitlines()
        assert workflow_commands(result.stdout) == annotations and len(annotations) == len(names)
        files = [re.fullmatch(r"::warning file=([^,:]*),line=2,.*", line) for line in annotations]
        assert {unescape_github(match.group(1)) for match in files} == names
        return
    assert workflow_commands(result.stdout) == []
    if fmt == "text":
        assert len(result.stdout.splitlines()) == len(names)  # one line each: none was split
        assert "a\\n::error file=x.py,line=1::forged.py:2:10: TPL101 " in result.stdout
        assert "./::add-mask::secret.py:2:10: TPL101 " in result.stdout
        assert "#\\x23[stop-commands]token.py:2:10: TPL101 " in result.stdout
        assert "e\\x1b[2J,%:.py:2:10: TPL101 " in result.stdout
    elif fmt == "diff":
        headers = [line[4:] for line in result.stdout.splitlines() if line.startswith("--- ")]
        assert sorted(headers) == sorted(
            ["a\\n::error file=x.py,line=1::forged.py", "./::add-mask::secret.py", "#\\x23[stop-commands]token.py",
             "e\\x1b[2J,%:.py", "train.py"]
        )
    elif fmt == "json":
        assert {finding["path"] for finding in json.loads(result.stdout)} == names
    else:
        (run,) = json.loads(result.stdout)["runs"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
        assert all(re.fullmatch(r"[A-Za-z0-9%._~/-]+", uri) for uri in uris), uris
        assert {unquote(uri) for uri in uris} == names


# -- errors nobody foresaw -----------------------------------------------------------------
def test_unexpected_failure_exits_2_with_a_report_request(check, tmp_path):
    result = check("train.py", close_stdout=True)  # no stdout to write the findings to
    assert result.returncode == 2
    assert result.stderr.startswith("perf-lint: internal error, please report it at https://github.com/")
    assert "Traceback (most recent call last):" in result.stderr
