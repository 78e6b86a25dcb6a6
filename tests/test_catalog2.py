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
    "workers from os.cpu_count": ("""
        import os
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=os.cpu_count())
        for epoch in range(10):
            for batch in loader:
                step(batch)
    """, 0),
}


@pytest.mark.parametrize("name", TPL104)
def test_tpl104(name):
    check(TPL104, name, "TPL104")


def test_tpl104_fix_after_double_star_kwargs():
    out = fixed(TPL104["kwargs dict in a while loop with tqdm"][0], "TPL104")
    assert "DataLoader(ds, batch_size=32, **loader_kwargs, persistent_workers=True)" in out


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
}


@pytest.mark.parametrize("name", TPL203)
def test_tpl203(name):
    check(TPL203, name, "TPL203")
