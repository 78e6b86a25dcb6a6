"""How far the project model follows a value: code nothing runs (a sampler's loop no caller
picks, a method no file names), helpers called in a loop, objects a factory function makes,
loaders wrapped in a class the training script iterates, methods the project picks by name."""

from __future__ import annotations

import textwrap

from perf_lint.analyzers import analyze, read_source
from perf_lint.analyzers.importers import forget
from tests.test_project import UTILS


def write(folder, files: dict[str, str]) -> None:
    (folder / "pyproject.toml").write_text("")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text))


def lines(path, code: str) -> list[int]:
    return [f.range.start_line + 1 for f in analyze(read_source(str(path))) if f.code == code]


DIFFUSION = """
    import torch

    class GaussianDiffusion:
        def p_sample_loop(self, model, shape):
            x = torch.randn(*shape, device="cuda")
            for i in range(1000):
                t = torch.tensor([i] * shape[0]).cuda()
                x = model(x, t)
            return x

        def ddim_sample_loop_progressive(self, model, shape):
            x = torch.randn(*shape, device="cuda")
            for i in range(50):
                t = torch.tensor([i] * shape[0]).cuda()
                x = model(x, t)
                yield x

        def ddim_sample_loop(self, model, shape):
            for x in self.ddim_sample_loop_progressive(model, shape):
                final = x
            return final
"""


def test_a_loop_only_code_nothing_runs_calls_is_silent(tmp_path):
    write(tmp_path, {"diffusion.py": DIFFUSION, "sample.py": """
        from diffusion import GaussianDiffusion
        samples = GaussianDiffusion().p_sample_loop(model, (4, 3, 32, 32))
    """})
    assert lines(tmp_path / "diffusion.py", "TPL501") == [8]  # (not the DDIM loop: only `ddim_sample_loop` calls it)
    (tmp_path / "sample.py").write_text(textwrap.dedent("""
        from diffusion import GaussianDiffusion
        samples = GaussianDiffusion().ddim_sample_loop(model, (4, 3, 32, 32))
    """))
    forget()
    assert lines(tmp_path / "diffusion.py", "TPL501") == [15]


def test_a_method_named_in_a_file_that_does_not_import_it_may_run(tmp_path):
    # eval.py unpickles the model (torch.load) and calls `detect_objects`: nothing imports
    # model.py there, yet the method runs; with no file naming it, it never does
    model = """
        import torch
        from torch import nn

        class SSD(nn.Module):
            def detect_objects(self, scores):
                kept = []
                for c in range(scores.size(1)):
                    kept.append(torch.zeros(scores.size(0)).to("cuda"))
                return kept
    """
    write(tmp_path, {"model.py": model, "train.py": "from model import SSD\nmodel = SSD().cuda()\n",
                     "eval.py": "import torch\nmodel = torch.load('ssd.pt')\nfor s in scores:\n    model.detect_objects(s)\n"})
    assert lines(tmp_path / "model.py", "TPL501") == [9]
    (tmp_path / "eval.py").write_text("import torch\nmodel = torch.load('ssd.pt')\n")
    forget()
    assert lines(tmp_path / "model.py", "TPL501") == []


def test_a_helper_called_in_each_iteration_of_a_loop(tmp_path):
    source = """
        import torch
        from torch import nn

        def mask_by_order(n, order, bsz, seq_len):
            masking = torch.zeros(bsz, seq_len).cuda()
            return torch.scatter(masking, -1, order[:, :n], 1.0)

        def accumulators(n):
            total = torch.zeros(n).cuda()
            for batch in range(n):
                total += batch
            return total

        class MAR(nn.Module):
            def sample_tokens(self, bsz, num_iter=64):
                orders = torch.rand(bsz, 256, device="cuda").argsort(-1)
                for step in range(num_iter):
                    mask = mask_by_order(step, orders, bsz, 256)
                for step in range(num_iter):
                    sums = accumulators(bsz)
                return mask, sums
    """
    write(tmp_path, {"mar.py": source})
    assert lines(tmp_path / "mar.py", "TPL501") == [6]  # (not `accumulators`' tensor: its own loop amortizes it)


