"""Real-world shapes around the catalog-II rules (TPL104-TPL901): code that looks like the
pitfall but is not, and hits that need the context (helpers, aliases, cells) to be seen."""

from __future__ import annotations

import textwrap

import pytest

from perf_lint.analyzers import Config, analyze, fix_source, notebook_source, python_source


def findings(code: str, rule: str):
    return analyze(python_source(textwrap.dedent(code), "t.py"), Config(select=(rule,)))


def count(code: str, rule: str) -> int:
    return len(findings(code, rule))


def fixed(code: str, rule: str) -> str:
    result = fix_source(python_source(textwrap.dedent(code), "t.py"), Config(select=(rule,)))
    return result.source.units[0].text


def notebook(*cells: str, rule: str):
    nb = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    config = Config(select=(rule,))
    return [(f.code, f.cell, f.range.start_line) for f in analyze(notebook_source(nb, "t.ipynb"), config)]


def check(cases: dict[str, tuple[str, int]], name: str, rule: str) -> None:
    code, expected = cases[name]
    assert count(code, rule) == expected, name


# -- TPL104 persistent workers --------------------------------------------------------------------
TPL104 = {
    "epoch function with literal workers": ("""
        from torch.utils.data import DataLoader
        def train_one_epoch(model, loader, optimizer):
            for images, target in loader:
                loss = model(images, target)
        def main(args):
            train_loader = DataLoader(train_ds, batch_size=256, shuffle=True, num_workers=8, pin_memory=True)
            for epoch in range(args.start_epoch, args.epochs):
                train_one_epoch(model, train_loader, optimizer)
    """, 1),
    "kwargs dict in a while loop with tqdm": ("""
        from torch.utils.data import DataLoader
        from tqdm import tqdm
        loader_kwargs = {"num_workers": 4, "pin_memory": True}
        loader = DataLoader(ds, batch_size=32, **loader_kwargs)
        step = 0
        while step < max_steps:
            for batch in tqdm(loader, desc="train"):
                train_step(batch)
                step += 1
    """, 1),
    "loop over several loaders": ("""
        from torch.utils.data import DataLoader
        train_loader = DataLoader(train_ds, num_workers=4)
        val_loader = DataLoader(val_ds, num_workers=4)
        for loader in [train_loader, val_loader]:
            for batch in loader:
                run(batch)
    """, 0),
    "dataset resampled every epoch": ("""
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=4)
        for epoch in range(10):
            loader.dataset.resample(seed=epoch)
            for batch in loader:
                run(batch)
    """, 0),
    "loader built in the per-epoch function": ("""
        from torch.utils.data import DataLoader
        def run_epoch(ds):
            loader = DataLoader(ds, num_workers=4)
            for batch in loader:
                step(batch)
        for epoch in range(10):
            run_epoch(ds)
    """, 0),
    "unknown persistent flag": ("""
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=4, persistent_workers=args.persistent)
        for epoch in range(10):
            for batch in loader:
                step(batch)
    """, 0),
    "workers from os.cpu_count: some on any machine": ("""
        import os
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=os.cpu_count())
        for epoch in range(10):
            for batch in loader:
                step(batch)
    """, 1),
}


@pytest.mark.parametrize("name", TPL104)
def test_tpl104(name):
    check(TPL104, name, "TPL104")


TRAINING_APP = """
    import argparse
    import torch
    from torch.utils.data import DataLoader

    def enumerate_with_estimate(iterable, desc):
        for index, item in enumerate(iterable):
            yield index, item

    class TrainingApp:
        def __init__(self, argv=None):
            parser = argparse.ArgumentParser()
            parser.add_argument("--num-workers", default=8, type=int)
            parser.add_argument("--epochs", default=10, type=int)
            self.cli_args = parser.parse_args(argv)
            self.model = Net().cuda()

        def init_train_dl(self):
            return DataLoader(LunaDataset(), batch_size=32, num_workers=self.cli_args.num_workers)

        def main(self):
            train_dl = self.init_train_dl()
            for epoch in range(1, self.cli_args.epochs + 1):
                self.do_training(epoch, train_dl)

        def do_training(self, epoch, train_dl):
            batch_iter = enumerate_with_estimate(train_dl, f"E{epoch} Training")
            for index, (x, y) in batch_iter:
                self.model(x.cuda()).sum().backward()
"""


