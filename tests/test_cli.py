"""`perf-lint check`, `rules` and `explain` as a command: formats, exit codes, discovery."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.util import find_spec
from urllib.parse import urlparse

import pytest

from perf_lint.analyzers import ALL_RULES, rule_by_code

LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
CLEAN = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64, num_workers=4)\n"
PINNING = LOADER + "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n"
BROKEN = "import torch\nx = (\n"
# a GPU training loop over the loader (a loader nothing reads loads nothing: no TPL101)
GPU_CELL = "model = Net().cuda()\nfor batch in loader:\n    model(batch).sum().backward()\n"
LOCATION = re.compile(r"^(?P<path>[^:]+):(?:cell (?P<cell>\d+):)?(?P<line>\d+):(?P<col>\d+): (?P<code>TPL\d{3}) (?P<msg>.+)$")


def notebook(*cells: str) -> str:
    """nbformat 4 JSON: a markdown cell, then one code cell per text (with an output), and a
    last cell that uses a GPU (a notebook that never does is a CPU session: no TPL101)."""
    data = [{"cell_type": "markdown", "metadata": {}, "source": "# Title"}]
    data += [
        {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["t"]},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["out\n"]}],
         "source": text.splitlines(keepends=True)}
        for text in (*cells, GPU_CELL)
    ]
    return json.dumps({"cells": data, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5})


def findings(stdout: str) -> list[re.Match]:
    matches = [LOCATION.match(line) for line in stdout.splitlines()]
    assert all(matches), stdout
    return matches


# -- text -----------------------------------------------------------------------------------
def test_text_reports_path_line_column_and_summary(cli, tmp_path):
    (tmp_path / "train.py").write_text(LOADER)
    result = cli("check", "--select", "TPL1")
    assert result.returncode == 1, result.stderr
    (match,) = findings(result.stdout)
    assert match.group("path", "line", "col", "code") == ("train.py", "2", "10", "TPL101")
    assert "num_workers" in match.group("msg")
    assert result.stderr == "Found 1 finding (1 fixable with --fix).\n"


def test_clean_project_exits_zero(cli, tmp_path):
    (tmp_path / "train.py").write_text(CLEAN)
    result = cli("check")
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    assert result.stderr == "Found 0 findings.\n"


def test_quiet_prints_findings_only(cli, tmp_path):
    (tmp_path / "train.py").write_text(LOADER)
    result = cli("check", "-q")
    assert result.returncode == 1
    assert "TPL101" in result.stdout and result.stderr == ""


def test_output_is_sorted_and_walks_folders_but_skips_environments(cli, tmp_path):
    for name in ("b.py", "a.py", "pkg/z.py", "pkg/sub/m.py", "nb.ipynb"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(notebook(LOADER) if name.endswith(".ipynb") else LOADER)
    for skipped in (".git", ".venv", "venv", "node_modules", "__pycache__", ".perf-lint-cache", "myenv",
                    ".ipynb_checkpoints", ".virtual_documents"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.py").write_text(LOADER)
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "notes.txt").write_text(LOADER)
    result = cli("check", "--select", "TPL101")
    paths = [m.group("path") for m in findings(result.stdout)]
    assert paths == ["a.py", "b.py", "nb.ipynb", "pkg/sub/m.py", "pkg/z.py"]


def test_explicit_file_with_any_extension_and_duplicates_checked_once(cli, tmp_path):
    (tmp_path / "script").write_text(LOADER)
    (tmp_path / "a.py").write_text(LOADER)
    result = cli("check", "script", "a.py", "./a.py", ".", "--select", "TPL101")
    assert [m.group("path") for m in findings(result.stdout)] == ["a.py", "script"]


def test_notebook_findings_name_the_cell_counting_from_1_markdown_included(cli, tmp_path):
    (tmp_path / "nb.ipynb").write_text(notebook("import torch\nx = 1\n", "%time y = 2\n" + LOADER))
    result = cli("check", "--select", "TPL101", "--format", "text")
    (match,) = findings(result.stdout)
    # cells: 1 markdown, 2 first code cell, 3 the loader (line 3 of the cell, after the magic)
    assert match.group("path", "cell", "line", "col") == ("nb.ipynb", "3", "3", "10")
    data = json.loads(cli("check", "--select", "TPL101", "--format", "json").stdout)
    assert [(d["cell"], d["line"], d["column"]) for d in data] == [(3, 3, 10)]


# -- json / sarif / github ------------------------------------------------------------------
def test_json_fields(cli, tmp_path):
    (tmp_path / "train.py").write_text(PINNING)
    (tmp_path / "broken.py").write_text(BROKEN)
    result = cli("check", "--format", "json", "--select", "TPL1,TPL000")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert [(d["path"], d["code"]) for d in data] == [
        ("broken.py", "TPL000"), ("train.py", "TPL101"), ("train.py", "TPL102"), ("train.py", "TPL103")
    ]
    for item in data:
        assert list(item) == ["code", "message", "severity", "path", "line", "column", "end_line", "end_column", "cell", "fix", "related"]
        assert item["cell"] is None and item["line"] >= 1 and item["column"] >= 1
    syntax, workers = data[0], data[1]
    assert syntax["severity"] == "error" and syntax["fix"] is None and syntax["line"] == 2
    assert (workers["line"], workers["column"], workers["end_line"], workers["end_column"]) == (2, 10, 2, 39)
    assert workers["fix"]["edits"][0]["text"].startswith("DataLoader(ds, batch_size=64, num_workers=")


def test_json_with_nothing_found_is_an_empty_list(cli, tmp_path):
    (tmp_path / "train.py").write_text(CLEAN)
    result = cli("check", "--format", "json")
    assert result.returncode == 0 and json.loads(result.stdout) == []


def _absolute_uri(value: str) -> bool:
    parsed = urlparse(value)
    return bool(parsed.scheme and (parsed.netloc or parsed.path))


def validate_sarif(log: dict) -> None:
    """The SARIF 2.1.0 required properties (and GitHub's expectations), checked by hand."""
    assert log["version"] == "2.1.0" and log["$schema"].startswith("https://")
    assert isinstance(log["runs"], list) and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "perf-lint" and driver["version"]
    assert _absolute_uri(driver["informationUri"])
    ids = [rule["id"] for rule in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"].startswith(f"# {rule['id']}")
        assert _absolute_uri(rule["helpUri"])
        assert rule["defaultConfiguration"]["level"] in ("none", "note", "warning", "error")
    for invocation in run.get("invocations", []):
        assert isinstance(invocation["executionSuccessful"], bool)
        for note in invocation.get("toolExecutionNotifications", []):
            assert note["message"]["text"]
    for base in run.get("originalUriBaseIds", {}).values():
        assert base["uri"].endswith("/") and _absolute_uri(base["uri"])
    for result in run["results"]:
        assert result["message"]["text"]
        assert result["level"] in ("none", "note", "warning", "error")
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "\\" not in uri and ":" not in uri, uri
        region = physical["region"]
        assert all(isinstance(region[k], int) and region[k] >= 1 for k in ("startLine", "startColumn", "endLine", "endColumn"))
        assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])


