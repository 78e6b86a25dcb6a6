"""TPL104: DataLoader workers re-spawned every epoch."""

from __future__ import annotations

import ast
from typing import cast

import libcst as cst

from ..context import CallSite, Site
from ..nodes import argument, call_name, children, code, dotted, iteration_source, keyword, passed_for, remembered, walk
from ..findings import Related
from ..project import ast_dotted, iterated, iterated_again, maybe_project_call, used_arguments
from .base import Example, FixPlan, Replace
from ..datasets import CHEAP
from .dataloader import MONAI_ENGINES, LoaderRule
from .tracking import TrainingSteps, few_iterations, interval_test
from .edits import names_in_target, replace_argument, root_name
from ..vocabulary import FIT_METHODS, ITER_WRAPPERS, NUM_WORKERS


class NonPersistentWorkers(LoaderRule):
    """
    ## What it does
    Finds a DataLoader with `num_workers > 0` (a value perf-lint can prove) and without
    `persistent_workers=True` that is iterated again and again: a `for batch in loader`
    inside an epoch loop (also through a name the epoch binds to it, `active_dataloader =
    train_dataloader`, or to it wrapped, `accelerator.skip_first_batches(train_dataloader, n)`
    when resuming: the same loader, not a new one each epoch), or inside a function called from one (directly or through up
    to two functions: `validate` calling `run_validate`); a function of the project
    (`train_one_epoch(model, loader)` in another module) that loops over the loader it
    is passed, called in a loop; Lightning's Trainer (a Lightning module's
    `train_dataloader`/`val_dataloader`, loaders given to `fit`, unless `max_epochs=1`; not
    the validation loaders when the file's LightningModules define no `validation_step`, as
    the Trainer then skips validation); composer's Trainer (its `train_dataloader` and
    `eval_dataloader`, over more than one epoch);
    an ignite Engine's `run(loader, max_epochs=N)`, or a `run` in an event handler
    (decorated, or registered with `add_event_handler`); MONAI's `SupervisedTrainer` (`GanTrainer`)
    over more than one epoch, and its `SupervisedEvaluator` when a `ValidationHandler` runs it every epoch; a module of the project that calls
    the function returning the loader (`train_loader, test_loader = data_setup.create_dataloaders()`
    in train.py) and iterates it so, itself or through the functions it gives it to (also an
    object keeping the loader that a function of the project returns and whose `__iter__` runs
    it: the pix2pix family's `dataset = create_dataset(opt)`, then `for data in dataset:` each
    epoch); a class of the project that keeps the loader it is given and loops over it each epoch (`Trainer(model,
    train_loader).fit(10)`, with `fit` calling `self.train_epoch()` in its epoch loop); an
    `iter(loader)` made again inside a training loop (`except StopIteration: it =
    iter(loader)`, cycling a loader shorter than the run; `next(enumerate(test_loader))` every
    10 steps) or in a function it calls (`next(iter(val_loader))` in a `sample_images` run
    every N steps; a fetcher's method its `__next__` calls, `next(fetcher)` in the loop). A function looping over the loader it is given counts for the loaders the
    calls in the loop give it (not the test loader it reads once after training). Workers
    from the core count (`os.cpu_count()`, `int(os.cpu_count() / 2)`, `mp.cpu_count() - 1`, also
    as the default of a parameter of such a function or of an argparse option, or what a function
    of the project returns but on Windows: `get_num_workers()`) are workers on
    any machine; of `min(...)`/`max(...)` (also of a list), each part must be such a count or a
    positive number, and `bs if bs > 1 else 0` is decided by the known `bs`. A count read from a
    config (`opt.data.num_workers`, `cfg["training"]["n_workers"]` of a loaded dict) is what the project's YAML files set it to (`data:`
    `num_workers: 32`, or `num_workers: 32` in a Hydra group's `data/*.yaml`) when each gives a
    positive number. A notebook that sets
    its loaders up again in later cells (the same `kwargs = {'num_workers': 1} if cuda else {}`
    each time) is read cell by cell: a call sees the loader its name was bound to last, and none
    when it was bound to something else before (`trainer.fit(model, train_dl)` with a DataModule,
    then `train_dl = DataLoader(...)` for one `predict`). PyG's loaders (`DataLoader`,
    `NeighborLoader`, `ClusterLoader`, the GraphSAINT samplers, ...: subclasses batching graphs)
    and torchmeta's (`BatchMetaDataLoader`, batching tasks)
    count as DataLoaders, and so do the source's own subclasses of a loader (OGB's
    `PositiveLinkNeighborSampler(NeighborSampler)`).

    ## Why is this bad?
    Without persistent workers, every `iter(loader)` (every epoch) shuts the worker
    processes down and starts new ones, which refill their prefetch queue while the GPU
    waits at the start of the epoch. With the `spawn` or `forkserver` start method (the
    default on macOS, Windows and, since Python 3.14, Linux) each new worker also
    re-imports the script's modules and unpickles a copy of the dataset; with `fork` it is
    a fork of the main process. With large datasets or expensive `__init__`s this is
    seconds per epoch.

    Silent when `num_workers` is 0 or unknown (`persistent_workers=True` needs workers),
    when the loader is created inside the loop or a function it calls (a new loader each
    time; also one made before the loop whose name the loop binds to a new loader, as
    `train_loader = DataLoader(...)` at the end of each epoch), when the loop over its batches only shows or moves them (a demo of the loader:
    `print(x.shape); x = x.to(device)`), and when the
    epoch loop changes the dataset (`dataset.set_epoch(epoch)`, `loader.dataset.x = ...`, also
    in the function it runs, before that function's loop: `loader_out.dataset.offset = ...`, then
    `for a, b in zip(loader_in, loader_out):`; a method called for its effect, not one whose value
    is used, `train_dst.decode_target(labels)`): persistent workers keep their own copy and would not see the change; for an
    `iter(loader)` made again only when it runs out (`except StopIteration:`) of reads taken every
    so many steps (NCSN's test batch under `if step % 100 == 0:`: a restart per hundreds of steps); and for a loader
    made in a branch no call of its function takes (as TPL101 says). In code that never
    uses a GPU the finding says that the training loop waits, and is silent for a dataset
    that loads little (tensors in memory, torchvision's MNIST or CIFAR10): a restart is small
    next to an epoch of steps on the CPU.

    ## Example
    ```python
    loader = DataLoader(ds, batch_size=64, num_workers=8)
    for epoch in range(epochs):
        for x, y in loader:
            ...
    ```

    ## Fix
    ```python
    loader = DataLoader(ds, batch_size=64, num_workers=8, persistent_workers=True)
    ```
    When `num_workers` comes from a variable (an argparse default the command line can set
    to 0), the fix writes `persistent_workers=args.workers > 0`: with 0 workers,
    `persistent_workers=True` raises.
    """

    code = "TPL104"
    name = "dataloader-workers-respawned"
    summary = "DataLoader with workers iterated every epoch without persistent_workers=True"
    triggers = ("Loader", "Sampler")  # (PyG's `ClusterLoader`, `GraphSAINTRandomWalkSampler`, ...)
    probe = "dataloader"
    VALID = (
        # a notebook fitting a DataModule named `train_dl`, then binding `train_dl` to a loader in
        # a later cell that one `predict` reads (pytorch-lifestream's tutorials): not the fit's
        Example(
            (
                "%matplotlib inline\nimport torch\nimport pytorch_lightning as pl\n"
                "train_dl = PtlsDataModule(train_data=train, train_num_workers=4, train_batch_size=256)\n"
                "trainer = pl.Trainer(accelerator='gpu', max_epochs=15)",
                "trainer.fit(model, train_dl)",
                "train_dl = torch.utils.data.DataLoader(dataset=train, batch_size=512, num_workers=4)",
                "df_train = trainer.predict(inf_model, train_dl)",
            ),
        ),
        # a test loader read every 100 steps, started again only when it runs out (NCSN): a restart
        # every so many hundred steps
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(train, batch_size=64, num_workers=4, persistent_workers=True)
            test_loader = DataLoader(test, batch_size=64, num_workers=4)
            test_iter = iter(test_loader)
            for epoch in range(100):
                for step, (x, y) in enumerate(loader):
                    model(x.cuda()).sum().backward()
                    optimizer.step()
                    if step % 100 == 0:
                        try:
                            tx, ty = next(test_iter)
                        except StopIteration:
                            test_iter = iter(test_loader)
                            tx, ty = next(test_iter)
                        print(model(tx.cuda()).mean())
            """
        ),
        # a loader made in the epoch loop: a new one, with new workers, each epoch
        Example(
            """
            from torch.utils.data import DataLoader
            for epoch in range(10):
                loader = DataLoader(sample_subset(dataset, epoch), batch_size=64, num_workers=8)
                for x, y in loader:
                    model(x.cuda()).sum().backward()
            """
        ),
        # a new loader each epoch (pytorch-ood's new random split of outliers): each is read once
        Example(
            """
            from torch.utils.data import DataLoader
            from tqdm import tqdm
            loader = DataLoader(dataset, batch_size=64, num_workers=16, pin_memory=True)
            for epoch in range(10):
                with tqdm(loader) as bar:
                    for x, y in bar:
                        loss = model(x.cuda()).sum()
                        loss.backward()
                        optimizer.step()
                loader = DataLoader(dataset, batch_size=64, num_workers=16, pin_memory=True)
            """
        ),
        # the function the epoch loop calls with the training loader reads the test loader once
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            def compute_accuracy(model, data_loader):
                for features, targets in data_loader:
                    model(features.cuda())
            train_loader = DataLoader(train_set, batch_size=128, num_workers=8, persistent_workers=True)
            test_loader = DataLoader(test_set, batch_size=128, num_workers=8)
            for epoch in range(10):
                for x, y in train_loader:
                    model(x.cuda()).sum().backward()
                    optimizer.step()
                compute_accuracy(model, train_loader)
            compute_accuracy(model, test_loader)
            """
        ),
        # one batch taken after training, by a function called once
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            val_loader = DataLoader(val_set, batch_size=10, num_workers=1)
            def sample_images():
                imgs = next(iter(val_loader))
                save(generator(imgs.cuda()))
            for epoch in range(200):
                for batch in loader:
                    generator(batch.cuda()).mean().backward()
                    optimizer.step()
            sample_images()
            """
        ),
        # a measure averaged over `num_to_avg` passes, one by default (outlier-exposure's test.py)
        Example(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument('--num_to_avg', type=int, default=1)
            args = parser.parse_args()
            def get_scores(loader):
                with torch.no_grad():
                    return [net(x.cuda()).max(1)[0].cpu() for x, _ in loader]
            def get_and_print_results(ood_loader, num_to_avg=args.num_to_avg):
                for _ in range(num_to_avg):
                    print(get_scores(ood_loader))
            ood_loader = torch.utils.data.DataLoader(ood_data, batch_size=200, num_workers=4, pin_memory=True)
            get_and_print_results(ood_loader)
            """,
        ),
        # a script that never uses a GPU, over tensors in memory: its workers start quickly next
        # to an epoch of steps on the CPU
        Example(
            """
            import torch
            data = torch.utils.data.TensorDataset(torch.randn(1000, 8), torch.randn(1000))
            loader = torch.utils.data.DataLoader(data, batch_size=32, num_workers=2)
            for epoch in range(10):
                for x, y in loader:
                    model(x).sum().backward()
            """
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
        ),
        # an epoch loop that runs once (`num_epoch = 1`): the workers start once
        Example(
            """
            import torch
            num_epoch = 1
            train_loader = torch.utils.data.DataLoader(mnist_train, batch_size=16, num_workers=2)
            for i in range(num_epoch):
                for image, label in train_loader:
                    loss = loss_func(model(image.cuda()), label.cuda())
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # the settings a GPU run takes: merged by `.update()` under `if use_accel:`
        Example(
            """
            import torch
            train_kwargs = {'batch_size': 64}
            if use_accel:
                train_kwargs.update({'num_workers': 1, 'persistent_workers': True, 'pin_memory': True})
            loader = torch.utils.data.DataLoader(ds, **train_kwargs)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)
            for x, y in loader:
                step(x, y)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            for epoch in range(10):
                loader = DataLoader(make_ds(epoch), num_workers=4)
                for x, y in loader:
                    step(x, y)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)
            for epoch in range(10):
                ds.set_epoch(epoch)
                for x, y in loader:
                    step(x, y)
            """,
        ),
        # a loader made by the function an epoch loop calls (through another): a new one each time
        Example(
            """
            from torch.utils.data import DataLoader
            def run_eval(loader):
                for batch in loader:
                    model(batch)
            def validate(ds):
                run_eval(DataLoader(ds, num_workers=4))
            for epoch in range(10):
                validate(val_ds)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=args.workers)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
        ),
        # the count is bounded by a batch size of one: `batch_size if batch_size > 1 else 0` is 0
        Example(
            """
            import os
            import torch
            from torchvision import datasets
            batch_size = 1
            nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
            loader = torch.utils.data.DataLoader(datasets.ImageFolder(root), batch_size=batch_size, num_workers=nw)
            for epoch in range(epochs):
                for x, y in loader:
                    step(x.cuda(), y.cuda())
            """,
        ),
    )
    INVALID = (
        # a class's loader of `self.train_dataset`: the loop's calls on `self` do not change that dataset
        Example(
            """
            from torch.utils.data import DataLoader
            class Coach:
                def __init__(self, opts):
                    self.net = Net().to("cuda:0")
                    self.train_dataset = Images(opts.root)
                    self.loader = DataLoader(self.train_dataset, batch_size=8, pin_memory=True, num_workers=4)
                def train(self):
                    while self.global_step < self.opts.max_steps:
                        for x, y in self.loader:
                            self.optimizer.zero_grad()
                            self.net(x.to("cuda:0")).sum().backward()
                            self.optimizer.step()
            """,
            """
            from torch.utils.data import DataLoader
            class Coach:
                def __init__(self, opts):
                    self.net = Net().to("cuda:0")
                    self.train_dataset = Images(opts.root)
                    self.loader = DataLoader(self.train_dataset, batch_size=8, pin_memory=True, num_workers=4, persistent_workers=True)
                def train(self):
                    while self.global_step < self.opts.max_steps:
                        for x, y in self.loader:
                            self.optimizer.zero_grad()
                            self.net(x.to("cuda:0")).sum().backward()
                            self.optimizer.step()
            """,
        ),
        # composer's Trainer iterates its training loader every epoch of the run
        Example(
            """
            from composer import Trainer
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=8)
            trainer = Trainer(model=model, train_dataloader=train_dataloader, max_duration="10ep")
            trainer.fit()
            """,
            fixed="""
            from composer import Trainer
            from torch.utils.data import DataLoader
            train_dataloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=8, persistent_workers=True)
            trainer = Trainer(model=model, train_dataloader=train_dataloader, max_duration="10ep")
            trainer.fit()
            """,
        ),
        # made in a loop over the configuration's phases (KAIR's `for phase, dataset_opt in
        # opt["datasets"].items():`), then iterated at every test interval of the training loop
        Example(
            """
            from torch.utils.data import DataLoader
            for phase, dataset_opt in opt["datasets"].items():
                if phase == "test":
                    test_loader = DataLoader(define_dataset(dataset_opt), batch_size=1, num_workers=1)
            for epoch in range(1000):
                for batch in train_loader:
                    model(batch.cuda()).sum().backward()
                    step += 1
                    if step % 5000 == 0:
                        for test_data in test_loader:
                            evaluate(model, test_data)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            for phase, dataset_opt in opt["datasets"].items():
                if phase == "test":
                    test_loader = DataLoader(define_dataset(dataset_opt), batch_size=1, num_workers=1, persistent_workers=True)
            for epoch in range(1000):
                for batch in train_loader:
                    model(batch.cuda()).sum().backward()
                    step += 1
                    if step % 5000 == 0:
                        for test_data in test_loader:
                            evaluate(model, test_data)
            """,
        ),
        # accelerate's example: each epoch iterates a name bound to the loader, or to it wrapped
        # to skip the batches of a resumed epoch
        Example(
            """
            import torch
            train_dataloader = torch.utils.data.DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4)
            for epoch in range(starting_epoch, num_epochs):
                if resume_step is not None and epoch == starting_epoch: active = accelerator.skip_first_batches(train_dataloader, resume_step)
                else: active = train_dataloader
                for batch in active:
                    model(batch["image"].cuda()).sum().backward()
            """,
            fixed="""
            import torch
            train_dataloader = torch.utils.data.DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
            for epoch in range(starting_epoch, num_epochs):
                if resume_step is not None and epoch == starting_epoch: active = accelerator.skip_first_batches(train_dataloader, resume_step)
                else: active = train_dataloader
                for batch in active:
                    model(batch["image"].cuda()).sum().backward()
            """,
        ),
        # MONAI's engines: the trainer runs its loader every epoch, the evaluator every validation,
        # here after each epoch
        Example(
            """
            import torch
            import monai
            from monai.handlers import ValidationHandler
            device = torch.device("cuda")
            train_loader = monai.data.DataLoader(train_ds, batch_size=2, shuffle=True, num_workers=4, pin_memory=True)
            val_loader = monai.data.DataLoader(val_ds, batch_size=1, num_workers=4, pin_memory=True)
            evaluator = monai.engines.SupervisedEvaluator(device=device, val_data_loader=val_loader, network=net)
            trainer = monai.engines.SupervisedTrainer(
                device=device, max_epochs=500, train_data_loader=train_loader, network=net, optimizer=opt,
                loss_function=loss, train_handlers=[ValidationHandler(validator=evaluator, interval=1)])
            trainer.run()
            """,
            fixed="""
            import torch
            import monai
            from monai.handlers import ValidationHandler
            device = torch.device("cuda")
            train_loader = monai.data.DataLoader(train_ds, batch_size=2, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
            val_loader = monai.data.DataLoader(val_ds, batch_size=1, num_workers=4, pin_memory=True, persistent_workers=True)
            evaluator = monai.engines.SupervisedEvaluator(device=device, val_data_loader=val_loader, network=net)
            trainer = monai.engines.SupervisedTrainer(
                device=device, max_epochs=500, train_data_loader=train_loader, network=net, optimizer=opt,
                loss_function=loss, train_handlers=[ValidationHandler(validator=evaluator, interval=1)])
            trainer.run()
            """,
            count=2,
        ),
        # a fetcher making a new iterator when the loader runs out, read by `next(fetcher)` every
        # step (stargan-v2's InputFetcher): each pass starts the workers again
        Example(
            """
            import torch
            from torch.utils.data import DataLoader

            class InputFetcher:
                def __init__(self, loader):
                    self.loader = loader

                def _fetch_inputs(self):
                    try:
                        x, y = next(self.iter)
                    except (AttributeError, StopIteration):
                        self.iter = iter(self.loader)
                        x, y = next(self.iter)
                    return x, y

                def __next__(self):
                    x, y = self._fetch_inputs()
                    return x.cuda(), y.cuda()

            loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4, pin_memory=True)
            fetcher = InputFetcher(loader)
            for i in range(100000):
                x, y = next(fetcher)
                model(x, y).backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader

            class InputFetcher:
                def __init__(self, loader):
                    self.loader = loader

                def _fetch_inputs(self):
                    try:
                        x, y = next(self.iter)
                    except (AttributeError, StopIteration):
                        self.iter = iter(self.loader)
                        x, y = next(self.iter)
                    return x, y

                def __next__(self):
                    x, y = self._fetch_inputs()
                    return x.cuda(), y.cuda()

            loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
            fetcher = InputFetcher(loader)
            for i in range(100000):
                x, y = next(fetcher)
                model(x, y).backward()
                optimizer.step()
            """,
        ),
        # the function each epoch runs gives a zipped loader's dataset a new offset first: new workers
        # carry it; the other loader restarts for nothing
        Example(
            """
            import numpy as np
            import torch
            loader_in = torch.utils.data.DataLoader(ds_in, num_workers=4)
            loader_out = torch.utils.data.DataLoader(ds_out, num_workers=4)
            def train():
                loader_out.dataset.offset = np.random.randint(len(loader_out.dataset))
                for (x_in, _), (x_out, _) in zip(loader_in, loader_out):
                    step(x_in.cuda(), x_out.cuda())
            for epoch in range(10):
                train()
            """,
            """
            import numpy as np
            import torch
            loader_in = torch.utils.data.DataLoader(ds_in, num_workers=4, persistent_workers=True)
            loader_out = torch.utils.data.DataLoader(ds_out, num_workers=4)
            def train():
                loader_out.dataset.offset = np.random.randint(len(loader_out.dataset))
                for (x_in, _), (x_out, _) in zip(loader_in, loader_out):
                    step(x_in.cuda(), x_out.cuda())
            for epoch in range(10):
                train()
            """,
        ),
        # the worker count of an absl flag; a generator cycling the loader (pytorch-ddpm)
        Example(
            """
            import torch
            from absl import flags
            FLAGS = flags.FLAGS
            flags.DEFINE_integer('num_workers', 4, help='workers of Dataloader')
            def infiniteloop(dataloader):
                while True:
                    for x, y in iter(dataloader):
                        yield x
            loader = torch.utils.data.DataLoader(dataset, batch_size=128, num_workers=FLAGS.num_workers)
            datalooper = infiniteloop(loader)
            for step in range(800000):
                model(next(datalooper).cuda()).mean().backward()
                optim.step()
            """,
            """
            import torch
            from absl import flags
            FLAGS = flags.FLAGS
            flags.DEFINE_integer('num_workers', 4, help='workers of Dataloader')
            def infiniteloop(dataloader):
                while True:
                    for x, y in iter(dataloader):
                        yield x
            loader = torch.utils.data.DataLoader(dataset, batch_size=128, num_workers=FLAGS.num_workers, persistent_workers=FLAGS.num_workers > 0)
            datalooper = infiniteloop(loader)
            for step in range(800000):
                model(next(datalooper).cuda()).mean().backward()
                optim.step()
            """,
        ),
        # the worker count of the options a function of the source parses, read as a dict
        Example(
            """
            import argparse
            import torch
            def parse_args():
                parser = argparse.ArgumentParser()
                parser.add_argument('--num_workers', default=4, type=int)
                return parser.parse_args()
            def main():
                config = vars(parse_args())
                loader = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True, num_workers=config['num_workers'])
                for epoch in range(100):
                    for x, y in loader:
                        model(x.cuda()).sum().backward()
            """,
            """
            import argparse
            import torch
            def parse_args():
                parser = argparse.ArgumentParser()
                parser.add_argument('--num_workers', default=4, type=int)
                return parser.parse_args()
            def main():
                config = vars(parse_args())
                loader = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True, num_workers=config['num_workers'], persistent_workers=config['num_workers'] > 0)
                for epoch in range(100):
                    for x, y in loader:
                        model(x.cuda()).sum().backward()
            """,
        ),
        # a notebook setting its loaders up again in each experiment's cell, from the same
        # `kwargs` (one worker on a GPU), and a training function looping over epochs; the
        # first cell's loader is replaced before anything iterates it
        Example(
            (
                "%matplotlib inline\nimport torch\ncuda = torch.cuda.is_available()\n"
                "def train_epoch(loader, model):\n    for x, y in loader:\n        model(x.cuda()).sum().backward()\n"
                "def fit(loader, model, n_epochs):\n    for epoch in range(n_epochs):\n        train_epoch(loader, model)",
                "loader = torch.utils.data.DataLoader(images, batch_size=256, num_workers=2)",
                "kwargs = {'num_workers': 1, 'pin_memory': True} if cuda else {}\n"
                "loader = torch.utils.data.DataLoader(images, batch_size=256, **kwargs)\nfit(loader, model, 20)",
                "cuda = torch.cuda.is_available()\nkwargs = {'num_workers': 1, 'pin_memory': True} if cuda else {}\n"
                "loader = torch.utils.data.DataLoader(pairs, batch_size=128, **kwargs)\nfit(loader, model, 20)",
            ),
            count=2,
        ),
        # the same in a `main(args)` given the parsed command line (WZMIAOMIAO's train.py): the
        # batch size is the default of `--batch-size`, several steps of resolution away
        Example(
            """
            import argparse
            import os
            import torch
            from torchvision import datasets
            def main(args):
                batch_size = args.batch_size
                nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
                loader = torch.utils.data.DataLoader(datasets.ImageFolder(root), batch_size=batch_size, num_workers=nw)
                for epoch in range(args.epochs):
                    for x, y in loader:
                        step(x.cuda(), y.cuda())
            parser = argparse.ArgumentParser()
            parser.add_argument("--batch-size", type=int, default=16)
            parser.add_argument("--epochs", type=int, default=10)
            opt = parser.parse_args()
            main(opt)
            """,
            """
            import argparse
            import os
            import torch
            from torchvision import datasets
            def main(args):
                batch_size = args.batch_size
                nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
                loader = torch.utils.data.DataLoader(datasets.ImageFolder(root), batch_size=batch_size, num_workers=nw, persistent_workers=nw > 0)
                for epoch in range(args.epochs):
                    for x, y in loader:
                        step(x.cuda(), y.cuda())
            parser = argparse.ArgumentParser()
            parser.add_argument("--batch-size", type=int, default=16)
            parser.add_argument("--epochs", type=int, default=10)
            opt = parser.parse_args()
            main(opt)
            """,
        ),
        # the count bounded by the cores, the batch size and 8 (min over a list, a test of the
        # batch size): 8 workers for a batch of 16
        Example(
            """
            import os
            import torch
            from torchvision import datasets
            batch_size = 16
            nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
            loader = torch.utils.data.DataLoader(datasets.ImageFolder(root), batch_size=batch_size, num_workers=nw)
            for epoch in range(epochs):
                for x, y in loader:
                    step(x.cuda(), y.cuda())
            """,
            """
            import os
            import torch
            from torchvision import datasets
            batch_size = 16
            nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
            loader = torch.utils.data.DataLoader(datasets.ImageFolder(root), batch_size=batch_size, num_workers=nw, persistent_workers=nw > 0)
            for epoch in range(epochs):
                for x, y in loader:
                    step(x.cuda(), y.cuda())
            """,
        ),
        # an argparse default of all cores but one; a dataset that is MNIST or one reading image
        # files (the worse of the two: not a dataset held in memory)
        Example(
            """
            import argparse
            import multiprocessing as mp
            import torch
            from PIL import Image
            from torchvision import datasets
            class MiniImagenet(torch.utils.data.Dataset):
                def __init__(self, paths):
                    self.paths = paths
                def __getitem__(self, i):
                    return Image.open(self.paths[i])
            parser = argparse.ArgumentParser()
            parser.add_argument('--num-workers', type=int, default=mp.cpu_count() - 1)
            args = parser.parse_args()
            if args.dataset == 'mnist':
                train_dataset = datasets.MNIST(args.data, train=True)
            else:
                train_dataset = MiniImagenet(args.data)
            loader = torch.utils.data.DataLoader(train_dataset, batch_size=128, num_workers=args.num_workers)
            for epoch in range(epochs):
                for x, _ in loader:
                    step(x.to(args.device))
            """,
            """
            import argparse
            import multiprocessing as mp
            import torch
            from PIL import Image
            from torchvision import datasets
            class MiniImagenet(torch.utils.data.Dataset):
                def __init__(self, paths):
                    self.paths = paths
                def __getitem__(self, i):
                    return Image.open(self.paths[i])
            parser = argparse.ArgumentParser()
            parser.add_argument('--num-workers', type=int, default=mp.cpu_count() - 1)
            args = parser.parse_args()
            if args.dataset == 'mnist':
                train_dataset = datasets.MNIST(args.data, train=True)
            else:
                train_dataset = MiniImagenet(args.data)
            loader = torch.utils.data.DataLoader(train_dataset, batch_size=128, num_workers=args.num_workers, persistent_workers=args.num_workers > 0)
            for epoch in range(epochs):
                for x, _ in loader:
                    step(x.to(args.device))
            """,
        ),
        # a loader class of the source deriving from PyG's NeighborSampler, zipped with another
        Example(
            """
            import torch
            from torch_geometric.data import NeighborSampler
            class PositiveLinkNeighborSampler(NeighborSampler):
                def sample(self, edge_idx):
                    return super().sample(torch.cat([row[edge_idx], col[edge_idx]]))
            def train(model, pos_loader, neg_loader, optimizer):
                for pos_data, neg_data in zip(pos_loader, neg_loader):
                    model(pos_data, neg_data).mean().backward()
                    optimizer.step()
            def main():
                x = data.x.to(torch.device("cuda"))
                pos_loader = PositiveLinkNeighborSampler(edge_index, sizes=[15, 10, 5], batch_size=256, num_workers=12)
                for epoch in range(1, 151):
                    train(model, pos_loader, neg_loader, optimizer)
            """,
            """
            import torch
            from torch_geometric.data import NeighborSampler
            class PositiveLinkNeighborSampler(NeighborSampler):
                def sample(self, edge_idx):
                    return super().sample(torch.cat([row[edge_idx], col[edge_idx]]))
            def train(model, pos_loader, neg_loader, optimizer):
                for pos_data, neg_data in zip(pos_loader, neg_loader):
                    model(pos_data, neg_data).mean().backward()
                    optimizer.step()
            def main():
                x = data.x.to(torch.device("cuda"))
                pos_loader = PositiveLinkNeighborSampler(edge_index, sizes=[15, 10, 5], batch_size=256, num_workers=12, persistent_workers=True)
                for epoch in range(1, 151):
                    train(model, pos_loader, neg_loader, optimizer)
            """,
        ),
        # FixMatch's cycling of a loader: a new iterator, and new workers, each time it runs out
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            labeled_loader = DataLoader(labeled, batch_size=64, shuffle=True, num_workers=4, drop_last=True)
            labeled_iter = iter(labeled_loader)
            model.cuda()
            for step in range(total_steps):
                try:
                    x, y = next(labeled_iter)
                except StopIteration:
                    labeled_iter = iter(labeled_loader)
                    x, y = next(labeled_iter)
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            labeled_loader = DataLoader(labeled, batch_size=64, shuffle=True, num_workers=4, drop_last=True, persistent_workers=True)
            labeled_iter = iter(labeled_loader)
            model.cuda()
            for step in range(total_steps):
                try:
                    x, y = next(labeled_iter)
                except StopIteration:
                    labeled_iter = iter(labeled_loader)
                    x, y = next(labeled_iter)
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
        ),
        # one validation batch taken by a function the training loop calls every N steps
        # (PyTorch-GAN's `sample_images`), or by `next(enumerate(...))` in the loop (pointnet's)
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            val_loader = DataLoader(val_set, batch_size=10, shuffle=True, num_workers=1)
            def sample_images(done):
                imgs = next(iter(val_loader))
                save(generator(imgs.cuda()), done)
            for epoch in range(200):
                for i, batch in enumerate(loader):
                    generator(batch.cuda()).mean().backward()
                    optimizer.step()
                    if i % 500 == 0:
                        sample_images(i)
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            val_loader = DataLoader(val_set, batch_size=10, shuffle=True, num_workers=1, persistent_workers=True)
            def sample_images(done):
                imgs = next(iter(val_loader))
                save(generator(imgs.cuda()), done)
            for epoch in range(200):
                for i, batch in enumerate(loader):
                    generator(batch.cuda()).mean().backward()
                    optimizer.step()
                    if i % 500 == 0:
                        sample_images(i)
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            test_loader = DataLoader(test_set, batch_size=32, shuffle=True, num_workers=4)
            for epoch in range(250):
                for i, (points, target) in enumerate(loader, 0):
                    model(points.cuda()).sum().backward()
                    optimizer.step()
                    if i % 10 == 0:
                        j, (points, target) = next(enumerate(test_loader, 0))
                        model(points.cuda())
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            test_loader = DataLoader(test_set, batch_size=32, shuffle=True, num_workers=4, persistent_workers=True)
            for epoch in range(250):
                for i, (points, target) in enumerate(loader, 0):
                    model(points.cuda()).sum().backward()
                    optimizer.step()
                    if i % 10 == 0:
                        j, (points, target) = next(enumerate(test_loader, 0))
                        model(points.cuda())
            """,
        ),
        # a library's loader (PyG's, batching graphs) re-spawns its workers like torch's
        Example(
            """
            import torch
            from torch_geometric.loader import ClusterData, ClusterLoader
            loader = ClusterLoader(ClusterData(data, num_parts=1500), batch_size=20, shuffle=True, num_workers=12)
            model = Net().to(torch.device("cuda"))
            for epoch in range(10):
                for data in loader:
                    step(model, data.to("cuda"))
            """,
            """
            import torch
            from torch_geometric.loader import ClusterData, ClusterLoader
            loader = ClusterLoader(ClusterData(data, num_parts=1500), batch_size=20, shuffle=True, num_workers=12, persistent_workers=True)
            model = Net().to(torch.device("cuda"))
            for epoch in range(10):
                for data in loader:
                    step(model, data.to("cuda"))
            """,
        ),
        # on a GPU, one worker re-spawned every epoch; no fix: on the CPU, `**kwargs` is empty and
        # persistent_workers=True without workers raises
        Example(
            """
            import torch
            kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}
            loader = torch.utils.data.DataLoader(ds, batch_size=64, **kwargs)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
        ),
        Example(
            """
            import torch
            train_kwargs = {'batch_size': 64}
            if use_accel:
                train_kwargs.update({'num_workers': 1, 'pin_memory': True})
            loader = torch.utils.data.DataLoader(ds, **train_kwargs)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
        ),
        # workers by platform (what Linux and macOS run), or scaled by a setting when it is set
        Example(
            """
            import sys
            from torch.utils.data import DataLoader
            workers = 0 if sys.platform.startswith("win") else 4
            train = DataLoader(ds, batch_size=32, num_workers=workers)
            test = DataLoader(ds, batch_size=32, num_workers=4 * args.gpus if args.gpus else 8)
            for epoch in range(10):
                for x, y in train:
                    step(x, y)
                for x, y in test:
                    model(x)
            """,
            """
            import sys
            from torch.utils.data import DataLoader
            workers = 0 if sys.platform.startswith("win") else 4
            train = DataLoader(ds, batch_size=32, num_workers=workers, persistent_workers=workers > 0)
            test = DataLoader(ds, batch_size=32, num_workers=4 * args.gpus if args.gpus else 8, persistent_workers=(4 * args.gpus if args.gpus else 8) > 0)
            for epoch in range(10):
                for x, y in train:
                    step(x, y)
                for x, y in test:
                    model(x)
            """,
            count=2,
        ),
        # workers its callers give a factory; iterated by a function that a function of the epoch loop calls
        Example(
            """
            from torch.utils.data import DataLoader
            def make(ds, workers=0):
                return DataLoader(ds, batch_size=8, num_workers=workers)
            def run_eval(loader):
                for batch in loader:
                    model(batch)
            def validate(loader):
                run_eval(loader)
            val_loader = make(val_ds, workers=4)
            for epoch in range(10):
                validate(val_loader)
            """,
            """
            from torch.utils.data import DataLoader
            def make(ds, workers=0):
                return DataLoader(ds, batch_size=8, num_workers=workers, persistent_workers=workers > 0)
            def run_eval(loader):
                for batch in loader:
                    model(batch)
            def validate(loader):
                run_eval(loader)
            val_loader = make(val_ds, workers=4)
            for epoch in range(10):
                validate(val_loader)
            """,
        ),
        # half the cores, the default of a DataModule's __init__ parameter
        Example(
            """
            import os
            import lightning as L
            from torch.utils.data import DataLoader
            WORKERS = int(os.cpu_count() / 2)
            class Data(L.LightningDataModule):
                def __init__(self, num_workers: int = WORKERS):
                    super().__init__()
                    self.num_workers = num_workers
                def train_dataloader(self):
                    return DataLoader(self.train, batch_size=32, num_workers=self.num_workers)
            L.Trainer(max_epochs=5).fit(model, Data())
            """,
            """
            import os
            import lightning as L
            from torch.utils.data import DataLoader
            WORKERS = int(os.cpu_count() / 2)
            class Data(L.LightningDataModule):
                def __init__(self, num_workers: int = WORKERS):
                    super().__init__()
                    self.num_workers = num_workers
                def train_dataloader(self):
                    return DataLoader(self.train, batch_size=32, num_workers=self.num_workers, persistent_workers=self.num_workers > 0)
            L.Trainer(max_epochs=5).fit(model, Data())
            """,
        ),
        # an ignite handler registered with add_event_handler runs the evaluator every epoch
        Example(
            """
            from ignite.engine import Engine, Events
            from torch.utils.data import DataLoader
            test_loader = DataLoader(test_ds, batch_size=64, num_workers=8)
            trainer = Engine(train_step)
            evaluator = Engine(eval_step)
            def run_evaluation(engine):
                evaluator.run(test_loader)
            trainer.add_event_handler(Events.EPOCH_COMPLETED, run_evaluation)
            trainer.run(train_loader, max_epochs=10)
            """,
            """
            from ignite.engine import Engine, Events
            from torch.utils.data import DataLoader
            test_loader = DataLoader(test_ds, batch_size=64, num_workers=8, persistent_workers=True)
            trainer = Engine(train_step)
            evaluator = Engine(eval_step)
            def run_evaluation(engine):
                evaluator.run(test_loader)
            trainer.add_event_handler(Events.EPOCH_COMPLETED, run_evaluation)
            trainer.run(train_loader, max_epochs=10)
            """,
        ),
        # as many workers as cores: some on any machine
        Example(
            """
            import os
            from torch.utils.data import DataLoader
            WORKERS = os.cpu_count()
            loader = DataLoader(ds, num_workers=WORKERS)
            for epoch in range(10):
                for x in loader:
                    step(x)
            """,
            """
            import os
            from torch.utils.data import DataLoader
            WORKERS = os.cpu_count()
            loader = DataLoader(ds, num_workers=WORKERS, persistent_workers=WORKERS > 0)
            for epoch in range(10):
                for x in loader:
                    step(x)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64, num_workers=8)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64, num_workers=8, persistent_workers=True)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            WORKERS = 4
            def train_one_epoch(model, loader):
                for batch in loader:
                    model(batch)
            train_loader = DataLoader(ds, num_workers=WORKERS, persistent_workers=False)
            sampler = train_loader.sampler
            for epoch in range(3):
                sampler.set_epoch(epoch)
                train_one_epoch(model, train_loader)
            """,
            """
            from torch.utils.data import DataLoader
            WORKERS = 4
            def train_one_epoch(model, loader):
                for batch in loader:
                    model(batch)
            train_loader = DataLoader(ds, num_workers=WORKERS, persistent_workers=WORKERS > 0)
            sampler = train_loader.sampler
            for epoch in range(3):
                sampler.set_epoch(epoch)
                train_one_epoch(model, train_loader)
            """,
        ),
        # the parsed arguments reach the worker through torch.multiprocessing.spawn
        Example(
            """
            import argparse
            import torch
            from torch.utils.data import DataLoader
            parser = argparse.ArgumentParser()
            parser.add_argument("--workers", default=8, type=int)
            def main_worker(gpu, args):
                loader = DataLoader(ds, batch_size=256, num_workers=args.workers)
                for epoch in range(100):
                    for x, y in loader:
                        model(x.cuda(gpu)).sum().backward()
            def main():
                args = parser.parse_args()
                torch.multiprocessing.spawn(main_worker, (args,), 8)
            """,
            """
            import argparse
            import torch
            from torch.utils.data import DataLoader
            parser = argparse.ArgumentParser()
            parser.add_argument("--workers", default=8, type=int)
            def main_worker(gpu, args):
                loader = DataLoader(ds, batch_size=256, num_workers=args.workers, persistent_workers=args.workers > 0)
                for epoch in range(100):
                    for x, y in loader:
                        model(x.cuda(gpu)).sum().backward()
            def main():
                args = parser.parse_args()
                torch.multiprocessing.spawn(main_worker, (args,), 8)
            """,
        ),
        # the worker count set alike in two cells; a function looping over the epochs calls one
        # looping over the loader it is given
        Example(
            """
            import os
            from torch.utils.data import DataLoader
            NUM_WORKERS = os.cpu_count()
            loader = DataLoader(ds, batch_size=32, num_workers=NUM_WORKERS)
            NUM_WORKERS = os.cpu_count()
            def train_step(model, dataloader):
                for batch, (X, y) in enumerate(dataloader):
                    model(X).sum().backward()
            def train(model, train_dataloader, epochs=5):
                for epoch in range(epochs):
                    train_step(model, dataloader=train_dataloader)
            results = train(model, train_dataloader=loader)
            """,
            """
            import os
            from torch.utils.data import DataLoader
            NUM_WORKERS = os.cpu_count()
            loader = DataLoader(ds, batch_size=32, num_workers=NUM_WORKERS, persistent_workers=NUM_WORKERS > 0)
            NUM_WORKERS = os.cpu_count()
            def train_step(model, dataloader):
                for batch, (X, y) in enumerate(dataloader):
                    model(X).sum().backward()
            def train(model, train_dataloader, epochs=5):
                for epoch in range(epochs):
                    train_step(model, dataloader=train_dataloader)
            results = train(model, train_dataloader=loader)
            """,
        ),
    )

    def finish(self) -> None:
        reported: set[int] = set()
        for loader, repeats, how, related in self._repeated():
            if id(loader.node) in reported or any(outer in loader.loops for outer in repeats):
                continue  # (a loader made again at every pass: its workers die with it; not one made in a loop
                # over the configuration's phases, `for phase, opt in opt["datasets"].items():`, iterated after it)
            workers = self.setting(loader, NUM_WORKERS, "num_workers")
            if isinstance(workers, bool) or not isinstance(workers, (int, str)) or (type(workers) is int and workers <= 0):
                continue
            if self.setting(loader, -1, "persistent_workers") not in (None, False):
                continue
            if any(self._changes_dataset(outer, loader) for outer in repeats) or self.never_made(loader):
                continue
            gpu = self.feeds_gpu(cast(cst.Call, loader.node))
            cost = None if gpu else self.dataset_cost(loader)
            if cost is not None and (cost.kind == CHEAP or cost.in_memory):
                continue  # on the CPU, restarting workers that load little is small next to an epoch's steps
            reported.add(id(loader.node))
            self.report(
                loader,
                f"This DataLoader is iterated again and again{how} without persistent_workers=True, so its "
                f"{'worker process is' if workers == 1 else f'{workers} worker processes are'} shut down and started "
                f"again at every pass over it ({self._start(loader)}, "
                f"and the prefetch queue refilled) while the {'GPU' if gpu else 'training loop'} waits: "
                "set persistent_workers=True.",
                self._fix(loader),
                related=related,
            )

    def _start(self, loader: Site) -> str:
        """What starting the workers costs, for the start method the loader uses."""
        context = self.setting(loader, -1, "multiprocessing_context")
        if context == "fork":
            return "a fork each"
        if context in ("spawn", "forkserver"):
            return f"with {context}, each re-imports the script's modules and unpickles the dataset"
        return ("a fork each on Linux before Python 3.14; with spawn or forkserver, the default on macOS, "
                "Windows and Python 3.14+, each also re-imports the script's modules and unpickles the dataset")

    def _repeated(self):
        """(loader, the loops that repeat it, how it is iterated, related places) for every
        loader iterated again and again: by a loop of the source, by a function of the
        project called in a loop, by Lightning's Trainer, by an ignite Engine."""
        for loop, (loop_site, _) in self.loops.items():
            found = self._repeating_loops(loop, loop_site) if _works(loop) else None  # (not a demo of the loader)
            reshuffled = self._reshuffled(loop, loop_site) if found and not loop_site.loops else set()
            for loader in self.loaders_of(loop) if found else ():
                if id(loader.node) in reshuffled:
                    continue
                # (not the loops around a function that makes the loader: a new one each time; nor
                # around a call giving the function another loader: `compute_accuracy(model,
                # train_loader)` every epoch, `compute_accuracy(model, test_loader)` once after)
                repeats = [outer for outer, called, call in found
                           if loader.scope.node not in called and self._given(loop, loop_site, call, loader)
                           and not _replaced(loop, outer, loader, loop_site.scope, self.ctx)]
                if repeats:
                    yield loader, repeats, "", ()
        yield from self._iterated_by_callees()
        yield from self._iterated_by_frameworks()
        yield from self._iterated_by_importers()
        yield from self._iterators_made_again()

    def _iterators_made_again(self):
        """`iter(loader)` (or `next(enumerate(loader))`) called inside a loop that trains
        (`except StopIteration: it = iter(labeled_loader)`, FixMatch's way of cycling two
        loaders), or in a function called in one (`sample_images` taking one validation batch
        every N steps): each call starts the workers again."""
        steps = TrainingSteps.of(self.ctx)
        made = [(site, site.node) for site in self.ctx.calls.get("iter", ())]
        made += [(site, first) for site in self.ctx.calls.get("next", ()) if site.node.args and type(
            first := site.node.args[0].value) is cst.Call and type(first.func) is cst.Name and first.func.value == "enumerate"]
        for site, call in made:  # (and `next(enumerate(loader))`, pointnet's way of taking one test batch)
            if type(call.func) is not cst.Name or not 0 < len(call.args) <= 1 + (call is not site.node):  # (`enumerate(loader, 0)`)
                continue
            function = site.scope.node
            if site.loops and self._cycled_at_intervals(site):
                continue  # (NCSN's `except StopIteration: test_iter = iter(test_loader)` under `if step % 100 == 0:`)
            if site.loops:
                found = [(site.loops[-1], site.scope)]
                how = "made inside the training loop"
            elif function is not None:  # (PyTorch-GAN's `sample_images`: `next(iter(val_dataloader))`, called every N steps;
                # stargan-v2's `InputFetcher._fetch_inputs`, which its `__next__` calls, `next(fetcher)` every step)
                found = [(caller.loops[-1], caller.scope) for caller in self._calls_around(function, steps) if caller.loops]
                how = f"made at every call of `{function.name.value}` in the training loop"
            else:
                continue
            loops = [loop for loop, scope in found
                     if (steps.trains(loop) or steps.per_epoch(loop)) and not few_iterations(loop, self.ctx, scope)]
            for loader in self.live_loaders(call.args[0].value, site.scope, site.unit) if loops else ():
                if site.loops or loader.scope.node is not function:  # (not a loader made at each call)
                    yield loader, loops, f" (through a new `{code(call)}` {how})", ()

    def _cycled_at_intervals(self, site: CallSite) -> bool:
        """Whether `iter(loader)` at `site` starts the loader again only when it runs out (in an
        `except StopIteration:`) of reads made every so many steps (`if step % 100 == 0:`): one
        restart per so many passes of the loop, not per epoch of the training."""
        loop = site.loops[-1]
        handlers = [node for node in walk(loop) if type(node) is cst.ExceptHandler and node.type is not None
                    and "StopIteration" in code(node.type) and any(inner is site.node for inner in walk(node.body))]
        return bool(handlers) and any(
            type(node) is cst.If and interval_test(self.ctx, node.test, site.loops, site.scope)
            and any(inner is handlers[0] for inner in walk(node.body)) for node in walk(loop))

    def _calls_around(self, function: cst.FunctionDef, steps: TrainingSteps, depth: int = 0) -> list[CallSite]:
        """The calls of `function` in the source, and for those in no loop of a method, the calls
        of that method, two methods up (`self._fetch_inputs()` in `__next__`, then `next(fetcher)`)."""
        found = []
        for caller in steps.callers(function):
            found.append(caller)
            method = caller.scope.node
            if not caller.loops and depth < 2 and method is not None and method is not function and \
                    self.ctx.class_of.get(id(method)) is not None:
                found += self._calls_around(method, steps, depth + 1)
        return found

    def _iterated_by_importers(self):
        """`return train_loader` in a function of the source that a module of the project calls
        and whose loader it iterates every epoch (`engine.train(model, train_loader, epochs)`)."""
        for site in list(self.loaders.values()):
            again = next((uses.again for uses in self.returned_to(site) if uses.again is not None), None)
            if again is not None:
                related = (Related(again.path, again.line - 1, "iterates the loader every epoch"),) \
                    if not again.path.endswith(".ipynb") else ()
                yield site, [], f" (`{again.code}`, {again.where})", related

    def _iterated_by_callees(self):
        """`train_one_epoch(model, loader)` in an epoch loop, the function (of this file or
        another of the project) looping over that parameter."""
        for sites in list(self.ctx.calls.values()) if self.loaders else ():
            for site in sites:
                call = site.node
                if not any(type(arg.value) in (cst.Name, cst.Attribute) or arg.value in self.loaders for arg in call.args) \
                        or not maybe_project_call(self.ctx, call.func):
                    continue  # (a loader is passed, by its name or made there, to a function of the project)
                callee, used = used_arguments(self.ctx, site.node, site.scope, iterated if site.loops else iterated_again)
                if not used or _reshuffles_given(callee):
                    continue
                if site.loops and all(few_iterations(outer, self.ctx, site.scope, 1) for outer in site.loops):
                    continue  # (in a loop of one pass: `for _ in range(num_to_avg)`, 1 by default)
                bound = {n for outer in site.loops if type(outer) is cst.For for n in names_in_target(outer.target)}
                for value, line in used:
                    if root_name(value) in bound:
                        continue  # (an outer loop handing out the loaders)
                    place = callee[2](line)
                    name = callee[3].name if callee[0].name == "__init__" and callee[3] is not None else callee[0].name
                    how = f" (by `{name}`{f', {place}' if place else ''}{', called in a loop' if site.loops else ''})"
                    related = (Related(callee[2].path, line - 1, f"`{name}` iterates the loader"),) if place else ()
                    for loader in self.live_loaders(value, site.scope, site.unit):
                        yield loader, list(site.loops), how, related

    def _iterated_by_frameworks(self):
        """Lightning's Trainer iterates a module's train/val loaders and those given to
        `fit` every epoch, composer's Trainer those it is given; an ignite Engine those it `run`s
        for several epochs."""
        ctx = self.ctx
        trainers = ctx.calls.get("Trainer", ())
        if any(self._value_is(site, "max_epochs", 1) for site in trainers):
            return
        lightning = " (by Lightning's Trainer)"
        hooks, hf = self.epoch_hooks(), self.hf_passes()
        for loader in self.loaders.values():
            if self._lightning_hook(loader) in hooks:
                yield loader, [], lightning, ()
            elif self._hf_hook(loader) in hf:
                yield loader, [], " (by Hugging Face's Trainer)", ()
        for name in FIT_METHODS:
            for site in ctx.calls.get(name, ()):
                if self._lightning(site):
                    for arg in self.trainer_arguments(site):
                        for loader in self.live_loaders(arg.value, site.scope, site.unit):
                            yield loader, [], lightning, ()
        for site, _, again, _ in self.composer_runs():
            for loader in again:
                for found in self.live_loaders(loader, site.scope, site.unit):
                    yield found, [], " (by composer's Trainer)", ()
        engines = self.monai_engines()
        validated = any(self._resolved(argument(site.node, 0, "interval") or cst.Name("None"), site.scope, 0) == 1
                        for site in ctx.calls.get("ValidationHandler", ()))
        for site, engine in engines:  # (a trainer runs its loader each of its epochs; an evaluator, each
            epochs = MONAI_ENGINES[engine][1]  # epoch of a trainer whose ValidationHandler runs it every one)
            count = argument(site.node, *epochs) if epochs is not None else None
            if epochs is not None and (count is None or self._resolved(count, site.scope, 0) in (None, 0, 1)) or \
                    epochs is None and not (validated and any(MONAI_ENGINES[e][1] for _, e in engines)):
                continue
            loader = self.monai_loader(site, engine)
            for found in self.live_loaders(loader, site.scope, site.unit) if loader is not None else ():
                yield found, [], f" (by MONAI's `{engine}`)", ()
        for site in ctx.calls.get("run", ()):
            if not self._made_by(site).startswith("ignite.") or not site.node.args:
                continue
            epochs = argument(site.node, 1, "max_epochs")
            if epochs is not None and ctx.value(epochs, site.scope) in (None, 0, 1):
                continue
            handler = self._event_handler(site.scope.node)
            if epochs is None and not handler:
                continue
            how = " (by an ignite Engine's `run`" + (", from an event handler)" if handler else ")")
            for loader in self.live_loaders(site.node.args[0].value, site.scope, site.unit):
                yield loader, [], how, ()

    def _event_handler(self, function: cst.FunctionDef | None) -> bool:
        """A function an engine runs on its events: decorated (`@trainer.on(Events...)`) or
        registered with an ignite `engine.add_event_handler(event, function)`."""
        if function is None:
            return False
        return bool(function.decorators) or bool(self.registrations(function.name.value))

    def _repeating_loops(self, loop: cst.For, site: Site) -> list[tuple[cst.For | cst.While, frozenset, CallSite | None]]:
        """The loops that run `loop` again and again, each with the functions it runs it
        through and the call in it: its enclosing loops (no call), or the loops around calls of
        the function holding it, or of a function calling that one (`validate` in an epoch loop
        calling the `run_validate` that loops). Empty when the outer loop hands out the loaders."""
        iterated = root_name(loop.iter.args[0].value) if type(loop.iter) is cst.Call and loop.iter.args else root_name(loop.iter)
        if site.loops:
            bound = {name for outer in site.loops if type(outer) is cst.For for name in names_in_target(outer.target)}
            return [] if iterated in bound else [
                (outer, frozenset(), None) for outer in site.loops if not few_iterations(outer, self.ctx, site.scope, 1)]  # (not `range(1)`)
        return self._loops_around_calls(site.scope.node, frozenset())  # its function

    def _loops_around_calls(
        self, function: cst.FunctionDef | None, called: frozenset
    ) -> list[tuple[cst.For | cst.While, frozenset, CallSite | None]]:
        """The innermost loop around each call of `function`, through up to two callers that
        call it outside a loop, with the functions passed through and the call in the loop."""
        if function is None or function in called or len(called) > 2:
            return []
        called = called | {function}
        found: list[tuple[cst.For | cst.While, frozenset, CallSite | None]] = []
        for call in self.ctx.calls.get(function.name.value, []):
            caller = call.scope.node
            if call.loops and few_iterations(call.loops[-1], self.ctx, call.scope, 1):
                continue  # (`for epoch in range(num_epochs)` with `num_epochs = 1`: the loop runs once)
            found.extend([(call.loops[-1], called, call)] if call.loops else self._loops_around_calls(caller, called))
        return found

    def _given(self, loop: cst.For, site: Site, call: CallSite | None, loader: Site) -> bool:
        """Whether `call`, in a loop repeating the function holding `loop`, gives it `loader`
        when the loop iterates a parameter of that function (any loader when not known:
        through other functions, or for a method)."""
        function = site.scope.node
        if call is None or function is None or call.scope.node is function or type(call.node.func) is not cst.Name or \
                call.node.func.value != function.name.value:
            return True
        value = passed_for(call.node, function, loop.iter)
        return value is None or any(found.node is loader.node for found in self.live_loaders(value, call.scope, call.unit))

    def _reshuffled(self, loop: cst.For, site: Site) -> set[int]:
        """The loaders (ids of their calls) whose dataset the function holding `loop`, which its
        callers run each epoch, changes before iterating them (`train_dl.dataset.shuffleSamples()`,
        then `for batch in enumerateWithEstimate(train_dl, ...)`; `loader_out.dataset.offset = ...`,
        then `for a, b in zip(loader_in, loader_out)`): persistent workers would keep the old copy."""
        function = site.scope.node
        source = iteration_source(loop.iter)
        made = self.ctx.origin(source, site.scope) if type(source) is cst.Name else None
        if made is not None and type(made[0]) is cst.Call and made[0].args:
            source = made[0].args[0].value  # `batch_iter = enumerateWithEstimate(train_dl, ...)`
        sources = [iteration_source(arg.value) for arg in source.args] if type(source) is cst.Call and \
            call_name(source) == "zip" else [source]
        if function is None:
            return set()
        changed = [node.func.value for node in walk(function.body) if type(node) is cst.Call and type(node.func) is cst.Attribute]
        changed += [target.target for node in walk(function.body) if type(node) is cst.Assign for target in node.targets]
        texts = [f"{dotted(expr)}." for expr in changed]
        return {id(loader.node) for expr in sources for name in [dotted(expr)] if name is not None and any(
            text.startswith(f"{name}.dataset.") for text in texts) for loader in self.live_loaders(expr, site.scope, site.unit)}

    def _changes_dataset(self, loop: cst.For | cst.While, loader: Site) -> bool:
        """Whether `loop` calls a method of the loader's dataset for its effect (a statement of its
        own: `dataset.set_epoch(epoch)`, not DeepLabV3Plus's `train_dst.decode_target(target)`,
        whose value is used), or assigns into it."""
        dataset = argument(cast(cst.Call, loader.node), 0, "dataset")  # a DataLoader(...) call
        names = {root_name(dataset)} if dataset is not None else set()
        names.discard(None)
        own = dotted(dataset) if dataset is not None else None
        hit = False

        def touches(expr: cst.BaseExpression) -> bool:
            text = dotted(expr) or ""
            if own is not None and "." in own:  # (`self.train_dataset`: that attribute, not every call on `self`)
                return text == own or text.startswith(f"{own}.") or ".dataset" in f".{text}"
            return root_name(expr) in names or ".dataset" in f".{text}"

        class Finder(cst.CSTVisitor):
            def visit_Expr(self, node: cst.Expr) -> None:
                nonlocal hit
                if type(node.value) is cst.Call and type(node.value.func) is cst.Attribute and touches(node.value.func.value):
                    hit = True

            def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
                nonlocal hit
                target = node.target
                if (type(target) is cst.Attribute or type(target) is cst.Subscript) and touches(target.value):
                    hit = True

        loop.body.visit(Finder())
        return hit

    def _fix(self, loader: Site) -> FixPlan | None:
        """persistent_workers=True when num_workers is a literal; `<expr> > 0` when it is a
        value the command line can change (0 workers with persistent_workers=True raises)."""
        call = cast(cst.Call, loader.node)  # a DataLoader(...) call
        workers = argument(call, NUM_WORKERS, "num_workers")
        if workers is None:
            passed_workers = self.ctx.call_argument(call, NUM_WORKERS, "num_workers", loader.scope)
            if passed_workers is None or not isinstance(passed_workers, tuple) or type(passed_workers[0]) is not cst.Integer:
                return None  # from a **mapping whose expression cannot be written here
            value = "True"
        elif type(workers) is cst.Integer:
            value = "True"
        elif type(workers) in (cst.IfExp, cst.BooleanOperation, cst.Comparison, cst.UnaryOperation, cst.Lambda, cst.NamedExpr):
            value = f"({code(workers)}) > 0"  # (binds less tightly than `>`)
        else:
            value = f"{code(workers)} > 0"
        title = f"Set persistent_workers={value}"
        passed = keyword(call, "persistent_workers")
        if passed is None:
            if self.ctx.call_argument(call, -1, "persistent_workers", loader.scope) is not None:
                return None  # set by a **mapping
            return self.keyword_fix(loader, {"persistent_workers": value}, title)
        if type(passed.value) is cst.Name and passed.value.value == "False":
            return FixPlan(title, (Replace(loader, replace_argument(call, passed, value)),))
        return None


