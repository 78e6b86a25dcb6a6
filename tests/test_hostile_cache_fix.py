"""A repository under check is not trusted: its caches, its links, and a writer racing `--fix`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from perf_lint import __version__

from .timeouts import timeout

LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder (the cwd of `cli(..., cwd=project)`) with its own machine key."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "machine"))
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "train.py").write_text(LOADER)
    (tmp_path / "outside").mkdir()
    return folder


def check(cli, project, *args):
    done = cli("check", "--format", "json", "--select", "TPL1", *args, cwd=project)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def entries(project, kind):
    """The cache's entries: per-file ("files") or whole-run ("runs")."""
    found = list((project / ".perf-lint-cache").rglob("*.json"))
    return [path for path in found if (path.parent.name == "runs") == (kind == "runs") and path.name != "modules.json"]


def _findings(change):
    return lambda entry: {**entry, "findings": change(entry["findings"])}


@pytest.mark.parametrize("damage", [
    _findings(lambda items: [{**items[0], "range": "abcd"}]),
    _findings(lambda items: [{**items[0], "cell": "1"}]),
    _findings(lambda items: [{**items[0], "fix": {"title": 7, "edits": []}}]),
    _findings(lambda items: [{**items[0], "fix": {"title": "t", "edits": [{"cell": None, "range": [0, 0, 0], "text": ""}]}}]),
    _findings(lambda items: [{**items[0], "related": [["x.py", "1", "m"]]}]),
    _findings(lambda items: [3]),
    lambda entry: {**entry, "reads": {"x.py": "big"}},
    lambda entry: entry["findings"],  # the shape of an older version
    lambda entry: {"code": "TPL101"},
])
def test_wrong_shaped_entries_are_misses_and_rewritten(cli, project, damage):
    reference = check(cli, project)
    assert reference[1]
    for entry in entries(project, "files"):
        entry.write_text(json.dumps(damage(json.loads(entry.read_text()))))
    for entry in entries(project, "runs"):
        entry.write_text(json.dumps({"stdout": 5, "stderr": [], "status": "1"}))
    assert check(cli, project) == reference
    stored = [json.loads(entry.read_text()) for entry in entries(project, "files") + entries(project, "runs")]
    assert [type(item) for item in stored] == [dict, dict]  # rewritten by the real run
    assert all(type(value) is int for value in stored[0]["findings"][0]["range"]) and type(stored[1]["stdout"]) is str
    assert check(cli, project) == reference


@pytest.mark.parametrize("damage", [
    lambda entries: {path: [entry[0], entry[1], entry[2], [True, "x", [], []]] for path, entry in entries.items()},
    lambda entries: {path: [entry[0], entry[1], entry[2], [True, False, [["a"]], []]] for path, entry in entries.items()},
    lambda entries: {path: [entry[0], entry[1], entry[2], [True, False, [], [[3]]]] for path, entry in entries.items()},
    lambda entries: {path: [entry[0], entry[1], entry[2]] for path, entry in entries.items()},
    lambda entries: {path: [str(entry[0]), *entry[1:]] for path, entry in entries.items()},
    lambda entries: list(entries),
])
def test_wrong_shaped_module_summaries_are_read_again(cli, project, damage):
    """A module that never names a device asks its importers: the summaries of their text kept in
    the cache folder, damaged, are read again from the files."""
    (project / "pyproject.toml").write_text("")
    (project / "engine.py").write_text("import torch\n\n\ndef train(model, loader, optimizer, device):\n    for x, y in loader:\n"
                                       "        loss = model(x.to(device), y.to(device))\n        loss.backward()\n"
                                       "        optimizer.step()\n        print(loss.item())\n")
    (project / "run.py").write_text("import torch\nfrom engine import train\ntrain(model, loader, optimizer, 'cuda')\n")
    reference = cli("check", "--format", "json", "--select", "TPL203", "engine.py", cwd=project)
    assert json.loads(reference.stdout), reference.stderr
    [kept] = project.glob(".perf-lint-cache/*/*/modules.json")
    kept.write_text(json.dumps(damage(json.loads(kept.read_text()))))
    (project / "engine.py").write_text((project / "engine.py").read_text() + "\n")
    again = cli("check", "--format", "json", "--select", "TPL203", "engine.py", cwd=project)
    assert "Traceback" not in again.stderr and json.loads(again.stdout) == json.loads(reference.stdout)


