"""Configuration as the CLI applies it: pyproject lookup, errors, selection, exclusion."""

from __future__ import annotations

import json

import pytest

LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
PINNING = LOADER + "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n"


def codes_by_path(result) -> list[tuple[str, str]]:
    return [(item["path"], item["code"]) for item in json.loads(result.stdout)]


def write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "toml, message",
    [
        ('[tool.perf-lint]\nselet = ["TPL1"]\n', "unknown key 'selet'"),
        ('[tool.perf-lint]\nselect = ["TPL8"]\n', "unknown rule code 'TPL8'"),
        ('[tool.perf-lint]\nignore = "TPL101"\n', "'ignore' must be a list"),
        ('[tool.perf-lint]\nper-file-ignores = { "tests/*" = ["XYZ1"] }\n', "unknown rule code 'XYZ1'"),
        ("[tool.perf-lint.TPL101]\nworkers = 8\n", "unknown option 'workers'"),
        ('[tool.perf-lint.TPL101]\nnum-workers = "8"\n', "'num-workers' must be int"),
        ("[tool.perf-lint]\nselect = [\n", "invalid TOML"),
    ],
)
def test_configuration_errors_exit_2_naming_file_and_key(cli, tmp_path, toml, message):
    write(tmp_path, {"pyproject.toml": toml, "train.py": LOADER})
    result = cli("check")
    assert result.returncode == 2
    assert message in result.stderr and "pyproject.toml" in result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr


def test_pyproject_without_our_table_is_ignored(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n[tool.other]\nselet = 1\n', "train.py": LOADER})
    result = cli("check", "--format", "json")
    assert result.returncode == 1 and codes_by_path(result) == [("train.py", "TPL101")]


# -- selection ------------------------------------------------------------------------------
def test_select_and_ignore_from_pyproject(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.perf-lint]\nselect = ["TPL1"]\nignore = ["TPL101", "TPL103"]\n',
                     "train.py": PINNING})
    assert codes_by_path(cli("check", "--format", "json")) == [("train.py", "TPL102")]


def test_command_line_selection_goes_on_top(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.perf-lint]\nselect = ["TPL1"]\nignore = ["TPL101"]\n',
                     "train.py": PINNING})
    # --ignore adds to the configured ignore list
    assert codes_by_path(cli("check", "--format", "json", "--ignore", "TPL103")) == [("train.py", "TPL102")]
    # --select replaces the configured selection, ignore list included
    assert codes_by_path(cli("check", "--format", "json", "--select", "TPL101,TPL103")) == [
        ("train.py", "TPL101"), ("train.py", "TPL103")
    ]
    # repeated flags accumulate; codes are case-insensitive
    assert codes_by_path(cli("check", "--format", "json", "--select", "tpl101", "--select", "TPL102")) == [
        ("train.py", "TPL101"), ("train.py", "TPL102")
    ]


def test_extend_select_adds_to_the_configured_selection(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.perf-lint]\nselect = ["TPL102"]\n', "train.py": PINNING})
    assert codes_by_path(cli("check", "--format", "json", "--extend-select", "TPL103")) == [
        ("train.py", "TPL102"), ("train.py", "TPL103")
    ]


def test_rule_options_reach_message_and_fix(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": "[tool.perf-lint.TPL101]\nnum-workers = 8\n", "train.py": LOADER})
    (item,) = json.loads(cli("check", "--format", "json", "--select", "TPL101").stdout)
    assert "num_workers=8" in item["message"] and "num_workers=8" in item["fix"]["edits"][0]["text"]


def test_per_file_ignores(cli, tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.perf-lint]\ninclude-tests = true\n'
                          'per-file-ignores = { "tests/*" = ["TPL101"], "scripts/one.py" = ["TPL1"] }\n',
        "tests/test_x.py": PINNING, "src/train.py": LOADER, "scripts/one.py": PINNING,
    })
    result = cli("check", "--format", "json", "--select", "TPL1")
    assert codes_by_path(result) == [
        ("src/train.py", "TPL101"), ("tests/test_x.py", "TPL102"), ("tests/test_x.py", "TPL103")
    ]


