"""Rules that name their calls (`Rule.calls`) still see every call they are about:
names imported under an alias, names matched by suffix, and, once the source compiles
a module, calls of any name."""

from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

import libcst as cst

from perf_lint.analyzers import Config, analyze, python_source
from perf_lint.analyzers.rules.base import CallNames


def codes(code: str, *select: str) -> list[str]:
    source = python_source(textwrap.dedent(code), "example.py")
    return [f.code for f in analyze(source, Config(select=select))]


def test_call_names_match_names_and_suffix():
    names = CallNames(frozenset({"to", "cuda"}), suffix="_")
    assert "to" in names and "zero_" in names and "mul_" in names
    assert "item" not in names and "_private" not in names


def test_aliased_dataloader_is_a_loader():
    code = """\
        import torch
        from torch.utils.data import DataLoader as DL
        loader = DL(dataset, batch_size=64)
        for x in loader:
            out = model(x.cuda())
        """
    assert codes(code, "TPL101") == ["TPL101"]
    assert codes(code.replace("DL(", "Other("), "TPL101") == []  # another callee: not a loader


def test_aliased_clock_is_a_clock():
    code = """\
        import torch
        from time import perf_counter as clock
        model = Net().cuda()
        t0 = clock()
        out = model(x)
        t1 = clock()
        print(t1 - t0)
        """
    assert codes(code, "TPL201") == ["TPL201"]
    assert codes(code.replace("out = model(x)\n", "out = model(x)\ntorch.cuda.synchronize()\n"), "TPL201") == []


def test_in_place_gradient_update_found_by_suffix():
    code = """\
        import torch
        for x in loader:
            for p in model.parameters():
                p.grad.zero_()
            loss = model(x.cuda())
            loss.backward()
            opt.step()
        """
    assert codes(code, "TPL503") == ["TPL503"]
    # an in-place update of the gradients elsewhere (a `_` method on .grad) needs the buffers
    assert codes(code + "for p in model.parameters():\n    p.grad.mul_(0.5)\n", "TPL503") == []


def test_training_step_through_a_function_of_the_source():
    code = """\
        import torch
        model = Net().cuda()
        def train_step(batch):
            loss = model(batch.cuda())
            loss.backward()
            opt.step()
            return loss
        for batch in loader:
            loss = train_step(batch)
            print(loss.item())
        """
    assert codes(code, "TPL203") == ["TPL203"]
    assert codes(code.replace("loss = train_step(batch)", "loss = evaluate(batch)"), "TPL203") == []


def test_functions_called_under_no_grad():
    evaluate = textwrap.dedent("""\
        import torch
        def evaluate(model, loader):
            for x in loader:
                model(x)
        """)
    assert codes(evaluate, "TPL502") == ["TPL502"]
    assert codes(evaluate + "with torch.no_grad():\n    evaluate(model, val_loader)\n", "TPL502") == []
    # called from a function defined under no_grad: that function runs later, with gradients
    nested = "with torch.no_grad():\n    def later():\n        evaluate(model, val_loader)\nlater()\n"
    assert codes(evaluate + nested, "TPL502") == ["TPL502"]


def test_libcst_node_classes_in_use_have_no_subclasses():
    """The analyzers test node kinds with `type(x) is cst.C` (an isinstance test that fails
    goes through ABCMeta): exact only while no concrete libcst node class is subclassed."""
    used = {name for path in Path(__file__).resolve().parent.parent.joinpath("analyzers").rglob("*.py")
            for name in re.findall(r"type\([^)]*\) (?:is|is not|in|not in) \(?((?:cst\.\w+(?:, )?)+)", path.read_text())
            for name in re.findall(r"cst\.(\w+)", name)}
    assert {"Name", "Call", "Attribute"} <= used
    for name in used:
        cls = getattr(cst, name)
        assert not inspect.isabstract(cls) and not cls.__subclasses__(), name