def test_a_factory_functions_object_and_the_method_its_method_calls(tmp_path):
    # SiT: `transport = create_transport(...)` in train.py, `transport.training_losses(...)` every
    # step, which calls `self.sample(x1)`, drawing `t` on the CPU
    write(tmp_path, {
        "transport/transport.py": """
            import torch as th

            class Transport:
                def sample(self, x1):
                    t = th.rand((x1.shape[0],))
                    t = t.to(x1)
                    return t

                def training_losses(self, model, x1):
                    t = self.sample(x1)
                    return ((model(x1, t) - x1) ** 2).mean()
        """,
        "transport/__init__.py": """
            from .transport import Transport

            def create_transport(kind="Linear"):
                state = Transport()
                return state
        """,
        "train.py": """
            import torch
            from transport import create_transport

            transport = create_transport()
            for x in loader:
                loss = transport.training_losses(model, x.to("cuda"))
                loss.backward()
                opt.step()
        """,
    })
    found = [f for f in analyze(read_source(str(tmp_path / "transport/transport.py"))) if f.code == "TPL501"]
    assert [f.range.start_line + 1 for f in found] == [7]
    assert "called by `Transport.training_losses` on every training step (train.py:7)" in found[0].message


def test_a_wrapped_loader_the_training_script_iterates(tmp_path):
    # the pix2pix family: `create_dataset(opt)` returns a wrapper whose `__iter__` runs the
    # DataLoader; `model = create_model(opt)` picks a model class by name, whose `set_input`
    # moves the batch to the device its base class picks
    write(tmp_path, {
        "data/__init__.py": """
            import torch.utils.data

            def create_dataset(opt):
                data_loader = CustomDatasetDataLoader(opt)
                dataset = data_loader.load_data()
                return dataset

            class CustomDatasetDataLoader():
                def __init__(self, opt):
                    self.dataset = make_dataset(opt)
                    self.dataloader = torch.utils.data.DataLoader(self.dataset, batch_size=4, num_workers=4)

                def load_data(self):
                    return self

                def __iter__(self):
                    for i, data in enumerate(self.dataloader):
                        yield data
        """,
        "models/base_model.py": """
            import torch

            class BaseModel:
                def __init__(self, opt):
                    self.device = torch.device("cuda:0")

                def set_input(self, input):
                    pass

                def optimize_parameters(self):
                    raise NotImplementedError
        """,
        "models/gan_model.py": """
            from .base_model import BaseModel

            class GANModel(BaseModel):
                def set_input(self, input):
                    self.real = input["A"].to(self.device)

                def optimize_parameters(self):
                    loss = self.net(self.real).mean()
                    loss.backward()
                    self.optimizer.step()
        """,
        "models/__init__.py": """
            import importlib

            def create_model(opt):
                return importlib.import_module("models." + opt.model + "_model").Model(opt)
        """,
        "train.py": """
            from data import create_dataset
            from models import create_model

            dataset = create_dataset(opt)
            model = create_model(opt)
            for epoch in range(200):
                for i, data in enumerate(dataset):
                    model.set_input(data)
                    model.optimize_parameters()
        """,
    })
    found = {f.code: f.message for f in analyze(read_source(str(tmp_path / "data/__init__.py")))}
    assert "(`input['A'].to(self.device)`, models/gan_model.py:6)" in found["TPL102"]
    assert "(`enumerate(dataset)`, train.py:8)" in found["TPL104"]
    # CUT's wrapper tells its dataset the epoch: persistent workers would keep a stale copy
    data = (tmp_path / "data/__init__.py").read_text()
    (tmp_path / "data/__init__.py").write_text(data + "\n    def set_epoch(self, epoch):\n        self.dataset.current_epoch = epoch\n")
    forget()
    assert sorted(f.code for f in analyze(read_source(str(tmp_path / "data/__init__.py")))) == ["TPL102"]