def test_sarif_is_valid_2_1_0_with_rules_results_and_notebook_cells(cli, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(PINNING)
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "nb.ipynb").write_text(notebook(LOADER))
    result = cli("check", "--format", "sarif", "--select", "TPL1,TPL000")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    validate_sarif(log)
    run = log["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {rule.code for rule in ALL_RULES} | {"TPL000"}
    by_rule = {}
    for item in run["results"]:
        by_rule.setdefault(item["ruleId"], []).append(item)
    (syntax,) = by_rule["TPL000"]
    assert syntax["level"] == "error"
    assert syntax["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    cells = [r for r in by_rule["TPL101"] if r.get("properties", {}).get("cell") is not None]
    (cell,) = cells
    assert cell["properties"]["cell"] == 2 and "cell 2" in cell["message"]["text"]
    assert cell["locations"][0]["physicalLocation"]["region"]["startLine"] == 2  # relative to the cell
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"broken.py", "nb.ipynb", "src/train.py"}
    docs = {r["id"]: r["help"]["markdown"] for r in run["tool"]["driver"]["rules"]}
    assert docs["TPL101"] == rule_by_code("TPL101").docs()


def test_sarif_without_findings_is_still_a_valid_log(cli, tmp_path):
    (tmp_path / "train.py").write_text(CLEAN)
    result = cli("check", "--format", "sarif")
    assert result.returncode == 0
    log = json.loads(result.stdout)
    validate_sarif(log)
    assert log["runs"][0]["results"] == []


def test_github_annotations(cli, tmp_path):
    (tmp_path / "train.py").write_text(LOADER)
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "nb.ipynb").write_text(notebook(LOADER))
    result = cli("check", "--format", "github", "--select", "TPL101,TPL000")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::error file=broken.py,line=2,col=5,endLine=2,endColumn=6,title=TPL000::")
    assert lines[1].startswith("::warning file=nb.ipynb,title=TPL101::cell 2, line 2, column 10: DataLoader")
    assert lines[2].startswith("::warning file=train.py,line=2,col=10,endLine=2,endColumn=39,title=TPL101::DataLoader")
    assert len(lines) == 3


