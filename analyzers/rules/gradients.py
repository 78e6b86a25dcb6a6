"""TPL502-503: autograd work nobody uses (evaluation with gradients, zeroed gradient buffers)."""

from __future__ import annotations

import builtins
import functools
import os
from typing import NamedTuple, cast

import libcst as cst

from ..context import IF, CallSite, Frame, Site, WITH, module_below
from ..nodes import argument, call_name, children, code, dotted, iteration_source, keyword, literal, remembered, walk
from ..project import derives_from, maybe_project_call, no_grad_helpers, project_bases
from ..importers import unused_function
from .base import CallNames, Example, FixPlan, Here, InsertLineBefore, Replace
from .edits import replace_argument, root_name
from .timing import torch_alias
from .tracking import Nesting, TrainingSteps, few_iterations, interval_test, iterates_dataloader
from ..vocabulary import MODEL_WORDS, MODULE_CLASSES, SIZED_FACTORIES

NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
           "torch.autograd.grad_mode.inference_mode"}
SET_GRAD_ENABLED = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}
_EVAL_WORDS = {"val", "valid", "validate", "validation", "eval", "evaluate", "evaluating", "evaluation", "inference", "infer",
               "predict", "prediction"}
_GRAD_USES = {"backward", "grad", "requires_grad_", "retain_grad", "autograd", "enable_grad"}
_LOSS_WORDS = ("loss", "criterion")  # a callee named so computes a loss of what a model gave
_BENIGN_GRAD_METHODS = {"zero_", "detach_", "requires_grad_", "is_sparse"}


class _Loop(NamedTuple):  # a tuple: one per loop of every analysis (a frozen dataclass is slow to make)
    site: Site
    frames: tuple[Frame, ...]
    function: cst.FunctionDef | None
    order: int

    @property
    def node(self) -> cst.For | cst.While:
        return cast(cst.For, self.site.node)  # visit_For makes a _Loop for a loop only


def _evaluation_name(name: str, path: str | None = None) -> bool:
    """Named for evaluation (`validate`, `eval_epoch`, `test`, `run_test`), or, outside a
    pytest module, for a test of what it names (`test_env`: episodes of a trained policy)."""
    words = name.lower().strip("_").split("_")
    tests = path is not None and not os.path.basename(path).startswith("test_") and not path.endswith("_test.py")
    return name == "test" or name.endswith("_test") or bool(set(words) & _EVAL_WORDS) or tests and words[0] == "test"


