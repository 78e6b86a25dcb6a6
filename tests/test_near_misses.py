"""Real-world shapes around each rule: code that looks like the pitfall but is not, and hits
that need the context (aliases, kwargs dicts, argparse, cells) to be seen."""

from __future__ import annotations

import textwrap

import pytest

from perf_lint.analyzers import Config, analyze, notebook_source, python_source


def codes(code: str, select: tuple[str, ...] | None = None) -> list[str]:
    """The codes reported for `code`: the default rules, or the rules in `select`."""
    config = Config(select=select) if select else None
    return [f.code for f in analyze(python_source(textwrap.dedent(code), "t.py"), config)]


def notebook_codes(*cells: str) -> list[tuple[str, int]]:
    nb = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return [(f.code, f.cell) for f in analyze(notebook_source(nb, "t.ipynb"))]


HITS = {
    "try/except import": """
        try:
            from torch.utils.data import DataLoader
        except ImportError:
            DataLoader = None
        loader = DataLoader(ds, batch_size=2)
    """,
    "torchdata's StatefulDataLoader": """
        from torchdata.stateful_dataloader import StatefulDataLoader
        loader = StatefulDataLoader(ds, batch_size=8)
    """,
    "subclass passing its arguments on": """
        from torch.utils.data import DataLoader
        class FastLoader(DataLoader):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
        loader = FastLoader(ds)
    """,
    "module alias": """
        import torch.utils.data as tud
        loader = tud.DataLoader(ds)
    """,
    "full path": """
        import torch
        loader = torch.utils.data.dataloader.DataLoader(ds)
    """,
    "function-level constant": """
        from torch.utils.data import DataLoader
        def main():
            workers = 0
            return DataLoader(ds, num_workers=workers)
    """,
    "argparse in a function": """
        import argparse
        from torch.utils.data import DataLoader
        def get_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--workers", "-j", type=int, default=0)
            return parser.parse_args()
        args = get_args()
        loader = DataLoader(ds, num_workers=args.workers)
    """,
    "literal dict kwargs": """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, **{"batch_size": 8, "shuffle": True})
    """,
    "parser rebound to its namespace, passed to main": """
        import argparse
        from torch.utils.data import DataLoader
        def get_args_parser():
            parser = argparse.ArgumentParser("pre-training", add_help=False)
            parser.add_argument("--num_workers", default=0, type=int)
            return parser
        def main(args):
            return DataLoader(ds, num_workers=args.num_workers)
        if __name__ == "__main__":
            args = get_args_parser()
            args = args.parse_args()
            main(args)
    """,
}

MISSES = {
    "os.cpu_count": """
        import os
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=os.cpu_count())
    """,
    "config attribute": """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=cfg.data.workers)
    """,
    "reassigned constant": """
        from torch.utils.data import DataLoader
        W = 0
        if fast:
            W = 8
        loader = DataLoader(ds, num_workers=W)
    """,
    "parameter default": """
        from torch.utils.data import DataLoader
        def make(ds, workers=0):
            return DataLoader(ds, num_workers=workers)
    """,
    "kwargs dict sets workers": """
        from torch.utils.data import DataLoader
        kw = {"batch_size": 8, "num_workers": 6}
        loader = DataLoader(ds, **kw)
    """,
    "unknown kwargs": """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, **loader_kwargs)
    """,
    "subclass taking its own arguments": """
        from torch.utils.data import DataLoader
        class FastLoader(DataLoader):
            def __init__(self, ds, shards):
                super().__init__(ds, batch_size=shards * 8, num_workers=shards)
        loader = FastLoader(ds, 0)
    """,
    "subclass iterating its own way (a prefetching thread)": """
        from torch.utils.data import DataLoader
        from prefetch_generator import BackgroundGenerator
        class DataLoaderX(DataLoader):
            def __iter__(self):
                return BackgroundGenerator(super().__iter__())
        loader = DataLoaderX(ds)
    """,
    "iterable dataset": """
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                yield 1
        loader = DataLoader(Stream())
    """,
    "kwargs dict updated later (pytorch/examples mnist)": """
        import torch
        train_kwargs = {"batch_size": 64}
        if use_cuda:
            cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
            train_kwargs.update(cuda_kwargs)
        train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    """,
    "kwargs dict item set later": """
        from torch.utils.data import DataLoader
        kw = dict(batch_size=8)
        kw["num_workers"] = 4
        loader = DataLoader(ds, **kw)
    """,
    "argparse default differs": """
        import argparse
        from torch.utils.data import DataLoader
        p = argparse.ArgumentParser()
        p.add_argument("--workers", type=int, default=0)
        p.add_argument("--workers2", dest="workers", type=int, default=4)
        args = p.parse_args()
        loader = DataLoader(ds, num_workers=args.workers)
    """,
}