def test_statistics(cli, tmp_path):
    (tmp_path / "a.py").write_text(PINNING)
    (tmp_path / "b.py").write_text(LOADER)
    (tmp_path / "broken.py").write_text(BROKEN)
    result = cli("check", "--statistics", "--format", "json", "--select", "TPL1,TPL000")
    assert result.returncode == 1
    rows = {row["code"]: (row["count"], row["fixable"]) for row in json.loads(result.stdout)}
    assert rows == {"TPL000": (1, 0), "TPL101": (2, 2), "TPL102": (1, 1), "TPL103": (1, 1)}
    text = cli("check", "--statistics", "--select", "TPL1,TPL000").stdout.splitlines()
    assert [line.split()[:2] for line in text] == [["1", "TPL000"], ["2", "TPL101"], ["1", "TPL102"], ["1", "TPL103"]]


# -- exit codes and errors ------------------------------------------------------------------
def test_syntax_error_is_a_finding_and_other_files_are_still_checked(cli, tmp_path):
    (tmp_path / "a_broken.py").write_text(BROKEN)
    (tmp_path / "b.py").write_text(LOADER)
    result = cli("check", "--select", "TPL1,TPL000")
    assert result.returncode == 1
    assert [m.group("path", "code") for m in findings(result.stdout)] == [("a_broken.py", "TPL000"), ("b.py", "TPL101")]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("bad.py", b"import torch\nname = '\xff\xfe'\n", "cannot decode"),
        ("bad.py", b"# -*- coding: klingon -*-\nimport torch\n", "klingon"),
        ("bad.ipynb", b"{not json", "not a notebook"),
        ("bad.ipynb", b'{"cells": 3}', "not a notebook"),
    ],
)
def test_unreadable_file_is_an_error_but_others_are_checked(cli, tmp_path, name, content, message):
    (tmp_path / name).write_bytes(content)
    (tmp_path / "good.py").write_text(LOADER)
    result = cli("check")
    assert result.returncode == 2
    assert "good.py:2:10: TPL101" in result.stdout
    (error,) = [line for line in result.stderr.splitlines() if line.startswith(f"{name}: error: ")]
    assert message in error
    assert "Traceback" not in result.stderr


def test_missing_path_is_an_error_but_others_are_checked(cli, tmp_path):
    (tmp_path / "good.py").write_text(LOADER)
    result = cli("check", "missing.py", "good.py")
    assert result.returncode == 2
    assert "missing.py: error: no such file or directory" in result.stderr
    assert "good.py:2:10: TPL101" in result.stdout