def test_tpl104_in_a_training_class():
    """dlwpt-code's LunaTrainingApp: the worker count an argparse default kept on `self`, the
    loader a method returns, iterated through a generator bound to a name by the method the
    epoch loop calls; unless that method reshuffles the loader's dataset each epoch (persistent
    workers would keep the old copy)."""
    [found] = findings(TRAINING_APP, "TPL104")
    assert "its 8 worker processes" in found.message
    reshuffled = TRAINING_APP.replace("            batch_iter =", "            train_dl.dataset.shuffle_samples()\n            batch_iter =")
    assert count(reshuffled, "TPL104") == 0


def test_loaders_held_in_a_dict_by_phase():
    """PyTorch's transfer-learning tutorial: `dataloaders = {x: DataLoader(...) for x in
    ['train', 'val']}`, iterated as `dataloaders[phase]` in each epoch, batches moved to the GPU."""
    tutorial = """
        import torch
        device = torch.device("cuda:0")
        dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=4, shuffle=True, num_workers=4)
                       for x in ['train', 'val']}
        for epoch in range(25):
            for phase in ['train', 'val']:
                for inputs, labels in dataloaders[phase]:
                    inputs = inputs.to(device)
                    loss = criterion(model(inputs), labels.to(device))
    """
    assert count(tutorial, "TPL102") == 1 and count(tutorial, "TPL104") == 1


def test_tpl104_fix_after_double_star_kwargs():
    out = fixed(TPL104["kwargs dict in a while loop with tqdm"][0], "TPL104")
    assert "DataLoader(ds, batch_size=32, **loader_kwargs, persistent_workers=True)" in out


def test_tpl104_fix_survives_zero_workers_from_the_command_line():
    out = fixed("""
        import argparse
        from torch.utils.data import DataLoader
        parser = argparse.ArgumentParser()
        parser.add_argument("-j", "--workers", type=int, default=4)
        args = parser.parse_args()
        loader = DataLoader(ds, num_workers=args.workers)
        for epoch in range(3):
            for batch in loader:
                step(batch)
    """, "TPL104")
    assert "DataLoader(ds, num_workers=args.workers, persistent_workers=args.workers > 0)" in out