@pytest.mark.parametrize("name", HITS)
def test_tpl101_hits(name):
    assert codes(HITS[name]).count("TPL101") == 1


@pytest.mark.parametrize("name", MISSES)
def test_tpl101_near_misses(name):
    assert "TPL101" not in codes(MISSES[name])


def test_pin_memory_cpu_only_is_silent():
    assert "TPL102" not in codes("""
        from torch.utils.data import DataLoader
        device = "cpu"
        loader = DataLoader(ds, num_workers=2)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
    """)


def test_pin_memory_unknown_device_without_cuda_evidence_is_silent():
    assert "TPL102" not in codes("""
        from torch.utils.data import DataLoader
        def train(loader, device):
            for x, y in loader:
                x = x.to(device)
        train(DataLoader(ds, num_workers=2), dev)
    """)


def test_a_notebook_that_only_prints_its_cuda_device_runs_on_the_cpu():
    setup = 'import torch\ndevice = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\nprint(f"Using device: {device}")'
    training = """
for epoch in range(100):
    for x, y in loader:
        loss = model(x).sub(y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
"""
    assert notebook_codes(setup, training) == []
    assert notebook_codes(setup, "model = model.to(device)", training) == [("TPL203", 2)]
    assert notebook_codes(setup, "x = torch.ones(2).cuda()", training) == [("TPL203", 2)]


def test_pin_memory_device_parameter_in_cuda_code_hits():
    found = codes("""
        import torch
        from torch.utils.data import DataLoader
        def train(model, loader, device):
            for batch in loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                model(**batch)
        if torch.cuda.is_available():
            train(model, DataLoader(ds, num_workers=2), torch.device("cuda"))
    """)
    assert found.count("TPL102") == 1


def test_pin_memory_dtype_cast_is_not_a_move():
    assert "TPL102" not in codes("""
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=2)
        x0 = torch.zeros(1).cuda()
        for x, y in loader:
            x = x.to(torch.float16)
            y = y.to(dtype=torch.long)
    """)


def test_non_blocking_on_unrelated_tensor_is_silent():
    assert "TPL103" not in codes("""
        import torch
        weights = torch.load("w.pt")
        for w in weights:
            w = w.cuda(non_blocking=True)
    """)


def test_timing_after_item_is_silent():
    assert "TPL201" not in codes("""
        import time, torch
        model = Net().cuda()
        start = time.perf_counter()
        for x, y in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            total = loss.item()
        print(time.perf_counter() - start)
    """)


def test_timing_in_cpu_only_code_is_silent():
    assert "TPL201" not in codes("""
        import time, torch
        model = Net()
        start = time.time()
        out = model(torch.randn(4, 3))
        print(time.time() - start)
    """)


def test_timestamp_without_interval_is_silent():
    assert "TPL201" not in codes("""
        import time, torch
        x = torch.ones(3).cuda()
        stamp = time.time()
        y = x * 2
        log(stamp, time.time())
    """)


def test_cuda_events_are_silent():
    assert "TPL201" not in codes("""
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y = model(x.cuda())
        end.record()
        torch.cuda.synchronize()
        print(start.elapsed_time(end))
    """)


def test_stream_synchronize_counts():
    assert "TPL201" not in codes("""
        import time, torch
        x = torch.ones(3).cuda()
        t0 = time.time()
        y = x @ x
        torch.cuda.current_stream().synchronize()
        print(time.time() - t0)
    """)


