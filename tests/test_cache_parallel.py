"""`perf-lint check` gives identical findings with and without the cache, serial and parallel,
and the cache misses when a file, the configuration or the rule set changes."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(cwd, *args) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "perf_lint", "check", "--format", "json", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def make_project(tmp_path: pathlib.Path, copies: int = 20) -> pathlib.Path:
    for i in range(copies):
        folder = tmp_path / f"pkg{i}"
        shutil.copytree(ROOT / "examples", folder)
        train = folder / "train.py"
        train.write_text(train.read_text().replace("num_workers=args.workers", f"num_workers={i % 3}"))
    return tmp_path


def test_cache_and_parallelism_do_not_change_findings(tmp_path):
    project = make_project(tmp_path)
    reference = run(project, "--no-cache", "--jobs", "1")
    assert len({item["path"] for item in reference}) >= 40
    assert not (project / ".perf-lint-cache").exists()
    assert run(project, "--jobs", "2") == reference  # cold cache, parallel
    assert (project / ".perf-lint-cache").is_dir()
    assert run(project, "--jobs", "1") == reference  # warm cache, serial
    assert run(project, "--jobs", "2") == reference  # warm cache, parallel


def test_cache_misses_on_changed_file_config_and_selection(tmp_path):
    project = make_project(tmp_path, copies=1)
    def tpl101_in_train(items):
        return any(item["code"] == "TPL101" and item["path"].endswith("pkg0/train.py") for item in items)

    assert tpl101_in_train(run(project))
    train = project / "pkg0" / "train.py"
    train.write_text(train.read_text().replace("num_workers=0", "num_workers=2"))
    assert not tpl101_in_train(run(project))
    train.write_text(train.read_text().replace("num_workers=2", "num_workers=0"))
    (project / "pyproject.toml").write_text('[tool.perf-lint]\nignore = ["TPL101"]\n')
    assert not any(item["code"] == "TPL101" for item in run(project))
    (project / "pyproject.toml").write_text('[tool.perf-lint.TPL101]\nnum-workers = 7\n')
    assert any("num_workers=7" in item["message"] for item in run(project))
    assert {item["code"] for item in run(project, "--select", "TPL2")} <= {"TPL201", "TPL202", "TPL203", "TPL204", "TPL205"}


def test_damaged_cache_entries_are_misses(tmp_path):
    project = make_project(tmp_path, copies=1)
    reference = run(project)
    for entry in (project / ".perf-lint-cache").rglob("*.json"):
        entry.write_text("{not json")
    assert run(project) == reference


def test_unchanged_rerun_is_replayed_without_the_analyzer(tmp_path):
    project = make_project(tmp_path, copies=2)
    args = ["check", "--format", "json", "."]
    first = subprocess.run([sys.executable, "-m", "perf_lint", *args], cwd=project, capture_output=True, text=True, timeout=300)
    probe = ("import sys, runpy; sys.argv = ['perf-lint', *sys.argv[1:]]\n"
             "from perf_lint.cli.main import main\ncode = main()\n"
             "sys.stderr.write('LIBCST=%s' % ('libcst' in sys.modules)); sys.exit(code)")
    again = subprocess.run([sys.executable, "-c", probe, *args], cwd=project, capture_output=True, text=True, timeout=300)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert again.stderr.endswith("LIBCST=False")
    train = project / "pkg1" / "train.py"
    train.write_text(train.read_text() + "\n# edited\n")
    edited = subprocess.run([sys.executable, "-c", probe, *args], cwd=project, capture_output=True, text=True, timeout=300)
    assert edited.stderr.endswith("LIBCST=True")  # a change is a miss: analyzed for real
    assert json.loads(edited.stdout) == json.loads(first.stdout)
    (project / "pyproject.toml").write_text('[tool.perf-lint]\nignore = ["TPL1"]\n')
    configured = run(project)
    assert configured and not any(item["code"].startswith("TPL1") for item in configured)


def test_the_same_bytes_in_another_folder_are_analysed_there(tmp_path):
    """A course's lectures each carry a copy of `helper_data.py`: the copies are byte for byte the
    same, and each one's loaders are used by the training helper of its own folder. A copy's
    findings name its own folder's helper, whether another copy's were cached or not."""
    data = ("from torch.utils.data import DataLoader\nfrom torchvision import datasets, transforms\n\n\n"
            "def loaders():\n    dataset = datasets.MNIST('data', train=True, transform=transforms.ToTensor())\n"
            "    return DataLoader(dataset, batch_size=64, num_workers=4, shuffle=True)\n")
    for lecture, pad in (("L10", 0), ("L11", 3)):
        folder = tmp_path / lecture
        folder.mkdir()
        (folder / "helper_data.py").write_text(data)
        (folder / "train.py").write_text(
            "import torch\nfrom helper_data import loaders\n" + "\n" * pad +
            "model = torch.nn.Linear(4, 2).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "train_loader = loaders()\nfor epoch in range(10):\n    for x, y in train_loader:\n        x = x.cuda()\n"
            "        opt.zero_grad()\n        model(x).sum().backward()\n        opt.step()\n")

    def moves(items):
        return sorted((item["path"], related["path"].rsplit("/", 2)[-2], related["line"]) for item in items
                      if item["code"] == "TPL102" for related in item["related"])

    expected = [("L10/helper_data.py", "L10", 8), ("L11/helper_data.py", "L11", 11)]
    assert moves(run(tmp_path, "--no-cache")) == expected
    assert moves(run(tmp_path, "--jobs", "1")) == expected  # cold: one copy's entry is written before the other is read
    assert moves(run(tmp_path, "--jobs", "1")) == expected  # warm