def test_a_mask_a_function_of_another_file_returns(tmp_path):
    write(tmp_path, {
        "box_utils.py": """
            def hard_negative_mining(loss, labels, neg_pos_ratio):
                pos_mask = labels > 0
                num_neg = pos_mask.long().sum(dim=1, keepdim=True) * neg_pos_ratio
                _, orders = loss.sort(dim=1, descending=True)[1].sort(dim=1)
                neg_mask = orders < num_neg
                return pos_mask | neg_mask
        """,
        "loss.py": """
            import torch
            import torch.nn.functional as F
            from box_utils import hard_negative_mining

            class MultiBoxLoss(torch.nn.Module):
                def forward(self, confidence, labels):
                    with torch.no_grad():
                        loss = -F.log_softmax(confidence, dim=2)[:, :, 0]
                        mask = hard_negative_mining(loss, labels, 3)
                    return F.cross_entropy(confidence[mask, :], labels[mask], reduction="sum")
        """,
        "train.py": """
            import torch
            from loss import MultiBoxLoss

            criterion = MultiBoxLoss()
            for images, labels in loader:
                loss = criterion(model(images.cuda()), labels.cuda())
                loss.backward()
                optimizer.step()
        """,
    })
    assert lines(tmp_path / "loss.py", "TPL203") == [11]


def test_noise_a_helper_object_draws_with_numpy(tmp_path):
    source = """
        import numpy as np
        import torch

        device = torch.device("cuda")

        class GaussianNoise:
            def __init__(self, dim, sigma=0.1):
                self.dim, self.sigma = dim, sigma

            def sample(self):
                return np.random.normal(0.0, self.sigma, size=self.dim)

        class Agent:
            def __init__(self, actor, optimizer):
                self.actor, self.optimizer = actor, optimizer
                self.noise = GaussianNoise(4)
                self.buffer = ReplayBuffer()

            def update(self, states):
                noise = torch.FloatTensor(self.noise.sample()).to(device)
                batch = torch.FloatTensor(self.buffer.sample()).to(device)
                loss = (self.actor(states) + noise + batch).sum()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
    """
    write(tmp_path, {"td3.py": source})
    assert lines(tmp_path / "td3.py", "TPL501") == [21]  # (not the replay buffer's data)


def test_workers_of_a_loader_whose_dataset_is_only_read(tmp_path):
    source = """
        import torch
        from torch.utils.data import DataLoader

        def validate(model, loader):
            with torch.no_grad():
                for images, labels in loader:
                    preds = model(images.cuda()).argmax(1)
                    shown = loader.dataset.decode_target(preds.cpu().numpy())

        train_loader = DataLoader(train_dst, batch_size=16, num_workers=2)
        val_loader = DataLoader(val_dst, batch_size=16, num_workers=2)
        while True:
            for images, labels in train_loader:
                loss = model(images.cuda()).sum()
                loss.backward()
                optimizer.step()
                target = train_dst.decode_target(labels.numpy())
            validate(model, val_loader)
    """
    write(tmp_path, {"main.py": source})
    assert lines(tmp_path / "main.py", "TPL104") == [11, 12]


def test_cpu_tensors_through_names_and_numbers(tmp_path):
    # a mask drawn on the CPU and moved reshaped; a distribution re-indexed by a Python range; a
    # NumPy-rounded host number
    source = """
        import math
        import numpy as np
        import torch
        from torch import nn

        class Model(nn.Module):
            def forward(self, x, action):
                drop = torch.rand(x.size(0)) < 0.1
                drop = drop.unsqueeze(-1).cuda().to(x.dtype)
                dist = self.head(x)
                dist = dist[range(x.size(0)), action]
                ratio = np.cos(math.pi / 2.0 * self.step / self.total)
                count = torch.Tensor([np.floor(self.seq_len * ratio)]).cuda()
                return x * drop, dist, count
    """
    write(tmp_path, {"model.py": source})
    assert lines(tmp_path / "model.py", "TPL501") == [10, 12, 14]


def test_losses_summed_from_a_dict_a_local_function_may_give_back(tmp_path):
    # maskrcnn-benchmark's loop (SSD, FCOS): `reduce_loss_dict` returns its argument on one
    # process, and the logger's `update` reads every loss on the host
    write(tmp_path, {
        "metric_logger.py": UTILS,
        "trainer.py": """
            import torch
            import torch.distributed as dist
            from metric_logger import MetricLogger

            def reduce_loss_dict(loss_dict):
                if dist.get_world_size() < 2:
                    return loss_dict
                with torch.no_grad():
                    names = sorted(loss_dict.keys())
                    stacked = torch.stack([loss_dict[k] for k in names])
                    dist.reduce(stacked, dst=0)
                    return {k: v for k, v in zip(names, stacked)}

            def do_train(model, data_loader, optimizer):
                meters = MetricLogger()
                for images, targets in data_loader:
                    loss_dict = model(images.to("cuda"), targets=targets.to("cuda"))
                    loss = sum(loss for loss in loss_dict.values())
                    loss_dict_reduced = reduce_loss_dict(loss_dict)
                    losses_reduced = sum(loss for loss in loss_dict_reduced.values())
                    meters.update(total_loss=losses_reduced)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
        """,
    })
    assert lines(tmp_path / "trainer.py", "TPL203") == [22]