def test_timing_helper_function_work_hits():
    assert codes("""
        import time, torch
        def step(x):
            return torch.mm(x, x)
        x = torch.ones(8, 8, device="cuda")
        t0 = time.monotonic()
        step(x)
        dt = time.monotonic() - t0
        print(dt)
    """).count("TPL201") == 1


def test_notebook_names_flow_across_cells():
    found = notebook_codes(
        "import torch\nfrom torch.utils.data import DataLoader as DL",
        "%matplotlib inline\nloader = DL(ds)",
        "!nvidia-smi\nfor x, y in loader:\n    x = x.cuda()",
    )
    assert ("TPL101", 1) in found and ("TPL102", 1) in found


def test_notebook_cpu_cell_magic_is_silent():
    assert notebook_codes("import torch\nx = torch.ones(3).cuda()", "%%time\nrows = open('f').read()") == []


def test_notebook_bash_cell_is_not_python():
    assert notebook_codes("import torch", "%%bash\nfor i in 1 2; do echo $i; done") == []


def test_compile_of_ema_copy_is_silent():  # (TPL301 is off by default)
    assert "TPL301" not in codes(select=("TPL301",), code="""
        import copy, torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = Net()
        ema = copy.deepcopy(model)
        ema = torch.compile(ema)
        model = DDP(model, device_ids=[0])
    """)


def test_compile_in_other_function_scope_is_silent():
    assert "TPL301" not in codes(select=("TPL301",), code="""
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def make():
            model = torch.compile(Net())
            return model
        def wrap(model):
            return DDP(model)
    """)


def test_cudnn_benchmark_without_profiler_is_silent():
    assert "TPL401" not in codes("""
        import torch
        torch.backends.cudnn.benchmark = True
        for x in loader:
            model(x)
    """)


def test_no_grad_inside_the_evaluation_loop_is_silent():
    assert "TPL502" not in codes("""
        import torch
        def compute_accuracy(model, dataloader, device):
            model = model.eval()
            for features, labels in dataloader:
                features, labels = features.to(device), labels.to(device)
                with torch.no_grad():
                    logits = model(features)
                correct += (torch.argmax(logits, dim=1) == labels).sum()
            return correct
    """)


def test_evaluation_of_a_frozen_module_is_silent():
    assert "TPL502" not in codes("""
        import torch
        encoder = build_encoder()
        for p in encoder.parameters():
            p.requires_grad_(False)
        encoder.eval()
        for x, y in loader:
            features.append(encoder(x.cuda()))
    """)


def test_timing_work_that_ends_in_a_synchronizing_helper_is_silent():
    assert "TPL201" not in codes("""
        import time, torch
        def calc_loss_loader(loader, model):
            total = 0.0
            for x, y in loader:
                total += torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).item()
            return total
        def train(model, loader, opt):
            for epoch in range(3):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
                val_loss = calc_loss_loader(loader, model)
        start_time = time.time()
        train(model, loader, opt)
        print((time.time() - start_time) / 60)
    """)


def test_timing_a_cpu_matmul_in_a_gpu_notebook_is_silent():
    found = notebook_codes(
        "import time, torch\ndevice = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')",
        "x = torch.zeros(2, 3)\nx = x.to(device)",
        "x = torch.randn(5000, 5000)\nstart_time = time.time()\n_ = torch.matmul(x, x)\nend_time = time.time()\n"
        "print(end_time - start_time)",
    )
    assert "TPL201" not in [code for code, _ in found]


def test_timing_a_gpu_matmul_operator_hits():
    assert codes("""
        import time, torch
        a = torch.randn(4096, 4096, device="cuda")
        t0 = time.perf_counter()
        c = a @ a
        dt = time.perf_counter() - t0
        print(dt)
    """).count("TPL201") == 1