# -- TPL203 host syncs every step ------------------------------------------------------------------
TPL203 = {
    "hugging face loop with tqdm postfix": ("""
        import torch
        device = torch.device("cuda")
        for batch in progress_bar:
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            progress_bar.set_postfix(loss=loss.item())
    """, 1),
    "amp scaler with losses list": ("""
        import torch
        scaler = torch.cuda.amp.GradScaler()
        for images, labels in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
    """, 1),
    "rank zero logging still syncs every step": ("""
        import torch
        torch.cuda.set_device(rank)
        for step, batch in enumerate(loader):
            loss = model(batch)
            loss.backward()
            optimizer.step()
            if rank == 0:
                print(step, loss.item())
    """, 1),
    "nan check on the loss": ("""
        import torch
        model.cuda()
        for x in loader:
            loss = model(x)
            if not torch.isfinite(loss):
                print("non-finite loss", loss.item())
                continue
            loss.backward()
            optimizer.step()
    """, 1),
    "step method of a trainer class": ("""
        import torch
        class Trainer:
            def train_step(self, batch):
                loss = self.model(batch.cuda())
                loss.backward()
                self.optimizer.step()
                return {"loss": loss.item()}
            def fit(self, loader):
                for batch in loader:
                    self.train_step(batch)
    """, 1),
    "guarded by log interval": ("""
        import torch
        model.cuda()
        for batch_idx, (data, target) in enumerate(train_loader):
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            if batch_idx % args.log_interval == 0:
                print(f"loss: {loss.item():.6f}")
    """, 0),
    # the branch that steps the optimizer runs on every training step: it is not an interval
    "gradient accumulation boundary": ("""
        import torch
        model.cuda()
        for i, batch in enumerate(loader):
            loss = model(batch) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
                writer.add_scalar("loss", loss.item(), i)
    """, 1),
    "logging interval beside the accumulation boundary": ("""
        import torch
        model.cuda()
        for i, batch in enumerate(loader):
            loss = model(batch) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
            if i % 100 == 0:
                writer.add_scalar("loss", loss.item(), i)
    """, 0),
    "first batch only": ("""
        import torch
        model.cuda()
        for i, (x, y) in enumerate(loader):
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            if i == 0:
                print(x.shape, loss.item())
    """, 0),
    "evaluation loop": ("""
        import torch
        model.cuda()
        with torch.no_grad():
            for x, y in val_loader:
                pred = model(x.cuda()).argmax(1)
                correct += (pred == y.cuda()).sum().item()
    """, 0),
    "in an except handler": ("""
        import torch
        model.cuda()
        for x in loader:
            try:
                loss = model(x)
                loss.backward()
                optimizer.step()
            except RuntimeError:
                print("failed at", loss.item())
    """, 0),
    "non-tensor values": ("""
        import torch
        model.cuda()
        for step, x in enumerate(loader):
            loss = model(x)
            loss.backward()
            optimizer.step()
            lr = scheduler.get_last_lr()[0]
            print(step, float(lr), int(step))
            if loss is None or step > warmup:
                pass
    """, 0),
    "cpu only": ("""
        import torch
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            total += loss.item()
    """, 0),
    "step function called once": ("""
        import torch
        def overfit_one(model, x):
            loss = model(x.cuda())
            loss.backward()
            return loss.item()
        overfit_one(model, batch)
    """, 0),
    "cpu only, asking whether there is a gpu": ("""
        import torch
        print(torch.cuda.is_available(), torch.cuda.device_count())
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            print(f"loss {loss:.2f}")
    """, 0),
    "forward copies the lengths back to the host": ("""
        import torch
        from torch import nn
        class Tagger(nn.Module):
            def forward(self, tokens, lengths):
                packed = nn.utils.rnn.pack_padded_sequence(self.embed(tokens), lengths.tolist())
                return self.rnn(packed)
        model = Tagger().cuda()
    """, 1),
    "a method forward calls reads a registered buffer": ("""
        import torch
        from torch import nn
        class Queue(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("ptr", torch.zeros(1, dtype=torch.long))
            def _enqueue(self, keys):
                start = int(self.ptr)
                self.ptr[0] = start + keys.shape[0]
            def forward(self, keys):
                self._enqueue(keys)
                return keys
        model = Queue().cuda()
    """, 1),
    "a method forward does not call": ("""
        import torch
        from torch import nn
        class Queue(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("ptr", torch.zeros(1, dtype=torch.long))
            def describe(self):
                return int(self.ptr), self.scale.tolist()
            def forward(self, keys):
                return keys * self.scale
        model = Queue().cuda()
    """, 0),
    "tensors logged to wandb": ("""
        import torch, wandb
        model.cuda()
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
            acc = (out.argmax(1) == y).float().mean()
            if acc:
                wandb.log({"loss": loss, "lr": scheduler.get_last_lr()[0]})
            wandb.log({"lr": optimizer.param_groups[0]["lr"]}, step=step)
    """, 2),
    "forward of a class that is not a module": ("""
        import torch
        class Tokenizer:
            def forward(self, ids):
                return ids.tolist()
        device = "cuda"
    """, 0),
}


@pytest.mark.parametrize("name", TPL203)
def test_tpl203(name):
    check(TPL203, name, "TPL203")