def test_exit_zero_keeps_errors(cli, tmp_path):
    (tmp_path / "good.py").write_text(LOADER)
    assert cli("check", "--exit-zero").returncode == 0
    assert cli("check", "--exit-zero", "good.py", "missing.py").returncode == 2


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "required: COMMAND"),
        (("check", "--format", "xml"), "invalid choice"),
        (("check", "--statistics", "--format", "sarif"), "--statistics cannot be combined"),
        (("check", "--select", "TPL8"), "unknown rule code 'TPL8'"),
        (("check", "--config", "a.toml", "--no-config"), "not allowed with"),
        (("server", "--tcp", "localhost"), "expected [HOST:]PORT"),
        (("explain", "TPL999"), "unknown rule code 'TPL999'"),
    ],
)
def test_usage_errors_exit_2(cli, args, message):
    result = cli(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_version_and_help(cli):
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("perf-lint ")
    helped = cli("check", "--help")
    assert helped.returncode == 0
    assert "counting from 1 with" in helped.stdout and "--force-exclude" in helped.stdout


# -- suppressions ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "code, suppressed",
    [
        ("loader = DataLoader(ds)  # noqa: TPL101\n", True),
        ("loader = DataLoader(ds)  # noqa\n", True),
        ("loader = DataLoader(ds)  # perf-lint: ignore[TPL101]\n", True),
        ("# noqa: TPL101\nloader = DataLoader(\n    ds,\n    batch_size=8,\n)\n", True),
        ("loader = DataLoader(\n    ds,\n    batch_size=8,\n)  # noqa: TPL101\n", True),
        ("loader = DataLoader(ds)  # noqa: TPL102\n", False),
        ("loader = DataLoader(ds)  # perf-lint: ignore[TPL102]\n", False),
        ("# noqa: TPL101\nloader = DataLoader(ds)\n", False),
    ],
)
def test_suppression_comments(cli, tmp_path, code, suppressed):
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\n" + code)
    result = cli("check", "--select", "TPL101")
    assert result.returncode == (0 if suppressed else 1), result.stdout
    assert ("TPL101" in result.stdout) is not suppressed


# -- rules / explain / other commands -------------------------------------------------------
def test_rules_lists_every_rule(cli):
    result = cli("rules", "--format", "json")
    assert result.returncode == 0
    rows = {row["code"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {rule.code for rule in ALL_RULES} | {"TPL000"}
    for rule in ALL_RULES:
        row = rows[rule.code]
        assert (row["name"], row["family"], row["severity"], row["fixable"], row["probe"], row["default_enabled"]) == (
            rule.name, rule.family(), rule.severity, rule.fixable, rule.probe, rule.default_enabled
        )
    table = cli("rules").stdout.splitlines()
    assert table[0].split()[:4] == ["CODE", "NAME", "FAMILY", "SEVERITY"]
    assert {line.split()[0] for line in table[1:]} == set(rows)
    line101 = next(line for line in table if line.startswith("TPL101"))
    assert "dataloader-sync-loading" in line101 and "input pipeline" in line101


def test_explain_prints_the_rule_docs(cli):
    result = cli("explain", "tpl101")
    assert result.returncode == 0
    assert result.stdout == rule_by_code("TPL101").docs()
    assert cli("explain", "TPL000").stdout.startswith("# TPL000 syntax-error")


def test_check_does_not_import_the_language_server(tmp_path):
    (tmp_path / "a.py").write_text(LOADER)
    code = (
        "import sys\nfrom perf_lint.cli.main import main\n"
        "status = main(['check', '-q', '.'])\n"
        "assert 'pygls' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)\n"
        "raise SystemExit(status)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr


def lsp_frames(*messages: dict) -> bytes:
    bodies = [json.dumps({"jsonrpc": "2.0", **message}).encode() for message in messages]
    return b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body) for body in bodies)


def lsp_responses(data: bytes) -> list[dict]:
    responses = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
        responses.append(json.loads(rest[:length]))
        data = rest[length:]
    return responses


@pytest.mark.skipif(find_spec("perf_lint.server.lsp") is None, reason="the language server is not installed")
def test_server_subcommand_speaks_lsp_on_stdio(tmp_path):
    requests = lsp_frames(
        {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"method": "initialized", "params": {}},
        {"id": 2, "method": "shutdown"},
        {"method": "exit"},
    )
    result = subprocess.run(
        [sys.executable, "-m", "perf_lint", "server", "--stdio"],
        input=requests, cwd=tmp_path, capture_output=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
    by_id = {r["id"]: r for r in lsp_responses(result.stdout) if "id" in r and "method" not in r}
    assert "capabilities" in by_id[1]["result"] and by_id[2]["result"] is None


@pytest.mark.skipif(find_spec("perf_lint.server.lsp") is not None, reason="the language server is installed")
def test_server_not_available_is_a_clear_error(cli):
    result = cli("server", "--stdio")
    assert result.returncode == 2 and "language server is not available" in result.stderr


@pytest.mark.skipif(find_spec("perf_lint.cli.profile_cmd") is not None, reason="the profiler command is installed")
def test_profile_not_available_is_a_clear_error(cli):
    result = cli("profile", "train.py")
    assert result.returncode == 2 and "profiler is not available" in result.stderr