def test_reads_once_per_epoch_after_a_step_function_that_loops_itself_are_silent():
    """`train_step(..., loss_fn=..., optimizer=...)` is passed a loss function and an optimizer,
    but it is a function of the source that loops over the batches itself: the loop calling it
    is an epoch loop (a read there is once per epoch), not a step. Once its body steps without
    a loop of its own, the same read is per step."""
    epoch = """
        import torch
        device = "cuda"
        def train_step(model, dataloader, loss_fn, optimizer):
            total = 0
            for x, y in dataloader:
                loss = loss_fn(model(x.to(device)), y.to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total = total + loss.detach()
            return total / len(dataloader)
        for epoch in range(5):
            train_loss = train_step(model=model, dataloader=dl, loss_fn=loss_fn, optimizer=optimizer)
            history.append(train_loss.item())
    """
    assert "TPL203" not in codes(epoch)
    step = epoch.replace("for x, y in dataloader:", "if True:").replace("for epoch in range(5):", "for batch in dl:")
    assert "TPL203" in codes(step)


def test_a_notebook_loader_that_loads_one_batch_at_most_is_silent():
    """A loader shown at the end of a cell, peeked at with next(iter()) or never iterated
    loads no epoch: TPL101 stays silent; once a loop iterates it, it is reported."""
    made = (
        "from torch.utils.data import DataLoader\n"
        "from torchvision import datasets\n"
        "train_dl = DataLoader(datasets.ImageFolder('train'), batch_size=32)\n"
        "test_dl = DataLoader(datasets.ImageFolder('test'), batch_size=32)\n"
        "train_dl, test_dl\n"
    )
    peek = "model = Net().cuda()\nimg, label = next(iter(train_dl))\nprint(len(test_dl))\n"  # (a GPU notebook)
    assert [code for code, _ in notebook_codes(made, peek) if code == "TPL101"] == []
    loop = "for x, y in train_dl:\n    step(x, y)\n"
    assert notebook_codes(made, peek, loop).count(("TPL101", 0)) == 1


def test_a_loader_a_function_makes_and_never_loads_from_is_silent():
    code = """
        from torch.utils.data import DataLoader
        from torchvision import datasets
        def show():
            loader = DataLoader(datasets.ImageFolder("train"), batch_size=32)
            print(len(loader))
    """
    assert "TPL101" not in codes(code)
    assert "TPL101" in codes(code.replace("print(len(loader))", "for x, y in loader:\n                step(x, y)"))