# -- TPL302 torch.compile per step / varying shapes ------------------------------------------------
TPL302 = {
    "compile in the step function called from the loop": ("""
        import torch
        def train_step(model, batch, optimizer):
            fast = torch.compile(model)
            loss = fast(batch).mean()
            loss.backward()
            optimizer.step()
        for batch in loader:
            train_step(model, batch, optimizer)
    """, 1),
    "compile of each model in a list": ("""
        import torch
        for model in [resnet, vit]:
            model = torch.compile(model)
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
    """, 0),
    "lazy compile on first step": ("""
        import torch
        compiled = None
        for x, y in loader:
            if compiled is None:
                compiled = torch.compile(model)
            loss = compiled(x).sum()
            loss.backward()
    """, 0),
    "compile per epoch, used by the inner loop": ("""
        import torch
        for epoch in range(10):
            fast = torch.compile(model)
            for x in loader:
                fast(x).sum().backward()
    """, 0),
    "retry loop that breaks": ("""
        import torch
        for attempt in range(3):
            try:
                fast = torch.compile(model)
                fast(x).sum().backward()
                break
            except RuntimeError:
                torch._dynamo.reset()
    """, 0),
    "compile in __init__ is fine": ("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = torch.compile(nn.Linear(8, 8))
            def forward(self, x):
                return self.mlp(x)
    """, 0),
    "guarded compile in forward": ("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                if self._fast is None:
                    self._fast = torch.compile(self.body)
                return self._fast(x)
    """, 0),
    "batch size sweep via view": ("""
        import torch
        fast = torch.compile(model)
        for bs in [1, 2, 4]:
            fast(data.view(bs, -1))
    """, 1),
    "sweep with mark_dynamic": ("""
        import torch
        fast = torch.compile(model)
        for bs in [1, 2, 4]:
            x = torch.randn(bs, 16)
            torch._dynamo.mark_dynamic(x, 0)
            fast(x)
    """, 0),
    "same shape every iteration": ("""
        import torch
        fast = torch.compile(model)
        for i in range(100):
            x = torch.randn(32, 16, device="cuda")
            fast(x[i % 4])
    """, 0),
    "dynamic False with a few shapes": ("""
        import torch
        fast = torch.compile(model, dynamic=False)
        for n in range(1, 5):
            fast(x[:n])
    """, 0),
}


@pytest.mark.parametrize("name", TPL302)
def test_tpl302(name):
    check(TPL302, name, "TPL302")


# -- TPL303 state_dict of a compiled module -------------------------------------------------------
TPL303 = {
    "attribute in a trainer": ("""
        import torch
        class Trainer:
            def __init__(self, model):
                self.model = torch.compile(model)
            def save(self, path):
                torch.save({"model": self.model.state_dict(), "step": self.step}, path)
    """, 1),
    "dict filled by subscript then saved": ("""
        import torch
        model = torch.compile(model)
        ckpt = {}
        ckpt["model"] = model.state_dict()
        torch.save(ckpt, "ckpt.pt")
    """, 1),
    "safetensors": ("""
        import torch
        from safetensors.torch import save_file
        model = torch.compile(model)
        save_file(model.state_dict(), "model.safetensors")
    """, 1),
    "state dict only copied for EMA": ("""
        import torch
        model = torch.compile(model)
        ema.load_state_dict(model.state_dict())
    """, 0),
    "saved before compile": ("""
        import torch
        torch.save(model.state_dict(), "init.pt")
        model = torch.compile(model)
    """, 0),
    "other function's parameter": ("""
        import torch
        def save(model, path):
            torch.save(model.state_dict(), path)
        save(torch.compile(net), "x.pt")
    """, 0),
}


@pytest.mark.parametrize("name", TPL303)
def test_tpl303(name):
    check(TPL303, name, "TPL303")


def test_tpl303_fix_keeps_the_attribute():
    out = fixed(TPL303["attribute in a trainer"][0], "TPL303")
    assert '"model": self.model._orig_mod.state_dict()' in out


# -- TPL304 DataParallel -------------------------------------------------------------------------------
TPL304 = {
    "imported from torch.nn": ("""
        from torch.nn import DataParallel
        model = DataParallel(model)
    """, 1),
    "isinstance check only": ("""
        import torch.nn as nn
        raw = model.module if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)) else model
    """, 0),
    "lookalike from another library": ("""
        import torch
        import paddle
        model = paddle.DataParallel(model)
    """, 0),
}


@pytest.mark.parametrize("name", TPL304)
def test_tpl304(name):
    check(TPL304, name, "TPL304")