def test_a_loss_module_a_trainer_object_runs_every_step(tmp_path):
    """EDSR's layout: main.py makes the loss (a subclass of `nn.modules.loss._Loss`) and a
    `Trainer` whose `train` steps; the loss's `.item()` in `forward` runs every step."""
    write(tmp_path, {"loss/__init__.py": """
        import torch
        import torch.nn as nn

        class Loss(nn.modules.loss._Loss):
            def __init__(self, args):
                super().__init__()
                device = torch.device("cpu" if args.cpu else "cuda")
                self.l1 = nn.L1Loss().to(device)
                self.log = torch.zeros(1, 1)

            def forward(self, sr, hr):
                loss = self.l1(sr, hr)
                self.log[-1, 0] += loss.item()
                return loss
    """, "trainer.py": """
        class Trainer:
            def __init__(self, args, loader, model, loss):
                self.loader, self.model, self.loss = loader, model, loss

            def train(self):
                for lr, hr in self.loader:
                    loss = self.loss(self.model(lr.cuda()), hr.cuda())
                    loss.backward()
                    self.optimizer.step()
    """, "main.py": """
        import loss
        from trainer import Trainer
        t = Trainer(args, loader, model, loss.Loss(args))
        while not t.terminate():
            t.train()
    """})
    assert lines(tmp_path / "loss/__init__.py", "TPL203") == [14]


def test_options_a_method_of_another_file_adds(tmp_path):
    """Uformer: `opt = options.Options().init(argparse.ArgumentParser()).parse_args()`, the
    workers' default in options.py; the loop that steps through timm's `loss_scaler(loss,
    optimizer)` after a first validation under `model.eval()` trains, it does not evaluate."""
    write(tmp_path, {"options.py": """
        class Options:
            def init(self, parser):
                parser.add_argument("--train_workers", type=int, default=4)
                return parser
    """, "train.py": """
        import argparse
        import options
        import torch
        from torch.utils.data import DataLoader
        from timm.utils import NativeScaler
        opt = options.Options().init(argparse.ArgumentParser()).parse_args()
        loader = DataLoader(dataset, batch_size=8, num_workers=opt.train_workers, pin_memory=True)
        model = Net().cuda()
        with torch.no_grad():
            model.eval()
            for x in loader:
                model(x.cuda())
        loss_scaler = NativeScaler()
        for epoch in range(10):
            for x in loader:
                loss = model(x.cuda()).mean()
                loss_scaler(loss, optimizer, parameters=model.parameters())
    """})
    assert [f.code for f in analyze(read_source(str(tmp_path / "train.py")))] == ["TPL104"]


def test_an_evaluation_script_and_a_test_folder_of_scripts(tmp_path):
    """vdsr's eval.py runs its images through the model with autograd on (a top-level loop of a
    script named for evaluation that trains nowhere); Uformer's `test/` holds evaluation
    scripts, not a test suite, so they are checked."""
    script = """
        import glob
        import torch
        from torch.autograd import Variable
        model = torch.load("model.pth")["model"].cuda()
        for name in glob.glob("images/*.mat"):
            x = Variable(torch.from_numpy(load(name)).float()).cuda()
            out = model(x)
            save(out.cpu())
    """
    write(tmp_path, {"eval.py": script, "test/test_dnd.py": script, "train.py": script})
    assert lines(tmp_path / "eval.py", "TPL502") == [8]
    assert lines(tmp_path / "test/test_dnd.py", "TPL502") == [8]
    assert lines(tmp_path / "train.py", "TPL502") == []  # (not named for evaluation)