def test_worker_restarts_in_a_script_that_never_names_a_gpu_are_told_as_the_training_loop_s_wait():
    """TPL104 on the CPU: over image files the finding stays and names the training loop; over
    MNIST's arrays, whose workers load little, it goes (next to a CPU epoch a restart is small)."""
    code = textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader
        from torchvision import datasets
        loader = DataLoader(datasets.ImageFolder("train"), batch_size=32, num_workers=4)
        for epoch in range(10):
            for x, y in loader:
                model(x).sum().backward()
                optimizer.step()
    """)
    (finding,) = [f for f in analyze(python_source(code, "train.py")) if f.code == "TPL104"]
    assert "the training loop waits" in finding.message and "GPU" not in finding.message
    mnist = code.replace('datasets.ImageFolder("train")', 'datasets.MNIST("data")')
    assert [f for f in analyze(python_source(mnist, "train.py")) if f.code == "TPL104"] == []
    (finding,) = [f for f in analyze(python_source(mnist.replace("model(x)", "model(x.cuda())"), "train.py"))
                  if f.code == "TPL104"]
    assert "the GPU waits" in finding.message


def test_a_script_that_never_names_a_gpu_is_told_its_training_loop_waits():
    """A `.py` file with no sign of a GPU trains on the CPU as written: the finding stays (workers
    overlap loading with the CPU's compute, as the profiler measures) but does not claim a GPU."""
    code = textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader
        from torchvision import datasets
        loader = DataLoader(datasets.ImageFolder("train"), batch_size=32)
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
    """)
    (finding,) = [f for f in analyze(python_source(code, "train.py")) if f.code == "TPL101"]
    assert "the training loop waits on data" in finding.message and "GPU" not in finding.message
    (finding,) = [f for f in analyze(python_source(code.replace("model(x)", "model(x.cuda())"), "train.py"))
                  if f.code == "TPL101"]
    assert "the GPU waits on data" in finding.message


def test_notebook_calls_run_the_definition_above_them():
    """dlwpt-code's chapter 8: `training_loop` on the CPU, called with a loader, then defined
    again to move batches to the GPU and called with a new `train_loader`: only the later
    loader's batches are copied to the GPU (TPL102)."""
    loop = ("def training_loop(n_epochs, optimizer, model, loss_fn, train_loader):\n"
            "    for epoch in range(n_epochs):\n"
            "        for imgs, labels in train_loader:\n{moves}"
            "            loss = loss_fn(model(imgs), labels)\n"
            "            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n")
    call = ("train_loader = torch.utils.data.DataLoader(cifar2, batch_size=64, shuffle=True)\n"
            "training_loop(n_epochs=100, optimizer=optimizer, model=model, loss_fn=loss_fn, train_loader=train_loader)\n")
    cells = ["import torch", loop.format(moves=""), call,
             "device = torch.device('cuda')\n" + loop.format(moves="            imgs = imgs.to(device=device)\n"), call]
    assert [cell for code, cell in notebook_codes(*cells) if code == "TPL102"] == [4]


def test_a_worker_count_computed_from_a_parameter_default():
    """RepDistiller: the test loader gets half the workers of the training one."""
    found = codes("""
        import torch
        from torch.utils.data import DataLoader
        def get_loaders(batch_size=128, num_workers=8):
            train_loader = DataLoader(train_set, batch_size=batch_size, num_workers=num_workers, pin_memory=True)
            test_loader = DataLoader(test_set, batch_size=int(batch_size / 2), num_workers=int(num_workers / 2), pin_memory=True)
            return train_loader, test_loader
        train_loader, test_loader = get_loaders()
        for epoch in range(100):
            for x in train_loader:
                model(x.cuda()).sum().backward()
            for x in test_loader:
                model(x.cuda())
    """, ("TPL104",))
    assert found == ["TPL104", "TPL104"]


def test_lightning_skips_the_validation_loader_of_a_module_without_validation_step():
    code = """
        import lightning as L
        import torch
        from torch.utils.data import DataLoader
        class Net(L.LightningModule):
            def training_step(self, batch, batch_idx):
                return self.model(batch).sum()
        class Data(L.LightningDataModule):
            def train_dataloader(self):
                return DataLoader(self.train, batch_size=64, num_workers=4)
            def val_dataloader(self):
                return DataLoader(self.val, batch_size=64, num_workers=4)
        trainer = L.Trainer(max_epochs=10, accelerator="gpu")
        trainer.fit(Net(), datamodule=Data())
        trainer.fit(Net(), DataLoader(train, num_workers=4), DataLoader(val, num_workers=4))
    """
    assert codes(code, ("TPL104",)) == ["TPL104", "TPL104"]  # the two training loaders only
    validating = code.replace("                return self.model(batch).sum()\n", "                return self.model(batch).sum()\n"
                              "            def validation_step(self, batch, batch_idx):\n                self.log('v', 1)\n")
    assert codes(validating, ("TPL104",)) == ["TPL104"] * 4


def test_a_read_of_a_value_already_copied_to_the_host_is_not_a_second_sync():
    """pytorch-handbook: `loss = criterion(...).cpu()` every step (reported), then
    `losses.append(loss.data.item())`, which waits for nothing."""
    found = [f for f in analyze(python_source(textwrap.dedent("""
        import torch
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda()).cpu()
            loss.backward()
            optimizer.step()
            losses.append(loss.data.item())
    """), "t.py")) if f.code == "TPL203"]
    assert [f.range.start_line for f in found] == [3]


def test_a_read_in_a_helper_of_this_file_is_reported_where_it_reads():
    """RAFT: `loss, metrics = sequence_loss(flow_predictions, flow, valid)` on every step, whose
    `epe.mean().item()` reads a value of the batch moved by `[x.cuda() for x in data_blob]`: the
    finding is on that read, and names the call."""
    found = [f for f in analyze(python_source(textwrap.dedent("""
        import torch
        def sequence_loss(preds, gt):
            epe = (preds - gt).abs().sum(dim=1)
            metrics = {"epe": epe.mean().item()}
            return epe.mean(), metrics
        for data in loader:
            image, flow = [x.cuda() for x in data]
            loss, metrics = sequence_loss(model(image), flow)
            loss.backward()
            optimizer.step()
    """), "t.py")) if f.code == "TPL203"]
    assert [f.range.start_line for f in found] == [4]
    assert "`sequence_loss(model(image), flow)` passes to `sequence_loss`" in found[0].message


def test_batches_of_a_loader_listed_before_the_loop_are_moved_batches():
    """app_deep_learning: `steps = list(enumerate(train_dataloader, 0))`, then `for i, data in tqdm(steps)`."""
    assert codes("""
        import torch
        from torch.utils.data import DataLoader
        from tqdm import tqdm
        loader = DataLoader(train_dataset, batch_size=32, num_workers=4)
        for epoch in range(3):
            steps = list(enumerate(loader, 0))
            for i, data in tqdm(steps):
                loss = model(data["image"].to("cuda")).sum()
                loss.backward()
    """, ("TPL102", "TPL104")) == ["TPL102", "TPL104"]


def test_a_few_batches_taken_in_a_short_loop_to_show_them():
    """machine-learning-book: `for j in range(5): img_batch, label_batch = next(iter(data_loader))`
    to plot five augmented pairs; nothing trains on them."""
    code = """
        import torch
        import torchvision
        from torch.utils.data import DataLoader
        data_loader = DataLoader(torchvision.datasets.CelebA(path, transform=transform_train), batch_size=2)
        for j in range(5):
            img_batch, label_batch = next(iter(data_loader))
            show(img_batch.cuda())
    """
    assert codes(code, ("TPL101",)) == []
    assert codes(code.replace("range(5)", "range(500)"), ("TPL101",)) == ["TPL101"]


VALIDATION = """
    import torch
    from torch.utils.data import DataLoader
    def run_validation(model, validation_ds, num_examples=2):
        count = 0
        with torch.no_grad():
            for batch in validation_ds:
                count += 1
                print(model(batch.cuda()).argmax(-1))
                if count == num_examples:
                    break
    def get_ds():
        val_dataloader = DataLoader(val_ds, batch_size=16, shuffle=True)
        return train_dataloader, val_dataloader
    def train_model():
        train_dataloader, val_dataloader = get_ds()
        for epoch in range(20):
            train(model, train_dataloader)
            run_validation(model, val_dataloader)
"""


@pytest.mark.parametrize("bound, expected", [("2", []), ("100", ["TPL102"]), ("n_val", ["TPL102"])])
def test_a_validation_loop_reading_a_few_batches_needs_no_pinned_memory(bound, expected):
    """hkproj's `run_validation` stops after `num_examples` (2) batches each epoch: nothing to
    overlap. A hundred batches, or a bound perf-lint cannot know, is a pass worth pinning."""
    code = VALIDATION.replace("num_examples=2", f"num_examples={bound}")
    assert codes(code, ("TPL102",)) == expected


def test_another_frameworks_script_is_not_pytorch_code():
    """MXNet's gluon scripts in a PyTorch project (ResNeSt's scripts/gluon): an evaluation loop
    with no `torch.no_grad()` is not TPL502's, since gluon records nothing outside
    `autograd.record()`; the same loop importing torch is."""
    loop = """
        import mxnet as mx
        from mxnet import gluon
        net = gluon.model_zoo.vision.resnet50_v1(ctx=mx.gpu(0))
        def test(net, val_data):
            net.eval()
            for i, batch in enumerate(val_data):
                outputs = net(batch[0])
    """
    assert codes(loop) == []
    assert "TPL502" in codes(loop.replace("import mxnet as mx", "import torch\n        import mxnet as mx"))