# -- TPL402-404 profiler sessions --------------------------------------------------------------------
TPL402 = {
    "profiling a whole epoch over the loader": ("""
        import torch
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for step, batch in enumerate(train_loader):
                loss = model(batch)
                loss.backward()
        print(prof.key_averages().table())
    """, 1),
    "while loop until max steps": ("""
        import torch
        with torch.profiler.profile() as prof:
            while step < max_steps:
                step = train_step(step)
    """, 1),
    "recipe: one inference under record_function": ("""
        import torch
        from torch.profiler import profile, record_function, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            with record_function("model_inference"):
                model(inputs)
    """, 0),
    "schedule from unknown kwargs": ("""
        import torch
        with torch.profiler.profile(**profiler_kwargs) as prof:
            for batch in loader:
                step(batch)
    """, 0),
    "handle passed to the training function": ("""
        import torch
        with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) as prof:
            train(model, loader, profiler=prof)
    """, 0),
    "kernel benchmark repeated an unknown number of times": ("""
        import torch
        def bench(fn, n_repeat):
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
                for _ in range(n_repeat):
                    fn()
            return p.key_averages()
    """, 0),
    "training loop of unknown length": ("""
        import torch
        with torch.profiler.profile() as prof:
            for step in range(args.steps):
                loss = model(next(batches))
                loss.backward()
                optimizer.step()
    """, 1),
    "step under a condition": ("""
        import torch
        sched = torch.profiler.schedule(wait=2, warmup=2, active=6, repeat=1)
        with torch.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:
            for i, batch in enumerate(loader):
                step(batch)
                if i < 20:
                    prof.step()
    """, 0),
}


@pytest.mark.parametrize("name", TPL402)
def test_tpl402(name):
    check(TPL402, name, "TPL402")


def test_tpl403_is_off_by_default_and_quiet_for_short_runs():
    code = """
        import torch
        with torch.profiler.profile(with_stack=True) as prof:
            for batch in loader:
                step(batch)
        with torch.profiler.profile(record_shapes=True, profile_memory=True) as prof:
            for _ in range(3):
                step(batch)
    """
    assert [f.code for f in analyze(python_source(textwrap.dedent(code), "t.py"))].count("TPL403") == 0
    assert count(code, "TPL403") == 1


TPL404 = {
    "compiled inside the session": ("""
        import torch
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            model = torch.compile(model, mode="max-autotune")
            for _ in range(5):
                model(x)
    """, 1),
    "warm-up loop before the session": ("""
        import torch
        model = torch.compile(model)
        for _ in range(3):
            model(x)
        with torch.profiler.profile() as prof:
            model(x)
    """, 0),
    "schedule that skips the first steps": ("""
        import torch
        from torch.profiler import profile, schedule
        model = torch.compile(model)
        with profile(schedule=schedule(skip_first=5, wait=0, warmup=0, active=3)) as prof:
            for x in batches:
                model(x)
                prof.step()
    """, 0),
    "schedule of unknown shape": ("""
        import torch
        model = torch.compile(model)
        with torch.profiler.profile(schedule=make_schedule(args)) as prof:
            for x in batches:
                model(x)
                prof.step()
    """, 0),
}


@pytest.mark.parametrize("name", TPL404)
def test_tpl404(name):
    check(TPL404, name, "TPL404")


# -- TPL405 debugging switches ---------------------------------------------------------------------------
TPL405 = {
    "module alias and keyword": ("""
        from torch import autograd
        autograd.set_detect_anomaly(mode=True)
    """, 1),
    "turned off": ("""
        import torch
        torch.autograd.set_detect_anomaly(False)
    """, 0),
    "behind a command-line flag": ("""
        import torch
        def main(args):
            if args.detect_anomaly:
                torch.autograd.set_detect_anomaly(True)
            train(args)
    """, 0),
    "gradcheck in a unit test": ("""
        import torch
        from torch.autograd import gradcheck
        def test_custom_op():
            x = torch.randn(4, dtype=torch.double, requires_grad=True)
            assert gradcheck(MyOp.apply, (x,))
        def train():
            for x in loader:
                model(x).sum().backward()
                opt.step()
    """, 0),
    "numeric check helper": ("""
        import torch
        def numeric_check_if_enabled(model, inputs):
            with torch.autograd.set_detect_anomaly(True):
                model(*inputs).sum().backward()
    """, 0),
    "other environment variables": ("""
        import os, torch
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        os.environ.setdefault("TORCH_CUDNN_V8_API_ENABLED", "1")
    """, 0),
}


@pytest.mark.parametrize("name", TPL405)
def test_tpl405(name):
    check(TPL405, name, "TPL405")


def test_tpl405_env_magic_only_when_on():
    assert notebook("import torch", "%env CUDA_LAUNCH_BLOCKING=0\nmodel(x)", rule="TPL405") == []
    assert notebook("import torch", "x = 1\n%env CUDA_LAUNCH_BLOCKING 1", rule="TPL405") == [("TPL405", 1, 1)]