def test_a_cache_shipped_with_the_repository_is_never_read(cli, project, monkeypatch, tmp_path):
    reference = check(cli, project)
    for entry in entries(project, "files"):  # a cache that hides every finding, as a pull request could commit
        entry.write_text(json.dumps({"findings": [], "reads": {}}))
    for entry in entries(project, "runs"):
        entry.write_text(json.dumps({"stdout": "[]", "stderr": "", "status": 0, "reads": {}}))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ci-machine"))
    assert check(cli, project) == reference
    key = tmp_path / "ci-machine" / "perf-lint" / "key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_text()) == 64
    key.write_text("damaged")
    assert check(cli, project) == reference
    assert len(key.read_text()) == 64 and key.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("link", [".perf-lint-cache", f".perf-lint-cache/{__version__}"])
def test_a_linked_cache_folder_is_not_used(cli, project, link):
    outside = project.parent / "outside"
    (project / link).parent.mkdir(exist_ok=True)
    (project / link).symlink_to(outside)
    reference = check(cli, project, "--no-cache")
    for _ in range(2):
        status, findings, stderr = check(cli, project)
        assert (status, findings) == reference[:2]
        assert stderr.count(f"perf-lint: warning: {link} is a symbolic link: not using the cache") == 1
    assert list(outside.iterdir()) == []


def test_a_link_planted_as_the_cache_gitignore_is_not_written_through(cli, project):
    outside = project.parent / "outside"
    (project / ".perf-lint-cache").mkdir()
    (project / ".perf-lint-cache" / ".gitignore").symlink_to(outside / "planted")
    reference = check(cli, project, "--no-cache")
    assert check(cli, project)[:2] == reference[:2]
    assert entries(project, "files") and not (outside / "planted").exists()


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="perf-lint profile needs torch")
@pytest.mark.parametrize("link", [".perf-lint", ".perf-lint/traces"])
def test_profile_refuses_a_linked_traces_folder(cli, project, link):
    outside = project.parent / "outside"
    (project / link).parent.mkdir(exist_ok=True)
    (project / link).symlink_to(outside)
    (project / "train.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(images_on_disk(), batch_size=8)\n"  # a dataset whose cost is not known: TPL101
        "for (x,) in loader:\n    x.sum()\n"
    )
    done = cli("profile", "train.py", "--line", "3", "--steps", "1,1,2", "--repeats", "1", cwd=project)
    assert done.returncode == 2
    assert done.stderr.count(f"{project / link} is a symbolic link: not writing through it") == 1, done.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("target", ["absolute", "relative"])
def test_fix_does_not_follow_a_link_out_of_the_project(cli, project, target):
    victim = project.parent / "outside" / "x.py"
    victim.write_text(LOADER)
    (project / "x.py").symlink_to(victim if target == "absolute" else "../outside/x.py")
    (project / "node_modules").mkdir()  # not walked: fixed only through the link
    (project / "node_modules" / "real.py").write_text(LOADER)
    (project / "pkg").mkdir()
    (project / "pkg" / "inside.py").symlink_to("../node_modules/real.py")  # a link within the project is followed
    done = cli("check", "--fix", "--select", "TPL1", cwd=project)
    assert done.returncode == 2
    assert f"x.py: error: not fixed: it is a symbolic link to {victim}, outside the project" in done.stderr
    assert victim.read_text() == LOADER and os.listdir(victim.parent) == ["x.py"]
    assert "pkg/inside.py: fixed 1 finding" in done.stderr and (project / "pkg" / "inside.py").is_symlink()
    assert "num_workers=" in (project / "node_modules" / "real.py").read_text()


WRITER = """\
import sys
with open(sys.argv[1], "w") as handle:  # one write in two parts, with a pause between
    handle.write(sys.argv[2])
    handle.flush()
    print("first part written", flush=True)
    sys.stdin.readline()
    handle.write(sys.argv[3])
"""


def leases_here(path) -> bool:
    with open(path, "rb") as handle:
        try:
            import fcntl

            fcntl.fcntl(handle.fileno(), fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except (ImportError, AttributeError, OSError):
            return False
    return True


@timeout(300)
def test_fix_never_replaces_a_file_another_process_is_writing(cli, project):
    """--fix runs entirely in the writer's pause, when the file holds a fixable first part:
    without the lease it would rename over the file and the writer's tail would be lost."""
    if not leases_here(project / "train.py"):
        pytest.skip("no file leases here (not Linux, or a filesystem without them)")
    path = project / "train.py"
    for round in range(5):
        tail = f"# tail {round}\n"
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), LOADER, tail],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout.readline() == "first part written\n"
            done = cli("check", "--fix", "--select", "TPL1", cwd=project)
            writer.communicate("\n", timeout=60)
        finally:
            writer.kill()
        assert path.read_text() == LOADER + tail  # the writer's result, whole
        assert done.returncode == 2
        assert "train.py: error: not fixed: another process has the file open for writing" in done.stderr
    done = cli("check", "--fix", "--select", "TPL1", cwd=project)  # the writer is gone: fixed
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert "num_workers=" in text and text.endswith(tail)