_SHOWING = {"print", "len", "str", "repr", "format", "range", "enumerate", "isinstance", "type", "zip", "tqdm"}


def _reshuffles_given(found) -> bool:
    """Whether a function (of the source or the project) changes the dataset of a loader it
    is given and iterates: calls a method of it for its effect (`train_dl.dataset.shuffleSamples()`,
    not a value read, `loader.dataset.decode_target(pred)`)."""
    if found is None:
        return False
    given = iterated(found)
    return any(type(node) is ast.Expr and type(call := node.value) is ast.Call and type(call.func) is ast.Attribute and any(
        f"{ast_dotted(call.func.value)}.".startswith(f"{param}.dataset.") for param in given) for node in ast.walk(found[0]))


def _works(loop: cst.For | cst.While) -> bool:
    """Whether a loop over batches does something with them beyond showing or moving them
    (`print(x.shape); x = x.to(device); break`: a demo of the loader): a call of anything but
    a builtin that shows them, or a method of the batch itself."""
    batch = set(names_in_target(loop.target)) if type(loop) is cst.For else set()
    pending: list[cst.CSTNode] = [loop.body]
    while pending:  # (the first call that works answers: no need to list the whole body)
        node = pending.pop()
        pending.extend(children(node))
        if type(node) is not cst.Call:
            continue
        func = node.func
        if type(func) is cst.Name and func.value in _SHOWING:
            continue
        if type(func) is cst.Attribute and (root_name(func.value) in batch or type(func.value) in (
                cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            continue  # (`x.to(device)`, `y.size()`, `'{}'.format(...)`)
        return True
    return False


def _replaced(loop: cst.For, outer: cst.CSTNode, loader: Site, scope, ctx) -> bool:
    """Whether the name `loop` iterates (through `tqdm(...)`, `enumerate(...)`, a progress bar
    bound to one) is bound to a new loader inside `outer`, the loop repeating it, while `loader`
    was made before `outer`: each loader is read once (pytorch-ood's new random split of
    outliers every epoch, `train_loader = DataLoader(...)` at the end of the epoch)."""
    iterable = iteration_source(loop.iter)
    for _ in range(4):  # (`bar = tqdm(loader)`, `with tqdm(loader) as bar:`: the name the bar iterates)
        made = ctx.origin(iterable, scope) if type(iterable) is cst.Name else None
        if made is None or type(made[0]) is not cst.Call or call_name(made[0]) not in ITER_WRAPPERS:
            break
        iterable = iteration_source(made[0])
    inside, bound = remembered(_replaced, outer, lambda: _bindings(outer))
    if type(iterable) is not cst.Name or id(loader.node) in inside:
        return False

    def same(value: cst.BaseExpression) -> bool:  # `active_dataloader = train_dataloader`, or
        given = [arg.value for arg in value.args] if type(value) is cst.Call else [value]  # `skip_first_batches(train_dataloader, n)`
        return any(type(v) is cst.Name and any(made is loader.node for made, _ in ctx.by_name.get(v.value, ())) for v in given)

    return any(not same(value) for value in bound.get(iterable.value, ()))


def _bindings(outer: cst.CSTNode) -> tuple[frozenset[int], dict[str, list[cst.BaseExpression]]]:
    """The ids of the nodes of `outer`, and the values its `name = value` statements bind to each name."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    nodes = walk(outer)
    for node in nodes:
        if type(node) is cst.Assign:
            for name in {target.target.value for target in node.targets if type(target.target) is cst.Name}:
                bound.setdefault(name, []).append(node.value)
    return frozenset(map(id, nodes)), bound