def test_an_evaluation_notebook(tmp_path):
    """Transformers-Tutorials' `Evaluating_DETR_on_COCO_validation_2017.ipynb`: a notebook named for
    evaluation that trains nowhere runs its test set through the model with autograd on; the same
    cells in a notebook named otherwise, or in one that also trains, are left alone."""
    import json

    cells = ["import torch\nmodel = Detr.from_pretrained('facebook/detr-resnet-50')\n",
             "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel.to(device)\n"
             "for batch in test_dataloader:\n    outputs = model(pixel_values=batch['pixel_values'].to(device))\n"
             "    evaluator.update(post_process(outputs))\n"]
    trains = cells + ["for batch in train_dataloader:\n    model(**batch).loss.backward()\n    optimizer.step()\n"]

    def notebook(name: str, sources: list[str]):
        path = tmp_path / name
        path.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                               "source": source} for source in sources],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        return [f.code for f in analyze(read_source(str(path)))]

    assert "TPL502" in notebook("Evaluating_DETR_on_COCO_validation_2017.ipynb", cells)
    assert "TPL502" not in notebook("Fine_tune_DETR.ipynb", cells)
    assert "TPL502" not in notebook("Evaluating_and_fine_tuning_DETR.ipynb", trains)


def test_workers_a_yaml_config_of_the_project_sets(tmp_path):
    """pytorch-semseg: `num_workers=cfg["training"]["n_workers"]` with `cfg = yaml.load(...)`, and
    the project's configs set `training:` `n_workers: 16`; an unknown key stays unknown."""
    write(tmp_path, {"configs/fcn8s.yml": "training:\n    batch_size: 4\n    n_workers: 16\n", "train.py": """
        import yaml
        from torch.utils import data
        with open(args.config) as fp:
            cfg = yaml.load(fp)
        loader = data.DataLoader(dataset, batch_size=4, pin_memory=True, num_workers=cfg["training"]["n_workers"])
        other = data.DataLoader(dataset, batch_size=4, pin_memory=True, num_workers=cfg["training"]["workers"])
        model = Net().cuda()
        for epoch in range(10):
            for x in loader:
                model(x.cuda()).sum().backward()
            for x in other:
                model(x.cuda()).sum().backward()
    """})
    assert lines(tmp_path / "train.py", "TPL104") == [6]


def test_a_loss_object_five_imports_below_the_training_script(tmp_path):
    """FCOS: `FCOSLossComputation.__call__` (no module: an object its head's forward calls)
    reads a count on the host every step; the GPU is named in train.py, five imports up."""
    write(tmp_path, {"loss.py": """
        import torch

        class FCOSLossComputation:
            def __call__(self, logits, labels):
                pos = torch.nonzero(labels > 0).squeeze(1)
                num_pos = pos.numel() + logits.new_tensor(0.0).sum().item()
                return logits[pos].sum() / num_pos

        class UnusedLossComputation:
            def __call__(self, logits, labels):
                return logits.sum() / labels.sum().item()
    """, "head.py": """
        import torch
        from loss import FCOSLossComputation

        class Head(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.loss_evaluator = FCOSLossComputation()

            def forward(self, x, labels):
                return self.loss_evaluator(self.conv(x), labels)
    """, "rpn.py": "from head import Head\n", "detector.py": "from rpn import Head\n",
        "build.py": "from detector import Head\n", "train.py": """
        from build import Head
        model = Head().to("cuda")
        for x, y in loader:
            model(x.to("cuda"), y.to("cuda")).backward()
            optimizer.step()
    """})
    assert lines(tmp_path / "loss.py", "TPL203") == [7]  # (not the unused class)


def test_a_class_a_yaml_config_names_runs_on_the_gpu_of_the_script_reading_it(tmp_path):
    # latent-diffusion: main.py trains `target: models.ddpm.LatentDiffusion` on GPUs; ddpm.py imports ema.py
    write(tmp_path, {"models/ema.py": """
        import torch
        from torch import nn

        class LitEma(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.register_buffer("num_updates", torch.tensor(0, dtype=torch.int))

            def forward(self, model):
                if self.num_updates >= 0:
                    self.num_updates += 1
    """, "models/ddpm.py": """
        import pytorch_lightning as pl
        from models.ema import LitEma

        class LatentDiffusion(pl.LightningModule):
            def __init__(self, model):
                super().__init__()
                self.model, self.model_ema = model, LitEma(model)

            def on_train_batch_end(self, *args, **kwargs):
                self.model_ema(self.model)
    """, "main.py": """
        import torch
        from omegaconf import OmegaConf
        config = OmegaConf.load("configs/ldm.yaml")
        model = instantiate_from_config(config.model)
        torch.cuda.synchronize()
    """, "configs/ldm.yaml": "model:\n  target: models.ddpm.LatentDiffusion\n"})
    assert lines(tmp_path / "models/ema.py", "TPL203") == [11]
    (tmp_path / "configs/ldm.yaml").write_text("model:\n  target: models.other.Model\n")
    forget()
    assert lines(tmp_path / "models/ema.py", "TPL203") == []  # (no config makes it: where it runs is not known)