# -- TPL204 warm-up / TPL205 allocations in timed statements -----------------------------------------------
TPL204 = {
    "cpu vs gpu matmul script": ("""
        import time
        import torch
        a = torch.randn(8192, 8192)
        t0 = time.time()
        c = a @ a
        print("cpu", time.time() - t0)
        t0 = time.time()
        g = a.to("cuda")
        c = g @ g
        torch.cuda.synchronize()
        print("gpu", time.time() - t0)
    """, 1),
    "warm-up loop before the interval": ("""
        import time, torch
        model = torch.compile(model)
        for _ in range(3):
            model(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(x)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    """, 0),
    "an imported helper ran before": ("""
        import time, torch
        from mylib import load_model
        model = load_model("resnet50")
        x = torch.randn(8, 3, 224, 224)
        t0 = time.perf_counter()
        y = model(x.cuda())
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    """, 0),
    "a class of the file moves to the GPU when built": ("""
        import time, torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(3).cuda())
        net = Net()
        x = torch.randn(8, 3)
        t0 = time.perf_counter()
        y = x.cuda() * 2
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    """, 0),
    "a checkpoint loaded before": ("""
        import time, torch
        state = torch.load("model.pt")
        x = torch.randn(8, 3)
        t0 = time.perf_counter()
        y = x.cuda() * 2
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    """, 0),
    "interval in a function": ("""
        import time, torch
        def bench(x):
            t0 = time.perf_counter()
            y = x.cuda() @ x.cuda()
            torch.cuda.synchronize()
            return time.perf_counter() - t0
    """, 0),
    "repeated intervals": ("""
        import time, torch
        model = torch.compile(model)
        times = []
        for i in range(5):
            t0 = time.perf_counter()
            model(x)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
    """, 0),
}


@pytest.mark.parametrize("name", TPL204)
def test_tpl204(name):
    check(TPL204, name, "TPL204")


def test_tpl204_compiled_in_one_cell_timed_in_another():
    found = notebook(
        "import torch\nmodel = torch.compile(Net().cuda())",
        "x = torch.randn(8, 3, 224, 224, device='cuda')",
        "%%time\nout = model(x)\ntorch.cuda.synchronize()",
        rule="TPL204",
    )
    assert found == [("TPL204", 2, 1)]


TPL205 = {
    "timeit.repeat string statement": ("""
        import timeit, torch
        timeit.repeat("f(torch.ones(1000, 1000))", globals=globals(), number=10)
    """, 1),
    "allocation in setup": ("""
        import timeit, torch
        timeit.timeit("f(x)", setup="x = torch.ones(1000, 1000)", globals=globals(), number=10)
    """, 0),
    "size unknown": ("""
        import torch
        import torch.utils.benchmark as benchmark
        def bench(n):
            return benchmark.Timer(stmt="torch.randn(n, n)", globals={"n": n}).blocked_autorange()
    """, 0),
    "small tensors": ("""
        import timeit, torch
        timeit.timeit(lambda: f(torch.zeros(128, 128)), number=1000)
    """, 0),
}


@pytest.mark.parametrize("name", TPL205)
def test_tpl205(name):
    check(TPL205, name, "TPL205")


