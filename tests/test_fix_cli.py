"""`perf-lint check --fix` and `--diff`: what is written, what is kept, what is refused."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess

import pytest

from perf_lint.cli import files

LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
PINNING = LOADER + "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n"
BROKEN = "import torch\nx = (\n"


def notebook(*cells: str) -> dict:
    data = [{"cell_type": "markdown", "metadata": {"m": 1}, "source": ["# Title\n", "text"]}]
    data += [
        {"cell_type": "code", "execution_count": i + 1, "metadata": {"tags": ["keep"]},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": [f"out {i}\n"]}],
         "source": text.splitlines(keepends=True)}
        for i, text in enumerate(cells)
    ]
    return {"cells": data, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
            "nbformat": 4, "nbformat_minor": 5}


def leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if "perf-lint-tmp" in name]


def test_fix_round_trip(cli, tmp_path):
    path = tmp_path / "train.py"
    path.write_text(PINNING)
    result = cli("check", "--fix", "--select", "TPL1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "train.py: fixed 3 findings (TPL101 x1, TPL102 x1, TPL103 x1)" in result.stderr
    assert "Found 3 findings (3 fixed, 0 remaining)." in result.stderr
    text = path.read_text()
    ast.parse(text)
    assert "num_workers=" in text and "pin_memory=True" in text and text.endswith("x = x.cuda(non_blocking=True)\n")
    before = path.stat()
    again = cli("check", "--fix", "--select", "TPL1")
    assert again.returncode == 0 and "Found 0 findings (0 fixed, 0 remaining)." in again.stderr
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    checked = cli("check", "--select", "TPL1")
    assert checked.returncode == 0 and checked.stdout == ""
    assert leftovers(tmp_path) == []


def test_fix_reports_what_remains(cli, tmp_path):
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "train.py").write_text(LOADER)
    result = cli("check", "--fix", "--select", "TPL1,TPL000", "--format", "json")
    assert result.returncode == 1
    assert [(d["path"], d["code"]) for d in json.loads(result.stdout)] == [("broken.py", "TPL000")]
    assert "Found 2 findings (1 fixed, 1 remaining)." in result.stderr
    assert (tmp_path / "broken.py").read_text() == BROKEN


def test_nothing_to_fix_writes_nothing(cli, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(BROKEN)
    before = path.stat()
    assert cli("check", "--fix").returncode == 1
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_crlf_stays_crlf(cli, tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(PINNING.replace("\n", "\r\n").encode())
    assert cli("check", "--fix", "--select", "TPL1").returncode == 0
    data = path.read_bytes()
    assert b"pin_memory=True" in data
    assert data.count(b"\r\n") == data.count(b"\n") == PINNING.count("\n")


def test_latin1_with_coding_cookie_keeps_its_encoding(cli, tmp_path):
    path = tmp_path / "train.py"
    original = "# -*- coding: latin-1 -*-\nname = 'café'\n" + LOADER
    path.write_bytes(original.encode("latin-1"))
    assert cli("check", "--fix", "--select", "TPL1").returncode == 0
    data = path.read_bytes()
    assert b"caf\xe9" in data and "é".encode() not in data
    assert "num_workers=" in data.decode("latin-1")


def test_bom_is_kept(cli, tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"\xef\xbb\xbf" + LOADER.encode())
    assert cli("check", "--fix", "--select", "TPL1").returncode == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbffrom torch") and data.count(b"\xef\xbb\xbf") == 1
    assert b"num_workers=" in data


def test_file_mode_is_kept_and_symlinks_stay_links(cli, tmp_path):
    real = tmp_path / "real.py"
    real.write_text(LOADER)
    real.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert cli("check", "--fix", "--select", "TPL1", "link.py").returncode == 0
    assert link.is_symlink() and "num_workers=" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o751


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_owner_is_kept(cli, tmp_path):
    path = tmp_path / "train.py"
    path.write_text(LOADER)
    os.chown(path, 1234, 5678)
    assert cli("check", "--fix", "--select", "TPL1").returncode == 0
    assert "num_workers=" in path.read_text()
    assert (path.stat().st_uid, path.stat().st_gid) == (1234, 5678)


def test_notebook_fix_keeps_outputs_and_metadata(cli, tmp_path):
    path = tmp_path / "nb.ipynb"
    original = notebook("import torch\nx = torch.ones(2)\n", "%time y = 1\n" + PINNING)
    path.write_text(json.dumps(original, indent=1))
    result = cli("check", "--fix", "--select", "TPL1")
    assert result.returncode == 0, result.stderr
    fixed = json.loads(path.read_text())
    assert fixed["metadata"] == original["metadata"] and fixed["nbformat"] == 4
    assert fixed["cells"][:2] == original["cells"][:2]
    for key in ("outputs", "metadata", "execution_count", "cell_type"):
        assert fixed["cells"][2][key] == original["cells"][2][key]
    source = "".join(fixed["cells"][2]["source"])
    assert source.startswith("%time y = 1\n") and "pin_memory=True" in source and "num_workers=" in source
    before = path.read_bytes()
    again = cli("check", "--fix", "--select", "TPL1")
    assert again.returncode == 0 and path.read_bytes() == before


def test_read_only_file_is_an_error_and_untouched(cli, tmp_path):
    locked = tmp_path / "a_locked.py"
    locked.write_text(LOADER)
    locked.chmod(0o444)
    other = tmp_path / "b.py"
    other.write_text(LOADER)
    result = cli("check", "--fix", "--select", "TPL1")
    assert result.returncode == 2
    assert "a_locked.py: error: not fixed: file is read-only" in result.stderr
    assert locked.read_text() == LOADER and stat.S_IMODE(locked.stat().st_mode) == 0o444
    assert "a_locked.py:2:10: TPL101" in result.stdout  # still reported as found
    assert "num_workers=" in other.read_text()
    assert leftovers(tmp_path) == []


@pytest.fixture
def full_disk(tmp_path):
    """A folder on its own 1 MiB tmpfs (needs the right to mount: root here and in CI)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill: {mounted.stderr.strip() or mounted.returncode}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=True)