def test_a_method_a_base_of_another_file_picks_from_a_table(tmp_path):
    write(tmp_path, {
        "base.py": """
            import torch

            class KGEBase(torch.nn.Module):
                def forward(self, head, tail):
                    score = {"TransE": self.TransE, "DistMult": self.DistMult}
                    return score[self.model_name](head, tail)
            """,
        "model.py": """
            import torch
            from base import KGEBase

            class KGE(KGEBase):
                def __init__(self, gamma):
                    super().__init__()
                    self.model_name = "TransE"
                    self.gamma = torch.nn.Parameter(torch.Tensor([gamma]), requires_grad=False)

                def TransE(self, head, tail):
                    return self.gamma.item() - (head - tail).abs().sum(1)

                def DistMult(self, head, tail):
                    return (head * tail).sum(1)
            """,
        "train.py": """
            import torch
            from model import KGE

            model = KGE(12.0).cuda()
            optimizer = torch.optim.Adam(model.parameters())
            for head, tail in loader:
                model(head.cuda(), tail.cuda()).mean().backward()
                optimizer.step()
            """,
    })
    forget()
    assert lines(tmp_path / "model.py", "TPL203") == [12]


def test_a_prefetching_loader_subclass_of_another_file(tmp_path):
    """YOLOP: `DataLoaderX(DataLoader)`, the prefetch_generator recipe, imported from lib/utils.py
    and iterated every epoch with workers and no persistent_workers."""
    write(tmp_path, {
        "lib/utils.py": """
            from prefetch_generator import BackgroundGenerator
            from torch.utils.data import DataLoader

            class DataLoaderX(DataLoader):
                def __iter__(self):
                    return BackgroundGenerator(super().__iter__())
            """,
        "train.py": """
            from lib.utils import DataLoaderX

            loader = DataLoaderX(dataset, batch_size=24, num_workers=8, pin_memory=True)
            model = Net().cuda()
            for epoch in range(240):
                for x, y in loader:
                    model(x.cuda(non_blocking=True)).sum().backward()
            """,
    })
    forget()
    assert lines(tmp_path / "train.py", "TPL104") == [4]


TRAINER = """
    import torch
    from torch import nn

    class Trainer(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model.cuda()
            self.register_buffer("steps", torch.tensor(0))

        def train_step(self):
            steps = int(self.steps.item())
            loss = self.model(next(self.dl_iter).cuda()).mean()
            loss.backward()
            self.optim.step()
            self.steps.add_(1)

        def train(self):
            for _ in range(self.num_train_steps):
                self.train_step()
"""


def test_a_buffer_of_a_module_the_project_never_moves(tmp_path):
    """audiolm: the step counter of a trainer module is read each step; the notebook moves the
    SoundStream trainer (`.cuda()`), not the semantic one, whose buffer stays on the CPU."""
    write(tmp_path, {"trainer.py": TRAINER, "run.py": """
        from trainer import Trainer
        trainer = Trainer(Net())
        trainer.train()
    """})
    forget()
    assert lines(tmp_path / "trainer.py", "TPL203") == []
    (tmp_path / "run.py").write_text("from trainer import Trainer\ntrainer = Trainer(Net()).cuda()\ntrainer.train()\n")
    forget()
    assert lines(tmp_path / "trainer.py", "TPL203") == [12]
    (tmp_path / "run.py").write_text("from trainer import Trainer\ntrainer = Trainer(Net())\ntrainer = accelerator.prepare(model=trainer)\ntrainer.train()\n")
    forget()
    assert lines(tmp_path / "trainer.py", "TPL203") == [12]  # (handed on: where it goes, it may be moved)