def test_test_code_is_skipped_by_default(cli, tmp_path):
    """Test suites are not training code: only TPL000 runs on them unless include-tests is set.
    A script merely named like a test (TCN's `add_test.py` trains on the adding problem) is checked."""
    tests = "import pytest\n" + PINNING + "def test_loader():\n    assert loader\n"
    write(tmp_path, {"pyproject.toml": "", "tests/helpers.py": PINNING, "test_x.py": tests, "conftest.py": PINNING,
                     "src/train.py": LOADER, "tests/broken.py": "def f(:\n", "add_test.py": LOADER,
                     "unit/test/helpers.py": LOADER, "unit/test/test_y.py": tests, "eval/test/run.py": LOADER})
    result = cli("check", "--format", "json", "--select", "TPL")  # (a `test/` folder of scripts, holding no tests: checked)
    assert codes_by_path(result) == [("add_test.py", "TPL101"), ("eval/test/run.py", "TPL101"), ("src/train.py", "TPL101"),
                                     ("tests/broken.py", "TPL000")]
    (tmp_path / "pyproject.toml").write_text("[tool.perf-lint]\ninclude-tests = true\n")
    assert {path for path, _ in codes_by_path(cli("check", "--format", "json"))} >= {"tests/helpers.py", "test_x.py"}


# -- exclusion ------------------------------------------------------------------------------
def test_exclude_patterns_skip_walked_files_but_not_named_ones(cli, tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.perf-lint]\nexclude = ["build", "gen_*.py", "data/raw/*"]\n',
        "build/lib/x.py": LOADER, "gen_model.py": LOADER, "pkg/gen_y.py": LOADER,
        "data/raw/z.py": LOADER, "data/keep.py": LOADER, "train.py": LOADER,
    })
    walked = cli("check", "--format", "json", "--select", "TPL101")
    assert [p for p, _ in codes_by_path(walked)] == ["data/keep.py", "train.py"]
    named = cli("check", "--format", "json", "--select", "TPL101", "gen_model.py", "build")
    assert [p for p, _ in codes_by_path(named)] == ["build/lib/x.py", "gen_model.py"]
    forced = cli("check", "--format", "json", "--select", "TPL101", "--force-exclude", "gen_model.py", "build", "train.py")
    assert [p for p, _ in codes_by_path(forced)] == ["train.py"]


def test_exclude_is_relative_to_its_pyproject_even_from_a_subfolder(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.perf-lint]\nexclude = ["src/vendor/*"]\n',
                     "src/vendor/v.py": LOADER, "src/main.py": LOADER})
    result = cli("check", "--format", "json", "--select", "TPL101", ".", cwd=tmp_path / "src")
    assert [p for p, _ in codes_by_path(result)] == ["main.py"]


# -- which file applies ---------------------------------------------------------------------
def test_nested_projects_use_their_own_pyproject(cli, tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.perf-lint]\nselect = ["TPL101"]\n',
        "train.py": PINNING,
        "sub/pyproject.toml": '[tool.perf-lint]\nselect = ["TPL102"]\n',
        "sub/train.py": PINNING,
        "sub/deeper/train.py": PINNING,
        "other/pyproject.toml": '[project]\nname = "no-table"\n',
        "other/train.py": PINNING,
    })
    result = cli("check", "--format", "json")
    assert codes_by_path(result) == [
        ("other/train.py", "TPL101"), ("sub/deeper/train.py", "TPL102"), ("sub/train.py", "TPL102"), ("train.py", "TPL101")
    ]


def test_nested_project_error_is_reported(cli, tmp_path):
    write(tmp_path, {"train.py": LOADER, "sub/pyproject.toml": "[tool.perf-lint]\nbogus = 1\n", "sub/x.py": LOADER})
    result = cli("check")
    assert result.returncode == 2 and "unknown key 'bogus'" in result.stderr


def test_explicit_config_file(cli, tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.perf-lint]\nselect = ["TPL101"]\n',
        "sub/pyproject.toml": '[tool.perf-lint]\nselect = ["TPL103"]\n',
        "sub/train.py": PINNING,
        "ci/perf-lint.toml": 'select = ["TPL102"]\n',
        "ci/pyproject.toml": '[tool.perf-lint]\nselect = ["TPL103"]\nignore = ["TPL101"]\n',
    })
    standalone = cli("check", "--format", "json", "--config", "ci/perf-lint.toml")
    assert codes_by_path(standalone) == [("sub/train.py", "TPL102")]
    pyproject = cli("check", "--format", "json", "--config", "ci/pyproject.toml")
    assert codes_by_path(pyproject) == [("sub/train.py", "TPL103")]
    missing = cli("check", "--config", "nope.toml")
    assert missing.returncode == 2 and "nope.toml: cannot read" in missing.stderr
    bad = cli("check", "--config", "sub/train.py")
    assert bad.returncode == 2 and "invalid TOML" in bad.stderr


def test_no_config_uses_the_defaults(cli, tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.perf-lint]\nignore = ["TPL1"]\nbogus = 1\n', "train.py": LOADER})
    result = cli("check", "--format", "json", "--no-config")
    assert result.returncode == 1 and codes_by_path(result) == [("train.py", "TPL101")]