def test_full_disk_is_an_error_and_the_original_untouched(cli, full_disk):
    path = full_disk / "train.py"
    path.write_text(LOADER)
    with open(full_disk / "filler", "wb", buffering=0) as filler:  # fill the disk to the last byte
        with pytest.raises(OSError, match="No space left"):
            while True:
                filler.write(b"x" * 512)
    result = cli("check", "--fix", "--select", "TPL1", cwd=full_disk)
    assert result.returncode == 2, result.stderr
    assert "train.py: error: not fixed: cannot write: No space left on device" in result.stderr
    assert "train.py:2:10: TPL101" in result.stdout
    assert path.read_text() == LOADER
    assert leftovers(full_disk) == []
    os.remove(full_disk / "filler")
    fixed = cli("check", "--fix", "--select", "TPL1", cwd=full_disk)
    assert fixed.returncode == 0 and "num_workers=" in path.read_text()


def test_write_refuses_a_file_changed_since_it_was_read(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("edited meanwhile\n")
    with pytest.raises(files.WriteError, match="changed on disk"):
        files.write_atomic(str(path), b"fixed\n", expected=LOADER.encode())
    assert path.read_text() == "edited meanwhile\n"
    assert leftovers(tmp_path) == []
    files.write_atomic(str(path), b"fixed\n", expected=b"edited meanwhile\n")
    assert path.read_text() == "fixed\n"


def test_diff_shows_the_fixes_and_writes_nothing(cli, tmp_path):
    path = tmp_path / "train.py"
    path.write_text(PINNING)
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook(LOADER, "model = Net().cuda()\nfor x in loader:\n    model(x)\n")))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = cli("check", "--diff", "--select", "TPL1")
    assert result.returncode == 1, result.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    out = result.stdout
    assert out.startswith("--- nb.ipynb:cell 2\n+++ nb.ipynb:cell 2\n@@ ")
    assert "--- train.py\n+++ train.py\n" in out
    assert "-loader = DataLoader(ds, batch_size=64)\n" in out
    added = [line for line in out.splitlines() if line.startswith("+loader")]
    assert len(added) == 2 and all("num_workers=" in line for line in added)
    assert "Would fix 4 findings in 2 files." in result.stderr
    # applying it gives what --diff showed
    assert cli("check", "--fix", "--select", "TPL1").returncode == 0
    assert added[-1][1:] + "\n" in path.read_text()
    clean = cli("check", "--diff", "--select", "TPL1")
    assert (clean.returncode, clean.stdout) == (0, "")


def test_the_fixed_example_still_runs_on_a_cpu_only_torch(cli, tmp_path):
    """A fix is safe only if the program still runs where it ran: examples/train.py runs on a
    CPU, and so must its fixed version (the synchronize a fix inserts is a no-op without CUDA)."""
    import shutil
    import sys
    from pathlib import Path

    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("checks a CPU-only torch")
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "train.py", tmp_path / "train.py")
    result = cli("check", "--no-cache", "--fix", "train.py")
    assert "TPL201" in result.stderr  # among the fixed ones
    fixed = (tmp_path / "train.py").read_text()
    assert "torch.cuda.synchronize() if torch.cuda.is_available() else None" in fixed
    run = subprocess.run([sys.executable, "train.py", "--epochs", "1", "--batch-size", "16"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