# -- TPL501 CPU tensors moved every step ---------------------------------------------------------------
TPL501 = {
    "positions in forward through unsqueeze": ("""
        import torch
        from torch import nn
        class GPT(nn.Module):
            def forward(self, idx):
                b, t = idx.size()
                pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0).to(idx.device)
                return self.wte(idx) + self.wpe(pos)
    """, 1),
    "class weights tensor in the loop": ("""
        import torch
        import torch.nn.functional as F
        device = torch.device("cuda")
        for x, y in loader:
            w = torch.tensor([1.0, 5.0]).to(device)
            loss = F.cross_entropy(model(x.to(device)), y.to(device), weight=w)
    """, 1),
    "numpy data is not a factory": ("""
        import torch
        for arr in arrays:
            x = torch.from_numpy(arr).cuda()
    """, 0),
    "buffer made once in __init__": ("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("mask", torch.ones(8, 8).cuda())
    """, 0),
    "cast to another tensor's type": ("""
        import torch
        for x in loader:
            y = torch.zeros(4, 4).to(x)
    """, 0),
    "cpu only device variable": ("""
        import torch
        device = "cpu"
        for x in loader:
            y = torch.zeros(4, 4).to(device)
    """, 0),
}


@pytest.mark.parametrize("name", TPL501)
def test_tpl501(name):
    check(TPL501, name, "TPL501")


def test_tpl501_fix_moves_device_into_the_factory_below_the_chain():
    out = fixed(TPL501["positions in forward through unsqueeze"][0], "TPL501")
    assert "pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)\n" in out


# -- TPL502 evaluation with gradients / TPL503 zeroed gradients ------------------------------------------
TPL502 = {
    "hugging face evaluate": ("""
        import torch
        def evaluate(model, eval_dataloader, metric):
            model.eval()
            for batch in eval_dataloader:
                outputs = model(**batch)
                metric.add_batch(predictions=outputs.logits.argmax(-1), references=batch["labels"])
            return metric.compute()
    """, 1),
    "decorator without parentheses": ("""
        import torch
        @torch.no_grad
        def validate(model, loader):
            model.eval()
            for x, y in loader:
                model(x)
    """, 0),
    "set_grad_enabled(False) first": ("""
        import torch
        torch.set_grad_enabled(False)
        model.eval()
        for x in loader:
            model(x)
    """, 0),
    "back to train before the loop": ("""
        import torch
        model.eval()
        evaluate_once(model)
        model.train()
        for x in loader:
            model(x).sum().backward()
    """, 0),
    "generation only": ("""
        import torch
        def predict(model, prompts):
            model.eval()
            for p in prompts:
                out = model.generate(**p, max_new_tokens=20)
    """, 0),
    "saliency maps need gradients": ("""
        import torch
        def evaluate_saliency(model, loader):
            model.eval()
            for x, y in loader:
                x.requires_grad_()
                score = model(x)[0, y]
                grads = torch.autograd.grad(score, x)
    """, 0),
    "helpers that merely mention modules": ("""
        import torch
        def infer_types(root):
            for name, item in root.named_children():
                sub = get_module_type(item)
                item.get_module_rref()
    """, 0),
    "inference mode with": ("""
        import torch
        def run_inference(net, loader):
            net.eval()
            with torch.inference_mode():
                for x in loader:
                    net(x)
    """, 0),
}


@pytest.mark.parametrize("name", TPL502)
def test_tpl502(name):
    check(TPL502, name, "TPL502")


TPL503 = {
    "positional set_to_none": ("""
        import torch
        for x in loader:
            model.cuda().zero_grad(False)
    """, 1),
    "once, at the top of a cell": ("""
        import torch
        model.cuda().zero_grad(False)
    """, 0),
    "dp-sgd adds noise in place": ("""
        import torch
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        for p in model.parameters():
            p.grad += torch.randn_like(p.grad) * sigma
    """, 0),
    "gradient masking by subscript": ("""
        import torch
        for p in model.parameters():
            p.grad.zero_()
        loss.backward()
        for p, m in zip(model.parameters(), masks):
            p.grad[m] = 0
    """, 0),
    "a zero_grad implementation offering both": ("""
        import torch
        def zero_grad(params, set_to_none=True):
            for p in params:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.zero_()
    """, 0),
    "unknown flag": ("""
        import torch
        optimizer.zero_grad(set_to_none=args.set_to_none)
    """, 0),
}


@pytest.mark.parametrize("name", TPL503)
def test_tpl503(name):
    check(TPL503, name, "TPL503")


# -- TPL901 misplaced cell magics ------------------------------------------------------------------------
def test_tpl901_cell_magic_after_a_line_magic():
    assert notebook("import torch", "%matplotlib inline\n%%capture\nplot()", rule="TPL901") == [("TPL901", 1, 1)]


def test_tpl901_is_quiet_for_top_and_stacked_magics_and_for_timing_magics():
    assert notebook(
        "import torch",
        "%%capture out\n%%prun\ntrain()",
        "\n\n%%html\n<b>%%capture</b>",
        "x = 1\n%%time\ny = 2",
        rule="TPL901",
    ) == []


def test_tpl901_not_reported_in_python_files():
    assert count("""
        import torch
        x = 1
        # %%capture
    """, "TPL901") == 0