class EvaluationWithGradients(Nesting):
    """
    ## What it does
    Finds an evaluation loop that runs the model with autograd on: a loop (`for`, or `while not
    done:` over an environment's episode) calling the
    model after `model.eval()` (in its function, or in every caller: the last mode the caller
    gives the module it passes is evaluation), or inside a function named for validation (`validate`,
    `evaluate`, `eval_epoch`, `run_inference`, `predict`, `test`, and outside a pytest module
    `test_env`; not a helper nested in another function, named for its part there), or, in code
    that uses a GPU, a loop over a DataLoader of the source named for evaluation (`test_loader`,
    `val_db`) in each pass of the epoch loop that trains, with no `model.eval()` to say so, or
    at the top level of a script or notebook named for evaluation that trains nowhere (vdsr's
    `eval.py`, a `test.py`, a `test_*.py` of scripts, `Evaluating_DETR_on_COCO_validation_2017.ipynb`:
    its images through the model, `Variable` or not), with no
    `torch.no_grad()` / `torch.inference_mode()` around it (a `with`, a decorator, or the
    callers' `with` or decorator: around every call that repeats, also through a function so
    called; a method a base class of another file calls under it: torchlake's `_predict`), and no gradient use (`backward`, `torch.autograd.grad`,
    `requires_grad_`) in the function, nor a training step in the loop (timm's `loss_scaler(loss,
    optimizer)` after a first validation left the model in evaluation mode).

    A model call counts only where it runs with gradients: not inside a no-grad `with`
    opened in the loop body, and not on a module whose parameters are all frozen
    (`model.requires_grad_(False)`, `p.requires_grad = False` for every
    `p in model.parameters()`, unless some are given gradients again). No-grad means
    torch's context managers and decorators, an alias of them (`no_grad = torch.no_grad`),
    a decorator or context manager named for them (`@utils.no_grad`), a decorator or
    `@contextmanager` of the same source that applies them, and
    `torch.set_grad_enabled(flag)` with anything but `True` (the author choosing the mode).
    A loop of a few iterations (`for i in range(5):`, a handful of predictions to show)
    is left alone, and so is, in a script or notebook that trains, a loop of the module's
    own statements outside any loop or function, or of a function that only such statements
    call: a test pass before or after training, run once.

    In code that uses CUDA, also the rest of a training loop's body after its step puts the
    model in evaluation mode (`model.eval()`, then `vloss = loss_fn(model(x_test), y_test)`
    in each epoch, until `model.train()`), when it runs the model with autograd on and
    computes no gradient; so too the rest of a function that steps and is called in a loop
    (pygcn's `train(epoch)`: a step, then `model.eval(); output = model(features, adj)`), and a
    branch a training loop takes every N steps (`if step % 50 == 0:`) that runs the module it
    trains on held-out data (`test_output = cnn(test_x)`) and computes no gradient.

    ## Why is this bad?
    `model.eval()` only switches dropout and batch norm to inference behaviour; autograd
    still records every operation and keeps every activation alive until the outputs are
    dropped. Evaluation then uses several times the memory it needs (limiting the batch
    size) and runs slower than under `no_grad`.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum()
    ```

    ## Fix
    ```python
    @torch.no_grad()
    def validate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum()
    ```
    (or `torch.inference_mode()` when the outputs never meet autograd again).
    """

    code = "TPL502"
    name = "evaluation-with-gradients"
    summary = "Evaluation loop (after model.eval() or in validate()) without torch.no_grad()"
    triggers = ("eval", "val", "test", "infer", "predict")  # .eval() or an evaluation function
    calls = CallNames(frozenset({"set_grad_enabled", "eval", "train", "requires_grad_"}))
    probe = "memory"
    VALID = (
        # every N steps the held-out batch feeds a loss that is backpropagated (a consistency term)
        Example(
            """
            import torch
            cnn = CNN().cuda()
            for step, (x, y) in enumerate(train_loader):
                loss = loss_func(cnn(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                if step % 50 == 0:
                    consistency = cnn(val_x).var()
                    consistency.backward()
            """
        ),
        # a module's own decoding loop, named for inference: its caller decides whether gradients
        # are on (Tacotron's `Decoder.inference`, run by a notebook's one demo sentence)
        Example(
            """
            import torch
            class Decoder(torch.nn.Module):
                def inference(self, memory):
                    outputs, stop = [], False
                    while not stop:
                        output, gate = self.decoder_rnn(memory)
                        outputs.append(output)
                        stop = len(outputs) == self.max_steps
                    return torch.stack(outputs)
            decoder = Decoder().cuda()
            for epoch in range(100):
                decoder(batch.cuda()).mean().backward()
                optimizer.step()
            """
        ),
        # every call repeated is under no_grad; the test pass after training runs once
        Example(
            """
            import torch
            def compute_accuracy(model, data_loader):
                correct = 0
                for features, targets in data_loader:
                    correct += (model(features.cuda()).argmax(1) == targets.cuda()).sum()
                return correct
            for epoch in range(10):
                model.train()
                for features, targets in train_loader:
                    criterion(model(features.cuda()), targets.cuda()).backward()
                    optimizer.step()
                model.eval()
                with torch.set_grad_enabled(False):
                    print(compute_accuracy(model, train_loader))
            print(compute_accuracy(model, test_loader))
            """
        ),
        # called in a function that every call runs under no_grad
        Example(
            """
            import torch
            def validation(model, loader):
                model.eval()
                for x, y in loader:
                    model(x.cuda())
            def benchmark_all_eval(model, names):
                for name in names:
                    validation(model, make_loader(name))
            def test(model, loader):
                with torch.no_grad():
                    benchmark_all_eval(model, NAMES)
                    validation(model, loader)
            """
        ),
        # a helper nested in the renderer, named for what it does there: training runs it too
        Example(
            """
            import torch
            def render_rays(models, rays, chunk=1024):
                def inference(model, xyz):
                    out_chunks = []
                    for i in range(0, xyz.shape[0], chunk):
                        out_chunks += [model(xyz[i:i + chunk])]
                    return torch.cat(out_chunks, 0)
                return inference(models[0].cuda(), rays.cuda())
            """,
        ),
        # the same evaluation under no_grad
        Example(
            """
            import torch
            model = Net().to("cuda")
            for epoch in range(1000):
                model.train()
                loss = loss_fn(model(x_train), y_train)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                model.eval()
                with torch.no_grad():
                    vloss = loss_fn(model(x_test), y_test)
            """
        ),
        # a test pass after each training run of a sweep (bat67's MNIST adder): once per run
        Example(
            """
            import torch
            for fraction in [20, 10, 5]:
                model = Transfer().cuda()
                for epoch in range(20):
                    for images, labels in subset_loader(fraction):
                        F.mse_loss(model(images.cuda()), labels.cuda()).backward()
                        opt.step()
                model.eval()
                for images, labels in test_loader:
                    results[fraction] += (model(images.cuda()).argmax(1) == labels.cuda()).sum()
            """
        ),
        # a function the script calls once, before training: nothing repeats it
        Example(
            """
            import torch
            model = torch.nn.Linear(8, 2)
            def test():
                for x, y in test_loader:
                    print((model(x).argmax(1) == y).float().mean())
            test()
            for epoch in range(10):
                for x, y in loader:
                    model(x).sum().backward()
                    optimizer.step()
            """
        ),
        # a test pass after training, once, at the top of a script
        Example(
            """
            import torch
            for epoch in range(10):
                model.train()
                for x, y in train_loader:
                    criterion(model(x), y).backward()
                    optimizer.step()
            model.eval()
            for x, y in test_loader:
                correct += (model(x).argmax(1) == y).sum()
            """
        ),
        Example(
            """
            import torch
            def validate(model, loader):
                model.eval()
                with torch.no_grad():
                    for x, y in loader:
                        model(x)
            """,
        ),
        Example(
            """
            import torch
            model.eval()
            num_to_plot = 5
            for i in range(num_to_plot):
                img, label = test_data[i]
                print(label, model(img.unsqueeze(0).cuda()).argmax(1).item())
            """,
        ),
        Example(
            """
            import torch
            @torch.inference_mode()
            def evaluate(model, loader):
                for x in loader:
                    model(x)
            """,
        ),
        Example(
            """
            import torch
            def attack(model, loader):
                model.eval()
                for x, y in loader:
                    x.requires_grad_(True)
                    model(x).sum().backward()
            """,
        ),
        Example(
            """
            import torch
            def evaluate(model, loader):
                for x in loader:
                    model(x)
            with torch.no_grad():
                evaluate(model, val_loader)
            """,
        ),
        Example(
            """
            import torch
            model.train()
            for x in loader:
                model(x).sum().backward()
            """,
        ),
        # no_grad opened inside the loop, around the model call
        Example(
            """
            import torch
            def test_model(net, loader):
                net.eval()
                for x, y in loader:
                    x = x.to(device)
                    with torch.no_grad():
                        preds = net(x).argmax(-1)
                    correct += (preds == y).sum()
            """,
        ),
        Example(
            """
            import torch
            model.eval()
            for x in loader:
                with torch.inference_mode():
                    out = model(x)
                show(out)
            """,
        ),
        # evaluation nested in a training function
        Example(
            """
            import torch
            def main(model, train_loader, eval_loader):
                def evaluation(model, loader):
                    model.eval()
                    for batch in loader:
                        with torch.no_grad():
                            outputs = model(**batch)
                        losses += outputs.loss.float()
                for batch in train_loader:
                    model(**batch).loss.backward()
                evaluation(model, eval_loader)
            """,
        ),
        # decorators that wrap no_grad: an alias, one named for it, one of the source applying it
        Example(
            """
            import torch
            no_grad = torch.no_grad
            @no_grad()
            def evaluate(model, loader):
                for x in loader:
                    model(x)
            """,
        ),
        Example(
            """
            import torch
            import utils
            @utils.no_grad
            def validate(model, loader):
                for x in loader:
                    model(x)
            """,
        ),
        Example(
            """
            import torch, functools
            def without_grad(fn):
                @functools.wraps(fn)
                def wrapper(*a, **k):
                    with torch.no_grad():
                        return fn(*a, **k)
                return wrapper
            @without_grad
            def evaluate(model, loader):
                for x in loader:
                    model(x)
            """,
        ),
        Example(
            """
            import torch
            from contextlib import contextmanager
            @contextmanager
            def evaluating(model):
                model.eval()
                with torch.no_grad():
                    yield
                model.train()
            def evaluate(model, loader):
                with evaluating(model):
                    for x in loader:
                        model(x)
            """,
        ),
        # called from a function decorated with no_grad
        Example(
            """
            import torch
            def validation_loss(loader, model):
                for x, y in loader:
                    loss(model(x), y)
            @torch.no_grad()
            def evaluate_model(model, loader):
                model.eval()
                return validation_loss(loader, model)
            """,
        ),
        # the author picks the mode per phase
        Example(
            """
            import torch
            def train_or_validate(model, loader, train):
                model.train(train)
                for x, y in loader:
                    with torch.set_grad_enabled(train):
                        out = model(x)
            """,
        ),
        # a frozen trunk: no parameter of the module requires gradients
        Example(
            """
            import torch
            backbone = load_backbone()
            backbone.requires_grad_(False)
            backbone.eval()
            for x, y in loader:
                feats = backbone(x)
                store(feats, y)
            """,
        ),
        Example(
            """
            import torch
            for p in encoder.parameters():
                p.requires_grad = False
            def evaluate(encoder, loader):
                encoder.eval()
                for x in loader:
                    encoder(x)
            """,
        ),
        Example(
            """
            import torch
            class Probe:
                def __init__(self, model):
                    self.model = model.eval().requires_grad_(False)
                def predict(self, loader):
                    for x in loader:
                        yield self.model(x)
            """,
        ),
    )
    INVALID = (
        # a test pass over `test_loader` in each epoch of a GPU script, with neither `model.eval()`
        # nor `no_grad` (dragen1860's lessons); the loader's name says what the loop is for
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            train_loader = DataLoader(train_set, batch_size=200, shuffle=True)
            test_loader = DataLoader(test_set, batch_size=200)
            net = MLP().to("cuda")
            for epoch in range(10):
                for data, target in train_loader:
                    loss = criteon(net(data.cuda()), target.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                correct = 0
                for data, target in test_loader:
                    logits = net(data.cuda())
                    correct += logits.argmax(dim=1).eq(target.cuda()).sum()
            """,
        ),
        # the caller's epoch loop trains, then puts the model in eval mode and calls the helper
        # (deeplearning-models' `compute_accuracy`); the test pass after it is under no_grad
        Example(
            """
            import torch
            def compute_accuracy(model, data_loader):
                correct = 0
                for features, targets in data_loader:
                    logits = model(features.cuda())
                    correct += (logits.argmax(1) == targets.cuda()).sum()
                return correct
            for epoch in range(10):
                model = model.train()
                for features, targets in train_loader:
                    loss = criterion(model(features.cuda()), targets.cuda())
                    loss.backward()
                    optimizer.step()
                model = model.eval()
                print(compute_accuracy(model, train_loader))
            with torch.set_grad_enabled(False):
                print(compute_accuracy(model, test_loader))
            """,
            """
            import torch
            @torch.no_grad()
            def compute_accuracy(model, data_loader):
                correct = 0
                for features, targets in data_loader:
                    logits = model(features.cuda())
                    correct += (logits.argmax(1) == targets.cuda()).sum()
                return correct
            for epoch in range(10):
                model = model.train()
                for features, targets in train_loader:
                    loss = criterion(model(features.cuda()), targets.cuda())
                    loss.backward()
                    optimizer.step()
                model = model.eval()
                print(compute_accuracy(model, train_loader))
            with torch.set_grad_enabled(False):
                print(compute_accuracy(model, test_loader))
            """,
        ),
        # the training loop tests the model on its last batch of each epoch, autograd still on
        Example(
            """
            import torch
            model = Net().to("cuda")
            for epoch in range(1000):
                model.train()
                for i, (x, y) in enumerate(loader):
                    loss = loss_fn(model(x.cuda()), y.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    if i == len(loader) - 1:
                        model.eval()
                        vloss = loss_fn(model(x_test), y_test)
                        print(epoch, vloss.item())
            """
        ),
        # MorvanZhou's tutorial: the test set run every 50 steps inside the training loop
        Example(
            """
            import torch
            class CNN(torch.nn.Module):
                def forward(self, x):
                    return self.out(self.conv(x).flatten(1))
            test_x = test_images[:2000].cuda()
            cnn = CNN().cuda()
            for epoch in range(1):
                for step, (x, y) in enumerate(train_loader):
                    loss = loss_func(cnn(x.cuda()), y.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    if step % 50 == 0:
                        test_output = cnn(test_x)
                        accuracy = (test_output.argmax(1) == test_y).float().mean()
            """
        ),
        # pygcn: the function that steps, called every epoch, then evaluates the full graph
        Example(
            """
            import torch
            model = GCN().cuda()
            def train(epoch):
                model.train()
                optimizer.zero_grad()
                output = model(features, adj)
                loss_train = F.nll_loss(output[idx_train], labels[idx_train])
                loss_train.backward()
                optimizer.step()
                if not fastmode:
                    model.eval()
                    output = model(features, adj)
                loss_val = F.nll_loss(output[idx_val], labels[idx_val])
            for epoch in range(200):
                train(epoch)
            """
        ),
        # validation every N steps over two loaders read together, inputs wrapped in `Variable`
        Example(
            """
            import torch
            from torch.autograd import Variable
            val_loader1 = torch.utils.data.DataLoader(test_dataset, batch_size=64, sampler=sampler1)
            val_loader2 = torch.utils.data.DataLoader(test_dataset, batch_size=64, sampler=sampler2)
            for epoch in range(20):
                for idx, ((x1, y1), (x2, y2)) in enumerate(zip(train_loader1, train_loader2)):
                    net.train()
                    loss = criterion(net(Variable(x1.cuda()), Variable(x2.cuda())), (y1 + y2).cuda())
                    loss.backward()
                    optimizer.step()
                    if idx % 100 == 0:
                        net.eval()
                        for (x1, y1), (x2, y2) in zip(val_loader1, val_loader2):
                            outputs = net(Variable(x1.cuda()), Variable(x2.cuda()))
            """
        ),
        # a notebook freezing another network under the same name later (bat67's ants and bees)
        Example(
            """
            import torch
            net = ConvNet().cuda()
            for epoch in range(20):
                for x, y in train_loader:
                    loss = criterion(net(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
                net.eval()
                for x, y in val_loader:
                    right += (net(x.cuda()).argmax(1) == y.cuda()).sum()
            net = torchvision.models.resnet18(pretrained=True).cuda()
            for param in net.parameters():
                param.requires_grad = False
            """
        ),
        # darts: the module put in evaluation mode is called through the name wrapping it
        Example(
            """
            import torch
            model = RNNModel().cuda()
            parallel_model = torch.nn.DataParallel(model, dim=1).cuda()
            def evaluate(data_source):
                model.eval()
                for i in range(0, data_source.size(0) - 1, 35):
                    log_prob, hidden = parallel_model(data_source[i:i + 35], hidden)
            """,
            fixed="""
            import torch
            model = RNNModel().cuda()
            parallel_model = torch.nn.DataParallel(model, dim=1).cuda()
            @torch.no_grad()
            def evaluate(data_source):
                model.eval()
                for i in range(0, data_source.size(0) - 1, 35):
                    log_prob, hidden = parallel_model(data_source[i:i + 35], hidden)
            """,
        ),
        # PyTorch 0.3's evaluation: `volatile=True` turns nothing off today
        Example(
            """
            import torch
            from torch.autograd import Variable
            test_loader = torch.utils.data.DataLoader(test_set, batch_size=100)
            for epoch in range(10):
                model.train()
                for img, label in train_loader:
                    loss = criterion(model(Variable(img).cuda()), Variable(label).cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                model.eval()
                for img, label in test_loader:
                    img = Variable(img, volatile=True).cuda()
                    out = model(img)
            """,
        ),
        # the same over a loader another module makes (pytorch-playground): a batch wrapped
        # `volatile` says the author meant no gradients, so the plain `Variable` beside it asks for none
        Example(
            """
            import torch
            from torch.autograd import Variable
            import dataset
            train_loader, test_loader = dataset.get10(batch_size=200)
            for epoch in range(150):
                model.train()
                for data, target in train_loader:
                    data, target = Variable(data.cuda()), Variable(target.cuda())
                    loss = criterion(model(data), target)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                model.eval()
                for data, target in test_loader:
                    data, target = Variable(data.cuda(), volatile=True), Variable(target.cuda())
                    output = model(data)
            """,
        ),
        # the caller puts the model in evaluation mode and hands it over (vq-vae-2's extract_code.py)
        Example(
            """
            import torch
            def extract(loader, model):
                codes = []
                for img, _ in loader:
                    codes.append(model(img.cuda()).argmax(1).cpu())
                return codes
            model = VQVAE().cuda()
            model.load_state_dict(torch.load("vqvae.pt"))
            model.eval()
            codes = extract(torch.utils.data.DataLoader(dataset, batch_size=128), model)
            """,
            """
            import torch
            @torch.no_grad()
            def extract(loader, model):
                codes = []
                for img, _ in loader:
                    codes.append(model(img.cuda()).argmax(1).cpu())
                return codes
            model = VQVAE().cuda()
            model.load_state_dict(torch.load("vqvae.pt"))
            model.eval()
            codes = extract(torch.utils.data.DataLoader(dataset, batch_size=128), model)
            """,
        ),
        # episodes of the policy in a `test_env()` a training loop calls every 1000 frames (RL-Adventure)
        Example(
            """
            import torch
            def test_env():
                state, done, total = env.reset(), False, 0
                while not done:
                    dist, _ = model(torch.FloatTensor(state).unsqueeze(0).to(device))
                    state, reward, done, _ = env.step(dist.sample().cpu().numpy()[0])
                    total += reward
                return total
            device = torch.device("cuda")
            model = ActorCritic().to(device)
            for frame in range(100000):
                train_step(model)
                if frame % 1000 == 0:
                    print(test_env())
            """,
            """
            import torch
            @torch.no_grad()
            def test_env():
                state, done, total = env.reset(), False, 0
                while not done:
                    dist, _ = model(torch.FloatTensor(state).unsqueeze(0).to(device))
                    state, reward, done, _ = env.step(dist.sample().cpu().numpy()[0])
                    total += reward
                return total
            device = torch.device("cuda")
            model = ActorCritic().to(device)
            for frame in range(100000):
                train_step(model)
                if frame % 1000 == 0:
                    print(test_env())
            """,
        ),
        # the same, in a `test()` given the loader as a parameter (densenet.pytorch)
        Example(
            """
            import torch
            from torch.autograd import Variable
            def test(net, test_loader):
                net.eval()
                for data, target in test_loader:
                    data, target = Variable(data.cuda(), volatile=True), Variable(target.cuda())
                    loss = criterion(net(data), target)
            loader = torch.utils.data.DataLoader(test_set, batch_size=64)
            for epoch in range(300):
                train(net, train_loader)
                test(net, loader)
            """,
            """
            import torch
            from torch.autograd import Variable
            @torch.no_grad()
            def test(net, test_loader):
                net.eval()
                for data, target in test_loader:
                    data, target = Variable(data.cuda(), volatile=True), Variable(target.cuda())
                    loss = criterion(net(data), target)
            loader = torch.utils.data.DataLoader(test_set, batch_size=64)
            for epoch in range(300):
                train(net, train_loader)
                test(net, loader)
            """,
        ),
        # a module held by a name that does not say so (`classifier`), run in `test()` every epoch
        Example(
            """
            import torch
            class RNNClassifier(torch.nn.Module):
                def forward(self, x):
                    return self.fc(x)
            classifier = RNNClassifier()
            def test():
                correct = 0
                for x, y in test_loader:
                    correct += (classifier(x).argmax(1) == y).sum()
                return correct
            for epoch in range(100):
                train(epoch)
                test()
            """,
            """
            import torch
            class RNNClassifier(torch.nn.Module):
                def forward(self, x):
                    return self.fc(x)
            classifier = RNNClassifier()
            @torch.no_grad()
            def test():
                correct = 0
                for x, y in test_loader:
                    correct += (classifier(x).argmax(1) == y).sum()
                return correct
            for epoch in range(100):
                train(epoch)
                test()
            """,
        ),
        # validation every N steps inside the function that trains
        Example(
            """
            import torch
            def train(net, data, val_data, epochs=10):
                for e in range(epochs):
                    for step, (x, y) in enumerate(batches(data)):
                        net.train()
                        loss = criterion(net(x), y)
                        loss.backward()
                        opt.step()
                        if step % 10 == 0:
                            net.eval()
                            for vx, vy in batches(val_data):
                                val_loss = criterion(net(vx), vy)
            """,
        ),
        Example(
            """
            import torch
            def validate(model, loader, device):
                model.eval()
                correct = 0
                for x, y in loader:
                    out = model(x.to(device))
                    correct += (out.argmax(1) == y).sum()
                return correct
            """,
            """
            import torch
            @torch.no_grad()
            def validate(model, loader, device):
                model.eval()
                correct = 0
                for x, y in loader:
                    out = model(x.to(device))
                    correct += (out.argmax(1) == y).sum()
                return correct
            """,
        ),
        Example(
            """
            import torch
            net.eval()
            for images, labels in test_loader:
                outputs = net(images)
            """,
        ),
        # no_grad in the loop, but the model also runs outside it
        Example(
            """
            import torch
            model.eval()
            for x in loader:
                with torch.no_grad():
                    ref = model(x)
                out = model(x.flip(-1))
            """,
        ),
        # evaluation nested in a training function, without no_grad
        Example(
            """
            import torch
            def main(model, train_loader, eval_loader):
                def evaluation(model, loader):
                    model.eval()
                    for batch in loader:
                        outputs = model(**batch)
                for batch in train_loader:
                    model(**batch).loss.backward()
                evaluation(model, eval_loader)
            """,
            """
            import torch
            def main(model, train_loader, eval_loader):
                @torch.no_grad()
                def evaluation(model, loader):
                    model.eval()
                    for batch in loader:
                        outputs = model(**batch)
                for batch in train_loader:
                    model(**batch).loss.backward()
                evaluation(model, eval_loader)
            """,
        ),
        # a decorator of the source that does not turn gradients off
        Example(
            """
            import torch, time
            def timed(fn):
                def wrapper(*a):
                    start = time.time()
                    return fn(*a)
                return wrapper
            @timed
            def evaluate(model, loader):
                for x in loader:
                    model(x)
            """,
            """
            import torch, time
            def timed(fn):
                def wrapper(*a):
                    start = time.time()
                    return fn(*a)
                return wrapper
            @timed
            @torch.no_grad()
            def evaluate(model, loader):
                for x in loader:
                    model(x)
            """,
        ),
        # the trunk is frozen but some of its layers are trained again
        Example(
            """
            import torch
            for p in model.parameters():
                p.requires_grad = False
            for p in model.head.parameters():
                p.requires_grad = True
            model.eval()
            for x in loader:
                out = model(x)
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.loops: list[_Loop] = []
        # model.eval() / model.train(): (site, receiver, eval?, order)
        self.modes: list[tuple[Site, cst.BaseExpression, bool, int]] = []
        self.no_grad_withs: dict[int, cst.With] = {}
        self.pending_withs: list[tuple[cst.With, Site]] = []  # `with f(...)`: f may be a no_grad helper of the file
        self.grad_disabled: set[int] = set()  # scopes that call torch.set_grad_enabled(False)
        self.frozen: dict[str, list[tuple[int, cst.CSTNode | None]]] = {}  # modules whose parameters are all set to
        # requires_grad False -> when (0: in a function) and the `if` whose body holds the freeze
        self.rebound: dict[str, list[int]] = {}  # names the module binds again -> when (a new, trainable module)
        self.unfrozen: set[str] = set()  # modules (or parts of them) given requires_grad True again
        self._no_grad_helpers: dict[int, bool] = {}  # id(function) -> whether it applies no_grad
        self._modes_without_grad: set[int] = set()  # ids of the `.eval()`/`.train()` calls under a no-grad `with`
        self.count = 0

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            expr = item.item
            if type(expr) is not cst.Call:  # `with ctx:` where ctx = torch.no_grad()
                found = self.ctx.origin(expr, self.ctx.scope) if type(expr) in (cst.Name, cst.Attribute) else None
                expr = found[0] if found is not None else expr
            if type(expr) is cst.Call and self._turns_off(expr):
                self.no_grad_withs[id(node)] = node
                return
        if any(type(item.item) is cst.Call for item in node.items):
            self.pending_withs.append((node, self.ctx.site(node)))

    def _turns_off(self, call: cst.Call) -> bool:
        """Whether the call makes a no-grad context (or decorator): torch's, a project's alias
        of it, or a helper named for it (`utils.no_grad()`)."""
        qualified = self._qualified(call.func)
        if qualified in NO_GRAD or _no_grad_name(call.func):
            mode = argument(call, 0, "mode")
            return mode is None or literal(mode) is True
        if qualified in SET_GRAD_ENABLED:
            # set_grad_enabled(False) turns autograd off; set_grad_enabled(is_train) is the
            # author choosing the mode per phase: either way not gradients left on by mistake
            mode = argument(call, 0, "mode")
            return mode is not None and literal(mode) is not True
        return False

    def _qualified(self, func: cst.BaseExpression) -> str:
        """The callee's qualified name, through a module-level alias (`no_grad = torch.no_grad`)."""
        qualified = self.ctx.qualname(func)
        if qualified is None and type(func) is cst.Name:
            found = self.ctx.origin(func, self.ctx.module_scope)
            if found is not None and found[0] is not func and type(found[0]) in (cst.Name, cst.Attribute):
                qualified = self.ctx.qualname(found[0])
        return qualified or ""

    def _without_grad(self) -> bool:
        return any(f.kind == WITH and id(f.node) in self.no_grad_withs for f in self.local_frames())

    def visit_For(self, node: cst.For | cst.While) -> None:
        self.count += 1
        self.loops.append(_Loop(self.ctx.site(node), self.local_frames(), self.function(), self.count))

    visit_While = visit_For  # (an episode of an environment, `while not done:`; see `_decoding`)

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name == "set_grad_enabled" and not self._without_grad() and self._turns_off(node):
            self.grad_disabled.add(id(self.ctx.scope))
        if type(node.func) is cst.Attribute and name in ("eval", "train"):
            train = name == "train" and (not node.args or literal(node.args[0].value) is not False)
            self.count += 1
            self.modes.append((self.ctx.site(node), node.func.value, not train, self.count))
            if self._without_grad():
                self._modes_without_grad.add(id(node))
        elif name == "requires_grad_" and type(node.func) is cst.Attribute:
            flag = argument(node, 0, "requires_grad")
            self._requires_grad(node.func.value, flag is None or literal(flag) is not False, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:  # `p.requires_grad = False` for p in model.parameters()
            if type(target.target) is cst.Attribute and target.target.attr.value == "requires_grad":
                self._requires_grad(target.target.value, literal(node.value) is not False, None)
            elif type(target.target) is cst.Name and self.ctx.scope is self.ctx.module_scope:
                self.count += 1
                self.rebound.setdefault(target.target.value, []).append(self.count)

    def _requires_grad(self, receiver: cst.BaseExpression, on: bool, call: cst.Call | None) -> None:
        """Note a module frozen (`model.requires_grad_(False)`, `p.requires_grad = False` for
        every p in `model.parameters()`, `model = M().eval().requires_grad_(False)`) or a
        module (or a part of one) given gradients again."""
        module = _parameters_owner(receiver, self.ctx.loops)
        statement = self.ctx.statement
        small = statement.body[0] if statement is not None and statement.body else None
        if module is None and call is not None and type(small) is cst.Assign and small.value is call:
            if len(small.targets) == 1:  # model = Model().eval().requires_grad_(False)
                module = dotted(small.targets[0].target)
        if module is None and (call is not None or on):  # `module.requires_grad = False` freezes nothing
            module = _module_path(module_below(receiver))  # model.eval().requires_grad_(False)
        if module is not None:
            if on:
                self.unfrozen.add(module)
            else:
                self.count += 1
                module_level = self.ctx.scope is self.ctx.module_scope
                branch = next((f.node for f in reversed(self.local_frames()) if f.kind == IF), None) if module_level else None
                self.frozen.setdefault(module, []).append((self.count if module_level else 0, branch))

    def _frozen(self, name: str, loop: _Loop | None = None) -> bool:
        """Whether every parameter of the module `name` was set not to require gradients; for a
        loop of the module's statements, by a freeze before it that no statement binding `name`
        again follows (not a notebook freezing `net` in a later cell, or in an earlier one before
        `net = ConvNet()`), and not in the body of an `if` the loop is outside (one experiment
        of several). A freeze in a function holds everywhere."""
        if any(u == name or u.startswith(name + ".") for u in self.unfrozen):
            return False
        at = loop.order if loop is not None and loop.site.scope is self.ctx.module_scope else 0
        rebound = self.rebound.get(name, ())
        around = {id(f.node) for f in loop.frames} if loop is not None else set()
        return any(not at or not when or when < at and not any(when < again < at for again in rebound) and (
            branch is None or id(branch) in around) for when, branch in self.frozen.get(name, ()))

    def _resolve_pending_withs(self) -> None:
        """`with helper(...)`, where helper is a function of this source that opens no_grad
        (a contextmanager around `with torch.no_grad(): yield`) or is named for it."""
        for node, site in self.pending_withs:
            for item in node.items:
                call = item.item
                if type(call) is cst.Call and self._helper_applies_no_grad(call.func):
                    self.no_grad_withs[id(node)] = node
                    break

    def _helper_applies_no_grad(self, func: cst.BaseExpression) -> bool:
        """Whether `func` names a function of this source whose body turns autograd off (a
        decorator wrapping its argument in `with torch.no_grad()`, `torch.no_grad()(fn)`)."""
        name = func.value if type(func) is cst.Name else None
        if name is None or name in self.ctx.imports:
            return False
        definitions = self.ctx.functions.get(name)
        if not definitions:
            return False
        helper = definitions[-1][0]
        found = self._no_grad_helpers.get(id(helper))
        if found is None:
            self._no_grad_helpers[id(helper)] = False  # a recursive helper is not one
            found = False
            for node in _withs_and_calls(helper.body):
                if type(node) is cst.Call:
                    callee = node.func.func if type(node.func) is cst.Call else node.func  # torch.no_grad()(fn)
                    found = self._qualified(callee) in NO_GRAD
                else:
                    found = id(node) in self.no_grad_withs
                if found:
                    break
            self._no_grad_helpers[id(helper)] = found
        return found

    def finish(self) -> None:
        alias = torch_alias(self.ctx)
        reported: set[int] = set()
        self._resolve_pending_withs()
        covered = {call for node in self.no_grad_withs.values() for call in _calls_in(node.body)}
        for definitions in self.ctx.functions.values():  # called from a function that runs under no_grad
            for definition, _ in definitions:
                if definition.decorators and self._decorated(definition):
                    covered |= _calls_in(definition.body)
        called_without_grad: set[str] = set()
        if covered:
            trains = TrainingSteps.of(self.ctx).anywhere()
            for _ in range(3):  # (and the calls in those functions: `validation(...)` in `benchmark_all_eval`, called so)
                called_without_grad = {  # (every call that repeats: not `compute_accuracy(model, train_loader)` each
                    name for name in self.ctx.functions  # epoch, with the test pass under no_grad)
                    if (sites := self.ctx.calls.get(name)) and any(id(site.node) in covered for site in sites) and all(
                        id(site.node) in covered or trains and not site.loops and site.scope.node is None for site in sites)}
                covered |= {call for name in called_without_grad for definition, _ in self.ctx.functions[name]
                            for call in _calls_in(definition.body)}
        for loop in self.loops:
            function = loop.function
            if id(loop.site.scope) in self.grad_disabled or id(function) in reported:
                continue
            if any(f.kind == WITH and id(f.node) in self.no_grad_withs for f in loop.frames):
                continue
            if few_iterations(loop.node, self.ctx, loop.site.scope):
                continue  # a few predictions to show
            if not loop.site.loops and (function is None or self._called_once(function)) and \
                    TrainingSteps.of(self.ctx).anywhere():
                continue  # a test pass after training (or a function only the module calls, once): nothing repeats it
            if loop.site.loops and TrainingSteps.of(self.ctx).per_run(loop.site.loops[-1]):
                continue  # (a test pass after each training run of a sweep: once per run)
            if function is not None and (self._decorated(function) or function.name.value in called_without_grad
                                         or self._inherited_no_grad(function) or unused_function(self.ctx, function)):
                continue
            evaluated = self._evaluated_module(loop)
            script = function is None and evaluated is None and self._evaluation_script()
            named = function is not None and _evaluation_name(function.name.value, self.ctx.path) and not self._nested(function) or script
            held = None if evaluated is not None or named else self._evaluation_loader(loop)
            if evaluated is None and not named and held is None or self._decoding(loop):
                continue
            # inside the training loop, after `model.eval()` (validation every N steps), the
            # loop itself must not use gradients; elsewhere in a function, nowhere in it (a
            # function that trains and then validates once is judged by its training)
            inside = (evaluated is not None or held is not None) and bool(loop.site.loops)
            body = loop.node.body if function is None or inside else function.body
            volatile = any(type(n) is cst.Call and keyword(n, "volatile") is not None for n in walk(loop.node.body))
            # (old code wrapped each tensor in `Variable`, asking for gradients per tensor: not in a
            # pass over a loader, nor in a loop wrapping its batches `volatile`, meant to ask for none,
            # nor in an evaluation script's pass over its test images)
            if _uses_gradients(body, self.ctx, legacy=not self._over_loader(loop) and not volatile and not script) or \
                    TrainingSteps.of(self.ctx).steps_here(loop.node):  # (`loss_scaler(loss, optimizer)`: a step)
                continue
            call = self._model_call(loop, evaluated)
            if call is None:
                continue
            fix = None
            if function is not None:
                reported.add(id(function))  # one finding per function
                if alias is not None and not inside:  # (decorating a function that trains would stop it)
                    decorator = InsertLineBefore(Site(function, loop.site.unit, loop.site.scope), f"@{alias}.no_grad()")
                    fix = FixPlan("Decorate the function with @torch.no_grad()", (decorator,))
            # (no module evaluated: the function is named for evaluation)
            caller = evaluated is not None and not self._sets_modes(loop.site.scope)
            why = f"over `{held}` in each epoch" if held is not None else f"after `{evaluated}.eval()`{' in the caller' if caller else ''}" \
                if evaluated else f"in `{function.name.value}`" if function is not None else \
                f"of the evaluation {'notebook' if (self.ctx.path or '').endswith('.ipynb') else 'script'} " \
                f"`{os.path.basename(self.ctx.path or '')}`"
            self.report(
                Site(call, loop.site.unit, loop.site.scope),
                f"This evaluation loop ({why}) runs the model with autograd on: every activation is kept for a "
                "backward pass that never comes, costing memory and time. Wrap it in torch.no_grad() (or "
                "torch.inference_mode()); eval() alone does not turn gradients off"
                + (", and `Variable(..., volatile=True)` has done nothing since PyTorch 0.4." if volatile else "."),
                fix,
                related=(Here(loop.site, "the evaluation loop"),),
            )
        self._report_evaluation_sections(reported, called_without_grad)
        self._report_interval_evaluations(reported, called_without_grad)

    def _evaluation_script(self) -> bool:
        """Whether the source is a script or notebook named for evaluation (vdsr's `eval.py`, a
        `test.py`, `Evaluating_DETR_on_COCO_validation_2017.ipynb`) that trains nowhere: its
        top-level loops evaluate."""
        stem = os.path.splitext(os.path.basename(self.ctx.path or ""))[0]  # (a `test_dnd.py` holding no tests:
        notebook = self.ctx.path is not None and self.ctx.path.endswith(".ipynb")  # a test suite's are not checked)
        return bool(stem) and self.ctx.path is not None and (_evaluation_name(stem) or not notebook and stem.lower().startswith(
            "test_")) and not TrainingSteps.of(self.ctx).anywhere()

    def _report_evaluation_sections(self, reported: set[int], called_without_grad: set[str]) -> None:
        """A training loop whose body, after its step, puts the model in evaluation mode and runs
        it with autograd on (`model.eval()`, then `val_pred = model(x_val)` in each epoch of a
        full-batch loop; or in a function that steps and is called in a loop, pygcn's `train(epoch)`): the
        rest of the body, until `model.train()`, is an evaluation pass."""
        steps = TrainingSteps.of(self.ctx)
        for site, receiver, evaluation, _ in self.modes if self.ctx.cuda_evidence is not None else ():  # (on a GPU: a
            # forward of a test set with its graph kept, each epoch; on the CPU a small share of the epoch)
            function = site.scope.node
            if site.loops:  # (or the body of a function that steps, called in a loop: pygcn's `train(epoch)`)
                loop = site.loops[-1]
                if type(loop) is not cst.For:
                    continue
            elif function is not None and steps.called_in_loop(function):
                loop = function
            else:
                continue
            name = dotted(receiver)
            if not evaluation or name is None or self._frozen(name) or not steps.steps_here(loop) or id(site.scope) in self.grad_disabled \
                    or id(function) in reported or function is not None and (
                        self._decorated(function) or function.name.value in called_without_grad) \
                    or id(site.node) in self._modes_without_grad:
                continue
            statements = _block_of(loop.body, site.node)
            start = next((i for i, statement in enumerate(statements) if any(n is site.node for n in walk(statement))), None)
            if start is None:
                continue
            section = []
            for statement in statements[start + 1:]:
                if any(type(n) is cst.Call and call_name(n) == "train" and type(n.func) is cst.Attribute
                       and dotted(n.func.value) == name for n in walk(statement)):
                    break
                section.append(statement)
            if not section or any(_uses_gradients(statement, self.ctx) for statement in section):
                continue
            call = next((c for statement in section for c in _calls_outside(statement, self.no_grad_withs)
                         if dotted(c.func) == name), None)
            if call is None:
                continue
            if function is not None:
                reported.add(id(function))
            self.report(
                Site(call, site.unit, site.scope),
                f"This evaluation (after `{name}.eval()` in the training "
                f"{'loop' if loop is not function else f'step `{function.name.value}`, called in a loop'}) runs the model with autograd on: every "
                "activation is kept for a backward pass that never comes, costing memory and time. Wrap it in "
                "torch.no_grad() (or torch.inference_mode()); eval() alone does not turn gradients off.",
            )

    def _report_interval_evaluations(self, reported: set[int], called_without_grad: set[str]) -> None:
        """A branch of a training loop taken every N steps (`if step % 50 == 0:`) that runs the
        model the loop trains on held-out data (`test_output = cnn(test_x)`) with autograd on and
        computes no gradient: an evaluation every N steps, with no `model.eval()` to say so."""
        steps = TrainingSteps.of(self.ctx)
        for loop in self.loops if self.ctx.cuda_evidence is not None else ():
            function, scope = loop.function, loop.site.scope
            if id(function) in reported or id(scope) in self.grad_disabled or not steps.steps_here(loop.node) or any(
                    f.kind == WITH and id(f.node) in self.no_grad_withs for f in loop.frames) or function is not None and (
                    self._decorated(function) or function.name.value in called_without_grad):
                continue
            loops = (*loop.site.loops, loop.node)
            for branch in (s for s in loop.node.body.body if type(s) is cst.If and s.orelse is None):
                if not interval_test(self.ctx, branch.test, loops, scope) or _uses_gradients(branch.body, self.ctx) or any(
                        type(n) is cst.Call and call_name(n) == "eval" for n in walk(branch.body)):
                    continue  # (after `model.eval()`: an evaluation section, reported as one)
                trained = {dotted(c.func) or "" for s in loop.node.body.body if s is not branch for c in _calls_outside(
                    s, self.no_grad_withs)} - {""}
                call = next((c for c in _calls_outside(branch.body, self.no_grad_withs) if (name := dotted(c.func) or "") in trained
                             and self._model_like(c.func, name, scope) and not self._frozen(name)
                             and not any(word in name.lower() for word in _LOSS_WORDS) and any(
                                 (root := root_name(arg.value)) is not None and _evaluation_name(root, self.ctx.path) for arg in c.args)), None)
                if call is None:
                    continue
                if function is not None:
                    reported.add(id(function))
                self.report(
                    Site(call, loop.site.unit, scope),
                    f"This evaluation (`{code(call)}` every N steps of the training loop) runs the model with autograd on: "
                    "every activation is kept for a backward pass that never comes, costing memory and time. Wrap it in "
                    "torch.no_grad() (or torch.inference_mode()).",
                )
                break

    def _decorated(self, function: cst.FunctionDef) -> bool:
        """Whether a decorator runs the function under no_grad: torch's (`@torch.no_grad()`,
        `@torch.inference_mode`), an alias of it (`no_grad = torch.no_grad()`), one named for
        it (`@utils.no_grad`), or a decorator of this source that applies it."""
        for decorator in function.decorators:
            target = decorator.decorator
            if type(target) is cst.Name:
                found = self.ctx.origin(target, self.ctx.module_scope)
                if found is not None and type(found[0]) is cst.Call and self._turns_off(found[0]):
                    return True  # nograd = torch.no_grad(); @nograd
            call = target if type(target) is cst.Call else None
            callee = call.func if call else target
            if self._qualified(callee) in NO_GRAD or (call is not None and self._turns_off(call)):
                return True
            if _no_grad_name(callee) or self._helper_applies_no_grad(callee):
                return True
        return False

    def _evaluated_module(self, loop: _Loop) -> str | None:
        """The receiver of the last `.eval()`/`.train(False)` before the loop in its scope,
        unless a `.train()` came after it."""
        last = None
        for site, receiver, evaluation, order in self.modes:
            if order < loop.order and site.scope is loop.site.scope:
                last = receiver if evaluation else None
        return dotted(last) if last is not None else self._evaluated_by_callers(loop)

    def _evaluated_by_callers(self, loop: _Loop) -> str | None:
        """A parameter of the loop's function that every call of it in the source gives a module
        its caller put in evaluation mode before (`model.eval()`, then `extract(loader, model)`),
        and that no `.train()` of the function's own turns back."""
        function = loop.function
        scope = loop.site.scope
        if function is None or self.ctx.class_of.get(id(function)) is not None or self._sets_modes(scope):
            return None
        calls = [site for site in self.ctx.calls.get(function.name.value, ()) if type(site.node.func) is cst.Name]
        for index, param in enumerate(scope.params):
            given = [argument(site.node, index, param) for site in calls]
            if calls and all(type(value) is cst.Name and self._left_evaluating(value.value, site) for value, site in zip(given, calls)):
                return param
        return None

    def _sets_modes(self, scope) -> bool:
        """Whether `scope` itself puts a module in a mode (`.eval()`, `.train()`)."""
        return any(site.scope is scope for site, *_ in self.modes)

    def _left_evaluating(self, name: str, call: CallSite) -> bool:
        """Whether the last mode its scope gives the module `name` before `call` is evaluation
        (`model.train()` at the start of each epoch, `model.eval()` before the call at its end)."""
        places = self._places
        before = places.get(id(call.node), 0)
        modes = [(places.get(id(site.node), before), evaluation) for site, receiver, evaluation, _ in self.modes
                 if site.scope is call.scope and dotted(receiver) == name]
        modes = [mode for mode in modes if mode[0] < before]
        return bool(modes) and max(modes)[1]

    @functools.cached_property
    def _places(self) -> dict[int, int]:
        """id(call) -> its place in pass order (made when a caller's mode is first asked)."""
        return {id(node): index for index, (node, _) in enumerate(self.ctx.call_order)}

    def _decoding(self, loop: _Loop) -> bool:
        """A `while` loop of a module's own method (Tacotron's `Decoder.inference` decoding step
        by step): its caller decides whether gradients are on."""
        cls = self.ctx.class_of.get(id(loop.function)) if type(loop.node) is cst.While and loop.function is not None else None
        return cls is not None and derives_from(self.ctx, cls.name.value, MODULE_CLASSES)

    def _evaluation_loader(self, loop: _Loop) -> str | None:
        """The name of the DataLoader of the source a `for` loop iterates, named for evaluation
        (`test_loader`, `val_db`), when the loop runs in each pass of an epoch loop around the
        training (`for epoch in range(epochs):` training, then `for x, y in test_loader:`, with
        no `model.eval()` to say so), in code that uses a GPU."""
        if type(loop.node) is not cst.For or not loop.site.loops or self.ctx.cuda_evidence is None or not self._over_loader(loop):
            return None  # (on a GPU: CPU scripts' test passes cost little)
        name = dotted(iteration_source(loop.node.iter))
        words = set((name or "").lower().rpartition(".")[2].replace("-", "_").split("_"))
        return name if words & (_EVAL_WORDS | {"test", "dev"}) and TrainingSteps.of(self.ctx).per_epoch(loop.site.loops[-1]) else None

    def _over_loader(self, loop: _Loop) -> bool:
        """Whether the loop iterates a DataLoader made in the source: a pass over a dataset
        (not the decoding steps of one sentence, nor the images of one batch)."""
        return type(loop.node) is cst.For and iterates_dataloader(self.ctx, loop.node, loop.site.scope)

    def _nested(self, function: cst.FunctionDef) -> bool:
        """A function defined in another function (nerf_pl's `inference` inside `render_rays`): its
        name says what it does for its parent, which may be training, not that it evaluates."""
        scope = self.ctx.scopes.get(id(function))
        return scope is not None and scope.parent is not None and scope.parent.node is not None

    def _inherited_no_grad(self, function: cst.FunctionDef) -> bool:
        """Whether a base class of another module calls the method `function` under no_grad
        (torchlake's `ClassificationEvaluator.run` calling `self._predict(row, model)` in a `with
        torch.no_grad():`, which a subclass's `_predict` overrides)."""
        cls = self.ctx.class_of.get(id(function))
        return cls is not None and any(function.name.value in no_grad_helpers(found) for found in project_bases(self.ctx, cls))

    def _called_once(self, function: cst.FunctionDef) -> bool:
        """Whether every call of a function of the source is a statement of the module, outside
        loops and functions (`test()` once before training, `evaluate(model)` once after)."""
        sites = self.ctx.calls.get(function.name.value, ())
        return bool(sites) and all(not site.loops and site.scope.node is None for site in sites)

    def _model_call(self, loop: _Loop, evaluated: str | None) -> cst.Call | None:
        """The first call of the model in the loop that runs with autograd on: not inside a
        no_grad `with` opened in the loop body, and not of a module whose parameters are frozen."""
        scope = loop.site.scope
        for call in _calls_outside(loop.node.body, self.no_grad_withs):
            func = call.func
            if type(func) is cst.Attribute and func.attr.value == "forward":
                func = func.value
            name = dotted(func)
            if name is None or self._frozen(name, loop):
                continue
            if evaluated is not None:
                if name == evaluated or type(func) is cst.Name and self._wraps(name, evaluated, scope):
                    return call
            elif self._model_like(func, name, scope):
                return call
        return None

    def _wraps(self, name: str, module: str, scope) -> bool:
        """Whether every value given `name` is `module` itself, moved or wrapped (darts'
        `parallel_model = nn.DataParallel(model, dim=1).cuda()`, else `model`)."""
        values = self.ctx.assigned(name, scope) or ()
        for value in values:
            value = module_below(value) if value is not None else None
            if type(value) is cst.Call and (self.ctx.qualname(value.func) or "").startswith("torch.nn."):
                value = argument(value, 0, "module")
            if value is None or dotted(value) != module:
                return False
        return bool(values)

    def _model_like(self, func: cst.BaseExpression, name: str, scope) -> bool:
        """A module object called directly (`model(x)`, `self.net(x)`), not a function or a
        method that merely mentions a module (`get_module_type(x)`, `m.get_module_rref()`)."""
        if type(func) is cst.Attribute and dotted(func.value) != "self":
            return False
        last = name.rsplit(".", 1)[-1]
        if type(func) is cst.Name and (
            last in self.ctx.functions or last in self.ctx.imports or self.ctx.assigned(last, scope) is None
        ):
            return False  # a function, not a variable holding a module
        return any(word in last.lower() for word in MODEL_WORDS) or (
            type(func) is cst.Name and self._holds_module(last, scope))

    def _holds_module(self, name: str, scope) -> bool:
        """A variable given only modules, whatever its name (`classifier = RNNClassifier(...)`,
        then `nn.DataParallel(classifier)`): torch.nn's classes and the source's subclasses of
        `nn.Module`, through `.cuda()`, `.to(...)`, `.eval()`."""
        values = self.ctx.assigned(name, scope) or ()
        return bool(values) and all(value is not None and self._module_made(value) for value in values)

    def _module_made(self, expr: cst.BaseExpression) -> bool:
        expr = module_below(expr)
        if type(expr) is not cst.Call:
            return False
        qualified = self.ctx.qualname(expr.func) or ""
        if qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1][:1].isupper():
            return True  # `nn.Linear(...)`, `nn.DataParallel(model)`
        return derives_from(self.ctx, dotted(expr.func), MODULE_CLASSES)


_FACTORIES = SIZED_FACTORIES | {"arange", "tensor", "normal"}
_CALLER_DEPTH = 3  # calls followed back from a parameter to the tensors passed
_NO_GRAD_WORDS = ("no_grad", "nograd", "inference_mode")


def _no_grad_name(func: cst.BaseExpression) -> bool:
    """Whether the callee is named for no_grad outside torch (`utils.no_grad`, a project's
    `@no_grad` alias): the name promises what it does."""
    name = dotted(func)
    return name is not None and any(word in name.rsplit(".", 1)[-1].lower() for word in _NO_GRAD_WORDS)


def _module_path(expr: cst.BaseExpression) -> str | None:
    """`model` or `self.backbone` for a module expression, through indexing (`model.blocks[-1]`
    -> "model.blocks")."""
    while type(expr) is cst.Subscript:
        expr = expr.value
    return dotted(expr)


def _parameters_owner(receiver: cst.BaseExpression, loops: tuple) -> str | None:
    """For `p` the target of an enclosing `for p in X.parameters()` (or `for n, p in
    X.named_parameters()`): X's path."""
    if type(receiver) is not cst.Name:
        return None
    for loop in reversed(loops):
        if type(loop) is not cst.For or type(loop.iter) is not cst.Call or type(loop.iter.func) is not cst.Attribute:
            continue
        method = loop.iter.func.attr.value
        target: cst.BaseExpression = loop.target
        if method == "named_parameters" and type(target) is cst.Tuple and len(target.elements) == 2:
            target = target.elements[1].value
        elif method != "parameters":
            continue
        if type(target) is cst.Name and target.value == receiver.value:
            return _module_path(loop.iter.func.value)
    return None


def _block_of(block: cst.BaseSuite, node: cst.CSTNode) -> list[cst.BaseStatement]:
    """The statements of the innermost block under `block` that holds `node` in one of them,
    through `if`, `with` and `try` (not loops: a nested loop's body runs again)."""
    statements = list(block.body) if type(block) is cst.IndentedBlock else []
    for statement in statements:
        if not any(n is node for n in walk(statement)):
            continue
        inner: list[cst.BaseSuite] = []
        if type(statement) is cst.If:
            inner = [statement.body, *([statement.orelse.body] if statement.orelse is not None else [])]
        elif type(statement) is cst.With or type(statement) is cst.Try:
            inner = [statement.body]
        for body in inner:
            if any(n is node for n in walk(body)):
                return _block_of(body, node)
        return statements
    return statements


def _calls_outside(body: cst.CSTNode, withs: dict[int, cst.With]) -> list[cst.Call]:
    """The calls under `body` in visiting order, leaving out the bodies of the `with`s in
    `withs` and of nested functions and classes (they run elsewhere)."""
    found: list[cst.Call] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if type(node) is cst.With and id(node) in withs:
            stack.extend(reversed([item for item in node.items]))  # its items run with gradients
            continue
        if type(node) is cst.FunctionDef or type(node) is cst.ClassDef:
            continue
        if type(node) is cst.Call:
            found.append(node)
        stack.extend(reversed(children(node)))
    return found


def _withs_and_calls(body: cst.CSTNode) -> list[cst.With | cst.Call]:
    """The `with` statements and calls under `body`, nested functions included (a decorator's
    wrapper), remembered."""

    def collect() -> tuple[cst.With | cst.Call, ...]:
        return tuple(node for node in walk(body) if type(node) is cst.With or type(node) is cst.Call)

    return list(remembered(_withs_and_calls, body, collect))


def _calls_in(body: cst.CSTNode) -> frozenset[int]:
    """The ids of the calls in `body`, but not in the bodies of the functions it defines."""

    def ids() -> frozenset[int]:
        found: set[int] = set()
        stack = [body]
        while stack:
            node = stack.pop()
            if type(node) is cst.Call:
                found.add(id(node))
            stack.extend(child for child in children(node) if not (type(node) is cst.FunctionDef and child is node.body))
        return frozenset(found)

    return remembered(_calls_in, body, ids)


class GradientsZeroedInPlace(Nesting):
    """
    ## What it does
    Finds `zero_grad(set_to_none=False)` and gradients zeroed by hand
    (`p.grad.zero_()`, `p.grad.data.zero_()`). Silent when the file updates gradients in
    place (`p.grad += ...`, `p.grad.add_(...)`, `p.grad[mask] = 0`), which needs them to
    exist as tensors, in a function that also frees them (`p.grad = None`: a
    `zero_grad` implementation offering both), for the gradient of a tensor given to a model
    (`model(X + delta)`: an adversarial perturbation, images refined by gradient steps; one
    tensor, not the parameters'), for a zeroing run once at the top of a script or cell (a
    demonstration), and in code that never uses a GPU (a memset of the gradients is small
    next to a step on the CPU).

    ## Why is this bad?
    Zeroing keeps every gradient buffer allocated between steps and launches a memset
    per parameter (or per group); the next backward then accumulates into the zeros, a
    read-modify-write of every gradient. With `set_to_none=True` (the default since
    PyTorch 2.0) the buffers are freed and backward writes fresh gradients: less memory,
    fewer kernels, less memory traffic.

    ## Example
    ```python
    optimizer.zero_grad(set_to_none=False)
    for p in model.parameters():
        p.grad.zero_()
    ```

    ## Fix
    ```python
    optimizer.zero_grad(set_to_none=True)
    for p in model.parameters():
        p.grad = None
    ```
    """

    code = "TPL503"
    name = "gradients-zeroed-in-place"
    summary = "zero_grad(set_to_none=False) or p.grad.zero_() instead of freeing gradients"
    triggers = ("zero_grad", "zero_(")
    calls = CallNames(frozenset({"zero_grad"}), suffix="_")
    probe = "memory"
    VALID = (
        # code that never uses a GPU: zeroing two small buffers on the CPU is small next to a step
        Example(
            """
            import torch
            w = torch.randn(3, requires_grad=True)
            for x, y in data:
                ((x @ w - y) ** 2).sum().backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                w.grad.zero_()
            """
        ),
        Example(
            """
            import torch
            optimizer.zero_grad()
            """,
        ),
        Example(
            """
            import torch
            optimizer.zero_grad(set_to_none=True)
            """,
        ),
        Example(
            """
            import torch
            optimizer.zero_grad(set_to_none=False)
            for p in model.parameters():
                p.grad.add_(torch.randn_like(p) * 1e-3)
            """,
        ),
        Example(
            """
            import torch
            x.zero_()
            buffer.data.zero_()
            """,
        ),
        Example(
            """
            import argparse, torch
            parser = argparse.ArgumentParser()
            parser.add_argument('--grads-to-none', type=bool, default=True)
            def main(args):
                optimizer.zero_grad(set_to_none=args.grads_to_none)
            """,
        ),
        # the input tensor never requires grad: its .grad stays None and the zeroing never runs
        Example(
            """
            import torch
            def forward_backward(func, x):
                if x.grad is not None:
                    x.grad.zero_()
                func(x).sum().backward()
            def bench(func, *inputs, repeats=10):
                for _ in range(repeats):
                    forward_backward(func, *inputs)
            x = torch.randn(8, 64, device='cuda')
            bench(mha, x)
            """,
        ),
        # the gradient of a model's input (an adversarial perturbation): one tensor, not the parameters'
        Example(
            """
            import torch
            def attack(model, X, y, steps):
                delta = torch.zeros_like(X).cuda()
                delta.requires_grad = True
                for _ in range(steps):
                    loss = F.cross_entropy(model(X + delta), y)
                    loss.backward()
                    delta.data = (delta + 0.01 * delta.grad.sign()).clamp(-0.03, 0.03)
                    delta.grad.zero_()
                return delta
            """,
        ),
        # once, at the top of a notebook cell: a demonstration, not a step
        Example(
            """
            import torch
            w = torch.randn(3, requires_grad=True, device="cuda")
            ((x @ w - y) ** 2).mean().backward()
            w.grad.zero_()
            """,
        ),
    )
    INVALID = (
        # a store_true flag: gradients are zeroed in place unless it is given
        Example(
            """
            import argparse, torch
            def main(args):
                model.cuda()
                for x in loader:
                    optimizer.zero_grad(set_to_none=args.set_grads_to_none)
            parser = argparse.ArgumentParser()
            parser.add_argument('--set_grads_to_none', action='store_true')
            main(parser.parse_args())
            """,
        ),
        Example(
            """
            import torch
            for x, y in loader:
                optimizer.zero_grad(set_to_none=False)
                model(x.cuda()).sum().backward()
            """,
            """
            import torch
            for x, y in loader:
                optimizer.zero_grad(set_to_none=True)
                model(x.cuda()).sum().backward()
            """,
        ),
        Example(
            """
            import torch
            model.cuda()
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.detach_()
                    p.grad.data.zero_()
            """,
            """
            import torch
            model.cuda()
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.detach_()
                    p.grad = None
            """,
        ),
        # gradients of hand-made parameters, zeroed at each step of a loop
        Example(
            """
            import torch
            w = torch.randn(3, requires_grad=True, device="cuda")
            for step in range(1000):
                loss = ((x @ w - y) ** 2).mean()
                loss.backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                w.grad.zero_()
            """,
            """
            import torch
            w = torch.randn(3, requires_grad=True, device="cuda")
            for step in range(1000):
                loss = ((x @ w - y) ** 2).mean()
                loss.backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                w.grad = None
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.candidates: list[tuple[Site, FixPlan | None, str]] = []
        self.flagged: list[tuple[Site, str]] = []  # zero_grad(set_to_none=args.<dest>): judged once argparse is known
        self.in_place_updates = False
        self.freeing_scopes: set[int] = set()  # scopes that also set `.grad = None`: both behaviours offered
        self._statement_calls: set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_calls.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if type(node.func) is not cst.Attribute or name is None:
            return
        grad = _grad_attribute(node.func.value)
        if grad is not None:
            if name == "zero_":
                site = self.ctx.site(node)
                fix = None
                if id(node) in self._statement_calls:
                    fix = FixPlan("Free the gradient", (Replace(site, f"{code(grad)} = None"),))
                self.candidates.append((site, fix, f"`{code(node)}` zeroes a gradient buffer in place"))
            elif name.endswith("_") and name not in _BENIGN_GRAD_METHODS:
                self.in_place_updates = True
        elif name == "zero_grad":
            flag = keyword(node, "set_to_none") or (node.args[0] if node.args and node.args[0].keyword is None else None)
            if flag is not None and self.ctx.value(flag.value, self.ctx.scope) is False:
                site = self.ctx.site(node)
                fix = None
                if type(flag.value) is cst.Name:
                    fix = FixPlan("Set set_to_none=True", (Replace(site, replace_argument(node, flag, "True")),))
                self.candidates.append((site, fix, "zero_grad(set_to_none=False) keeps and zeroes every gradient buffer"))
            elif flag is not None and type(flag.value) is cst.Attribute:
                self.flagged.append((self.ctx.site(node), flag.value.attr.value))

    def _off_by_default(self, dest: str) -> bool:
        """A command-line flag (`args.<dest>`) whose default is False: `store_true`, `default=False`."""
        defaults = self.ctx.argparse.get(dest, ())
        return bool(defaults) and all(literal(value) is False for value in defaults)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _grad_attribute(node.target) is not None:
            self.in_place_updates = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if type(node.target) is cst.Subscript and _grad_attribute(node.target.value) is not None:
            self.in_place_updates = True

    def visit_Assign(self, node: cst.Assign) -> None:
        if literal(node.value) is None and any(_grad_attribute(t.target) is not None for t in node.targets):
            self.freeing_scopes.add(id(self.ctx.scope))

    def finish(self) -> None:
        if self.in_place_updates or self.ctx.cuda_evidence is None:
            return  # (on the CPU, zeroing the gradients is small next to a step)
        for site, dest in self.flagged:
            if self._off_by_default(dest):
                what = f"`{code(site.node)}` keeps and zeroes every gradient buffer unless --{dest} is given (off by default)"
                self.candidates.append((site, None, what))
        for site, fix, what in self.candidates:
            if id(site.scope) in self.freeing_scopes or self._never_requires_grad(site) or self._input_gradient(site):
                continue
            if site.scope.node is None and not site.loops:
                continue  # (a statement run once, at the top of a script or a notebook cell: a demonstration)
            self.report(
                site,
                f"{what}: the memory stays allocated between steps, a memset runs per buffer, and backward "
                "accumulates into the zeros. Free the gradients instead (zero_grad(set_to_none=True), the "
                "default, or p.grad = None).",
                fix,
            )


    def _never_requires_grad(self, site: Site) -> bool:
        """`x.grad.zero_()` where every tensor `x` can hold (followed through the callers that pass
        it, `*args` included) is made by a torch factory without requires_grad: its `.grad` is
        always None, so the zeroing never runs."""
        func = cast(cst.Call, site.node).func  # every candidate is a call's site
        grad = _grad_attribute(func.value) if type(func) is cst.Attribute else None
        if grad is None or type(grad.value) is not cst.Name:
            return False
        values = self._values_of(grad.value.value, site.scope, 0)
        return values is not None and bool(values) and all(self._made_without_grad(value, scope) for value, scope in values)

    def _input_gradient(self, site: Site) -> bool:
        """`delta.grad.zero_()` where `delta` is given to a model (`model(X + delta)`): the
        gradient of an input (an adversarial perturbation, images sampled by gradient steps),
        one tensor, not the parameters' gradients."""
        func = cast(cst.Call, site.node).func
        grad = _grad_attribute(func.value) if type(func) is cst.Attribute else None
        if grad is None or type(grad.value) is not cst.Name:
            return False
        name = grad.value.value
        return any(
            call.scope is site.scope and _model_call(call.node, self.ctx)
            and any(type(n) is cst.Name and n.value == name for arg in call.node.args for n in walk(arg.value))
            for calls in self.ctx.calls.values() for call in calls
        )

    def _values_of(self, name: str, scope, depth: int) -> list | None:
        """(expression, scope) for every value `name` may hold in `scope`, a parameter followed
        to what the calls pass; None when not all are known."""
        owner = scope.owner_of(name)
        if owner is None or depth > _CALLER_DEPTH or self._made_to_require_grad(name):
            return None
        if owner.node is None or name not in _positional(owner.node):
            values = owner.assignments[name]
            return None if any(value is None for value in values) else [(value, owner) for value in values]
        return self._passed_values(owner, name, None, depth)

    def _passed_values(self, scope, param: str, index: int | None, depth: int) -> list | None:
        found = []
        for value, caller in self._passed(scope, param, index):
            if type(value) is _Starred:  # `f(x, *args)`: the caller's own `*args`, at a shifted position
                star = caller.node.params.star_arg if caller.node is not None else None
                if type(value.value) is not cst.Name or type(star) is not cst.Param or star.name.value != value.value.value:
                    return None
                more = self._passed_values(caller, "", len(_positional(caller.node)) + value.index, depth + 1)
            elif type(value) is cst.Name:
                more = self._values_of(value.value, caller, depth + 1)
            else:
                more = None if value is None else [(value, caller)]
            if more is None:
                return None
            found.extend(more)
        return found or None

    def _made_to_require_grad(self, name: str) -> bool:
        """`x.requires_grad_()` or `x.requires_grad = ...` anywhere in the source."""
        return f"{name}.requires_grad" in self.ctx.attributes or any(
            type(site.node.func) is cst.Attribute and dotted(site.node.func.value) == name for site in self.ctx.calls.get("requires_grad_", ())
        )

    def _passed(self, scope, param: str, index: int | None = None):
        """(what each call of the function of `scope` passes as `param` (or at position `index`),
        the call's scope): a StarredElement(value, index=shift) for a `*args` that may hold it, None
        when not known."""
        position = _positional(scope.node).index(param) if index is None else index
        for call_site in self.ctx.calls.get(scope.node.name.value, []):
            found: cst.BaseExpression | _Starred | None = None
            at = 0
            for arg in call_site.node.args:
                if arg.keyword is not None:
                    if arg.keyword.value == param:
                        found = arg.value
                elif arg.star == "*":
                    found = found or _Starred(arg.value, position - at)
                    break
                elif arg.star == "":
                    if at == position:
                        found = arg.value
                    at += 1
            yield found, call_site.scope

    def _made_without_grad(self, value: cst.BaseExpression, scope) -> bool:
        """A torch factory call (`torch.randn(..., device=d)`) not asked for gradients."""
        if type(value) is not cst.Call:
            return False
        qualified = self.ctx.qualname(value.func) or ""
        requires = keyword(value, "requires_grad")
        return (
            qualified.count(".") == 1 and qualified.startswith("torch.") and call_name(value) in _FACTORIES
            and (requires is None or literal(requires.value) is False)
        )


class _Starred:
    """A `*args` passed where a parameter is expected: the value, and the parameter's position in it."""

    def __init__(self, value: cst.BaseExpression, index: int) -> None:
        self.value, self.index = value, index


def _positional(function: cst.FunctionDef) -> list[str]:
    params = function.params
    return [param.name.value for param in (*params.posonly_params, *params.params)]


_BUILTINS = frozenset(dir(builtins))


def _model_call(call: cst.Call, ctx) -> bool:
    """`model(x)`, `self.net(x)`, `attack(model, x)`: a call of a callable of the program (not a
    builtin, nor a function of torch or another library)."""
    if type(call.func) is cst.Name:
        return call.func.value not in _BUILTINS and (ctx.qualname(call.func) is None or maybe_project_call(ctx, call.func))
    return (dotted(call.func) or "").startswith("self.")


def _grad_attribute(expr: cst.BaseExpression) -> cst.Attribute | None:
    """`p.grad` for `p.grad` or `p.grad.data`, else None."""
    if type(expr) is cst.Attribute and expr.attr.value == "data":
        expr = expr.value
    if type(expr) is cst.Attribute and expr.attr.value == "grad":
        return expr
    return None




def _uses_gradients(body: cst.CSTNode, ctx, legacy: bool = True) -> bool:
    """Whether `body` computes or asks for gradients; with `legacy`, also whether it wraps
    tensors in `Variable` (a no-op since PyTorch 0.4, where older code chose per tensor)."""
    by_name, others = _gradient_calls(body)
    return by_name or any((ctx.qualname(call.func) or "").startswith("torch.autograd.")
                          and (legacy or ctx.qualname(call.func) != "torch.autograd.Variable") for call in others)


def _gradient_calls(body: cst.CSTNode) -> tuple[bool, tuple[cst.Call, ...]]:
    """Whether a call under `body` (nested functions included) uses gradients by its name or
    a `requires_grad=` argument, and the other calls whose callee is a dotted name (one may be
    `torch.autograd.*` under an import alias). Remembered: the scan does not need the imports."""

    def scan() -> tuple[bool, tuple[cst.Call, ...]]:
        others, stack = [], [body]
        while stack:
            node = stack.pop()
            if type(node) is cst.Call:
                if call_name(node) in _GRAD_USES:
                    return True, ()
                requires = keyword(node, "requires_grad")
                if requires is not None and literal(requires.value) is not False:
                    return True, ()
                if type(node.func) in (cst.Name, cst.Attribute):
                    others.append(node)
            stack.extend(children(node))
        return False, tuple(others)

    return remembered(_gradient_calls, body, scan)
