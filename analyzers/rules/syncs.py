"""TPL203: host-device synchronization on every training step."""

from __future__ import annotations

import ast
import os
import re
from typing import NamedTuple, cast

import libcst as cst

from ..context import EXCEPT, Frame, IF, LOOP, Scope, Site, module_below
from ..nodes import (aborts, argument, assigned_in, call_name, children, code, contains, dotted, iteration_source, keyword, lazy_init, legacy_read, literal,
                     moves_itself, names_in, none_test, option_test, passed_for, positional, reaching_assignment, remembered, short_code, shortened, walk, UNKNOWN)
from ..findings import Related
from ..importers import never_moved, never_set, project_option_default, unused_function
from ..project import (
    Definition, Use, attribute_module, bind, coqui_model, derives_from, from_afar, call_target, copies_every_call, host_reads, iterated, maybe_project_call,
    parameters, reads_clock, reads_every_call, returned_mask, returned_parameter, returns_host_copy, steps_in_loops, used_arguments,
    used_by_all_fitting,
)
from ..project import trains as project_trains
from .base import Example, Here
from .edits import names_in_target, root_name
from .tracking import (Nesting, TrainingSteps, calls_under_ifs, few_iterations, interval_test, iterates_dataloader, never_taken, parameter_constant,
                       runs_once)
from ..vocabulary import (
    AUTOGRAD_FUNCTIONS, CLOCKS, COQUI_STEP_HOOKS, GRAD_SCALERS, HOST_COPY_METHODS, HOST_FACTORIES, LEGACY_TENSOR_TYPES, MASK_MAKERS, MATH_TESTS, MODEL_NAMES, MODULE_CLASSES, NOT_TENSOR_OPS,
    ONE_TENSOR_TESTS, SAME_DEVICE_METHODS, TENSOR_NAMESPACES,
)

_CONVERSIONS = {"float", "int", "bool"}
# torchmetrics' aggregation metrics: each update tests its input for NaN with `if nans.any():` on the
# host, unless made with nan_strategy="disable"
_NAN_CHECKED_METRICS = frozenset({"MeanMetric", "SumMetric", "MaxMetric", "MinMetric", "CatMetric", "RunningMean", "RunningSum"})
_NORMS = {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_",
          "torch.nn.utils.get_total_norm"}
_DEMO_STEPS = 5  # a training loop of at most so many steps shows how training works (a 10-step benchmark is timed)
_TRUTH_FUNCTIONS = {"torch.isnan", "torch.isinf", "torch.isfinite", "torch.any", "torch.all", "torch.equal", "torch.allclose"}
_TRUTH_METHODS = {"any", "all"}
_TENSOR_PREFIXES = tuple(f"{namespace}." for namespace in TENSOR_NAMESPACES)
_NOT_TENSOR = NOT_TENSOR_OPS | {"equal", "allclose", "autocast"}  # and those returning a bool or a context
# methods whose result lives where their receiver does (`.cpu().sum()`; NumPy's `np.ceil(x).astype("int")`)
_HOST_KEEPING = SAME_DEVICE_METHODS | {"sum", "mean", "max", "min", "argmax", "eq", "ne", "astype", "numpy", "round"}
_TENSOR_FACTS = {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "keys", "batch_size"}  # not tensors
_TENSOR_METHODS = {
    "sum", "mean", "max", "min", "norm", "detach", "clone", "float", "half", "double", "abs", "sqrt", "pow", "exp",
    "log", "squeeze", "unsqueeze", "view", "reshape", "argmax", "argmin", "softmax", "std", "var", "prod", "cuda",
    "to", "topk", "sort", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "sub", "add", "mul", "div", "bool", "byte", "long",
}
# tensor methods giving back a tensor on the same device (`x = x.masked_select(m).view(n, -1)` keeps `x` a CUDA tensor)
_KEEPING_METHODS = _TENSOR_METHODS - {"cuda", "to"} | {
    "masked_select", "contiguous", "t", "permute", "transpose", "flatten", "index_select", "gather", "expand", "repeat",
    "masked_fill", "clamp", "expand_as", "view_as", "reshape_as"}
_KEPT_METHODS = _TENSOR_METHODS | _KEEPING_METHODS  # tensor methods giving back a tensor (on any device)
_HOST_LOGGERS = {"wandb.log"}  # library calls that convert the tensors they are given on the host
_HOST_LOGGER_NAMES = {name.rpartition(".")[2] for name in _HOST_LOGGERS} | {"add_scalar", "set_postfix"}  # (TensorBoard's,
# any writer; a tqdm bar's, which formats what is not a Python number as text)
# A loop timed on CPU time is timed too; TPL203 has not followed monotonic_ns.
_CLOCKS = (CLOCKS | {"time.process_time"}) - {"time.monotonic_ns"}
_CLOCK_NAMES = {name.rpartition(".")[2] for name in _CLOCKS} | {"elapsed_time"}
_MAX_DEPTH = 10
_REDUCTIONS = {"sum", "mean", "max", "min", "amax", "amin", "norm", "prod", "count_nonzero", "any", "all"}  # to one value
_MASK_ADVICE = "Keep shapes fixed on the GPU (multiply by the mask, `masked_fill`, `torch.where(mask, a, b)`), or do it every N steps."



_LAYER = re.compile(  # a layer of torch.nn: one tensor out (not containers, parameters, recurrent layers' tuples)
    r"torch\.nn\.(?!(?:Module|Sequential|ModuleList|ModuleDict|Parameter|ParameterList|ParameterDict|RNN|LSTM|GRU"
    r"|MultiheadAttention)$)[A-Z]\w*")

class _Candidate(NamedTuple):  # a tuple: one per candidate of every analysis (a frozen dataclass is slow to make)
    site: Site
    kind: str  # "method", "conversion", "print", "test", "synchronize", "logger" or "call"
    frames: tuple[Frame, ...]
    key: int  # statement (or node) identity: one finding per statement


def _further(read: Use) -> tuple[Related, ...]:
    """The further reads on the host of the value a function of another file reads at `read`
    (a loss testing its inputs in several places), as related locations."""
    return tuple(Related(use.path, use.line - 1, f"`{use.code}` reads it on the host too ({use.via})")
                 for use in read.also if use.path) if read.path else ()


_HOST_TYPES = frozenset({"ndarray", "str", "int", "float", "bool", "list", "List", "tuple", "Tuple", "Sequence"})


def _host_parameter(name: str, scope: Scope) -> bool:
    """Whether `name` is a parameter of the function of `scope`, never rebound, whose annotation
    says it holds host data (`X: np.ndarray`, `sentences: List[Sentence]`) and names no tensor."""
    annotation = scope.annotation(name)
    if annotation is None:
        return False
    names = names_in(annotation)
    return not any("Tensor" in found for found in names) and any(found.rpartition(".")[2] in _HOST_TYPES for found in names)


def _shown(candidate: _Candidate) -> str:
    """A candidate's code as a message names it: a long chain by its end, from an attribute or
    index on (`...["token_counts"]["raw"].sum().item()`), or by the method that reads (`...item()`)."""
    text = short_code(candidate.site.node)
    if candidate.kind == "method" and text.endswith("..."):
        whole = shortened(code(candidate.site.node.with_changes(lpar=(), rpar=())), 1 << 16)
        cut = next((i + (c == ".") for i, c in enumerate(whole) if c in ".[" and len(whole) - i <= 37), None)
        return f"...{whole[cut:]}" if cut is not None else f"...{short_code(_method(candidate).attr)}()"
    return text


def _unparsed(text: str) -> str | None:
    """An expression's code as `ast.unparse` writes it (the summaries' spelling), or None."""
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        return None


def _read_code(node: cst.CSTNode) -> str | None:
    """A candidate's code as the summaries of functions spell their reads (`v.item()`; a test's
    header, `if torch.min(y) < -1.0:`), or None."""
    if type(node) is cst.If or type(node) is cst.Assert:
        test = _unparsed(code(node.test))
        return None if test is None else f"if {test}:" if type(node) is cst.If else f"assert {test}"
    return _unparsed(code(node))


def _env_step(node: cst.CSTNode) -> bool:
    """`envs.step(...)`: an environment taking a step (a simulator on the host)."""
    return type(node) is cst.Call and call_name(node) == "step" and type(node.func) is cst.Attribute \
        and "env" in (dotted(node.func.value) or "").lower()


def _rollout(site: Site) -> cst.CSTNode | None:
    """The loop around `site` that steps an environment (`envs.step(action.cpu().numpy())`) inside a
    loop that trains (an RL iteration: a rollout of many environment steps, then updates)."""
    for loop in site.loops[1:]:
        pending = list(children(cast(cst.For, loop).body))
        while pending:  # (its own statements, not those of a loop inside it)
            node = pending.pop()
            if _env_step(node):
                return loop
            if type(node) not in (cst.For, cst.While, cst.FunctionDef):
                pending.extend(children(node))
    return None


def _sized_by_data(call: cst.Call, name: str | None, qualified: str | None) -> cst.BaseExpression | None:
    """The CUDA tensor a call reads to size its result, when it does: `x.nonzero()`,
    `torch.nonzero(x)`, `x.unique()`, `torch.masked_select(x, m)`, `torch.where(cond)` with one
    argument, `torch.bincount(x)` without `minlength`."""
    if name not in _SIZED_BY_DATA:
        return None
    if type(call.func) is cst.Attribute and not (qualified or "").startswith("torch."):
        method_syncs = name != "where" and (name != "bincount" or keyword(call, "minlength") is None)
        return call.func.value if method_syncs else None  # (not `x.where(cond, y)`: its shape is x's)
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    if qualified == f"torch.{name}" and first is not None:
        if name == "where" and len(call.args) != 1 or name == "bincount" and keyword(call, "minlength") is not None:
            return None
        return first
    return None


_SIZED_BY_DATA = frozenset({"nonzero", "unique", "masked_select", "bincount", "where"})
# calls that show or record a value (a step's time, shown each step)
_OUTPUT = frozenset({"info", "log", "write", "set_postfix", "set_description", "add_scalar", "add_scalars", "log_dict", "log_metrics"})


def _kept_tensor(value: cst.BaseExpression, name: str) -> bool:
    """Whether `value` is `name` through tensor methods, moves, casts, indexing and comparisons only
    (`x.masked_select(m).view(n, -1)`, `x[:, 1:].contiguous()`, `x.to(device)`, `x.type(torch.long)`,
    `(x.unsqueeze(0) == x.unsqueeze(1)).float()`): a tensor when `name` was one."""
    while True:
        if type(value) is cst.Subscript:
            value = value.value
        elif type(value) is cst.Comparison:
            value = value.left
        elif type(value) is cst.Call and type(value.func) is cst.Attribute and (call_name(value) in _KEPT_METHODS or _dtype_cast(value)):
            value = value.func.value
        else:
            return type(value) is cst.Name and value.value == name


def _dtype_cast(call: cst.Call) -> bool:
    """`x.type(torch.long)`: a cast to a dtype, on the tensor's device (not `x.type(torch.FloatTensor)`, a CPU type)."""
    dtype = dotted(call.args[0].value) if call_name(call) == "type" and len(call.args) == 1 else None
    return dtype is not None and dtype.startswith("torch.") and dtype.count(".") == 1 and dtype[6:].islower()


def _terms(expr: cst.BaseExpression) -> set[str]:
    """The names a sum adds or subtracts (`a + b - c`: a, b, c; not the factors of `a * w`)."""
    if type(expr) is cst.Name:
        return {expr.value}
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
        return _terms(expr.left) | _terms(expr.right)
    return set()


def _call(candidate: _Candidate) -> cst.Call:
    """The call a candidate other than a "test" (an `if` or `assert`) is."""
    return cast(cst.Call, candidate.site.node)


def _method(candidate: _Candidate) -> cst.Attribute:
    """The method a "method" candidate calls (`visit_Call` adds one for an attribute only)."""
    return cst.ensure_type(_call(candidate).func, cst.Attribute)


# an RL iteration: a rollout of environment steps, then an update; `{done}` is what each step's done
# flags are tested from, after `{moved}`
_ROLLOUT = """
    import torch
    device = torch.device("cuda")
    next_done = torch.zeros(8).to(device)
    for iteration in range(1000):
        for step in range(128):
            action = agent.get_action(next_obs)
            next_obs, reward, {done}, info = envs.step(action.cpu().numpy())
            {moved}
            for idx, d in enumerate({done}):
                if d:
                    returns.append(info["r"][idx])
        loss = agent.loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    """


class HostSyncEveryStep(Nesting):
    """
    ## What it does
    Finds, in code that uses CUDA, operations that make the host wait for the GPU on every
    iteration of a training loop (a loop that calls `backward()` or `optimizer.step()`,
    directly or through a function of the file): `.item()`, `.cpu()`, `.numpy()`,
    `.tolist()`, `.to("cpu")`, `float()`/`int()`/`bool()` of a tensor, Python's `max()`/`min()`
    of one (`max(num_tokens, 1)`), `print()` of a
    tensor or a tensor formatted into a string (`file.write(str(loss))`, `pbar.set_description(f"loss {loss:.3f}")`,
    `"%11.4g" * 3 % (*mloss,)`, `"loss {:.4f}".format(loss)`, `pbar.set_postfix(loss=loss)`), `math.isnan()` of one (the norm
    `clip_grad_norm_` returns), AMP's `scaler.get_scale()` (and `scaler.state_dict()`, which calls it:
    a `.item()` of the CUDA scale; not of a `GradScaler(enabled=False)`), and `if`, `assert` and conditional-expression tests on a tensor
    (`if loss < best:`, `if torch.isnan(loss):`, `w = a if self.update_count >= n else b` on a buffer,
    `assert torch.equal(a, b)` in a `forward`, `if positive + negative == 0:` on sums of a module's
    inputs in its `forward` or a method it calls, `if data.train_mask.sum() == 0:` on a field of a
    batch moved whole, `data = data.to(device)`: PyG's, not its `shape` nor `num_*` counts),
    operations whose result's size depends on the data (`x.nonzero()`, `x.unique()`,
    `torch.masked_select`, `torch.where(cond)` with one argument, `bincount` without
    `minlength`, a selection with a boolean mask, `logits[~mask]` (also `l[mask] -= 1`, which reads
    it first; in a module's `forward`, of its inputs: `annotations[annotations[:, 4] != -1]` in a
    loss, and likewise in the `__call__` of a loss object run every step, YOLO's `ComputeLoss`, and
    the methods it calls, `t = t[j]` with `j = r.max(2)[0] < anchor_t` just before (though `j`
    is rebound to other values later); also a mask a function of the project returns, `logits[is_unknown(y)]` with `def
    is_unknown(labels): return labels < 0`, and `if contains_unknown(y):` testing its `.any()`;
    and a mask moved or reshaped, `mask = pos.unsqueeze(2).expand_as(loc_preds)` with `pos =
    cls_targets > 0`), not a fill through one, `logits[mask] = 0`: the host reads the size), `torch.cuda.synchronize()` in a loop that reads no clock (itself or through a timer of the
    project: `timer.toc()` reading `time.time()`) or does not show a value on each iteration (an
    average of step times printed every N steps: one synchronize there would do), and a CUDA tensor (also what an instance of
    a `torch.nn.Module` subclass of the project returns: `r, g, _, _ = mpd(y, y_hat)`, or a custom
    autograd op's result, `AllReduce.apply(x)`; a module's `named_parameters()`; a dict the step
    fills with its losses, BasicSR's `loss_dict["l_pix"] = l_pix` before `reduce_loss_dict(loss_dict)`) passed
    to a function or method of the project (this file or a module it imports) that reads it on
    the host (`MetricLogger.update(loss=loss)` calling `.item()`, `if torch.min(y) < -1.:`
    in hifi-gan's `mel_spectrogram`, or selects from it with a boolean mask, `data[labels ==
    label]`, not in a branch working out a value the caller left out, `if size is None:`; calling
    a module of the project runs its `forward`, `self.criterion(out, y)` too: the finding names that
    line; on a logger passed in as a parameter, when every method of the project the call
    fits reads it), or to `wandb.log`; a call of a training-step function of another module
    (`train_step(model, batch)` in engine.py) that reads a value on the host each time it
    runs (`return loss.item()`), named at the call (with the further places it reads that value
    as related locations: a loss testing its inputs in six places), or a helper of another module the step calls
    that reads what it makes itself, also from the model it is given (`clip_gradients(student,
    clip)` reading each parameter's gradient norm); and `loss.data[0]`, PyTorch 0.3's spelling of
    `loss.item()` (which raises on today's 0-dimensional losses). Also in a training-step function (one that calls
    `backward()` or steps an optimizer, not in a loop of its own) called from a loop, or a
    method of that kind called from other files only (`agent.update(rollouts)`), one a factory
    returns (`return perform_train_step_fn`, kept as `self.train_step_fn`), an ignite `Engine`'s process function, a
    per-batch hook of a callback class in a project that trains (`after_batch` of a fastai `Callback`,
    `on_train_batch_end`), a
    LightningModule's `training_step`, also through a base class of the project (and the methods it calls on `self`, whose `batch` the
    Trainer moved to the GPU: `self.shared_step(batch, "train")`, also what they unpack from
    such a method given the batch: `y_h, y, labels = self.shared_step(*batch)`), a coqui Trainer's
    model's `train_step` and `format_batch_on_device` (a class deriving from `trainer.TrainerModel`,
    through the project: coqui TTS's; the Trainer trains on the GPU when there is one), a Hugging Face
    `Trainer`'s `compute_loss` and `training_step` (also of trl's trainers, through a base class
    of the project, and the methods they call on `self`: trl's `_compute_loss`), a method a base
    class of another file calls in its training loop (torchlake's `_calc_loss`, which
    `TrainerBase.run` calls before `loss.backward()`), and a module's `forward` (of a subclass of
    `torch.nn.Module`, also through classes of the project; and the methods it calls
    on `self`; in a notebook, when the notebook trains): `lengths.tolist()` there syncs on
    every step the module trains; so do the `forward` and `backward` of a custom
    `torch.autograd.Function` such a forward calls (`ShakeDropFunction.apply(x)`), and a custom
    optimizer's `step` (SimCLR's LARS reading a trust ratio per parameter: a subclass of
    `torch.optim.Optimizer`, which the loop steps once per step), and the `__call__` of a loss
    object, a class named for a loss that is no module (maskrcnn-benchmark's
    `FCOSLossComputation`, which a head's forward calls), with the methods it calls on `self`;
    a module deriving from torch's loss bases (`nn.modules.loss._Loss`) is a module. Also the
    `update` of a torchmetrics aggregation metric (`MeanMetric`, `RunningMean`, ...) made
    without `nan_strategy="disable"`, given a CUDA tensor (`running_loss.update(loss.detach())`:
    it tests the value for NaN with `if nans.any():`). A step function handed by name to a
    function of the project that calls it (jepa's `gpu_timer(train_step)`) runs where it is
    handed; an `if` whose body steps the optimizer (`if (i + 1) % accumulation_steps == 0:`)
    picks every training step, not an interval. A module that a module using
    a GPU loads by name (`importlib.import_module("loss." + trainfunc)`: each module of that
    folder) runs on its GPU. A loop inside the step that does not step itself runs on
    every step too (`for k, v in losses.items(): meters[k].update(v.item())`). A function
    that trains in a loop of its own and names no device, beside one that takes a device or
    moves its batches, runs on the CPU (d2l's `train_ch3` beside `train_ch5(..., device)`; not
    a method of a class that moves its modules, ENAS's `train_shared` with `self.shared.cuda()`
    elsewhere in the class).
    A statement that reads several values (a progress line formatting six losses with
    `.item()`) is one finding, on its first read, which waits for the queue; its message and
    related locations name the others, mended by the same fix (also the reads beside the one
    a helper makes of a tensor a step passes it: `Munch(real=real.item(), fake=fake.item())`). A
    method named like a tensor's (`add`, `step`) is the project's when its receiver is an
    instance of a class of the project that defines it (d2l's `metric.add(l * X.shape[0], ...)`
    with `metric = Accumulator(3)`, whose `add` does `float(b)`). A total a function starts from a
    number and adds tensors to is a tensor (`loss = 0.0`, `loss += loss_l2 * w`, then
    `float(loss)`). What a function of the project
    hands back already copied to the host is no CUDA tensor (`loss, parts = compute_loss(...)`
    with `return loss, to_cpu(torch.cat(losses))`: `float(parts[0])` reads a CPU tensor), nor
    is what a host copy gives (`correct = pred.eq(y).cpu().sum()`, then `correct.item()`: the
    `.cpu()` is the read that waits), what a call computes from host copies only (`loss =
    loss_f(outputs.cpu(), labels.cpu())`, then `loss.item()`) or a NumPy value (`np.ceil(np.log(n)).astype("int").item()`).

    ## Why is this bad?
    CUDA work is queued asynchronously: while the GPU runs step *n*, the CPU can prepare
    step *n+1*. Reading a value on the host waits for all queued work to finish and
    drains that queue, so every step starts with an idle GPU waiting for the CPU to
    launch kernels. For small and medium models that gap is a large share of the step.

    In reinforcement learning, a loop that steps an environment (`envs.step(...)`) inside an
    iteration that trains is a rollout of many steps: a read there happens on every environment
    step, like testing each element of a CUDA tensor (`for idx, d in enumerate(next_done): if d:`).
    Silent when the read is guarded by a step interval (`if step % log_every == 0:`, not `if step
    % 50:`, true on all steps but one in 50; also through
    names the step assigns such tests, `if early_phase or late_phase:`; or a time
    interval, `if current_time - last_logging > args.log_freq_time:`; but not a
    modulo by a setting that is 1, `opt.d_every` of `class Config: d_every = 1` or the default
    of the script's `--gradient_accumulation_steps` read from a parameter, or the value the
    class's `__init__` (or a base's) gives `self.discriminator_cycle`, or 2, TD3's
    `--policy_delay`: every other step; `if i == 0:`; `if global_step in upsample_steps:`;
    a function of the project returning such a modulo), in a branch a CUDA run does not take
    (the `else` of `if torch.cuda.is_available():`, what follows an `if use_cuda: return ...`, Demucs' `if x_is_mps:`,
    `if x.device.type == "mps":`) or no run takes (under
    `if self.flag:` where the source only sets `self.flag` to false constants, or in its `else`
    when only to true ones: SlowFast's `self.swav_use_public_code = True`; under `if cfg.flag:`
    where the files of the project set `flag` only to false constants, yolact's
    `'use_class_balanced_conf': False`; also a method a module's `forward` calls only there) or a training step
    does not (the `else` of the test the step trains under, `if is_train:`, and a module's
    inference branch, the `else` of `if self.training:`, the body of `if self.phase == "test":`),
    under a switch no file of the project sets (`if hasattr(config, "skip_inf_nan_grad") and
    config.skip_inf_nan_grad:`, no configuration, option or YAML key naming it), in the body of a
    test that is itself reported (`if torch.isnan(loss).any():`: it runs when something went wrong;
    not `if known.any(): t = target[known]`, whose body selects with the mask it tests and runs on
    most steps), inside an `except`
    handler or a branch that ends the program (`raise`, `sys.exit(1)` after a non-finite
    loss) or that fills a value on the first step (`if loss_ema is None: loss_ema = loss.item()`),
    outside a loop, in a training loop of a few iterations (`for step in range(4):`, a
    demonstration; not in a function called in a loop, as SAC's `update()` looping over
    `gradient_steps`, 1 by default, at every step of the environment), in an epoch loop
    that only contains the training loop, in a loop
    (or step function) that also runs an evaluation pass (`model.eval()` there, or a function
    calling it) on every iteration (full-batch training's `loss = train(); acc = test()`: the
    host waits for the test's results anyway, so one more read adds no stall), in a function of a module that other
    modules of the project import and none of them (nor the module) runs (dead code there:
    the training loops of other lectures in a course's shared helper_train.py; a method of a
    class of the project, not of a library's, that no module names), on tensors made on the
    CPU (`if torch.rand(1) < p:`, `torch.randperm(n).tolist()` in a helper), and in
    code with no sign of CUDA (asking `torch.cuda.is_available()` or seeding CUDA's generators,
    `torch.cuda.manual_seed(42)`, is no sign of using it), and in the `if __name__ == "__main__":`
    block of a module the project imports, that takes no command line and uses no GPU itself
    (awd-lstm-lm's splitcross.py checking its loss on the CPU: its importer's GPU runs the
    module's functions, not the block).
    `.cpu()` and `.to("cpu")` are silent in a module that uses `torch.distributed.rpc`: RPC
    sends CPU tensors (unless device maps are set), so there the copy is the transfer the
    design needs. Silent too for the actions a reinforcement-learning agent hands to its
    environment (`actions = q_values.argmax(1).cpu().numpy()`, then `envs.step(actions)` in
    the same loop; also through a method of the agent that returns them and one that steps the
    environment, `action = self.select_action(state)` then `self.step(action)`): a simulator on
    the host needs them to take its step. So are the new priorities of a prioritized replay
    buffer (`memory.update_priorities(indices, loss.detach().cpu().numpy() + eps)`, also through
    names): a host structure needs them at each update. Likewise for a cost
    matrix copied for SciPy (`C = C.cpu()`, then `linear_sum_assignment(c[i])` in the same
    function: DETR's Hungarian matching needs it on the host), and in a module named for
    post-processing (DETR's `PostProcessPanoptic`: predictions for evaluation).

    ## Example
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    ```

    ## Fix
    ```python
    running_loss = torch.zeros((), device=device)
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss.detach()
        if step % log_every == 0:
            print(running_loss.item() / (step + 1))
    ```
    """

    code = "TPL203"
    name = "host-sync-every-step"
    summary = "Host-device sync (.item(), .cpu(), print/if of a tensor) on every training step"
    triggers = ("backward", "step(", "optim", "Engine(", "forward(", "__call__", ".item(", ".cpu(", ".tolist(", ".numpy(")  # training, reads,
    # a loss object's `__call__`
    calls = None  # every call: a function of the project may read its arguments on the host
    probe = "syncs"
    VALID = (
        # a batch formatted into an assert's message: evaluated only when the assertion fails
        Example(
            """
            import torch
            for x, y in loader:
                x = x.cuda()
                assert x.dim() == 4, f"expected a batch of images, got {x}"
                loss = criterion(model(x), y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        # a number that a branch taken every 100th step makes a tensor: read on those steps only
        Example(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                criterion(model(x.cuda()), y.cuda()).backward()
                grad_norm = 0.
                if step % 100 == 0:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                stats.global_norm = float(grad_norm)
            """
        ),
        # a disabled scaler's scale (1.0, no tensor), and the scale read when logging every 100 steps
        Example(
            """
            import torch
            scaler = torch.cuda.amp.GradScaler(enabled=False)
            other = torch.cuda.amp.GradScaler()
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                meter.update(scaler.get_scale())
                if step % 100 == 0:
                    print(other.get_scale())
            """
        ),
        # the `else` of a switch every call of the function turns on (the other call is in a
        # branch the module's constant rules out)
        Example(
            """
            import torch
            model = Net().cuda()
            use_attn = True
            def train(loader, use_attn):
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
                    if use_attn:
                        attn_log.append(1)
                    else:
                        print(loss.item())
            if use_attn:
                train(loader, use_attn=True)
            else:
                train(loader, use_attn=False)
            """
        ),
        # a scaler enabled only when the caller asks for mixed precision (off by default, flair's trainer)
        Example(
            """
            import torch
            def train(model, loader, optimizer, use_amp: bool = False):
                scaler = torch.cuda.amp.GradScaler(enabled=use_amp and torch.cuda.is_available())
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    scale_after = scaler.get_scale()
            """
        ),
        # a metric made not to test its inputs for NaN
        Example(
            """
            import torch
            from torchmetrics import RunningMean
            running_loss = RunningMean(window=4, nan_strategy="disable").to("cuda")
            for batch in loader:
                loss = model(batch.cuda())
                loss.backward()
                optimizer.step()
                running_loss.update(loss.detach())
            """,
        ),
        # gpt-neox's SM3 optimizer: a step counter kept as a CPU tensor in its state, read each step
        Example(
            """
            import torch
            class SM3(torch.optim.Optimizer):
                def step(self, closure=None):
                    if "k" not in self.state:
                        self.state["k"] = torch.tensor([0], dtype=torch.long)
                    k = self.state["k"].item()
                    for group in self.param_groups:
                        for p in group["params"]:
                            p.data.add_(p.grad, alpha=-group["lr"] / (k + 1))
                    self.state["k"] += 1
            optimizer = SM3(model.cuda().parameters(), {"lr": 0.1})
            """,
        ),
        # a DQN agent (rainbow-is-all-you-need): the greedy action its method returns goes to the
        # environment through the agent's own `step`; the new priorities go to the host sum tree
        Example(
            """
            import torch
            class Agent:
                def select_action(self, state):
                    action = self.dqn(torch.FloatTensor(state).cuda()).argmax()
                    action = action.detach().cpu().numpy()
                    return action
                def step(self, action):
                    return self.env.step(action)
                def update_model(self):
                    loss = self.dqn(self.memory.sample_batch().cuda())
                    loss.mean().backward()
                    self.optimizer.step()
                    prior = loss.detach().cpu().numpy()
                    new_priorities = prior + 1e-6
                    self.memory.update_priorities(new_priorities)
                def train(self, frames):
                    for frame in range(frames):
                        action = self.select_action(self.state)
                        self.state, reward, done = self.step(action)
                        self.update_model()
            """,
        ),
        # autograd Functions whose backward passes apply each other (conv2d_gradfix), read nothing
        Example(
            """
            import torch
            class Conv(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, weight):
                    ctx.save_for_backward(weight)
                    return x * weight
                @staticmethod
                def backward(ctx, grad):
                    weight, = ctx.saved_tensors
                    return ConvGrad.apply(grad, weight), None
            class ConvGrad(torch.autograd.Function):
                @staticmethod
                def forward(ctx, grad, weight):
                    return grad * weight
                @staticmethod
                def backward(ctx, grad):
                    return Conv.apply(grad, 1.0), None
            """
        ),
        # column-out augmentation: indices drawn on the host, a part of a CPU tensor read there
        Example(
            """
            import torch
            def batch_colout(X, p_row):
                kept = int((1 - p_row) * X.shape[2])
                rows = sorted(torch.randperm(X.shape[2])[:kept].numpy())
                return X[:, :, rows, :]
            model = Net().cuda()
            for x, y in loader:
                loss = criterion(model(batch_colout(x.cuda(), 0.15)), y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        # a forward given host data, as its annotation says (pytorch-lifestream's text embedder)
        Example(
            """
            import numpy as np
            import torch
            class Embedder(torch.nn.Module):
                def forward(self, X: np.ndarray):
                    tokens = self.tokenizer(X.tolist(), return_tensors="pt")
                    return self.bert(**{k: v.to("cuda") for k, v in tokens.items()})
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
            """
        ),
        # a Flatten module reading the product of its input's sizes, a tensor made on the host
        Example(
            """
            import torch
            from torch import nn
            class Flatten(nn.Module):
                def forward(self, x):
                    shape = torch.prod(torch.tensor(x.shape[1:])).item()
                    return x.view(-1, shape)
            model = nn.Sequential(nn.Conv2d(3, 8, 3), Flatten(), nn.Linear(8 * 30 * 30, 10)).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
        ),
        # a switch-case for inference in a module's forward (SSD's `if self.phase == "test":`), and
        # an ignite evaluator's process function
        Example(
            """
            import torch
            from ignite.engine import Engine

            class SSD(torch.nn.Module):
                def __init__(self, phase):
                    super().__init__()
                    self.phase = phase

                def forward(self, x):
                    out = self.head(x)
                    if self.phase == "test":
                        return out[out > 0.5]
                    return out

            def eval_step(engine, batch):
                x, y = batch[0].cuda(), batch[1].cuda()
                with torch.no_grad():
                    return (model(x).argmax(1) == y).sum().item()

            evaluator = Engine(eval_step)
            for x, y in loader:
                loss = SSD("train").cuda()(x.cuda()).sum()
                loss.backward()
                optimizer.step()
            """
        ),
        # the action a helper returns, which each of its calls hands to the environment's step
        # (RL-Adventure-2's HER: `get_action`)
        Example(
            """
            import torch
            def get_action(model, state):
                q_value = model(torch.FloatTensor(state).unsqueeze(0).cuda())
                return q_value.max(1)[1].item()
            while frame_idx < max_frames:
                state, done = env.reset(), False
                while not done:
                    action = get_action(model, state)
                    state, reward, done, _ = env.step(action)
                    loss = model(batch.cuda()).mean()
                    loss.backward()
                    optimizer.step()
            """
        ),
        # a NumPy scalar's `.item()` in a forward (Informer's ProbAttention)
        Example(
            """
            import numpy as np
            import torch
            class ProbAttention(torch.nn.Module):
                def forward(self, queries, keys):
                    u = self.factor * np.ceil(np.log(keys.shape[2])).astype("int").item()
                    return queries[:, :, :u]
            model = ProbAttention().cuda()
            for x in loader:
                model(x.cuda(), x.cuda()).sum().backward()
                optimizer.step()
            """,
        ),
        # read at a few listed steps: the step counter tested for membership (torch-ngp's upsampling)
        Example(
            """
            import torch
            upsample_steps = [2000, 3000, 4000]
            model = TensoRF().cuda()
            for step, batch in enumerate(loader):
                loss = model(batch.cuda()).mean()
                loss.backward()
                optimizer.step()
                if step in upsample_steps:
                    aabb = model.aabb_train.cpu().numpy()
                    model.upsample(aabb)
            """,
        ),
        # the new priorities of a prioritized replay buffer, a sum tree on the host (Rainbow)
        Example(
            """
            import torch
            for step in range(100000):
                idxs, states, actions, returns, weights = memory.sample(32)
                log_probs = online_net(states.cuda())
                loss = -torch.sum(log_probs.sum(1), 1)
                (weights * loss).mean().backward()
                optimiser.step()
                memory.update_priorities(idxs, loss.detach().cpu().numpy())
            """
        ),
        # monodepth2: the log guard is named, `early_phase or late_phase`, each a modulo of the step
        Example(
            """
            import torch
            model = model.cuda()
            for batch_idx, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                early_phase = batch_idx % log_frequency == 0 and step < 2000
                late_phase = step % 2000 == 0
                if early_phase or late_phase:
                    print(loss.cpu().data)
                step += 1
            """
        ),
        # seeding CUDA's generators is no use of a GPU: this script trains on the CPU
        Example(
            """
            import torch
            if torch.cuda.is_available():
                torch.cuda.manual_seed(42)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                print(loss.item())
            """
        ),
        # DETR's Hungarian matcher: SciPy's linear_sum_assignment needs the cost matrix on the host
        Example(
            """
            import torch
            from scipy.optimize import linear_sum_assignment
            class HungarianMatcher(torch.nn.Module):
                @torch.no_grad()
                def forward(self, outputs, targets):
                    C = torch.cdist(outputs["pred_boxes"].flatten(0, 1), torch.cat([t["boxes"] for t in targets]), p=1)
                    C = C.view(len(targets), outputs["pred_boxes"].shape[1], -1).cpu()
                    sizes = [len(t["boxes"]) for t in targets]
                    return [linear_sum_assignment(c[i]) for i, c in enumerate(C.split(sizes, -1))]
            class Criterion(torch.nn.Module):
                def forward(self, outputs, targets):
                    return matcher(outputs, targets)
            model = model.cuda()
            """
        ),
        # DETR's post-processing module: predictions made from the outputs, which evaluation runs
        Example(
            """
            import torch
            class PostProcessPanoptic(torch.nn.Module):
                def forward(self, outputs):
                    for label in outputs["pred_logits"].argmax(-1).flatten():
                        if self.is_thing_map[label.item()]:
                            self.things += 1
            model = model.cuda()
            """
        ),
        # a command-line option named like a loss, compared with a string (spectral-normalization-gan)
        Example(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument('--loss', type=str, default='hinge')
            args = parser.parse_args()
            for epoch in range(100):
                for data, target in loader:
                    z = torch.randn(64, 128, device="cuda")
                    if args.loss == 'hinge':
                        disc_loss = torch.relu(1.0 - discriminator(data.cuda())).mean()
                    else:
                        disc_loss = -discriminator(data.cuda()).mean()
                    disc_loss.backward()
                    optim_disc.step()
            """
        ),
        # a debug switch the command line leaves off, handed down to the training function (pytorch-pose)
        Example(
            """
            import argparse
            import torch
            def train(loader, model, optimizer, debug=False):
                for inputs, target in loader:
                    output = model(inputs.cuda())
                    loss = (output - target.cuda()).pow(2).mean()
                    if debug:
                        show(output.cpu().numpy())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            def main(args):
                for epoch in range(100):
                    train(loader, model, optimizer, args.debug)
            parser = argparse.ArgumentParser()
            parser.add_argument('-d', '--debug', dest='debug', action='store_true')
            main(parser.parse_args())
            """,
        ),
        # the branch for PyTorch 0.3 of a test of torch's version: no current PyTorch runs it
        Example(
            """
            import torch
            version = torch.__version__
            def train(model, loader, optimizer):
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda(), y.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    if int(version[0]) > 0 or int(version[2]) > 3:
                        if step % 100 == 0:
                            print(loss.item())
                    else:
                        print(f"{loss.data[0]:.4f}")
            """,
        ),
        # a constant set on the first call, in the state the test reads (CMC's memory bank)
        Example(
            """
            import torch
            class NCEAverage(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.params = [0.07, -1.0]
                def forward(self, l, memory):
                    Z = self.params[1]
                    out = torch.exp(torch.mm(memory, l.t()) / 0.07)
                    if Z < 0:
                        self.params[1] = out.mean().item() * memory.size(0)
                        print("normalization constant Z is set to {:.1f}".format(self.params[1]))
                    return out / self.params[1]
            model = NCEAverage().cuda()
            """,
        ),
        # a trainer module whose forward is the training loop: what it reads before the loop, once
        Example(
            """
            import torch
            class Trainer(torch.nn.Module):
                def __init__(self, net, loader):
                    super().__init__()
                    self.net, self.loader = net.cuda(), loader
                    self.register_buffer("step", torch.tensor(0))
                def forward(self):
                    step = self.step.item()
                    for images in self.loader:
                        self.net(images.cuda()).mean().backward()
                        self.optimizer.step()
                        step += 1
            """,
        ),
        # the `else` of a flag the source only ever sets to True: no run takes it
        Example(
            """
            import torch
            class Swav(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.use_public_code = True
                def forward(self, x, epoch):
                    if self.use_public_code:
                        return self.loss(x)
                    else:
                        if epoch >= 15 and not torch.all(self.queue[0, -1, :] == 0):
                            x = torch.cat((self.queue[0], x))
                        return self.loss(x)
            model = Swav().cuda()
            for x, y in loader:
                loss = model(x.cuda(), epoch)
                loss.backward()
                optimizer.step()
            """,
        ),
        # the inference branch of a module's forward (`else` of `if self.training:`)
        Example(
            """
            import torch
            class RetinaNet(torch.nn.Module):
                def forward(self, images, annotations=None):
                    classification = self.head(images)
                    if self.training:
                        return self.focal_loss(classification, annotations)
                    else:
                        for i in range(classification.shape[2]):
                            scores = torch.squeeze(classification[:, :, i])
                            if (scores > 0.05).sum() == 0:
                                continue
            model = RetinaNet().cuda()
            for images, annotations in loader:
                loss = model(images.cuda(), annotations)
                loss.backward()
                optimizer.step()
            """,
        ),
        # a batch field read as the loader gives it, before the iteration moves it to the GPU
        Example(
            """
            import torch
            def train(train_loader, model, optimizer, device):
                for i, (wmaps, tmaps, wmap_lengths) in enumerate(train_loader):
                    max_word_len = max(wmap_lengths.tolist())
                    wmaps = wmaps[:, :max_word_len].to(device)
                    wmap_lengths = wmap_lengths.to(device)
                    loss = model(wmaps, wmap_lengths).mean()
                    loss.backward()
                    optimizer.step()
            train(loader, model, optimizer, torch.device("cuda"))
            """,
        ),
        # Demucs' workaround for Apple's MPS, which a CUDA run never takes
        Example(
            """
            import torch
            class HDemucs(torch.nn.Module):
                def forward(self, mix):
                    x = self.decode(mix)
                    x = x * self.std + self.mean
                    x_is_mps = x.device.type == "mps"
                    if x_is_mps:
                        x = x.cpu()
                    return self._ispec(x)
            model = HDemucs().cuda()
            """,
        ),
        # the size and count fields of a batch moved whole are numbers, not tensors
        Example(
            """
            import torch
            for step, batch in enumerate(loader):
                batch = batch.to("cuda")
                if batch.x.shape[0] == 1 or batch.num_graphs == 1:
                    continue
                loss = model(batch).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
        ),
        # helpers of the training loop called every N steps, or evaluating (no gradients) after
        # each full-batch step: not part of the step
        Example(
            """
            import torch
            def print_samples():
                samples = generate(model, torch.zeros(10, 1, device="cuda"))
                for row in samples:
                    print(decode(row.tolist()))
            @torch.no_grad()
            def test():
                pred = model(data.x).argmax(dim=-1)
                return int((pred == data.y).sum()) / len(data.y)
            for step in range(max_steps):
                loss = model(data.x.cuda()).mean()
                loss.backward()
                optimizer.step()
                acc = test()
                if step % 200 == 0:
                    print_samples()
            """
        ),
        # a pass named for evaluation, called from the training loop every `test_freq` steps (a
        # flag it computes, not a modulo it tests: DLRM's `inference(...)`)
        Example(
            """
            import torch
            def inference(model, test_loader):
                correct = 0
                for x, y in test_loader:
                    z = model(x.cuda())
                    correct += (z.argmax(dim=1).cpu() == y).sum()
                return correct
            for j, (x, y) in enumerate(train_loader):
                loss = F.cross_entropy(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                should_test = args.test_freq > 0 and (j + 1) % args.test_freq == 0
                if should_test:
                    accuracy = inference(model, test_loader)
            """
        ),
        # Grad-CAM over one batch: backward for each of 20 images, then `break`
        Example(
            """
            import torch
            model = Net().cuda()
            for image, label in test_loader:
                x, y = image.cuda(), label.cuda()
                output = model(x)
                for j in range(20):
                    model.zero_grad()
                    lab = y[j].cpu().item()
                    output[j, lab].backward(retain_graph=True)
                    show(cam.get_cam(j).cpu().numpy())
                break
            """
        ),
        # fixed shapes: a three-argument where, a bincount given its length
        Example(
            """
            import torch
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                logits = torch.relu(model(x))
                positive = logits.where(logits > 0, torch.zeros_like(logits))
                counts = torch.bincount(y, minlength=10) + y.bincount(minlength=10)
                loss = (criterion(positive, y) / counts[y]).mean()
                loss.backward()
                optimizer.step()
            """
        ),
        # one loop for training and validation: the reads of the `else` run only in validation
        Example(
            """
            import torch
            def train_val_loop(is_train, loader):
                for x, y in loader:
                    loss = loss_fn(model(x.cuda()), y.cuda())
                    if is_train:
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    if is_train:
                        step += 1
                    else:
                        writer.add_scalar("val_loss", loss.item(), step)
            for epoch in range(10):
                train_val_loop(True, train_loader)
                with torch.no_grad():
                    train_val_loop(False, val_loader)
            """
        ),
        # full-batch training: the loop tests the model after every step and waits for its results
        # anyway, so reading the loss adds no stall
        Example(
            """
            import torch
            def train():
                model.train()
                optimizer.zero_grad()
                loss = F.cross_entropy(model(data.x, data.edge_index)[data.train_mask], data.y[data.train_mask])
                loss.backward()
                optimizer.step()
                return float(loss)

            @torch.no_grad()
            def test():
                model.eval()
                pred = model(data.x, data.edge_index).argmax(dim=-1)
                return int((pred[data.test_mask] == data.y[data.test_mask]).sum())

            data = data.to("cuda")
            for epoch in range(1, 201):
                loss = train()
                acc = test()
                print(f"Epoch {epoch}: {loss:.4f} {acc}")
            """
        ),
        # a demonstration of four steps
        Example(
            """
            import torch
            model = torch.nn.Linear(4, 1).cuda()
            for step in range(4):
                loss = loss_fn(model(x), y)
                loss.backward()
                print(f"step {step}: grad norm = {model.weight.grad.norm():.4f}")
            """
        ),
        # a running mean started from the first step's loss (`loss_ema` reset each epoch)
        Example(
            """
            import torch
            model = Net().cuda()
            for epoch in range(100):
                loss_ema = None
                for x, _ in loader:
                    loss = model(x.cuda())
                    loss.backward()
                    optimizer.step()
                    if loss_ema is None:
                        loss_ema = loss.item()
            """
        ),
        # the same rollout testing the done flags the environment gave, a NumPy array
        Example(_ROLLOUT.format(done="done", moved="next_obs = torch.Tensor(next_obs).to(device)")),
        # the same with the evaluation written in the loop (a course's full-batch classifier)
        Example(
            """
            import torch
            X_train, y_train = X_train.to("cuda"), y_train.to("cuda")
            for epoch in range(100):
                model.train()
                logits = model(X_train).squeeze()
                loss = loss_fn(logits, y_train)
                acc = (torch.round(torch.sigmoid(logits)) == y_train).sum().item()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                model.eval()
                with torch.inference_mode():
                    test_acc = (torch.round(torch.sigmoid(model(X_test).squeeze())) == y_test).sum().item()
            """
        ),
        # and with the step in a function that tests the model after it (pytorch/examples' GCN)
        Example(
            """
            import torch
            def train_iter(model, optimizer, features, labels):
                model.train()
                optimizer.zero_grad()
                loss = criterion(model(features), labels)
                loss.backward()
                optimizer.step()
                loss_val, acc_val = test(model, features, labels)

            def test(model, features, labels):
                model.eval()
                with torch.no_grad():
                    output = model(features)
                    loss = criterion(output, labels)
                return loss.item(), (output.argmax(dim=1) == labels).float().mean().item()

            features, labels = features.to("cuda"), labels.to("cuda")
            for epoch in range(200):
                train_iter(model, optimizer, features, labels)
            """
        ),
        # d2l's CPU trainer (it names no device) beside its GPU trainer, which moves its batches
        Example(
            """
            import torch
            def train_ch3(net, train_iter, loss, optimizer, num_epochs):
                for epoch in range(num_epochs):
                    for X, y in train_iter:
                        l = loss(net(X), y).sum()
                        optimizer.zero_grad()
                        l.backward()
                        optimizer.step()
                        train_l_sum += l.item()

            def train_ch5(net, train_iter, loss, optimizer, device, num_epochs):
                net = net.to(device)
                for epoch in range(num_epochs):
                    for X, y in train_iter:
                        l = loss(net(X.to(device)), y.to(device))
                        optimizer.zero_grad()
                        l.backward()
                        optimizer.step()
                    print(l.item())
            train_ch5(net, train_iter, loss, optimizer, torch.device("cuda"), 5)
            """
        ),
        # a CPU tensor's value (a random index), and a notebook that only runs its model
        Example(
            """
            import torch
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                index = torch.randint(0, 10, (1,)).item()
            """
        ),
        Example(
            (
                "%matplotlib inline\nimport torch\nclass MoE(torch.nn.Module):\n    def forward(self, x, experts):\n"
                "        for e in experts.unique():\n            x = self.experts[int(e.item())](x)\n        return x",
                "model = MoE().cuda()\nwith torch.no_grad():\n    print(model(x, experts))",
            )
        ),
        # the first element of a batch's data (not a loss), and the loss read every 50 steps
        Example(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                first = x.cuda().data[0]
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                if step % 50 == 0:
                    print("loss %.4f" % loss.data[0])
            """
        ),
        # a model trained on the CPU in a notebook that uses CUDA elsewhere: its batches stay there
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            model = Net().cuda()
            model_cpu = Net().to("cpu")
            train_dataloader = DataLoader(train_data, batch_size=32)
            for epoch in range(5):
                for batch, (X, y) in enumerate(train_dataloader):
                    X, y = X.to("cpu"), y.to("cpu")
                    loss_fn(model_cpu(X), y).backward()
                    optimizer.step()
            for epoch in range(5):
                for i, (imgs, labels) in enumerate(train_dataloader):
                    labels = to_categorical(labels.numpy(), num_columns=10)
                    loss_fn(model(imgs.cuda()), labels.cuda()).backward()
                    optimizer.step()
            """,
        ),
        # a branch that stops the program runs at most once
        Example(
            """
            import sys
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = model(x.cuda(), y.cuda())
                if x.numel() == 0:
                    print("Loss is {}, stopping training".format(loss.item()))
                    sys.exit(1)
                loss.backward()
                opt.step()
            """
        ),
        Example(
            """
            import torch
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = model(x.cuda(), y.cuda())
                loss.backward()
                opt.step()
                if step % 100 == 0:
                    print(loss.item())
            """,
        ),
        # the interval asked through a function of the project
        Example(
            """
            import torch
            def divisible_by(num, den):
                return (num % den) == 0
            model = Net().cuda()
            for i, (x, y) in enumerate(loader):
                loss = model(x.cuda(), y.cuda())
                loss.backward()
                opt.step()
                if divisible_by(i, validate_every):
                    print(loss.item())
            """,
        ),
        Example(
            """
            import torch
            model = Net()
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                opt.step()
                total += loss.item()
            """,
        ),
        Example(
            """
            import torch
            model = Net().cuda()
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    opt.step()
                print(f'epoch {epoch}: {loss.item():.3f}')
            """,
        ),
        Example(
            """
            import torch
            model = Net().cuda()
            for x in loader:
                preds.append(model(x.cuda()).cpu())
            """,
        ),
        Example(
            """
            import torch
            import torch.distributed.rpc as rpc
            m = ps_rref.rpc_sync().get_model().cuda()
            for inputs, labels in batches:
                loss_fn(m(inputs.cuda()), labels.cuda()).backward()
                grads = [p.grad for p in m.cpu().parameters()]
                m = rpc.rpc_sync(owner, update_and_fetch_model, args=(ps_rref, grads)).cuda()
            """,
        ),
        # DQN: the environment steps on the host with the greedy actions of every iteration
        Example(
            """
            import gymnasium as gym
            import torch
            envs = gym.vector.SyncVectorEnv([make_env(i) for i in range(4)])
            q_network = QNetwork(envs).to("cuda")
            obs, _ = envs.reset()
            for global_step in range(total_timesteps):
                q_values = q_network(torch.Tensor(obs).to("cuda"))
                actions = torch.argmax(q_values, dim=1).cpu().numpy()
                next_obs, rewards, terminations, truncations, infos = envs.step(actions)
                rb.add(obs, next_obs, actions, rewards, terminations, infos)
                obs = next_obs
                if global_step > learning_starts:
                    loss = td_loss(q_network, rb.sample(batch_size))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # a CPU tensor compared on the host: nothing to wait for
        Example(
            """
            import torch
            model.cuda()
            for x, y in loader:
                if torch.rand(1) <= teacher_forcing:
                    x = y
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
        ),
        # read every so many seconds (`current_time - last_logging > log_freq_time`), not every step
        Example(
            """
            import time
            import torch
            last_logging = time.time()
            model.cuda()
            for x, y in loader:
                loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
                current_time = time.time()
                if current_time - last_logging > 60:
                    print(loss.item())
                    last_logging = current_time
            """,
        ),
        # a synchronize right before a timer's clock read, the step's time shown each step: it makes
        # the timing right (llm.c's `print0(f"step ... {(t1 - t0) * 1000:.2f}ms")`)
        Example(
            """
            import time
            import torch
            class Timer:
                def tic(self):
                    self.start = time.time()
                def toc(self):
                    return time.time() - self.start
            timer = Timer()
            model.cuda()
            for x, y in loader:
                timer.tic()
                model(x.cuda()).sum().backward()
                torch.cuda.synchronize()
                print(f"step time {timer.toc():.3f}s")
            """,
        ),
    )
    INVALID = (
        # torchmetrics' aggregation metric testing each update for NaN on the host (litgpt's `running_loss`),
        # and an interval read from a parameter annotated with a dataclass whose default is 1
        Example(
            """
            import torch
            from dataclasses import dataclass
            from torchmetrics import RunningMean
            @dataclass
            class TrainArgs:
                log_interval: int = 1
            def fit(model, optimizer, loader, train: TrainArgs):
                running_loss = RunningMean(window=4).to("cuda")
                for iter_num, batch in enumerate(loader):
                    loss = model(batch.cuda())
                    loss.backward()
                    optimizer.step()
                    running_loss.update(loss.detach())
                    if iter_num % train.log_interval == 0:
                        print(running_loss.compute().item())
            """,
            count=2,
        ),
        # a step function handed to a timer of the project that calls it (jepa's `gpu_timer(train_step)`)
        Example(
            """
            import torch
            def gpu_timer(closure):
                start = time.perf_counter()
                result = closure()
                return result, time.perf_counter() - start
            device = torch.device("cuda:0")
            for epoch in range(100):
                for clips in loader:
                    clips = clips.to(device)
                    def train_step():
                        loss = model(clips).mean()
                        loss.backward()
                        optimizer.step()
                        return float(loss)
                    loss, elapsed = gpu_timer(train_step)
            """,
        ),
        # a number until a branch most steps take binds a tensor (jepa's `_enc_norm = 0.`, then
        # clipped after the warm-up); a custom autograd op's result read back, its argument the
        # tensor bound before (`top1_acc = float(AllReduce.apply(top1_acc))`)
        Example(
            """
            import torch
            class AllReduce(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x
            for epoch in range(100):
                for x, y in loader:
                    outputs = model(x.cuda())
                    loss = criterion(outputs, y.cuda())
                    loss.backward()
                    grad_norm = 0.
                    if epoch > warmup and clip_grad is not None:
                        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
                    optimizer.step()
                    stats.global_norm = float(grad_norm)
                    top1_acc = 100. * outputs.max(dim=1).indices.eq(y.cuda()).sum() / len(x)
                    top1_acc = float(AllReduce.apply(top1_acc))
            """,
            count=2,
        ),
        # a dict of the step's losses handed to a helper reading each one (BasicSR's `reduce_loss_dict`);
        # `l_pix` is a tensor as a term of the loss that is backpropagated
        Example(
            """
            import torch
            from collections import OrderedDict
            def reduce_loss_dict(loss_dict):
                return {name: value.mean().item() for name, value in loss_dict.items()}
            device = torch.device("cuda")
            for lq, gt in loader:
                output = net_g(lq.to(device))
                l_total = 0
                loss_dict = OrderedDict()
                l_pix = cri_pix(output, gt.to(device))
                l_total += l_pix
                loss_dict["l_pix"] = l_pix
                l_total.backward()
                optimizer_g.step()
                log_dict = reduce_loss_dict(loss_dict)
            """,
        ),
        # PyTorch 0.3's read of a count made just above (`torch.sum`), the name a number elsewhere
        Example(
            """
            import torch
            net = Net().cuda()
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                out = net(x)
                criterion(out, y).backward()
                optimizer.step()
                num_correct = torch.sum(out.argmax(1) == y)
                running_acc += num_correct.data[0]
            num_correct = 0.0
            """,
        ),
        # AMP's loss scale read every step for a meter (Swin Transformer's `main_simmim_pt.py`)
        Example(
            """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.autocast("cuda"):
                    loss = criterion(model(x.cuda()), y.cuda())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                loss_scale_meter.update(scaler.get_scale())
            """,
        ),
        # a helper reading every parameter's gradient norm, handed `named_parameters()` (jepa's `grad_logger`)
        Example(
            """
            import torch
            def grad_logger(named_params):
                return [float(torch.norm(p.grad)) for n, p in named_params if p.grad is not None]
            model = Net().cuda()
            for x, y in loader:
                criterion(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
                stats = grad_logger(model.named_parameters())
            """,
        ),
        # the end of a step of gradient accumulation (torchtune's recipes): the test picks the
        # iterations that step the optimizer, every training step
        Example(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                loss = model(x.cuda(), y.cuda())
                running_loss += loss.detach()
                loss.backward()
                if (i + 1) % grad_accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
                    loss_value = running_loss.item()
                    pbar.set_description(f"loss {loss_value:.4f}")
            """,
        ),
        # a loss object's `__call__` (not a module) run every step, and the method it calls, selecting
        # with a mask assigned just before (YOLO's `build_targets`; `j` is rebound to other values later)
        Example(
            """
            import torch
            class ComputeLoss:
                def __call__(self, p, targets):
                    return self.build_targets(p, targets)
                def build_targets(self, p, targets):
                    t = targets * 2
                    r = t[..., 4:6]
                    j = torch.max(r, 1 / r).max(2)[0] < 4.0
                    t = t[j]
                    j, k = (t > 1).T
                    return t.sum() + j.sum() + k.sum()
            compute_loss = ComputeLoss()
            for images, targets in loader:
                compute_loss(model(images.cuda()), targets.cuda()).backward()
                optimizer.step()
            """,
        ),
        # a model of coqui's Trainer (coqui TTS's Tacotron): the Trainer runs its `train_step` on every
        # step, with the batch on the GPU when there is one
        Example(
            """
            import torch
            from trainer import TrainerModel
            class Tacotron(TrainerModel):
                def train_step(self, batch, criterion):
                    mel_lengths = batch["mel_lengths"]
                    outputs = self.forward(batch["text_input"], mel_lengths)
                    if mel_lengths.max() % self.r != 0:
                        mel_lengths = mel_lengths + self.r - mel_lengths.max() % self.r
                    return outputs, criterion(outputs, batch["mel_input"], mel_lengths)
            """,
        ),
        # a ClassyVision hook (VISSL's CheckNanLossHook): the task's training loop runs `on_loss_and_meter`
        # on every step; the host copy waits, the test of the copy does not
        Example(
            """
            import torch
            from classy_vision.hooks.classy_hook import ClassyHook
            class CheckNanLossHook(ClassyHook):
                def on_start(self, task):
                    task.base_model.cuda()
                def on_loss_and_meter(self, task):
                    loss_val = task.last_batch.loss.data.cpu()
                    if not torch.isfinite(loss_val).all():
                        raise FloatingPointError(f"Infinite Loss or NaN at iteration={task.iteration}")
            """,
        ),
        # a selection under a test of its mask's count (Towards-Realtime-MOT's YOLO layer): the body is
        # the usual path, `nM > 0` whenever the batch has targets
        Example(
            """
            import torch
            class YOLOLayer(torch.nn.Module):
                def forward(self, p_box, targets):
                    tconf, tbox = build_targets(targets)
                    tconf, tbox = tconf.cuda(), tbox.cuda()
                    mask = tconf > 0
                    nM = mask.sum().float()
                    if nM > 0:
                        return self.SmoothL1Loss(p_box[mask], tbox[mask])
                    return p_box.sum() * 0
            model = YOLOLayer().cuda()
            for p_box, targets in loader:
                model(p_box.cuda(), targets).backward()
                optimizer.step()
            """,
            count=2,
        ),
        # a step function sampling from the model every N steps (audiolm's trainers): the evaluation
        # is guarded, so the function is a training step, not a full-batch evaluation each iteration
        Example(
            """
            import torch
            from torch import nn
            class Trainer(nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.model = model
                    self.register_buffer("steps", torch.tensor(0))
                def train_step(self):
                    steps = int(self.steps.item())
                    for _ in range(self.grad_accum_every):
                        loss = self.model(next(self.dl_iter).cuda())
                        loss.backward()
                    self.optim.step()
                    if not (steps % self.save_results_every):
                        self.model.eval()
                        with torch.inference_mode():
                            self.model(next(self.valid_dl_iter).cuda())
                    self.steps.add_(1)
                def train(self):
                    for _ in range(self.num_train_steps):
                        self.train_step()
            trainer = Trainer(Net()).cuda()
            trainer.train()
            """,
        ),
        # latent-diffusion's LitEma: `if self.num_updates >= 0:` tests that the counter is on (it is
        # -1 when off), true on every step, so the `min` of CUDA buffers in its body runs every step too
        Example(
            """
            import torch
            from torch import nn
            class LitEma(nn.Module):
                def __init__(self, model, decay=0.9999, use_num_updates=True):
                    super().__init__()
                    self.register_buffer("decay", torch.tensor(decay, dtype=torch.float32))
                    self.register_buffer("num_updates", torch.tensor(0, dtype=torch.int) if use_num_updates else torch.tensor(-1, dtype=torch.int))
                def forward(self, model):
                    decay = self.decay
                    if self.num_updates >= 0:
                        self.num_updates += 1
                        decay = min(self.decay, (1 + self.num_updates) / (10 + self.num_updates))
                    return 1.0 - decay
            model = Net().cuda()
            model_ema = LitEma(model).cuda()
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
                model_ema(model)
            """,
            count=2,
        ),
        # a score method picked from a table of bound methods by the forward (OGB's KGEModel and its
        # `model_func[self.model_name](head, relation, tail)`), reading a GPU parameter each step
        Example(
            """
            import torch
            from torch import nn
            class KGEModel(nn.Module):
                def __init__(self, gamma):
                    super().__init__()
                    self.gamma = nn.Parameter(torch.Tensor([gamma]), requires_grad=False)
                def forward(self, head, tail):
                    model_func = {"TransE": self.TransE, "DistMult": self.DistMult}
                    return model_func[self.model_name](head, tail)
                def TransE(self, head, tail):
                    return self.gamma.item() - torch.norm(head - tail, p=1, dim=1)
                def DistMult(self, head, tail):
                    return (head * tail).sum(dim=1)
            model = KGEModel(12.0).cuda()
            for head, tail in loader:
                model(head.cuda(), tail.cuda()).mean().backward()
                optimizer.step()
            """,
        ),
        # a loss selecting with masks reshaped from a comparison of its inputs (pytorch-retinanet's FocalLoss)
        Example(
            """
            import torch.nn.functional as F
            from torch import nn
            class FocalLoss(nn.Module):
                def forward(self, loc_preds, loc_targets, cls_targets):
                    pos = cls_targets > 0
                    mask = pos.unsqueeze(2).expand_as(loc_preds)
                    return F.smooth_l1_loss(loc_preds[mask], loc_targets[mask])
            criterion = FocalLoss()
            for x, loc, cls in loader:
                criterion(model(x.cuda()), loc.cuda(), cls.cuda()).backward()
                optimizer.step()
            """,
        ),
        # a total the step adds its losses to, started from a number, read with float() for the log
        Example(
            """
            import torch.nn.functional as F
            def calc_loss(y_hat, y, w_l1, w_l2):
                loss = 0.0
                if w_l1 > 0:
                    loss += F.l1_loss(y_hat, y) * w_l1
                if w_l2 > 0:
                    loss += F.mse_loss(y_hat, y) * w_l2
                return loss, {"loss": float(loss)}
            for x, y in loader:
                loss, logs = calc_loss(model(x.cuda()), y.cuda(), 1.0, 0.1)
                loss.backward()
                optimizer.step()
            """,
        ),
        # pytorch-3dunet's WeightedSmoothL1Loss: a loss deriving from torch's selects with a mask of its target
        Example(
            """
            import torch
            from torch import nn
            class WeightedSmoothL1Loss(nn.SmoothL1Loss):
                def __init__(self, threshold):
                    super().__init__(reduction="none")
                    self.threshold = threshold
                def forward(self, input, target):
                    l1 = super().forward(input, target)
                    mask = target < self.threshold
                    l1[mask] = l1[mask] * 2.0
                    return l1.mean()
            criterion = WeightedSmoothL1Loss(0.5)
            for x, y in loader:
                criterion(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """,
        ),
        # SimCLR's LARS: a custom optimizer's step reads its trust ratio for every parameter
        Example(
            """
            import torch
            from torch.optim.optimizer import Optimizer
            class LARS(Optimizer):
                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:
                            w_norm, g_norm = torch.norm(p), torch.norm(p.grad)
                            trust_ratio = torch.where(g_norm.ge(0), w_norm / g_norm, w_norm).item()
                            p.data.add_(p.grad, alpha=-trust_ratio)
            optimizer = LARS(model.cuda().parameters(), {})
            """,
        ),
        # ShakeDrop: a custom autograd op reads its random gate on the host in each forward
        Example(
            """
            import torch
            from torch import nn
            class ShakeDropFunction(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, p_drop=0.5):
                    gate = torch.empty(1, device=x.device).bernoulli_(1 - p_drop)
                    ctx.save_for_backward(gate)
                    return x if gate.item() else 0.5 * x
                @staticmethod
                def backward(ctx, grad_output):
                    return grad_output, None
            class ShakeDrop(nn.Module):
                def forward(self, x):
                    return ShakeDropFunction.apply(x)
            model = nn.Sequential(nn.Linear(8, 8), ShakeDrop()).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        # face.evoLVe's AM-Softmax head: a one-hot mask filled in place, then cast to a byte mask
        Example(
            """
            import torch
            from torch import nn
            class AmSoftmax(nn.Module):
                def forward(self, cos_theta, label):
                    phi = cos_theta - 0.35
                    index = cos_theta.data * 0.0
                    index.scatter_(1, label.data.view(-1, 1), 1)
                    index = index.byte()
                    output = cos_theta * 1.0
                    output[index] = phi[index]
                    return output * 30.0
            head = AmSoftmax().cuda()
            for x, y in loader:
                loss = criterion(head(backbone(x.cuda()), y.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        # face.evoLVe: the device comes from a config dict of another module; nn.DataParallel says GPU
        Example(
            """
            import torch
            from torch import nn
            from config import configurations
            cfg = configurations[1]
            DEVICE = cfg["DEVICE"]
            model = nn.DataParallel(Net()).to(DEVICE)
            for inputs, labels in loader:
                loss = criterion(model(inputs.to(DEVICE)), labels.to(DEVICE))
                losses.update(loss.data.item(), inputs.size(0))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """
        ),
        # a modulo's truth picks all steps but one in 50 (peft's LoftQ script prints the loss so)
        Example(
            """
            import torch
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                if step % 50:
                    print(f"step {step} loss {loss}")
                optimizer.step()
            """
        ),
        # a progress bar's postfix formats the CUDA loss as text
        Example(
            """
            import torch
            from tqdm import tqdm
            model = Net().cuda()
            bar = tqdm(loader)
            for x, y in bar:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                bar.set_postfix(train_loss=loss)
            """
        ),
        # ENAS: a trainer class moves its modules in one method and trains them in another that
        # names no device; the number a helper reads (`to_item`) is then tested on the host, no
        # second read
        Example(
            """
            import torch
            def to_item(x):
                if isinstance(x, (float, int)):
                    return x
                return x.item()
            class Trainer:
                def build_model(self):
                    self.shared = RNN().cuda()
                def train_controller(self):
                    for step in range(2000):
                        loss = self.controller(torch.zeros(1, device="cuda")).sum()
                        loss.backward()
                        self.controller_optim.step()
                def train_shared(self):
                    best = 0
                    while self.idx < self.n:
                        loss = self.shared(self.get_batch())
                        loss.backward()
                        self.shared_optim.step()
                        norm = to_item(loss)
                        if norm > best:
                            best = norm
            """
        ),
        # RepDistiller's RKD loss: a distance computed from the inputs by a method of the module,
        # then selected from with a mask of itself
        Example(
            """
            import torch
            class RKDLoss(torch.nn.Module):
                def forward(self, f_s, f_t):
                    d = self.pdist(f_s.view(f_s.shape[0], -1))
                    mean_d = d[d > 0].mean()
                    return (d / mean_d).mean()
            criterion = RKDLoss()
            for x, y in loader:
                loss = criterion(student(x.cuda()), teacher(x.cuda()))
                loss.backward()
                optimizer.step()
            """
        ),
        # SimCLR: labels made on the CPU, compared with themselves, moved to the device, then
        # selected from with a mask and used as one (`labels.bool()`)
        Example(
            """
            import torch
            device = torch.device("cuda")
            def info_nce_loss(features):
                labels = torch.cat([torch.arange(256) for i in range(2)], dim=0)
                labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
                labels = labels.to(device)
                similarity = features @ features.T
                return similarity[labels.bool()].mean()
            for images, _ in train_loader:
                loss = info_nce_loss(model(images.to(device)))
                loss.backward()
                optimizer.step()
            """
        ),
        # the text of a CUDA loss written to a file every step (bat67's semantic segmentation)
        Example(
            """
            import torch
            generator = FusionGenerator(3, 3, 64).cuda()
            for image, label in img_batch:
                x = image.cuda(0)
                loss = recon_loss_func(generator(x), x)
                file.write(str(loss) + "\\n")
                loss.backward()
                gen_optimizer.step()
            """
        ),
        # a Hugging Face Trainer's `compute_loss`, which the Trainer runs on every training step
        # on batches it moved to the GPU (trl's trainers log their metrics from there)
        Example(
            """
            from transformers import Trainer

            class KTOTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    loss, metrics = self._compute_loss(model, inputs)
                    return loss

                def _compute_loss(self, model, inputs):
                    outputs = model(**inputs)
                    kl = outputs.logits.mean()
                    self.stored_metrics["kl"].append(kl.item())
                    return outputs.loss, {}

            model = AutoModelForCausalLM.from_pretrained("gpt2").to("cuda")
            KTOTrainer(model=model, train_dataset=dataset).train()
            """,
        ),
        # d2l's `Accumulator.add` (`float(b)` of each value given), called with the loss every step:
        # `add` is a tensor method's name too, but `metric` is an instance of the project's class
        Example(
            """
            import torch

            class Accumulator:
                def __init__(self, n):
                    self.data = [0.0] * n

                def add(self, *args):
                    self.data = [a + float(b) for a, b in zip(self.data, args)]

            def train_epoch(net, train_iter, loss, optimizer, device):
                metric = Accumulator(2)
                for X, y in train_iter:
                    X, y = X.to(device), y.to(device)
                    l = loss(net(X), y)
                    optimizer.zero_grad()
                    l.backward()
                    optimizer.step()
                    metric.add(l * X.shape[0], X.shape[0])

            train_epoch(net, train_iter, loss, optimizer, torch.device("cuda"))
            """,
        ),
        # a loss module selecting from its inputs with a boolean mask, in `forward` and in a method it
        # calls (SimpleAICV's RetinaLoss: `cls_preds[annotations[:, 4] >= 0]` each step)
        Example(
            """
            import torch

            class RetinaLoss(torch.nn.Module):
                def forward(self, cls_preds, annotations):
                    valid = annotations[annotations[:, 4] >= 0]
                    return self.focal(cls_preds, annotations) + valid.sum()

                def focal(self, cls_preds, annotations):
                    cls_preds = cls_preds[annotations[:, 4] >= 0]
                    return cls_preds.sum()

            criterion = RetinaLoss()
            for images, annotations in loader:
                loss = criterion(model(images.cuda()), annotations.cuda())
                loss.backward()
                optimizer.step()
            """,
            count=2,
        ),
        # the copy is the read that waits, not the `.numpy()` of what it gave (bat67's MNIST adder)
        Example(
            """
            import torch
            use_cuda = torch.cuda.is_available()
            for x, y in loader:
                if use_cuda:
                    x, y = x.cuda(), y.cuda()
                loss = criterion(net(x), y)
                loss.backward()
                optimizer.step()
                loss = loss.cpu() if use_cuda else loss
                losses.append(loss.data.numpy())
            """,
        ),
        # masks a function of the project gives back (pytorch-ood's `is_unknown(y)`, `contains_unknown(y)`)
        Example(
            """
            import torch

            def is_unknown(labels):
                return labels < 0

            def contains_unknown(labels):
                return is_unknown(labels).any()

            class OutlierExposureLoss(torch.nn.Module):
                def forward(self, logits, target):
                    loss = torch.nn.functional.cross_entropy(logits[~is_unknown(target)], target[~is_unknown(target)])
                    if contains_unknown(target):
                        loss = loss + logits.logsumexp(1).mean()
                    return loss + logits[is_unknown(target)].mean()

            criterion = OutlierExposureLoss()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            count=3,
        ),
        # the selections under a test of whether the mask selects anything (pytorch-ood's CAC loss):
        # the body runs on most steps, each selection a read of its own
        Example(
            """
            import torch

            class CACLoss(torch.nn.Module):
                def forward(self, distances, target):
                    known = target >= 0
                    loss = distances.sum() * 0
                    if known.any():
                        target_known = target[known]
                        d_known = distances[known]
                        loss = loss + d_known.gather(1, target_known.view(-1, 1)).mean()
                    return loss

            criterion = CACLoss()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            count=3,
        ),
        # a test of a sum of a module's inputs (DBNet's loss: `if positive + negative == 0:`), and
        # Python's `min()` of one
        Example(
            """
            import torch

            class DBNetLoss(torch.nn.Module):
                def forward(self, probability_map, probability_mask, ignore_mask):
                    positive = (probability_mask * ignore_mask).sum()
                    negative = min(((1 - probability_mask) * ignore_mask).sum(), positive * 3)
                    if positive + negative == 0:
                        return probability_map.sum() * 0
                    return (probability_map * probability_mask).sum() / (positive + negative)

            criterion = DBNetLoss()
            for images, masks, ignore in loader:
                loss = criterion(model(images.cuda()), masks.cuda(), ignore.cuda())
                loss.backward()
                optimizer.step()
            """,
            count=2,
        ),
        # a synchronize only so that an average of step times, shown every N steps, is exact (timm's
        # train.py): one synchronize where it is shown would do
        Example(
            """
            import time
            import torch
            model.cuda()
            end = time.time()
            for batch_idx, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                batch_time_m.update(time.time() - end)
                if batch_idx % args.log_interval == 0:
                    print(f"time {batch_time_m.avg:.3f}s")
                end = time.time()
            """,
        ),
        # a loss computed from host copies (the `.cpu()` calls wait, and are reported), then read;
        # and Apple's workaround under `x.device.type == "mps"`, which a CUDA run never takes
        Example(
            """
            import torch
            import torch.nn.functional as F
            def upsample(x, size):
                if x.device.type == "mps":
                    return F.interpolate(x.cpu(), size).to("mps")
                return F.interpolate(x, size)
            model = Net().cuda()
            for inputs, labels in loader:
                outputs = model(upsample(inputs.cuda(), 224))
                loss = loss_f(outputs.cpu(), labels.cpu())
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            """,
        ),
        # the count of a host copy: its `.cpu()` is the read that waits, not the `.item()` after it
        Example(
            """
            import torch
            model = Net().cuda()
            for points, target in loader:
                pred = model(points.cuda())
                loss = criterion(pred, target.cuda())
                loss.backward()
                optimizer.step()
                correct = pred.argmax(1).eq(target.cuda()).cpu().sum()
                mean_correct.append(correct.item() / len(target))
            """,
        ),
        # a callback's per-batch hook, which the project's training loop calls every step (fastai's miniai)
        Example(
            """
            import torch
            class Callback: pass
            class ProgressCB(Callback):
                def after_batch(self, learn):
                    self.losses.append(learn.loss.item())
            class Learner:
                def one_batch(self):
                    self.loss = self.loss_func(self.model(self.batch[0]), self.batch[1])
                    self.loss.backward()
                    self.opt.step()
                    for cb in self.cbs:
                        cb.after_batch(self)
                def fit(self, epochs):
                    for epoch in range(epochs):
                        for self.batch in self.dl:
                            self.one_batch()
            learn = Learner(model.cuda(), dl, cbs=[ProgressCB()])
            learn.fit(5)
            """,
        ),
        # an augmented assignment reads what it selects: `l[mask] -= 1` (Rainbow's projection),
        # the mask a product of two comparisons
        Example(
            """
            import torch
            for x, y in loader:
                out = model(x.cuda())
                out[(out > 0) * (out < 1)] -= 1
                loss = criterion(out, y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        # PyTorch 0.3's read of a loss a helper returns, the name bound in two training loops
        # (RL-Adventure's CartPole and Pong runs in one notebook)
        Example(
            """
            import torch
            def compute_td_loss(batch_size):
                loss = model(replay_buffer.sample(batch_size).cuda()).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                return loss
            for frame_idx in range(10000):
                loss = compute_td_loss(32)
                losses.append(loss.data[0])
            for frame_idx in range(1400000):
                loss = compute_td_loss(32)
                losses.append(loss.data[0])
            """,
            count=2,
        ),
        # a loss module's forward selecting the unpadded frames of what it is given (FastSpeech2)
        Example(
            """
            import torch
            class FastSpeech2Loss(torch.nn.Module):
                def forward(self, inputs, predictions):
                    mel_targets, mel_masks = inputs
                    mel_predictions = predictions[0].masked_select(mel_masks.unsqueeze(-1))
                    return torch.nn.functional.l1_loss(mel_predictions, mel_targets.masked_select(mel_masks.unsqueeze(-1)))
            loss_fn = FastSpeech2Loss().cuda()
            for batch in loader:
                loss = loss_fn(batch, model(batch.cuda()))
                loss.backward()
                optimizer.step()
            """,
            count=2,
        ),
        # the same, from a helper not named for a loss that backpropagates what it returns, the
        # read guarded by a test of `None` (RL-Adventure-2's HER: `compute_td_error`)
        Example(
            """
            import torch
            def compute_td_error(batch_size):
                if batch_size > len(replay_buffer):
                    return None
                loss = model(replay_buffer.sample(batch_size).cuda()).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                return loss
            while frame_idx < max_frames:
                loss = compute_td_error(32)
                if loss is not None: losses.append(loss.data[0])
            """,
        ),
        # a helper reading on the host every step: only its CUDA branch waits, the return after
        # `if use_cuda: return ...` runs on CPU-only machines (DTU's 02456 leaf notebook)
        Example(
            """
            import torch
            use_cuda = torch.cuda.is_available()
            def get_numpy(x):
                if use_cuda:
                    return x.cpu().data.numpy()
                return x.data.numpy()
            net = Net().cuda() if use_cuda else Net()
            for x, y in train_loader:
                output = net(x.cuda())
                loss = criterion(output, y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                train_preds.append(get_numpy(output.argmax(1)))
            """,
        ),
        # a boolean mask made by a torch comparison function (EfficientDet's `torch.ge(IoU_max, 0.5)`)
        Example(
            """
            import torch
            for x, y in loader:
                out = model(x.cuda())
                positive = torch.ge(out, 0.5)
                loss = criterion(out[positive], y.cuda()[positive])
                loss.backward()
                optimizer.step()
            """
        ),
        # selecting with a boolean mask sizes the result by the mask's count (SimCLR's InfoNCE logits);
        # filling through a mask (`x[mask] = 0`) does not
        Example(
            """
            import torch
            device = torch.device("cuda")
            mask = torch.eye(512, dtype=torch.bool).to(device)
            for images, _ in loader:
                features = model(images.to(device))
                similarity = features @ features.T
                similarity[mask] = 0.0
                negatives = similarity[~mask].view(512, -1)
                loss = negatives.logsumexp(1).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
        ),
        # a running mean started from the first step's value: the read of every later step (fast-autoaugment's)
        Example(
            """
            import torch
            def run_epoch(model, loader, optimizer):
                loss_ema = None
                for data, label in loader:
                    loss = model(data.cuda(), label.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    if loss_ema:
                        loss_ema = loss_ema * 0.9 + loss.item() * 0.1
                    else:
                        loss_ema = loss.item()
            """,
        ),
        # a loop over two datasets inside a long training loop is not a demonstration (StarGAN's train_multi)
        Example(
            """
            import torch
            device = torch.device("cuda")
            for i in range(200000):
                for dataset in ["CelebA", "RaFD"]:
                    x = next(loaders[dataset]).to(device)
                    d_loss = D(x).mean()
                    d_optimizer.zero_grad()
                    d_loss.backward()
                    d_optimizer.step()
                    log["D/loss"] = d_loss.item()
            """,
        ),
        # a LightningModule's training step, through a method it passes the batch to; the Trainer
        # trains on the GPU (`gpus=1`) and moves the batch there
        Example(
            """
            import pytorch_lightning as pl
            class PetModel(pl.LightningModule):
                def shared_step(self, batch, stage):
                    image, mask = batch["image"], batch["mask"]
                    assert mask.max() <= 1.0 and mask.min() >= 0
                    return self.loss_fn(self.forward(image), mask)
                def training_step(self, batch, batch_idx):
                    return self.shared_step(batch, "train")
            trainer = pl.Trainer(gpus=1, max_epochs=5)
            trainer.fit(PetModel(), train_dataloaders=train_dataloader)
            """,
        ),
        # `.data` of a CUDA tensor is a CUDA tensor
        Example(
            """
            import torch
            device = torch.device("cuda")
            def train(model, loader, optim, loss_func):
                for x, y in loader:
                    x, y = x.to(device), y.to(device)
                    optim.zero_grad()
                    out = model(x)
                    loss_func(out, y).backward()
                    optim.step()
                    pred = out.data.max(1)[1]
                    accuracy = float(pred.eq(y.data).sum()) * 100. / len(x)
            """,
        ),
        # a loop whose two paths both train (with AMP and without): the `else` is no evaluation branch
        Example(
            """
            import torch
            def train(self, train_loader, criterion, optimizer, scaler):
                for epoch in range(self.args.train_epochs):
                    for x, y in train_loader:
                        x = x.to(self.device)
                        if self.args.use_amp:
                            with torch.cuda.amp.autocast():
                                loss = criterion(self.model(x), y)
                        else:
                            loss = criterion(self.model(x), y)
                            losses.append(loss.item())
                        if self.args.use_amp:
                            scaler.scale(loss).backward()
                            scaler.step(optimizer)
                            scaler.update()
                        else:
                            loss.backward()
                            optimizer.step()
            """,
        ),
        # a helper testing the loss AMP scales for backward (`scaler.scale(loss).backward()`)
        Example(
            """
            import math
            import torch
            def check_nan(loss):
                if math.isnan(loss):
                    raise RuntimeError("NaN loss")
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.autocast("cuda"):
                    loss = partial_loss if use_partial else compute(model, x.cuda())
                check_nan(loss)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
        ),
        # a name rebound to itself through tensor methods stays a tensor (SimCLR's mask of the diagonal)
        Example(
            """
            import torch
            def train(net, data_loader, optimizer):
                for x, target in data_loader:
                    feature, out = net(x.cuda(non_blocking=True))
                    sim = torch.exp(torch.mm(out, out.t().contiguous()) / 0.5)
                    mask = (torch.ones_like(sim) - torch.eye(len(x), device=sim.device)).bool()
                    sim = sim.masked_select(mask).view(len(x), -1)
                    loss = sim.mean()
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # a tensor formatted into a progress bar's description by `str.format`
        Example(
            """
            import torch
            from tqdm import tqdm
            device = torch.device("cuda:0")
            for epoch in range(epochs):
                train_bar = tqdm(train_loader)
                for step, (images, labels) in enumerate(train_bar):
                    optimizer.zero_grad()
                    loss = loss_function(net(images.to(device)), labels.to(device))
                    loss.backward()
                    optimizer.step()
                    train_bar.desc = "train epoch[{}/{}] loss:{:.3f}".format(epoch + 1, epochs, loss)
            """,
        ),
        # a data-dependent size: the host waits to learn how many ids are unique
        Example(
            """
            import torch
            for batch in loader:
                edge_label_index = torch.cat([batch.pos.cuda(), batch.neg.cuda()], dim=1)
                loss = model.recommendation_loss(model(edge_label_index), node_id=edge_label_index.unique())
                loss.backward()
                optimizer.step()
            """
        ),
        # a method the training loop calls with the batch, reading each task's loss and accuracy
        # (MAML's get_outer_loss): every read where it is
        Example(
            """
            import torch
            import torch.nn.functional as F
            class MAML:
                def get_outer_loss(self, batch):
                    outer_loss = torch.tensor(0.0, device="cuda")
                    losses, accuracies = {}, {}
                    for task_id, (x, y) in enumerate(zip(*batch)):
                        logits = self.model(x)
                        loss = F.cross_entropy(logits, y)
                        losses[task_id] = loss.item()
                        accuracies[task_id] = (logits.argmax(dim=1) == y).float().mean().item()
                        outer_loss += loss
                    return outer_loss, losses, accuracies
                def train(self, loader):
                    for batch in loader:
                        self.optimizer.zero_grad()
                        outer_loss, losses, accuracies = self.get_outer_loss(batch)
                        outer_loss.backward()
                        self.optimizer.step()
            """,
            count=2,
        ),
        # Transformer-XL's attention: a module deriving from torch.nn.Module through a class of the project
        Example(
            """
            import torch
            import torch.nn as nn
            class RelMultiHeadAttn(nn.Module):
                def __init__(self, n_head):
                    super().__init__()
                    self.n_head = n_head
            class RelPartialLearnableMultiHeadAttn(RelMultiHeadAttn):
                def forward(self, w, attn_mask=None):
                    score = w @ w.transpose(0, 1)
                    if attn_mask is not None and attn_mask.any().item():
                        score = score.masked_fill(attn_mask, -float("inf"))
                    return score.softmax(-1)
            attn = RelPartialLearnableMultiHeadAttn(8).cuda()
            """,
        ),
        # OGB's graph property prediction: a field of a batch moved whole (PyG's), tested; the
        # GPU named by index ("cuda:" + str(args.device))
        Example(
            """
            import torch
            def train(model, device, loader, optimizer):
                model.train()
                for step, batch in enumerate(loader):
                    batch = batch.to(device)
                    if batch.x.shape[0] == 1 or batch.batch[-1] == 0:
                        pass
                    else:
                        loss = model(batch).mean()
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
            def main():
                device = torch.device("cuda:" + str(args.device)) if torch.cuda.is_available() else torch.device("cpu")
                for epoch in range(1, args.epochs + 1):
                    train(model, device, train_loader, optimizer)
            """,
        ),
        # TD3's delayed actor update: every other step is no logging interval
        Example(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--policy_delay", default=2, type=int)
            args = parser.parse_args()
            critic, actor = critic.cuda(), actor.cuda()
            for it in range(args.iterations):
                critic_loss = critic(state.cuda()).mean()
                critic_loss.backward()
                critic_optimizer.step()
                if it % args.policy_delay == 0:
                    actor_loss = -critic(actor(state.cuda())).mean()
                    actor_loss.backward()
                    actor_optimizer.step()
                    writer.add_scalar("Loss/actor_loss", actor_loss, global_step=it)
            """,
        ),
        # SAC's update: one gradient step by default, but at every step of the environment
        Example(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--gradient_steps", default=1, type=int)
            args = parser.parse_args()
            class SAC:
                def update(self):
                    for _ in range(args.gradient_steps):
                        q_loss = self.q_net(s.cuda()).mean()
                        self.optimizer.zero_grad()
                        q_loss.backward()
                        self.optimizer.step()
                        self.writer.add_scalar("Loss/Q_loss", q_loss, global_step=self.num_training)
            def main():
                agent = SAC()
                for i in range(args.iteration):
                    for t in range(200):
                        agent.update()
            """,
        ),
        # OGB's link prediction: the GPU named by index (`f"cuda:{args.device}"`), the step in a
        # function the epoch loop calls
        Example(
            """
            import torch
            def train(predictor, x, optimizer):
                total_loss = 0
                for perm in range(100):
                    loss = predictor(x[perm]).mean()
                    loss.backward()
                    optimizer.step()
                    total_loss += loss.item()
                return total_loss
            def main():
                device = f"cuda:{args.device}" if torch.cuda.is_available() else "cpu"
                device = torch.device(device)
                emb = torch.nn.Embedding(n, 256).to(device)
                for epoch in range(1, 1 + args.epochs):
                    loss = train(predictor, emb.weight, optimizer)
            """,
        ),
        # the total norm clip_grad_norm_ returns is a CUDA tensor: math.isnan converts it
        Example(
            """
            import math
            import torch
            model.cuda()
            for x, y in loader:
                model(x.cuda()).sum().backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                is_overflow = math.isnan(grad_norm)
                optimizer.step()
            """,
        ),
        # str.format of a tensor a function of the file returns
        Example(
            """
            import torch
            def accuracy(probas, labels):
                return torch.sum((probas > 0.5).long() == labels).float() / labels.size(0)
            model.cuda()
            for x, y in loader:
                probas = model(x.cuda())
                torch.nn.functional.binary_cross_entropy(probas, y.cuda()).backward()
                optimizer.step()
                print("acc {:.3f}".format(accuracy(probas, y.cuda())))
            """,
        ),
        # a conditional expression testing a CUDA buffer (a step count kept on the device)
        Example(
            """
            import torch
            class IRM(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("update_count", torch.tensor([0]))
                def update(self, x, y):
                    weight = 100.0 if self.update_count >= 500 else 1.0
                    loss = weight * self.network(x.cuda()).sum()
                    loss.backward()
                    self.optimizer.step()
                    self.update_count += 1
            """,
        ),
        # a step function a factory method returns, called through an attribute by the loop
        Example(
            """
            import torch
            class StepByStep:
                def __init__(self, model, loss_fn, optimizer):
                    self.model = model.to("cuda")
                    self.loss_fn, self.optimizer = loss_fn, optimizer
                    self.train_step_fn = self._make_train_step_fn()
                def _make_train_step_fn(self):
                    def perform_train_step_fn(x, y):
                        loss = self.loss_fn(self.model(x), y)
                        loss.backward()
                        self.optimizer.step()
                        self.optimizer.zero_grad()
                        return loss.item()
                    return perform_train_step_fn
            """,
        ),
        # a gradient's norm given to TensorBoard at every step
        Example(
            """
            import torch
            net = Net().cuda()
            for images, labels in loader:
                loss = loss_function(net(images.cuda()), labels.cuda())
                loss.backward()
                optimizer.step()
                for name, para in net.fc.named_parameters():
                    writer.add_scalar(f"grad_norm/{name}", para.grad.norm(), step)
            """
        ),
        # an RL rollout inside each training iteration: each element of a CUDA tensor tested on the host
        Example(_ROLLOUT.format(
            done="next_done", moved="next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done).to(device)")),
        # an accumulation guard whose option is 1 by default runs on every step (`def train(args)`)
        Example(
            """
            import argparse
            def train(args, model, loader, optimizer):
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    if (step + 1) % args.gradient_accumulation_steps == 0:
                        losses.append(loss.item())
                        optimizer.step()
                        optimizer.zero_grad()
            parser = argparse.ArgumentParser()
            parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
            args = parser.parse_args()
            train(args, model, loader, optimizer)
            """
        ),
        # TensorBoard's add_scalar copies a tensor to the host (`.cpu().numpy()`) on every step
        Example(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                loss = model(x.cuda(), y.cuda()).mean()
                tb_logger.add_scalar("loss", loss, global_step=step)
                loss.backward()
                optimizer.step()
            """
        ),
        # an EMA update under `no_grad` after each step evaluates nothing: the loss read still stalls
        Example(
            """
            import torch
            @torch.no_grad()
            def update_ema(ema, model):
                for e, p in zip(ema.parameters(), model.parameters()):
                    e.mul_(0.999).add_(p, alpha=0.001)
            for x, y in loader:
                loss = model(x.cuda(), y.cuda()).mean()
                loss.backward()
                opt.step()
                update_ema(ema, model)
                running_loss += loss.item()
            """
        ),
        # Python's max() of a CUDA tensor and a number compares them on the host
        Example(
            """
            import torch
            for batch in loader:
                batch = batch.cuda()
                good = torch.count_nonzero(batch != -100)
                loss = model(batch).sum() / max(good, 1)
                loss.backward()
                optimizer.step()
            """
        ),
        # a running mean of the losses (a CUDA tensor) formatted into the progress bar at every step
        Example(
            """
            import torch
            mloss = torch.zeros(3, device="cuda")
            for i, (imgs, targets) in enumerate(pbar):
                loss, loss_items = compute_loss(model(imgs.cuda()), targets.cuda())
                loss.backward()
                optimizer.step()
                mloss = (mloss * i + loss_items) / (i + 1)
                pbar.set_description(("%11s" + "%11.4g" * 3) % (f"{epoch}/{epochs}", *mloss))
            """
        ),
        # a helper a step function calls on `self`, reading what it gets itself (not passed)
        Example(
            """
            import torch
            class TrainLoop:
                def run_loop(self):
                    while True:
                        self.run_step(next(self.data))
                def run_step(self, batch):
                    loss = self.model(batch.to("cuda")).mean()
                    loss.backward()
                    self.optimize()
                def optimize(self):
                    self._log_grad_norm()
                    self.opt.step()
                def _log_grad_norm(self):
                    sqsum = 0.0
                    for p in self.params:
                        sqsum += (p.grad ** 2).sum().item()
                    self.logger.log("grad_norm", sqsum ** 0.5)
            """
        ),
        # a modulo by a setting that is 1 (a discriminator step every `d_every` batches) is no
        # logging interval: the read runs on every step
        Example(
            """
            import torch
            class Config:
                d_every = 1
            opt = Config()
            for ii, (img, _) in enumerate(loader):
                real = img.cuda()
                if ii % opt.d_every == 0:
                    optimizer_d.zero_grad()
                    error_d = criterion(netd(real), true_labels)
                    error_d.backward()
                    optimizer_d.step()
                    errord_meter.add(error_d.item())
            """
        ),
        # a step function nothing here calls (its callers are elsewhere), reading each loss in a
        # loop of its own; and a loop passing the losses to a logging helper defined below it
        Example(
            """
            import torch
            class A2C:
                def update(self, rollouts):
                    losses = self.losses(rollouts.to("cuda"))
                    sum(losses.values()).backward()
                    self.optimizer.step()
                    return {k: v.item() for k, v in losses.items()}
            """
        ),
        Example(
            """
            import torch
            def train(model, loader, optimizer):
                for x, y in loader:
                    losses = model.compute_losses(x.cuda(), y.cuda())
                    optimizer.zero_grad()
                    losses["loss"].backward()
                    optimizer.step()
                    log_loss_dict({k: v.mean() for k, v in losses.items()})

            def log_loss_dict(losses):
                for key, values in losses.items():
                    logger.logkv_mean(key, values.item())
            """
        ),
        # a step function (called every epoch of full-batch training) evaluating through a helper
        Example(
            """
            import torch
            def train_iter(model, optimizer, x, y):
                loss = model(x).sub(y).pow(2).mean()
                loss.backward()
                optimizer.step()
                return evaluate(model, x, y)

            def evaluate(model, x, y):
                with torch.no_grad():
                    loss = model(x).sub(y).pow(2).mean()
                return loss.item()

            for epoch in range(100):
                train_iter(model, optimizer, x.cuda(), y.cuda())
            """
        ),
        # PyTorch 0.3's read of the loss, every step (it raises on a 0-dimensional loss today)
        Example(
            """
            import torch
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                losses.append(loss.data[0])
            """
        ),
        Example(
            """
            import torch
            for x, y in loader:
                out = model(x.cuda())
                num_correct = (out.argmax(1) == y.cuda()).sum()
                running_acc += num_correct.data[0]
                criterion(out, y.cuda()).backward()
                optimizer.step()
            """
        ),
        # a helper of the step that reads a value it computes (d2l's `grad_clipping`)
        Example(
            """
            import torch
            def grad_clipping(params, theta, device):
                norm = torch.tensor([0.0], device=device)
                for param in params:
                    norm += (param.grad ** 2).sum()
                norm = norm.sqrt().item()
                if norm > theta:
                    for param in params:
                        param.grad *= theta / norm
            device = torch.device("cuda")
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                grad_clipping(params, 1.0, device)
                optimizer.step()
            """
        ),
        # a metric helper of the notebook reading what a torch function makes of its arguments
        Example(
            """
            import torch
            def accuracy_fn(y_true, y_pred):
                correct = torch.eq(y_true, y_pred).sum().item()
                return correct / len(y_pred) * 100
            model_0 = Net().cuda()
            for epoch in range(1000):
                loss_fn(model_0(X_train), y_train).backward()
                optimizer.step()
                with torch.inference_mode():
                    test_pred = torch.round(torch.sigmoid(model_0(X_test)))
                    test_acc = accuracy_fn(y_true=y_test, y_pred=test_pred)
            """,
        ),
        # an assert in a forward, on what a torch.nn layer of the module returns
        Example(
            """
            import torch
            from torch import nn
            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)
                def forward(self, x):
                    prediction = self.fc(x)
                    assert (prediction == prediction).all()
                    return prediction
            model = Decoder().cuda()
            for x, y in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
        ),
        Example(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = model(x.cuda(), y.cuda())
                assert torch.isfinite(loss)
                loss.backward()
                opt.step()
            """,
        ),
        Example(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            """,
        ),
        Example(
            """
            import torch
            device = 'cuda'
            def train_step(model, batch):
                loss = model(batch.to(device))
                loss.backward()
                if torch.isnan(loss):
                    raise RuntimeError('nan')
                return float(loss)
            for batch in loader:
                train_step(model, batch)
            """,
            count=2,
        ),
        Example(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                opt.step()
                print(f'loss {loss}')
                acc = (model.pred == y).float().mean().cpu().numpy()
            """,
            count=2,
        ),
        # several reads in one `if` test: one finding
        Example(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = model(x.cuda(), y.cuda())
                if loss.item() > 100 or torch.isnan(loss):
                    continue
                loss.backward()
                opt.step()
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.candidates: list[_Candidate] = []
        self.headers: list[cst.If] = []  # the `if` statements around the node visited: one finding per test
        self.backward_of: dict[int, set[str]] = {}  # scope id -> names whose backward() is called
        self.guarded: dict[tuple, bool] = {}  # (frame, loops, scope) ids -> whether the frame guards
        self._read_candidates: dict[tuple, list] = {}  # (via, code) of a read of the source -> its candidates
        self.buffers: set[str] | None = None  # names of registered buffers (made when first asked)
        self.targets: set[int] = set()  # ids of the subscripts assigned to
        self.host_bound: set[int] = set()  # ids of the nodes of values a host structure needs (replay priorities)
        self.copied_to: dict[int, str] = {}  # id of a host copy -> the name a statement assigns it (`C = C.cpu()`)
        self.scipy_reads: dict[int, set[str]] = {}  # scope id -> names the statements calling SciPy there read
        self.iterated: dict[int, set[str]] = {}  # scope id -> the names its `for` loops bind
        self.failure_messages: list[cst.BaseExpression] = []  # the messages of the asserts around the node visited

    def _add(self, node: cst.CSTNode, kind: str) -> None:
        if any(contains(message, node) for message in self.failure_messages):
            return  # (an assert's message: evaluated only when the assertion fails)
        site = self.ctx.site(node)
        key = id(self.statement) if self.statement is not None else next(
            (id(header) for header in reversed(self.headers) if contains(header.test, node)), id(node))  # (`if float(dt) <= 0`)
        self.candidates.append(_Candidate(site, kind, self.local_frames(), key))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        func = node.func
        if name is not None and name.startswith("update_priorit") and node.args:
            # a prioritized replay buffer, a host structure (a sum tree): the new TD errors must reach
            # the host at every update (`memory.update_priorities(idxs, loss.detach().cpu().numpy())`)
            pending, seen = [arg.value for arg in node.args], set[str]()
            while pending:  # (through the names it is given: `prior = loss.cpu().numpy()`, `new = prior + eps`)
                for n in walk(pending.pop()):
                    self.host_bound.add(id(n))
                    if type(n) is cst.Name and n.value not in seen and len(seen) < 8:
                        seen.add(n.value)
                        pending += [v for v in self.ctx.scope.assignments.get(n.value, ()) if v is not None]
            return
        qualified = self.ctx.qualname(func)
        if (qualified or "").startswith("scipy.") and self.statement is not None:
            self.scipy_reads.setdefault(id(self.ctx.scope), set()).update(names_in(self.statement, attributes=False))
        if type(func) is cst.Attribute:
            if _host_copy(node):
                if not _host_copy_below(func.value):  # report the first copy of a chain
                    self._add(node, "method")
                    assigned = self.statement.body[0] if self.statement is not None else None
                    if type(assigned) is cst.Assign and len(assigned.targets) == 1 and type(assigned.targets[0].target) is cst.Name:
                        self.copied_to[id(node)] = assigned.targets[0].target.value
            elif name == "backward":
                # `loss.backward()`, or `accelerator.backward(loss)` / `torch.autograd.backward(loss)`
                first = positional(node, 0)
                target = func.value if first is None else first.value
                if type(target) is cst.Call and call_name(target) == "scale" and len(target.args) == 1:
                    target = target.args[0].value  # `scaler.scale(loss).backward()`: AMP's scaled loss
                while type(target) is cst.BinaryOperation and type(target.operator) in (cst.Divide, cst.Multiply):
                    target = target.left  # `fabric.backward(loss / accumulation_iters)`: the loss, scaled
                names = self.backward_of.setdefault(id(self.ctx.scope), set())
                names.add(root_name(target) or "")
            elif name == "synchronize" and qualified == "torch.cuda.synchronize":
                self._add(node, "synchronize")
                return
            elif qualified in MATH_TESTS and len(node.args) == 1:
                self._add(node, "conversion")  # `math.isnan(grad_norm)`: a float() of it first
                return
            elif _sized_by_data(node, name, qualified) is not None:
                self._add(node, "shape")  # `mask.nonzero()`, `torch.where(y == c)`: the host reads the result's size
                return
            elif name in ("get_scale", "state_dict") and not node.args and (self.ctx.loops or self.ctx.scope.node):
                self._add(node, "scale")  # `scaler.get_scale()` of AMP's GradScaler (judged in `_describe`)
                return
            elif name == "update" and node.args and self._imports_torchmetrics() and (self.ctx.loops or self.ctx.scope.node):
                self._add(node, "metric")  # `running_loss.update(loss.detach())`
                return
            elif name == "format" and type(func.value) in (cst.SimpleString, cst.ConcatenatedString) and (
                    self.ctx.loops or self.ctx.scope.node):
                self._add(node, "format")  # `bar.desc = "loss:{:.3f}".format(loss)`; in a `print`: one report
                return
        elif name in _CONVERSIONS and len(node.args) == 1:
            self._add(node, "conversion")
            return
        elif (name == "max" or name == "min") and type(func) is cst.Name and len(node.args) >= 2:
            self._add(node, "compare")  # `max(total_tokens, 1)`: Python compares them, on the host
            return
        elif name == "print" and node.args or name in ("str", "repr") and type(func) is cst.Name and len(node.args) == 1 and (
                self.ctx.loops or self.ctx.scope.node):
            self._add(node, "print")  # (`file.write(str(loss) + "\n")`: the text of a CUDA tensor, as a print makes it)
            return
        if name in _HOST_LOGGER_NAMES and node.args:
            self._add(node, "logger")
        elif node.args and (self.ctx.loops or self.ctx.scope.node) and (type(func) is cst.Name or maybe_project_call(
                self.ctx, func)):  # (a function of the project that reads an argument on the host; a bare name
            self._add(node, "call")  # may be a function the source defines further down: asked again in `finish`)

    def _dict_of_tensors(self, value: cst.BaseExpression, scope: Scope) -> bool:
        """Whether `value` names a dict the function starts empty and stores tensors in
        (BasicSR's `loss_dict = OrderedDict()`, then `loss_dict['l_pix'] = l_pix`)."""
        if type(value) is not cst.Name:
            return False
        name = value.value
        owner = scope.owner_of(name)
        if owner is None or owner.node is None:
            return False
        made = owner.assignments[name]
        if not made or not all(type(v) is cst.Dict and not v.elements or type(v) is cst.Call and call_name(v) in (
                "dict", "OrderedDict") and not v.args for v in made):
            return False
        stored = [node.value for node in walk(owner.node) if type(node) is cst.Assign and len(node.targets) == 1 and type(
            target := node.targets[0].target) is cst.Subscript and type(target.value) is cst.Name and target.value.value == name]
        return any(self._tensor(v, owner, 1) for v in stored)

    def _cuda_scaler(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """Whether `expr` is AMP's GradScaler made for CUDA (the default) and not `enabled=False`
        (a disabled scaler's `get_scale()` returns 1.0)."""
        found = self.ctx.origin(expr, scope)
        made = found[0] if found is not None else None
        if type(made) is not cst.Call or self.ctx.qualname(made.func) not in GRAD_SCALERS:
            return False
        device = argument(made, 0, "device")
        where = literal(device) if device is not None else "cuda"
        enabled = keyword(made, "enabled")
        return (where is UNKNOWN or isinstance(where, str) and where.startswith("cuda")) and (
            enabled is None or not self._off_by_default(enabled.value, found[1]))

    def _off_by_default(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """Whether a switch is false unless the user turns it on: False, a parameter whose
        default is False (flair's `GradScaler(enabled=use_amp and ...)`, `use_amp: bool = False`),
        a store_true option, or an `and` of one."""
        if type(expr) is cst.BooleanOperation and type(expr.operator) is cst.And:
            return self._off_by_default(expr.left, scope) or self._off_by_default(expr.right, scope)
        if self._switch_off(expr, scope):
            return True
        function = scope.node
        if type(expr) is cst.Name and function is not None and expr.value in scope.params and scope.assignments.get(expr.value) == [None]:
            params = function.params
            param = next((p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == expr.value), None)
            return param is not None and param.default is not None and literal(param.default) is False
        return False

    def _switch_off(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """False, a parameter every call of the function gives False, or an option of another
        module whose default is False (`opt.eval_oracle_wh`, a store_true option)."""
        return self.ctx.value(expr, scope) is False or parameter_constant(self.ctx, expr, scope) is False or from_afar(
            self.ctx, expr, scope) and project_option_default(cast(str, self.ctx.path), cast(cst.Attribute, expr).attr.value) is False

    def _imports_torchmetrics(self) -> bool:
        return any(name.startswith("torchmetrics") for name in self.ctx.imports.values())

    def visit_For(self, node: cst.For) -> None:
        self.iterated.setdefault(id(self.ctx.scope), set()).update(names_in_target(node.target))

    def visit_If(self, node: cst.If) -> None:
        self._add(node, "test")
        self.headers.append(node)

    def leave_If(self, node: cst.If) -> None:
        self.headers.pop()

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if (self.ctx.loops or self.ctx.scope.node) and any(type(part) is cst.FormattedStringExpression for part in node.parts):
            self._add(node, "format")  # (`pbar.set_description(f"loss {loss:.3f}")`; in a `print`: one report)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Modulo and (self.ctx.loops or self.ctx.scope.node) and _text(node.left):
            self._add(node, "format")  # `"%11.4g" * 3 % (*mloss,)`

    def visit_Assert(self, node: cst.Assert) -> None:
        self._add(node, "test")
        if node.msg is not None:
            self.failure_messages.append(node.msg)

    def leave_Assert(self, node: cst.Assert) -> None:
        if node.msg is not None:
            self.failure_messages.pop()

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if self.ctx.loops or self.ctx.scope.node:
            self._add(node, "test")  # `w = a if self.update_count >= n else b`

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets.add(id(node.target))  # (`x[mask] = 0` fills in place: masked_fill_, no read of the mask's
        # count; not `x[mask] -= 1`, an augmented assignment, which reads `x[mask]` first)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if legacy_read(node) is not None:  # `loss.data[0]`
            self._add(node, "legacy")
        elif (index := _mask_index(node)) is not None and id(node) not in self.targets and (self.ctx.loops or self.ctx.scope.node) \
                and (type(index) is not cst.Call or _mask_form(index) or maybe_project_call(self.ctx, index.func)):
            self._add(node, "mask")  # `logits[~mask]`: as many elements as the mask holds

    # -- the end of the pass ------------------------------------------------------------------
    def finish(self) -> None:
        if self.ctx.cuda_evidence is None:
            return
        self.candidates = [candidate for candidate in self.candidates if id(candidate.site.node) not in self.host_bound]
        found: dict[int, tuple | None] = {}  # statement key -> (site, message, related, said by a call), one each
        later: dict[int, list[_Candidate]] = {}  # statement key -> the candidates after its finding's
        for candidate in self.candidates:
            if candidate.key in found:
                later.setdefault(candidate.key, []).append(candidate)
                continue
            if candidate.kind == "call" and not maybe_project_call(self.ctx, _call(candidate).func):
                continue  # (`range(epochs)`, a library's function: `_describe`'s first test, the cheapest, asked first)
            if not self._every_step(candidate) or self.ctx.gpu_skips(candidate.site.node):
                continue  # (`_every_step` next: cheaper than `_describe`, and most often false; then a branch a CUDA run skips)
            described = self._describe(candidate)
            if described is None:
                continue
            message, related, *elsewhere = described if type(described) is tuple else (described, ())
            if not elsewhere:
                found[candidate.key] = (candidate.site, message, related, False)
                continue
            read = elsewhere[0]  # (a read in a helper of this source the step calls: reported there, saying by which call)
            found[candidate.key] = None
            previous = found.get(read.key)
            if previous is None or not previous[3]:
                found[read.key] = (read.site, message, related, True)
        for key, value in found.items():
            if value is None:
                continue
            site, message, related, said = value
            beside = self._reads_beside(next(c for c in self.candidates if c.site is site)) if said else None
            more = [c for c in (beside if beside is not None else self._more_reads(site, later.get(key, ())))
                    if not contains(site.node, c.site.node)]  # (not the f-string a `print(f"{loss}")` formats)
            if more:
                named = ", ".join(f"`{_shown(c)}`" for c in more[:3]) + (
                    f" and {len(more) - 3} other{'s' if len(more) > 4 else ''}" if len(more) > 3 else "")
                count = "another value" if len(more) == 1 else f"{len(more)} more values"
                message += f" This statement reads {count} on the host too ({named})."
                related += tuple(Here(c.site, f"`{_shown(c)}` also reads a value on the host") for c in more)
            self.report(site, message, related=related)

    def _more_reads(self, site: Site, candidates) -> list[_Candidate]:
        """The further reads on the host of the statement a finding flags at `site` (a progress
        line formatting six losses with `.item()`): one finding names them all, which one fix
        (reading every N steps) mends."""
        return [c for c in candidates if c.site.unit == site.unit and self._every_step(c) and not self.ctx.gpu_skips(
            c.site.node) and type(self._describe(c)) is str]

    def _reads_beside(self, read: _Candidate) -> list[_Candidate]:
        """The further reads of the statement of a helper's read
        that a call on every step reaches (`return loss, Munch(real=loss_real.item(),
        fake=loss_fake.item())`): values the helper computes beside the one read from the
        caller's tensor, read the same way."""
        return [c for c in self.candidates if c.key == read.key and c is not read and c.site.unit == read.site.unit
                and c.kind in ("method", "conversion") and not self.ctx.gpu_skips(c.site.node) and not (
                    c.kind == "method" and self._made_on_cpu(_method(c).value, c.site.scope, c.site))]

    def _demo(self, loop: cst.CSTNode, site: Site) -> bool:
        """A training loop of a few steps (`for step in range(5):`) that shows how training works,
        unless its function runs on every step of another loop (SAC's `update()`, looping
        `gradient_steps` times, 1 by default, at every step of the environment) or sits in a longer
        loop of its own function; or one run once:
        it ends with `break`, or counts a known number of steps inside a loop that does."""
        function = site.scope.node
        if runs_once(loop, site.loops, self.ctx, site.scope):
            return True  # (Grad-CAM's `for j in range(20): ... backward()` in a loop over one batch: `break` at its end)
        outer = site.loops[: next((i for i, around in enumerate(site.loops) if around is loop), 0)]
        return few_iterations(loop, self.ctx, site.scope, _DEMO_STEPS) and not (
            function is not None and TrainingSteps.of(self.ctx).called_in_loop(function)) and all(
            few_iterations(around, self.ctx, site.scope, _DEMO_STEPS) for around in outer)  # (not StarGAN's
        # `for dataset in ["CelebA", "RaFD"]:` in its loop of 200,000 iterations)

    def _every_step(self, candidate: _Candidate) -> bool:
        """In a training loop (or step function called from a loop), not under an interval guard."""
        site, frames = candidate.site, candidate.frames
        steps = TrainingSteps.of(self.ctx)
        stepping = next((loop for loop in reversed(site.loops) if steps.trains(loop) or steps.per_epoch(loop)), None)
        rollout = _rollout(site) if stepping is not None and not steps.trains(stepping) else None
        stepping = rollout or stepping  # (an epoch or RL iteration loop: its rollout steps)
        if stepping is not None:  # (loops inside it that do not step run on every step: `for k, v in losses.items()`)
            if not (steps.trains(stepping) or stepping is rollout) or steps.on_cpu(site.scope.node) \
                    or steps.evaluates_every_iteration(stepping) or self._demo(stepping, site) or unused_function(self.ctx, site.scope.node):
                return False  # (an epoch loop, around a loop that steps; a training function on the CPU; a
                # full-batch loop that waits for its evaluation's results on every iteration anyway; dead code)
            inner = [i for i, frame in enumerate(frames) if frame.kind == LOOP and frame.node is stepping]
            frames = frames[inner[-1] + 1 :] if inner else frames
        else:  # (in a step function, its loops run on every step: `for p in params: norms.append(p.norm().item())`)
            function = site.scope.node
            if function is None:
                return False
            if steps.evaluates_every_iteration(function):
                return False  # (a full-batch step function testing the model after each step: `train_iter`)
            if function.name.value in steps.engines and not steps.trains(function):
                return False  # (an ignite evaluator's process function: `Engine(test_step)`)
            if not steps.run_every_step(function):
                if not steps.trains(function):
                    if steps.called_every_step(function):  # (a helper run every step: `self._log_grad_norm()`)
                        return not any(self._guards(frame, site) for frame in frames)
                    return False
                if unused_function(self.ctx, function) or steps.explains(function):
                    return False  # (dead code; a method backpropagating to read gradients, Grad-CAM's `forward`)
                callers = [*self.ctx.calls.get(function.name.value, []), *steps.handed_to(function)]
                looped = [call for call in callers if call.loops]
                if not looped and not steps.stepped_elsewhere(function):
                    return False  # (a method called nowhere here: each call from elsewhere is a step, `agent.update(rollouts)`;
                    # so is a step function a factory returns, `return perform_train_step_fn`)
                if looped and all(steps.evaluates_every_iteration(call.loops[-1]) for call in looped):
                    return False  # (full-batch: `train()` then `test()` on every iteration of the epoch loop)
        owner = stepping or site.scope.node
        if site.scope.node is None and self.ctx.gpu_importer is not None and steps.self_test(site.node):
            return False  # (a module's self-test, with no GPU of its own: its importer's GPU runs the module's functions)
        return not any(self._guards(frame, site) for frame in frames) and not (
            owner is not None and steps.in_evaluation_branch(owner, site.node)) and id(site.node) not in never_taken(
            self.ctx, site.scope.node) and id(site.node) not in _first_runs(site.scope.node) and id(
            site.node) not in _version_branches(self.ctx, site.scope)

    def _guards(self, frame: Frame, site: Site) -> bool:
        key = (id(frame.node), id(site.loops), id(site.scope))  # candidates share their frames
        found = self.guarded.get(key)
        if found is None:
            found = self.guarded[key] = self._guard(frame, site)
        return found

    def _guard(self, frame: Frame, site: Site) -> bool:
        if frame.kind == EXCEPT:
            return True
        if frame.kind != IF:
            return False
        branch = cast(cst.If, frame.node)  # an IF frame is made for an `if` only
        if aborts(branch):
            return True  # the program stops after it: it runs at most once
        test = branch.test
        if self._failure_test(test):
            return True  # `if not math.isfinite(loss.item()):`: reported itself; its body runs when training went wrong
        if (self._truth_sync(test, site.scope) and not _selects_with_tested(branch, site.scope) and not _nonnegative_test(test)) \
                if type(test) is not cst.Name else self._element(test.value, site.loops, site.scope):
            return True  # reported itself; its body runs when something went wrong (not `if acc:`: when nonzero),
            # or for the element that holds (`for i, d in enumerate(done): if d:`, an episode's end); but `if
            # known.any(): x = x[known]` selects with the mask it tests, and `if self.num_updates >= 0:` tests
            # a count for being there: their bodies run on most steps
        if self._switch_off(test, site.scope):
            return True  # a switch off by default (`if args.print_loss:`, a store_true flag; `train(..., debug=args.debug)`;
            # `if opt.eval_oracle_wh:` with opts.py's `--eval_oracle_wh` a store_true option)
        if self._unset_switch(test):
            return True  # `if hasattr(config, "skip_inf_nan_grad") and config.skip_inf_nan_grad:`, set nowhere
        if lazy_init(branch) and not option_test(branch, site.scope.params) and any(
                assigned_in(branch.body, found[0].value) for n in walk(test)
                if (found := none_test(n)) is not None and found[1] and type(found[0]) is cst.Name):
            return True  # `if loss_ema is None: loss_ema = loss.item()`: on the first step only
        if _sets_its_state(branch, site.scope):
            return True  # `if Z_l < 0: self.params[2] = out_l.mean() * n` with `Z_l = self.params[2].item()`: once
        return interval_test(self.ctx, test, site.loops, site.scope) and not TrainingSteps.of(self.ctx).accumulation_boundary(branch, site.loops, site.scope.node)

    def _unset_switch(self, test: cst.BaseExpression) -> bool:
        """`hasattr(config, "name")` (also `and`-ed with more) or `getattr(config, "name", False)`
        where no file of the project sets `name` (`never_set`): a switch nothing turns on."""
        if type(test) is cst.BooleanOperation:
            return type(test.operator) is cst.And and (self._unset_switch(test.left) or self._unset_switch(test.right))
        if type(test) is not cst.Call or type(test.func) is not cst.Name or test.func.value not in ("hasattr", "getattr") \
                or len(test.args) != (2 if test.func.value == "hasattr" else 3) or not self.ctx.path or self.ctx.path.startswith("<"):
            return False
        name = test.args[1].value
        if type(name) is not cst.SimpleString or test.func.value == "getattr" and literal(test.args[2].value) not in (False, None, 0):
            return False
        evaluated = name.evaluated_value
        return isinstance(evaluated, str) and never_set(self.ctx.path, evaluated)

    def _failure_test(self, test: cst.BaseExpression) -> bool:
        """`math.isnan(x)`, `math.isinf(x)`, `not math.isfinite(x)`: a test for a value gone wrong."""
        negated = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
        inner = cast(cst.UnaryOperation, test).expression if negated else test
        qualified = self.ctx.qualname(inner.func) if type(inner) is cst.Call else None
        return qualified in MATH_TESTS and (qualified == "math.isfinite") == negated

    # -- what syncs -------------------------------------------------------------------------------
    def _describe(self, candidate: _Candidate) -> str | tuple | None:
        node, scope = candidate.site.node, candidate.site.scope
        advice = (
            "Keep running values on the GPU (`total += loss.detach()`) and read them every N steps "
            "(`if step % log_every == 0:`)."
        )
        if candidate.kind == "call":
            if not maybe_project_call(self.ctx, _call(candidate).func) or self._acted_on(candidate.site):
                return None  # (not the action a helper reads for the environment: `action = get_action(model, state)`)
            return self._passed_to_host_read(candidate, advice)
        if candidate.kind == "logger":
            return self._logged_tensor(candidate, advice)
        if candidate.kind == "legacy":
            read = legacy_read(cast(cst.Subscript, node))
            what = "the loss" if self._loss(read, scope) else "a sum or mean" if self._reduced(read, scope) or type(
                read) is cst.Name and self._reduced(self._reaching(node, read.value, scope), scope) else None
            if what is None:
                return None
            kind = "a loss is" if what == "the loss" else "the sum or mean of a whole tensor is"
            return (
                f"`{short_code(node)}` is PyTorch 0.3's read of {what} on the host, here on every training step: "
                f"since PyTorch 0.4 {kind} 0-dimensional and this raises IndexError. Write `.item()`, "
                "and read it every N steps (`if step % log_every == 0:`): each read waits for the GPU to finish all "
                "queued work, so the GPU idles."
            )
        if candidate.kind == "synchronize":
            if self._timed(candidate.site):
                return None
            return (
                "`torch.cuda.synchronize()` on every training step waits for the GPU to finish all queued work: "
                "the CPU cannot run ahead to launch the next step, so the GPU idles. Remove it, or synchronize "
                "only where you read a clock or a value."
            )
        if type(node) in (cst.If, cst.Assert, cst.IfExp):  # a "test" candidate (every other one is a call)
            test = cast(cst.If, node).test
            if not self._truth_sync(test, scope, candidate.site.loops):
                return None
            if type(node) is cst.Assert:
                what = f"`assert {short_code(test)}` turns a CUDA tensor into a Python bool"
                advice = "Check it every N steps, or only while debugging (`python -O` drops asserts)."
            elif type(node) is cst.IfExp:
                what = f"`... if {short_code(test)} else ...` turns a CUDA tensor into a Python bool"
                advice = "Keep the choice on the GPU (`torch.where`), or test a Python value (a step count kept as an int)."
            else:
                what = f"`if {short_code(test)}:` turns a CUDA tensor into a Python bool"
                advice = "Check it every N steps, or keep the decision on the GPU (`torch.where`, masking)."
        elif candidate.kind == "method":
            if _method(candidate).attr.value in ("cpu", "to") and self.ctx.uses_rpc() or self._loader_batch(candidate) or \
                    self._made_on_cpu(_method(candidate).value, scope, candidate.site) or self._acted_on(candidate.site) or \
                    self.copied_to.get(id(node)) in self.scipy_reads.get(id(scope), ()):
                return None  # (`torch.randint(0, n, (1,)).item()`; the actions an environment takes on the host; a cost
                # matrix SciPy's Hungarian matching needs there, `C = C.cpu()` then `linear_sum_assignment(c[i]) for ...`)
            what = f"`{_shown(candidate)}` copies a value to the host"
        elif candidate.kind == "scale":
            if not self._cuda_scaler(_method(candidate).value, scope):
                return None
            what = f"`{short_code(node)}` reads AMP's loss scale on the host (`GradScaler.get_scale()` calls `.item()` on it)"
            advice = "Read it only when you log (`if step % log_every == 0:`)."
        elif candidate.kind == "metric":
            call = _call(candidate)
            metric = self._nan_checked_metric(cast(cst.Attribute, call.func).value, scope)
            if metric is None or not self._tensor(call.args[0].value, scope, 0):
                return None
            what = f"`{short_code(node)}` makes torchmetrics' `{metric}` test a CUDA tensor for NaN on the host (`if nans.any():`)"
            advice = 'Make the metric with nan_strategy="disable", or keep a running sum on the GPU and read it every N steps.'
        elif candidate.kind == "conversion":
            if not self._tensor(_call(candidate).args[0].value, scope, 0):
                return None
            what = f"`{short_code(node)}` converts a CUDA tensor to a Python number"
        elif candidate.kind == "shape":
            call = _call(candidate)
            sized = _sized_by_data(call, call_name(call), self.ctx.qualname(call.func))
            method = type(call.func) is cst.Attribute and call_name(call) == "masked_select"  # (a tensor's method only)
            if sized is None or not (method or self._tensor(sized, scope, 0)) or self._made_on_cpu(sized, scope, candidate.site):
                return None
            what = f"`{short_code(node)}` makes a tensor whose size depends on the data: the host reads the size from the GPU"
            advice = ("Keep shapes fixed on the GPU (multiply by the mask, `torch.where(cond, a, b)`, "
                      "`bincount(..., minlength=n)`), or do it every N steps.")
        elif candidate.kind == "mask":
            subscript = cast(cst.Subscript, node)  # a "mask" candidate is a subscript (visit_Subscript)
            mask = self._mask(cast(cst.BaseExpression, _mask_index(subscript)), scope, subscript)
            if mask is None or not self._device_operand(subscript.value, scope) or not self._device_operand(mask, scope) or \
                    self._made_on_cpu(subscript.value, scope, candidate.site):
                return None
            what = (f"`{short_code(node)}` selects with a boolean mask: the result's size depends on the data, so "
                    "the host reads the mask's count from the GPU")
            advice = _MASK_ADVICE
        elif candidate.kind == "compare":
            if not any(self._tensor(arg.value, scope, 0) or self._reduced_input(arg.value, scope, 0) for arg in _call(candidate).args):
                return None
            what = f"`{short_code(node)}` compares a CUDA tensor in Python (`torch.clamp(x, min=...)` stays on the GPU)"
        elif candidate.kind == "format":
            if not self._formatted_tensor(node, scope):
                return None
            what = f"`{short_code(node)}` formats a CUDA tensor"
        else:  # "print"
            if not any(self._printed_tensor(arg.value, scope) for arg in _call(candidate).args):
                return None
            what = f"`{short_code(node)}` formats a CUDA tensor"
        rollout = _rollout(candidate.site)
        when = "environment step of each rollout" if rollout is not None and not TrainingSteps.of(self.ctx).trains(
            rollout) else "training step"
        return (
            f"{what} on every {when}, which waits for the GPU to finish all queued work: the "
            f"CPU cannot run ahead to launch the next step, so the GPU idles. {advice}"
        )

    def _nan_checked_metric(self, metric: cst.BaseExpression, scope: Scope) -> str | None:
        """The class of torchmetrics' aggregation metric `metric` is (`running_loss = RunningMean(window=4).to(device)`),
        made without nan_strategy="disable", or None."""
        found = self.ctx.origin(metric, scope) if type(metric) is cst.Name else None
        made = module_below(found[0]) if found is not None else None  # (a metric is a module: `.to(device)` gives it back)
        if type(made) is not cst.Call:
            return None
        qualified = self.ctx.qualname(made.func) or ""
        strategy = keyword(made, "nan_strategy")
        if not qualified.startswith("torchmetrics.") or qualified.rpartition(".")[2] not in _NAN_CHECKED_METRICS or (
                strategy is not None and ((value := literal(strategy.value)) is UNKNOWN or value == "disable")):
            return None
        return qualified.rpartition(".")[2]

    def _timed(self, site: Site) -> bool:
        """Whether the loop (or step function) around `site` reads CUDA events' elapsed time, or
        a clock and a loop shows something on each iteration: a synchronize there makes a
        per-step timing right (llm.c printing each step's time), unlike one feeding an average of
        step times shown every N steps (timm's `batch_time_m.update(time.time() - end)`), or a
        step time printed every tenth step (makemore)."""
        loop = site.loops[-1] if site.loops else None
        inside = [call for name in _CLOCK_NAMES for call in self.ctx.calls.get(name, ())
                  if (loop in call.loops if loop is not None else call.scope is site.scope)]
        if any(call_name(call.node) == "elapsed_time" for call in inside):
            return True  # (CUDA events read each iteration: the read waits for the end event anyway)
        clocked = any((self.ctx.qualname(call.node.func) or "") in _CLOCKS for call in inside) or loop is not None and any(
            loop in call.loops and type(call.node.func) is cst.Attribute and maybe_project_call(self.ctx, call.node.func)
            and reads_clock(call_target(self.ctx, call.node.func, call.scope))  # (a timer of the project: `timer.toc()`)
            for calls in self.ctx.calls.values() for call in calls)
        return clocked and (loop is None or self._shown_every_step(loop, site.scope))

    def _shown_every_step(self, loop: cst.CSTNode, scope: Scope) -> bool:
        """Whether the loop prints or logs on every iteration: a call named for output not
        under an interval test (`if step % log_every == 0:`)."""
        guarded = calls_under_ifs(loop, lambda branch: interval_test(self.ctx, branch.test, (loop,), scope))
        return any(type(node) is cst.Call and id(node) not in guarded and (
            "print" in (name := call_name(node) or "") or name in _OUTPUT) for node in walk(getattr(loop, "body", loop)))

    def _passed_to_host_read(self, candidate: _Candidate, advice: str) -> tuple | None:
        """A call passing a CUDA tensor to a function of the project that reads it on the host."""
        node, scope = _call(candidate), candidate.site.scope
        callee, used = used_arguments(self.ctx, node, scope, host_reads)
        reads = [(value, [read]) for value, read in used] if callee is not None else used_by_all_fitting(
            self.ctx, node, scope, host_reads)
        for value, found in reads:
            several = type(value) is cst.Call and call_name(value) in ("parameters", "named_parameters") and not value.args
            held = not several and self._dict_of_tensors(value, scope)
            if not (several or held or self._tensor(value, scope, 0)) or self._made_on_cpu(value, scope):
                continue  # (`grad_logger(encoder.named_parameters())`: jepa's `float(torch.norm(p.grad.data))` of each)
            read: Use = found[0]
            more = len(read.also) if read.path else 0
            where = (f", {read.where}" if read.where else "") + (f"; and {more} more place{'s' if more > 1 else ''}" if more else "")
            if read.selects and read.path and read.via.split(" -> ")[-1].endswith(".forward"):
                continue  # (a module's `forward` selecting from its inputs: reported in its own file)
            if not read.path and self._read_guarded(read):
                continue  # (under a switch off by default, an interval test, an `except`: not every step)
            if read.selects:
                return self._passed_to_selection(node, read, found, where)
            callees = ", ".join(f"`{use.via.split(' -> ')[0]}`" for use in found)
            reader = f"{callees}, which reads" if len(found) == 1 else (
                f"`{cst.ensure_type(node.func, cst.Attribute).attr.value}`: every method of the project it can call ({callees}) reads")
            spread = any(arg.value is value and arg.star == "**" for arg in node.args)  # `**loss_dict`
            passed = f"the CUDA tensors of `**{short_code(value)}`" if spread else "a module's CUDA parameters" if (
                several) else f"a dict of CUDA tensors (`{short_code(value)}`)" if held else "a CUDA tensor"
            message = (
                f"`{short_code(node)}` passes {passed} to {reader} {'them' if spread or several or held else 'it'} on the host (`{read.code}`{where}) on every "
                f"training step: the CPU waits for the GPU to finish all queued work, so the GPU idles. {advice}"
            )
            related = tuple(
                Related(use.path, use.line - 1, f"`{use.code}` reads the value on the host ({use.via})") for use in found if use.path
            ) + _further(read)
            at = self._read_here(read) if len(found) == 1 and not read.path else None
            if at is not None:  # (a helper of this source: the finding goes on its read, which a user fixes)
                return (f"`{read.code}` reads on the host {passed} that `{short_code(node)}` passes to "
                        f"`{read.via.split(' -> ')[0]}` on every training step: the CPU waits for the GPU to finish all "
                        f"queued work, so the GPU idles. {advice}"), (), at
            return message, related
        return self._step_reading(candidate, advice, callee, used)

    def _passed_to_selection(self, node: cst.Call, read: Use, found: list[Use], where: str) -> tuple:
        """A call passing a CUDA tensor to a function of the project that selects from it with a
        boolean mask (`boxes[boxes[:, 4] != -1]` in a loss's `forward`)."""
        callee = read.via.split(" -> ")[0]
        at = self._read_here(read) if len(found) == 1 and not read.path else None
        if at is not None:
            return (f"`{read.code}` selects with a boolean mask from the CUDA tensor that `{short_code(node)}` passes to "
                    f"`{callee}`, on every training step: the result's size depends on the data, so the host reads the "
                    f"mask's count from the GPU, waiting for all queued work. {_MASK_ADVICE}"), (), at
        message = (f"`{short_code(node)}` passes a CUDA tensor to `{callee}`, which selects from it with a boolean mask "
                   f"(`{read.code}`{where}) on every training step: the result's size depends on the data, so the host "
                   f"reads the mask's count from the GPU, waiting for all queued work. {_MASK_ADVICE}")
        return message, tuple(Related(use.path, use.line - 1, f"`{use.code}` selects with a boolean mask ({use.via})")
                              for use in found if use.path) + _further(read)

    def _read_guarded(self, read: Use) -> bool:
        """Whether `read`, in a function of the source, is under a guard that keeps it from
        running on every step (`if opt.eval_oracle_wh:`, a store_true option)."""
        return any(any(self._guards(frame, candidate.site) for frame in candidate.frames) for candidate in self._candidates_of(read))

    def _candidates_of(self, read: Use) -> list[_Candidate]:
        """The candidates of the source that are `read`, a read in a function of the source
        (found once per read)."""
        key = (read.via, read.code)
        found = self._read_candidates.get(key)
        if found is None:
            name = read.via.split(" -> ")[-1].rpartition(".")[2]
            functions = {id(node) for node, _ in self.ctx.functions.get(name, ())}
            found = self._read_candidates[key] = [
                candidate for candidate in self.candidates if candidate.site.scope.node is not None
                and id(candidate.site.scope.node) in functions and _read_code(candidate.site.node) == read.code]
        return found

    def _read_here(self, read: Use) -> _Candidate | None:
        """The candidate of the source that is `read` (a read in a function of the source), when
        it runs on every call of its function (under no `if`: not CycleGAN's image pool, which
        copies to the host while it fills, then on half the calls) or is reported where it is."""
        for candidate in self._candidates_of(read)[:1]:
            conditional = any(frame.kind in (IF, EXCEPT) for frame in candidate.frames)
            return None if conditional and not self._every_step(candidate) else candidate
        return None

    def _step_reading(self, candidate: _Candidate, advice: str, found: Definition | None, passed: list[tuple]) -> tuple | None:
        """A training-step function of another module (it calls `backward()` or steps an
        optimizer, with no loop over the batches of its own) that reads a value on the host
        each time it runs: `return loss.item()` in engine.py's `train_step(model, batch)`; or
        a helper of another module the loop that steps calls, which copies a tensor to the
        host each time (`misc.all_reduce_mean(loss_value)`: `x_reduce.item()`). `found`: the
        call's target; `passed`: (argument, read) of the arguments it reads on the host."""
        node = _call(candidate)
        if found is None or steps_in_loops(found):
            return None
        if type(node.func) is cst.Name and node.func.value not in self.ctx.functions and node.func.value not in self.ctx.imports:
            return None  # (`train = make_train_step(...)`: the factory's module reports the step's reads)
        if project_trains(found):  # (one of this source: its reads are reported where they are)
            read = reads_every_call(found) if found[2].label else None
        else:  # another helper of the step (`clip_gradients`, `all_reduce_mean`): a tensor it copies itself
            loops = candidate.site.loops  # (in the loop or step function that steps: not an epoch loop calling
            owner = loops[-1] if loops else candidate.site.scope.node  # `evaluate(loader)`)
            steps_here = owner is not None and TrainingSteps.of(self.ctx).steps_here(owner)
            read = copies_every_call(found) if steps_here and not self._loops_over_given(node, found) else None
            if read is not None and not all(self._python_number(value, candidate.site.scope) or self._called(value, candidate.site.scope)
                                            for value, use in passed if (use.line, use.code) == (read.line, read.code)):
                return None  # (a read of what it is passed: judged as passed, `_passed_to_host_read`; but for
                # the model itself, whose gradients it reads: `clip_gradients(student, clip)`)
        if read is None:
            return None
        at = self._read_here(read) if not read.path else None
        if at is not None:  # (a helper of this source: on its read, as `_passed_to_host_read` puts it)
            return (f"`{read.code}` copies a value to the host on every training step, in `{read.via.split(' -> ')[-1]}` "
                    f"called by `{short_code(node)}`: the CPU waits for the GPU to finish all queued work, so the GPU "
                    f"idles. {advice}"), (), at
        where = f", {read.where}" if read.where else ""
        message = (
            f"`{short_code(node)}` reads a value on the host on every training step (`{read.code}` in "
            f"`{read.via.split(' -> ')[-1]}`{where}): the CPU waits for the GPU to finish all queued work, "
            f"so the GPU idles. {advice}"
        )
        return message, (Related(read.path, read.line - 1, f"`{read.code}` reads the value on the host ({read.via})"),) \
            if read.path else ()

    @staticmethod
    def _loops_over_given(call: cst.Call, found: Definition) -> bool:
        """Whether the function `found` loops over something the call gives it other than the
        model's parameters (`evaluate(loader)`: a pass over the batches, not a step's helper;
        `clip_gradients(model.parameters())` is one)."""
        loops = iterated(found)
        method = found[3] is not None
        return any(name in loops and "param" not in code(cast(cst.CSTNode, value)).lower()
                   for name, value in bind(call, parameters(found[0]), method))

    def _called(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """Whether `expr` is a name the step calls (`student(images)`): a model, not a tensor."""
        return type(expr) is cst.Name and any(
            type(call.node.func) is cst.Name and call.scope is scope for call in self.ctx.calls.get(expr.value, ()))

    def _python_number(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """`loss_value` after `loss_value = loss.item()` (or `float(...)`, a number literal)."""
        found = self.ctx.origin(expr, scope) if type(expr) is cst.Name else (expr, scope)
        if found is None:
            return False
        value = found[0]
        if type(value) is not cst.Call:
            return type(literal(value)) in (int, float)
        func = value.func
        return type(func) is cst.Attribute and func.attr.value == "item" or type(func) is cst.Name and func.value in ("float", "int")

    def _logged_tensor(self, candidate: _Candidate, advice: str) -> str | None:
        """`wandb.log({"acc": acc})` (or through a logger's `self._wandb = wandb`), a TensorBoard
        writer's `add_scalar("loss", loss)` or a progress bar's `set_postfix(loss=loss)` of a CUDA tensor."""
        node, scope = _call(candidate), candidate.site.scope
        func = node.func
        qualified: str | None = "add_scalar"
        values: list[cst.BaseExpression | None]
        if type(func) is cst.Attribute and func.attr.value == "set_postfix":  # `bar.set_postfix(loss=loss)`: `str(loss)`
            qualified, values = "set_postfix", [arg.value for arg in node.args]
        elif type(func) is cst.Attribute and func.attr.value == "add_scalar":  # `writer.add_scalar("loss", loss, step)`
            data = argument(node, 1, "scalar_value")  # (TensorBoard: `.cpu().numpy()`)
            values = [data]
        else:
            qualified = self.ctx.qualname(func)
            if qualified is None and type(func) is cst.Attribute:
                module = attribute_module(self.ctx, func.value, scope)
                qualified = module and f"{module}.{func.attr.value}"
            if qualified not in _HOST_LOGGERS:
                return None
            data = argument(node, 0, "data")
            values = [e.value for e in data.elements if type(e) is cst.DictElement] if type(data) is cst.Dict else [data]
        if not any(value is not None and self._tensor(value, scope, 0) for value in values):
            return None
        return (
            f"`{short_code(node)}` passes a CUDA tensor to `{qualified}`, which "
            f"{'formats it as text' if qualified == 'set_postfix' else 'converts it to a Python number'} on the "
            f"host on every training step: the CPU waits for the GPU to finish all queued work, so the GPU idles. {advice}"
        )

    def _loader_batch(self, candidate: _Candidate) -> bool:
        """`X.to("cpu")`, `labels.numpy()` of a batch a loop takes from a DataLoader, and the loop
        binds it to nothing else: a CPU tensor, nothing to wait for."""
        receiver = _method(candidate).value
        if type(receiver) is not cst.Name:
            return False
        name, scope = receiver.value, candidate.site.scope
        loop = next((loop for loop in reversed(candidate.site.loops)
                     if type(loop) is cst.For and name in names_in(loop.target)), None)
        if loop is None or any(not (type(value) is cst.Call and _host_copy(value)
                               and dotted(cst.ensure_type(value.func, cst.Attribute).value) == name)
                               for value in assigned_in(loop.body, name, before=candidate.site.node)):
            return False
        return iterates_dataloader(self.ctx, loop, scope)

    def _acted_on(self, site: Site, depth: int = 0) -> bool:
        """`actions = q_values.argmax(1).cpu().numpy()`, then `envs.step(actions)` in the same loop:
        an environment simulated on the host takes its step with them, so an agent cannot act
        without this read; also what a function returns that each of its calls in the source
        hands to the environment so (`return q_value.max(1)[1].item()` of `get_action`)."""
        if not site.loops:
            function = site.scope.node
            holding = {name for name, values in site.scope.assignments.items() for value in values
                       if value is not None and any(n is site.node for n in walk(value))}  # (`a = a.cpu().numpy()`, `return a`)
            returned = function is not None and any(value is not None and (any(n is site.node for n in walk(value)) or type(
                value) is cst.Name and value.value in holding) for value in self.ctx.returns.get(id(function), ()))
            callers = [caller for caller in self.ctx.calls.get(function.name.value, []) if caller.scope.node is not function] \
                if returned and function is not None and depth < 2 else []
            return bool(callers) and all(self._acted_on(caller, depth + 1) for caller in callers)
        names = {name for name, values in site.scope.assignments.items() for value in values
                 if value is not None and any(n is site.node for n in walk(value))}
        for node in walk(site.loops[-1]):
            if (_env_step(node) or self._steps_environment(node)) and any(
                    not names.isdisjoint(names_in(arg.value, attributes=False)) or any(n is site.node for n in walk(arg.value))
                    for arg in cast(cst.Call, node).args):
                return True
        return False

    def _steps_environment(self, node: cst.CSTNode) -> bool:
        """`self.step(action)`: a call of a function of the source whose body steps an environment
        (rainbow-is-all-you-need's agents wrap `self.env.step(action)` so)."""
        if type(node) is not cst.Call or type(node.func) not in (cst.Name, cst.Attribute) or type(
                node.func) is cst.Attribute and dotted(node.func.value) != "self":
            return False
        return any(_env_step(inner) for defined, _ in self.ctx.functions.get(call_name(node) or "", ()) for inner in walk(defined.body))

    def _filled_on_cpu(self, entry: cst.Subscript, function: cst.FunctionDef) -> bool:
        """Whether every assignment of the function to the entry (`self.state["k"]`, spelled the
        same) is a torch factory's tensor made without a device, one at least."""
        spelled = code(entry)
        values = [node.value for node in walk(function.body) if type(node) is cst.Assign
                  and any(code(target.target) == spelled for target in node.targets)]
        return bool(values) and all(type(value) is cst.Call and self._host_factory(value) for value in values)

    def _host_factory(self, call: cst.Call) -> bool:
        """`torch.zeros(n)`, `torch.tensor([0])`: a torch factory given no device, whose tensor is on the CPU."""
        head, _, name = (self.ctx.qualname(call.func) or "").partition(".")
        return head == "torch" and name in HOST_FACTORIES and keyword(call, "device") is None

    def _made_on_cpu(self, expr: cst.BaseExpression, scope: Scope, site: Site | None = None) -> bool:
        """`x` made by `torch.linspace(...)` (a factory) with no device, and not moved; or copied to
        the host already (`loss = criterion(out, y).cpu()`, or `loss.cpu() if use_cuda else loss`,
        then `loss.data.item()`; `correct = pred.eq(y).cpu().sum()`, then `correct.item()`: the
        copy waited, the read does not), or
        computed from such copies only (`loss = loss_f(outputs.cpu(), labels.cpu())`), or from a
        tensor of sizes (`torch.prod(torch.tensor(x.shape[1:])).item()`); or
        a NumPy value (`np.ceil(np.log(n)).astype("int").item()`); or an entry the function fills only
        with such a factory's tensor (`self.state["k"] = torch.tensor([0])`, gpt-neox's step counter)."""
        if type(expr) is cst.Subscript and scope.node is not None and self._filled_on_cpu(expr, scope.node):
            return True
        while type(expr) is cst.Attribute and expr.attr.value == "data" or type(expr) is cst.Subscript or type(
                expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in SAME_DEVICE_METHODS:
            # (`torch.randperm(n)[:k].numpy()`: a part of a tensor is where the tensor is)
            if type(expr) is cst.Call:
                expr = cast(cst.Attribute, expr.func).value
            else:
                expr = cast(cst.Attribute | cst.Subscript, expr).value
        if type(expr) is cst.Name and _host_parameter(expr.value, scope):
            return True
        if type(expr) is cst.Attribute and dotted(expr.value) == "self" and expr.attr.value in self._buffers() and self._left_on_cpu(scope):
            return True  # (a buffer of a module nothing moves: audiolm's `self.steps.item()` in a trainer made as is)
        found = self.ctx.origin(expr, scope) if type(expr) is cst.Name else (expr, scope)
        if type(expr) is cst.Name and site is not None and site.loops:  # (the loop's own binding, before the read)
            loop = site.loops[-1]
            values = assigned_in(loop.body, expr.value, before=site.node)
            if not values and type(loop) is cst.For and expr.value in names_in(loop.target) and (iterates_dataloader(
                    self.ctx, loop, scope) or "loader" in (dotted(iteration_source(loop.iter)) or "").lower()):
                return True  # a batch as the loader gives it, before the iteration moves it (`lengths.tolist()`)
            found = (values[-1], scope) if values and values[-1] is not None else found
        if found is not None and type(found[0]) is cst.IfExp and type(expr) is cst.Name:  # `loss = loss.cpu() if
            branches = (found[0].body, found[0].orelse)  # use_cuda else loss`: on the host either way
            return all(type(b) is cst.Call and _host_copy(b) or type(b) is cst.Name and b.value == expr.value for b in branches) \
                and any(type(b) is cst.Call for b in branches)
        if found is None or type(found[0]) is not cst.Call:
            return False
        call, made = found[0], found[0]
        given = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        copies = [self.ctx.origin(arg, found[1]) if type(arg) is cst.Name else (arg, found[1]) for arg in given]
        if given and all(copy is not None and type(copy[0]) is cst.Call and _host_copy(copy[0]) for copy in copies):
            return True  # `loss = loss_f(outputs.cpu(), labels.cpu())`, `torch.isfinite(loss_val)` with `loss_val =
            # loss.data.cpu()`: computed from host copies, on the host
        while True:
            if type(call.func) is cst.Attribute and (call.func.attr.value == "cpu" and not call.args or call.func.attr.value == "to"
                                                      and len(call.args) == 1 and literal(call.args[0].value) == "cpu"):
                return True
            if type(call.func) is not cst.Attribute or type(call.func.value) is not cst.Call or \
                    call.func.attr.value not in _HOST_KEEPING or self.ctx.qualname(call.func) is not None:
                break
            call = call.func.value  # `pred.eq(y).cpu().sum()`: what a host copy gives is on the host
        head = (self.ctx.qualname(call.func) or "").partition(".")[0]  # (a factory only as the value itself: not
        # `torch.Tensor(losses).mean().item()` of a list of CUDA losses, which the factory reads one by one)
        if call is made and head == "torch" and call.args and self._sizes(call.args[0].value):
            return True  # `torch.prod(torch.tensor(x.shape[1:])).item()`: a tensor of sizes, made on the host
        return head == "numpy" or call is made and self._host_factory(call)

    def _sizes(self, expr: cst.BaseExpression) -> bool:
        """`torch.tensor(x.shape[1:])` (`x.size()`): a factory given a tensor's sizes, which are
        host numbers, and no device."""
        if type(expr) is not cst.Call or (self.ctx.qualname(expr.func) or "").partition(".")[2] not in HOST_FACTORIES or not (
                expr.args) or keyword(expr, "device") is not None:
            return False
        given = expr.args[0].value
        given = given.value if type(given) is cst.Subscript else given  # (`x.shape[1:]`)
        return type(given) is cst.Attribute and given.attr.value == "shape" or type(given) is cst.Call and call_name(given) == "size"

    def _host_element(self, value: cst.BaseExpression, index: int | None, scope: Scope) -> bool:
        """Whether the element `index` of what `value` gives back is a copy on the host: a function of
        the project returning it so (`loss, loss_components = compute_loss(...)`, `to_cpu(...)` second)."""
        return index is not None and type(value) is cst.Call and maybe_project_call(self.ctx, value.func) and \
            returns_host_copy(call_target(self.ctx, value.func, scope), index)

    def _mask(self, index: cst.BaseExpression, scope: Scope, at: cst.CSTNode | None = None) -> cst.BaseExpression | None:
        """The boolean tensor an index is: a comparison, `~m`, `m.bool()`, or a name assigned one
        of those or a factory's `dtype=torch.bool` result (also moved: `.to(device)`), each time
        (the index); or, for the index of the selection `at`, by the assignment reaching it (`j =
        r < t`, then `t = t[j]`; `j` rebound to other values elsewhere: the value it holds there);
        else None."""
        found = self._mask_assigned(index, scope)
        if found is None and at is not None and type(index) is cst.Name and scope.node is not None:
            value = reaching_assignment(scope.node, at, index.value)
            return value if value is not None and self._mask_value(value, scope, index.value) else None
        return found

    def _mask_assigned(self, index: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
        if type(index) is cst.Call and not _mask_form(index):  # `logits[is_unknown(y)]`
            return index if self._masked_argument(index, scope) is not None else None
        if type(index) is not cst.Name:
            return index
        found = self.ctx.origin(index, scope)
        owner = scope.owner_of(index.value) if found is None else None
        values = owner.assignments[index.value] if owner is not None else []
        if owner is not None and len(values) > 1 and all(v is not None and self._mask_value(v, owner, index.value) for v in values):
            return index  # (`obj_mask = y[..., 4] == 1`, then `obj_mask = obj_mask & ~torch.isnan(iou)`)
        if len(values) > 1 and type(last := values[-1]) is cst.Call and call_name(last) in ("bool", "byte") and _mask_form(
                last) and root_name(last) == index.value:
            return index  # (`index = cos_theta * 0.0`, `index.scatter_(1, label, 1)`, then `index = index.byte()`)
        value = found[0] if found is not None else None
        if found is not None and type(value) is cst.Call and call_name(value) in _MASK_KEEPING - {"to", "cuda"}:
            return index if self._mask_value(value, found[1], index.value) else None
        while type(value) is cst.Call and call_name(value) in ("to", "cuda") and type(value.func) is cst.Attribute:
            value = value.func.value
        if type(value) is cst.Call and (dtype := keyword(value, "dtype")) is not None and self.ctx.qualname(dtype.value) == "torch.bool":
            return index
        if type(value) is cst.Call and found is not None and self._masked_argument(value, found[1]) is not None:
            return index  # (`unknown = is_unknown(target)`, `def is_unknown(labels): return labels < 0`)
        return index if value is not None and type(value) is not cst.Name and _mask_form(value) else None

    def _mask_value(self, value: cst.BaseExpression, scope: Scope, name: str) -> bool:
        """Whether `value`, assigned to the index `name`, is a boolean tensor: a mask's form (also
        of `name` itself rebound), or a mask moved or reshaped (`mask = pos.unsqueeze(2).expand_as(
        loc_preds)`, `pos = cls_targets > 0`)."""
        while type(value) is cst.Call and call_name(value) in _MASK_KEEPING and type(value.func) is cst.Attribute:
            value = value.func.value
        if type(value) is cst.Name and value.value != name:
            return self._mask(value, scope) is not None
        return _mask_form(value, name)

    def _formatted_tensor(self, node: cst.CSTNode, scope: Scope) -> bool:
        """Whether an f-string, a `str.format` or a `%` formatting formats a CUDA tensor (each element
        of a `*tensor`)."""
        if type(node) in (cst.FormattedString, cst.Call):
            return self._printed_tensor(cast(cst.BaseExpression, node), scope)
        values = cast(cst.BinaryOperation, node).right
        elements = [e.value for e in values.elements] if type(values) is cst.Tuple else [values]
        return any(self._tensor(value, scope, 0) for value in elements)

    def _printed_tensor(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        if type(expr) is cst.ConcatenatedString:
            return self._printed_tensor(expr.left, scope) or self._printed_tensor(expr.right, scope)
        if type(expr) is cst.FormattedString:
            return any(
                type(part) is cst.FormattedStringExpression and self._tensor(part.expression, scope, 0)
                for part in expr.parts
            )
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "format" and type(
                expr.func.value) in (cst.SimpleString, cst.ConcatenatedString):  # `"loss {:.4f}".format(loss)`
            return any(self._tensor(arg.value, scope, 0) for arg in expr.args)
        return self._tensor(expr, scope, 0)

    def _truth_sync(self, test: cst.BaseExpression, scope: Scope, loops: tuple = ()) -> bool:
        """Whether evaluating `test` as a condition reads a CUDA tensor's value (also an element
        of one that one of `loops` iterates: `for idx, d in enumerate(next_done): if d:`)."""
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self._truth_sync(test.expression, scope, loops)
        if type(test) is cst.BooleanOperation:
            return self._truth_sync(test.left, scope, loops) or self._truth_sync(test.right, scope, loops)
        if type(test) is cst.Comparison:
            if _text(test.left) or any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) or _text(c.comparator)
                                       for c in test.comparisons):
                return False  # (nor a comparison with a string: `if args.loss == 'hinge':`)
            return any(self._tensor(e, scope, 0) and not self._made_on_cpu(e, scope) or self._reduced_input(e, scope, 0)
                       for e in [test.left, *(c.comparator for c in test.comparisons)])
        if type(test) is cst.Call:
            if (self.ctx.qualname(test.func) or "") in _TRUTH_FUNCTIONS:
                return True
            if call_name(test) in _TRUTH_METHODS and type(test.func) is cst.Attribute:  # (not of a host copy: `loss_val =
                return self._device_operand(test.func.value, scope) and not self._made_on_cpu(test.func.value, scope)  # loss.cpu()`)
            tested = self._masked_argument(test, scope, truth=True)  # `if contains_unknown(target):`
            return tested is not None and self._device_operand(tested, scope)
        return type(test) is cst.Name and (self._tensor(test, scope, 0) or self._element(test.value, loops, scope))

    def _element(self, name: str, loops: tuple, scope: Scope) -> bool:
        """Whether `name` is an element a loop takes from a device tensor (`for d in done`, `for
        i, d in enumerate(done)`): a 0-dimensional CUDA tensor, whose truth is read on the host."""
        for index, loop in enumerate(loops):
            if type(loop) is not cst.For:
                continue
            source: cst.BaseExpression = loop.iter
            element: cst.BaseExpression = loop.target
            if type(source) is cst.Call and call_name(source) == "enumerate" and source.args and type(element) is cst.Tuple \
                    and len(element.elements) == 2:
                source, element = source.args[0].value, element.elements[1].value
            if type(element) is not cst.Name or element.value != name:
                continue
            if type(source) is cst.Name and index > 0:  # (bound again in the loop around: its last value before)
                values = assigned_in(loops[index - 1].body, source.value, before=loop)
                if values and values[-1] is not None:
                    source = values[-1]
            if type(source) is cst.Name:  # (also a name some statement makes a device tensor: `next_done =
                owner = scope.owner_of(source.value)  # torch.zeros(n).to(device)`, then an environment's step's)
                return owner is not None and any(v is not None and self._tensor(v, owner, 0) and not self._made_on_cpu(v, owner)
                                                 for v in owner.assignments[source.value])
            return self._tensor(source, scope, 0) and not self._made_on_cpu(source, scope)
        return False

    def _summed_tensors(self, name: str, owner: Scope, values: list | tuple, depth: int) -> bool:
        """Whether the function adds tensors to `name` (`loss += loss_l2 * w`), started from a number
        or from tensors (`loss = 0.0`, `loss = loss_id * w`): its value is a tensor then."""
        added = [node.value for node in walk(cast(cst.CSTNode, owner.node)) if type(node) is cst.AugAssign and type(
            node.operator) in (cst.AddAssign, cst.SubtractAssign) and type(node.target) is cst.Name and node.target.value == name]
        if any(type(value) is cst.Subscript and legacy_read(value) is not None or self._made_on_cpu(value, owner) for value in added):
            return False  # (`train_loss += loss.data[0]`: PyTorch 0.3's read, a number; `correct += (...).cpu().sum()`)
        return len(added) == values.count(None) and any(self._tensor(value, owner, depth + 1) for value in added if not (
            type(value) is cst.Name and (id(owner), value.value) in self.ctx.unpacked)) and all(  # (not flair's count, unpacked
            # beside the loss from what `forward_loss` gives back: `batch_train_samples += datapoint_count`)
            v is None or type(v) in (cst.Integer, cst.Float) or self._tensor(v, owner, depth + 1) for v in values)

    def _picked_steps(self, owner: Scope, values: list) -> bool:
        """Whether one of `values` is bound in an `if` that picks some iterations (`interval_test`)."""
        return any(type(node) is cst.If and interval_test(self.ctx, node.test, (), owner) and any(
            inner is value for inner in walk(node.body) for value in values) for root in self.ctx.bodies(owner) for node in walk(root))

    def _tensor(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        """Whether `expr` is provably a tensor (the names whose backward() is called, results
        of torch functions and losses, tensor methods and arithmetic on those)."""
        if depth > _MAX_DEPTH:
            return False
        if type(expr) is cst.Name:
            owner = scope.owner_of(expr.value)
            if owner is not None and (expr.value in self.backward_of.get(id(owner), ()) and expr.value not in self.iterated.get(
                    id(owner), ()) or self._fed_to_backward(expr.value, owner) or self._summed_into_backward(expr.value, owner)
                    or self._step_batch(expr.value, owner)):
                return True  # (not a name a loop of the function binds too: `for key, loss in logs.items()`)
            found = self.ctx.origin(expr, scope)
            values = owner.assignments[expr.value] if owner is not None else ()
            if None in values and all(v is None or moves_itself(v, expr.value) for v in values) and len(set(map(type, values))) == 2:
                return True  # a batch's item moved (`for imgs, annot in loader: annot = annot.cuda()`)
            if owner is not None and owner.node is not None and None in values and self._summed_tensors(expr.value, owner, values, depth):
                return True  # (`loss = 0.0`, then `loss += loss_l2 * self.opts.l2_lambda`)
            unpacked = self.ctx.unpacked.get((id(owner), expr.value), ()) if owner is not None else ()
            if owner is not None and unpacked and values.count(None) == len(unpacked) and all(
                    self._tensor(v, owner, depth + 1) and not self._host_element(v, index, owner) for v, index in unpacked):
                return all(v is None or self._tensor(v, owner, depth + 1) for v in values)  # `r, g, _, _ = mpd(y, y_hat)`
            if found is None and owner is not None and values and all(v is not None for v in values):  # `acc = (p == y).mean()` or None
                real = [v for v in values if not (type(v) is cst.Name and v.value == "None")  # (nor a running
                        and not (type(v) is cst.BinaryOperation and expr.value in names_in(v))  # mean of itself,
                        and not _kept_tensor(v, expr.value)  # nor `x = x.masked_select(m).view(n, -1)`,
                        and not any(inner is expr for inner in walk(v))]  # nor the binding `expr` is read in)
                numbers = [v for v in real if type(v) in (cst.Integer, cst.Float)]
                if numbers and len(numbers) < len(real) and not self._picked_steps(owner, [v for v in real if v not in numbers]):
                    real = [v for v in real if v not in numbers]  # (a number until a branch that most steps take
                    # binds a tensor: `_enc_norm = 0.`, then `if epoch > warmup: _enc_norm = clip_grad_norm_(...)`)
                return bool(real) and all(self._tensor(v, owner, depth + 1) for v in real)
            return found is not None and found[0] is not expr and self._tensor(found[0], found[1], depth + 1)
        if type(expr) is cst.Call:
            qualified = self.ctx.qualname(expr.func) or ""
            if qualified.startswith(_TENSOR_PREFIXES):
                return True
            head, _, function = qualified.partition(".")
            if qualified in _NORMS:
                return True  # `grad_norm = clip_grad_norm_(params, 1.0)`: the total norm, on the parameters' device
            if head == "torch" and function and "." not in function:
                return function in ("Tensor", *LEGACY_TENSOR_TYPES) or function[0].islower() and not function.startswith(
                    ("is_", "get_", "set_")) and function not in _NOT_TENSOR
            if type(expr.func) is cst.Name and expr.func.value == "sum" and "sum" not in self.ctx.functions and expr.args:
                summed = expr.args[0].value  # `sum(loss_dict.values())`, `sum(loss for loss in loss_dict.values())`: a dict of losses
                if type(summed) is cst.GeneratorExp and summed.for_in.inner_for_in is None and type(summed.elt) is cst.Name \
                        and summed.elt.value in names_in(summed.for_in.target):
                    summed = summed.for_in.iter
                if type(summed) is cst.Call and call_name(summed) == "values" and type(summed.func) is cst.Attribute:
                    return self._tensor(summed.func.value, scope, depth + 1)
            if type(expr.func) is cst.Name and expr.func.value in self.ctx.functions and expr.func.value not in self.ctx.imports:
                defined, inner = self.ctx.functions[expr.func.value][-1]  # (of the source: what it returns, not its name)

                def returned(value: cst.BaseExpression) -> bool:  # (a parameter given back: what this call passes it,
                    given = passed_for(expr, defined, value) if type(value) is cst.Name else None  # SSD's `reduce_loss_dict`
                    if given is None:  # on one process; not `to_item`'s `if isinstance(x, (float, int)): return x`)
                        return self._tensor(value, inner, depth + 1)
                    return f"isinstance({cast(cst.Name, value).value}," not in code(defined) and self._tensor(given, scope, depth + 1)
                return any(value is not None and returned(value) for value in self.ctx.returns.get(id(defined), ()))
            if _loss_call(expr) or _model_call((dotted(expr.func) or "").rsplit(".", 1)[-1].lower()):
                return True
            if call_name(expr) == "apply" and type(expr.func) is cst.Attribute and type(expr.func.value) is cst.Name and any(
                    self._tensor(arg.value, scope, depth + 1) for arg in expr.args) and derives_from(
                    self.ctx, expr.func.value.value, AUTOGRAD_FUNCTIONS):
                return True  # a custom autograd op given a tensor (jepa's `AllReduce.apply(loss)`)
            if type(expr.func) is cst.Attribute and self._layer(expr.func):
                return True
            if type(expr.func) is cst.Name and self._module_instance(expr.func, scope, depth):
                return True  # `mpd(y, y_hat)`, `mpd = MultiPeriodDiscriminator().to(device)`
            if type(expr.func) is cst.Attribute and call_name(expr) == "parameters" and not expr.args:
                return True  # `model.parameters()`: the module's tensors, one by one
            if type(expr.func) is cst.Attribute and call_name(expr) in _TENSOR_METHODS:
                return self._tensor(expr.func.value, scope, depth + 1)
            return self._passed_back(expr, scope, depth)
        if type(expr) is cst.ListComp:  # `image1, flow = [x.cuda() for x in data_blob]`: a batch's items, moved
            moved = expr.elt
            return type(moved) is cst.Call and call_name(moved) in ("cuda", "to") and type(moved.func) is cst.Attribute \
                and type(moved.func.value) is cst.Name and moved.func.value.value in names_in(expr.for_in.target)
        if type(expr) is cst.DictComp:  # `{k: v * w[k] for k, v in losses.items()}`
            over = _comprehended_values(expr.for_in)
            return over is not None and over[0] in names_in(expr.value) and self._tensor(over[1], scope, depth + 1)
        if type(expr) is cst.BinaryOperation:
            return self._tensor(expr.left, scope, depth + 1) or self._tensor(expr.right, scope, depth + 1)
        if type(expr) is cst.Comparison:  # `pred == y`: a tensor of booleans
            if any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in expr.comparisons):
                return False
            return any(self._tensor(e, scope, depth + 1) for e in [expr.left, *(c.comparator for c in expr.comparisons)])
        if type(expr) is cst.UnaryOperation:
            return self._tensor(expr.expression, scope, depth + 1)
        if type(expr) is cst.Subscript:
            return self._tensor(expr.value, scope, depth + 1)
        if type(expr) is cst.Attribute:
            if expr.attr.value == "grad":
                return True  # a parameter's gradient (`para.grad.norm()`)
            if expr.attr.value == "data":
                return self._tensor(expr.value, scope, depth + 1)  # `pred_raw.data`: the tensor, without autograd
            if expr.attr.value in ("values", "indices") and type(expr.value) is cst.Call:
                return self._tensor(expr.value, scope, depth + 1)  # `outputs.max(dim=1).indices`: torch's named tuple
            if type(expr.value) is not cst.Name:
                return False
            return expr.attr.value == "loss" and self.ctx.value(expr, scope) is UNKNOWN or (
                expr.value.value == "self" and expr.attr.value in self._buffers() and not self._left_on_cpu(scope)) or (
                self._moved_batch(expr.value, scope) and expr.attr.value not in _TENSOR_FACTS
                and not expr.attr.value.startswith("num_"))
        return False

    def _device_operand(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """Whether `expr`, tested or selected from, is a tensor: one `_tensor` proves, or taken
        from a module's inputs (`_forward_input`)."""
        return self._tensor(expr, scope, 0) or self._forward_input(expr, scope, 0)

    def _forward_input(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        """Whether `expr` is taken from the inputs of a module's `forward`, of a loss object's
        `__call__` run every step, or of a method they call (a parameter without a default:
        `annotations[annotations[:, 4] >= 0]` in a loss), tensors on the module's device where
        the source runs on a GPU (a selection's operands: a list cannot be indexed by a
        comparison)."""
        if depth > _MAX_DEPTH:
            return False
        if type(expr) is cst.Subscript:
            return self._forward_input(expr.value, scope, depth + 1)
        if type(expr) is cst.Attribute:
            return expr.attr.value not in _TENSOR_FACTS and self._forward_input(expr.value, scope, depth + 1)
        if type(expr) is cst.Comparison:
            return self._forward_input(expr.left, scope, depth + 1) or any(
                self._forward_input(c.comparator, scope, depth + 1) for c in expr.comparisons)
        if type(expr) is cst.UnaryOperation:
            return self._forward_input(expr.expression, scope, depth + 1)
        if type(expr) is cst.BinaryOperation:  # `anchor[:, 3] - anchor[:, 1]`
            return self._forward_input(expr.left, scope, depth + 1) or self._forward_input(expr.right, scope, depth + 1)
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in _KEEPING_METHODS:
            return self._forward_input(expr.func.value, scope, depth + 1)
        if type(expr) is cst.Call and self._on_inputs_device(expr.func) and any(
                self._forward_input(arg.value, scope, depth + 1) for arg in expr.args if not arg.star):
            return True  # `d = self.pdist(student)`, `torch.cdist(x, y)`: computed from the inputs, on their device
        if type(expr) is cst.Call:  # `is_unknown(target)`: a mask of what it is given
            masked = self._masked_argument(expr, scope)
            return masked is not None and self._forward_input(masked, scope, depth + 1)
        if type(expr) is not cst.Name:
            return False
        owner = scope.owner_of(expr.value)
        function = owner.node if owner is not None else None
        if owner is None or function is None:
            return False
        cls = self.ctx.class_of.get(id(function))
        steps = TrainingSteps.of(self.ctx)
        if cls is None or not (derives_from(self.ctx, cls.name.value, MODULE_CLASSES) and (
                function.name.value == "forward" or steps.run_every_step(function)) or steps.loss_call(cls, function)
                and steps.run_every_step(function)):
            return False  # (a module's `forward`, or a method it calls: RetinaLoss's `compute_batch_focal_loss`; a
            # loss object's `__call__` run every step, or a method it calls: YOLO's `ComputeLoss.build_targets`)
        param = next((p for p in function.params.params if p.name.value == expr.value), None)
        values = owner.assignments.get(expr.value, [])
        own = [v for v in values if v is None or type(v) is cst.Subscript and expr.value in names_in(v.value) or type(
            v) is cst.BinaryOperation and expr.value in names_in(v) or _kept_tensor(v, expr.value) or self._made_of(v, expr.value)]
        if param is not None:  # (rebound only to what it selects of itself: `annotations = annotations[keep]`)
            return param.default is None and function.params.params.index(param) > 0 and len(own) == len(values) \
                and not _host_parameter(expr.value, owner)
        unpacked = [v for v, _ in self.ctx.unpacked.get((id(owner), expr.value), ())]
        if unpacked and values.count(None) == len(unpacked) and all(  # (`y_h, y, labels = self.shared_step(*batch)`)
                type(v) is cst.Call and type(v.func) is cst.Attribute and dotted(v.func.value) == "self" and any(
                    self._forward_input(a.value, owner, depth + 1) for a in v.args) for v in unpacked):
            values = [v for v in values if v is not None]
        taken = [v for v in values if v not in own]  # (`b = annotations[j]`, then `b = b[b[:, 4] != -1]`)
        return bool(taken or unpacked) and None not in values and all(self._forward_input(v, owner, depth + 1) for v in taken)

    def _made_of(self, value: cst.BaseExpression, name: str) -> bool:
        """Whether `value` is what torch, a method of the module or a function of the project makes
        of `name` (`target = make_one_hot(target.unsqueeze(1), classes)`, `h = self.dropout(h.transpose(1,
        2)).transpose(1, 2)`, `targets = torch.cat((targets.repeat(na, 1, 1), ai), 2)`): on its device."""
        while type(value) is cst.Call and type(value.func) is cst.Attribute and call_name(value) in _KEEPING_METHODS:
            value = value.func.value
        return type(value) is cst.Call and any(root_name(part) == name for arg in value.args for part in (
            [e.value for e in arg.value.elements] if type(arg.value) in (cst.Tuple, cst.List) else [arg.value])  # type: ignore[attr-defined]
        ) and self._on_inputs_device(value.func, project=True)

    def _on_inputs_device(self, func: cst.BaseExpression, project: bool = False) -> bool:
        """Whether a call gives back what it computes on its inputs' device: a torch function, a
        method of the module (`self.pdist(x)`) or of its base (`super().forward(input, target)` of a
        loss deriving from `nn.SmoothL1Loss`), or with `project`, a function of the project."""
        return (self.ctx.qualname(func) or "").startswith("torch.") or type(func) is cst.Attribute and (dotted(
            func.value) == "self" or type(func.value) is cst.Call and call_name(func.value) == "super") or project and type(
            func) is cst.Name and maybe_project_call(self.ctx, func)

    def _masked_argument(self, call: cst.Call, scope: Scope, truth: bool = False) -> cst.BaseExpression | None:
        """The argument a call of a function of the project gives back a boolean mask of
        (`returned_mask`: `is_unknown(target)`), or with `truth` whether that mask has any element
        (`contains_unknown(target)`); None for other calls."""
        if not maybe_project_call(self.ctx, call.func):
            return None
        found = call_target(self.ctx, call.func, scope)
        param = returned_mask(found, truth) if found is not None else None
        if found is None or param is None:
            return None
        return next((cast(cst.BaseExpression, value) for name, value in bind(call, parameters(found[0]), found[3] is not None)
                     if name == param), None)

    def _reduced_input(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        """Whether `expr` is a reduction of a module's inputs (`_forward_input`): `mask.sum()`,
        `(a * b).sum()`, a name assigned one, arithmetic on one (`positive + negative` in DBNet's
        loss): a 0-dimensional tensor on the module's device (not the inputs themselves, which
        may be numbers or flags)."""
        if depth > _MAX_DEPTH:
            return False
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in _REDUCTIONS:
            return self._forward_input(expr.func.value, scope, 0)
        if type(expr) is cst.BinaryOperation:
            return self._reduced_input(expr.left, scope, depth + 1) or self._reduced_input(expr.right, scope, depth + 1)
        if type(expr) is not cst.Name:
            return False
        owner = scope.owner_of(expr.value)
        values = owner.assignments.get(expr.value, []) if owner is not None else []
        return len(values) == 1 and values[0] is not None and self._reduced_input(values[0], cast(Scope, owner), depth + 1)

    def _step_batch(self, name: str, owner: Scope, depth: int = 0) -> bool:
        """The batch a LightningModule's `training_step(self, batch, batch_idx)` is given (the Trainer
        moved its tensors to the module's device), or a coqui Trainer's model's `train_step(self,
        batch, criterion)` and `format_batch_on_device(self, batch)`, also as a method it passes it to
        receives it (`self.shared_step(batch, "train")`)."""
        function = owner.node
        if function is None:
            return False
        params = [p.name.value for p in function.params.params]
        if name not in params[1:]:
            return False
        if function.name.value == "training_step":
            return params.index(name) == 1 and TrainingSteps.of(self.ctx).run_every_step(function)
        cls = self.ctx.class_of.get(id(function))
        if function.name.value in COQUI_STEP_HOOKS and cls is not None and coqui_model(self.ctx, cls):
            return params.index(name) == 1
        index = params.index(name) - 1
        return depth < 2 and any(
            type(call.node.func) is cst.Attribute and dotted(call.node.func.value) == "self" and call.scope.node is not None
            and len(call.node.args) > index and all(a.keyword is None for a in call.node.args[:index + 1])
            and type(passed := call.node.args[index].value) is cst.Name
            and self._step_batch(passed.value, call.scope, depth + 1)
            for call in self.ctx.calls.get(function.name.value, ()))

    @staticmethod
    def _moved_batch(name: cst.Name, scope: Scope) -> bool:
        """`data = data.to(device)`: a batch object moved whole (PyG's `Data`), whose fields
        (`data.train_mask`) are tensors there."""
        owner = scope.owner_of(name.value)
        return owner is not None and any(moves_itself(value, name.value) for value in owner.assignments.get(name.value, ()))

    def _passed_back(self, call: cst.Call, scope: Scope, depth: int) -> bool:
        """A call of a function of the project that gives back the tensor it is passed
        (`utils.reduce_dict(loss_dict)`)."""
        if not maybe_project_call(self.ctx, call.func):
            return False
        found = call_target(self.ctx, call.func, scope)
        param = returned_parameter(found)
        if found is None or param is None:
            return False
        method = found[3] is not None
        return any(name == param and self._tensor(cast(cst.BaseExpression, value), scope, depth + 1)
                   for name, value in bind(call, parameters(found[0]), method))

    def _loss(self, expr: cst.BaseExpression | None, scope: Scope) -> bool:
        """A loss: a name whose `backward()` is called, or a loss function's result."""
        if type(expr) is cst.Name:
            owner = scope.owner_of(expr.value)
            if owner is not None and expr.value in self.backward_of.get(id(owner), ()):
                return True
            found = self.ctx.origin(expr, scope)
            if found is None and owner is not None:  # (bound in each of two training loops: `loss = compute_td_loss(32)`)
                values = owner.assignments.get(expr.value, ())
                return bool(values) and all(type(value) is cst.Call and self._loss_given(value) for value in values)
            expr = found[0] if found is not None else None
        return type(expr) is cst.Call and self._loss_given(expr)

    def _loss_given(self, call: cst.Call) -> bool:
        """A loss function's result, or what a function of the source returns after calling its
        `backward()` (`loss = compute_td_error(batch_size)`, which steps the optimizer)."""
        if _loss_call(call):
            return True
        defined = self.ctx.functions.get(call.func.value, ()) if type(call.func) is cst.Name else ()
        found = False
        for function, _ in defined:
            backward = self.backward_of.get(id(self.ctx.scopes.get(id(function))), set())
            names = [value.value for value in self.ctx.returns.get(id(function), ()) if type(value) is cst.Name and value.value != "None"]
            if not names or any(name not in backward for name in names):
                return False
            found = True
        return found

    def _reaching(self, node: cst.CSTNode, name: str, scope: Scope) -> cst.BaseExpression | None:
        """The value of the `name = value` just above `node` in its block (`num_correct =
        torch.sum(pred == y)` before `num_correct.data[0]`, the name bound to `0.0` elsewhere)."""
        return next((value for root in self.ctx.bodies(scope) if contains(root, node) and (
            value := reaching_assignment(root, node, name)) is not None), None)

    def _reduced(self, expr: cst.BaseExpression | None, scope: Scope) -> bool:
        """`(pred == y).sum()`, `acc.mean()`, `torch.sum(pred == y)` (of the whole tensor: no dimension
        given), directly or through a name: what `.data[0]` reads in a training loop is a tensor's."""
        if type(expr) is cst.Name:
            owner = scope.owner_of(expr.value)
            values = owner.assignments.get(expr.value, ()) if owner is not None else ()
            return bool(values) and all(value is not None and self._reduced(value, scope) for value in values)
        if type(expr) is cst.Call and self.ctx.qualname(expr.func) in ("torch.sum", "torch.mean"):
            return len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star  # `torch.sum(pred == y)`
        return type(expr) is cst.Call and call_name(expr) in ("sum", "mean") and not expr.args and type(expr.func) is cst.Attribute

    def _module_instance(self, name: cst.Name, scope: Scope, depth: int) -> bool:
        """Whether every value of `name` is an instance of a module class of the project
        (`Disc().to(device)`, wrapped as `DistributedDataParallel(mpd, ...)`): its calls make tensors."""
        owner = scope.owner_of(name.value)
        values = owner.assignments.get(name.value, ()) if owner is not None else ()
        if not values or depth > _MAX_DEPTH:
            return False
        for value in values:
            while type(value) is cst.Call and type(value.func) is cst.Attribute and call_name(value) in ("to", "cuda", "train", "eval") \
                    and type(value.func.value) is cst.Call:
                value = value.func.value
            if type(value) is not cst.Call:
                return False
            if call_name(value) in ("DistributedDataParallel", "DataParallel", "compile") and value.args:
                inner = value.args[0].value
                if not (type(inner) is cst.Name and inner.value == name.value or type(inner) is cst.Name and self._module_instance(
                        inner, scope, depth + 1)):
                    return False
                continue
            if not derives_from(self.ctx, dotted(value.func), MODULE_CLASSES):
                return False
        return True

    def _layer(self, func: cst.Attribute) -> bool:
        """`self.fc` where every value given to it is a layer of `torch.nn` (`nn.Linear(...)`):
        calling it makes a tensor."""
        key = dotted(func) or ""
        values = self.ctx.attributes.get(key, []) if key.startswith("self.") else []
        return bool(values) and all(
            type(value) is cst.Call and _LAYER.fullmatch(self.ctx.qualname(value.func) or "") is not None
            for value, _ in values)

    def _fed_to_backward(self, name: str, scope: Scope) -> bool:
        """`scores` in `loss = criterion(scores, targets)` (or `loss += criterion(scores, targets)`)
        then `loss.backward()`: the input and target of the loss function whose value is
        backpropagated are tensors."""
        targets = self.backward_of.get(id(scope), ())
        if not targets:
            return False
        values = [value for target in targets for value in scope.assignments.get(target, ())] + [
            update.value for update in self._loss_updates(scope) if type(update.operator) is cst.AddAssign]
        return any(
            type(value) is cst.Call and _loss_call(value)
            and any(type(arg.value) is cst.Name and arg.value.value == name and arg.keyword is None for arg in value.args[:2])
            for value in values)

    def _loss_updates(self, scope: Scope) -> list[cst.AugAssign]:
        """The `loss += ...` and `loss -= ...` statements of the scope (of every unit, for the module's)
        into the names it backpropagates (a loss summed over a decoder's steps: `loss +=
        criterion(decoder_output, y[:, di])`; BasicSR's `l_total += l_pix`). Found once per scope."""
        key = ("loss updates", id(scope))
        if key not in self.ctx.shared:
            targets = self.backward_of.get(id(scope), ())
            self.ctx.shared[key] = [node for root in self.ctx.bodies(scope) if targets for node in walk(root) if type(
                node) is cst.AugAssign and type(node.operator) in (cst.AddAssign, cst.SubtractAssign) and type(
                node.target) is cst.Name and node.target.value in targets]
        return self.ctx.shared[key]

    def _summed_into_backward(self, name: str, scope: Scope) -> bool:
        """`l_pix` in `l_total += l_pix` (or `loss = l_pix + l_percep`) with `l_total.backward()`:
        a term of the backpropagated loss is a tensor (not a factor: `loss = l * weight`)."""
        key = ("loss terms", id(scope))
        if key not in self.ctx.shared:
            totals = self.backward_of.get(id(scope), ())
            added = [value for total in totals for value in scope.assignments.get(total, ()) if value is not None]
            if scope.node is not None:  # (a function's own statements; the module's only by assignment)
                added += [update.value for update in self._loss_updates(scope)]
            self.ctx.shared[key] = set().union(*map(_terms, added))
        return name in self.ctx.shared[key]

    def _left_on_cpu(self, scope: Scope) -> bool:
        """Whether the class of the method of `scope` is a module the project makes only as names
        nothing moves (`never_moved`: audiolm's `SemanticTransformerTrainer`), whose buffers stay on
        the CPU."""
        cls = self.ctx.class_of.get(id(scope.node)) if scope.node is not None else None
        path = self.ctx.path
        if cls is None or not path or path.startswith("<"):
            return False
        key = ("left on the CPU", id(cls))
        if key not in self.ctx.shared:
            self.ctx.shared[key] = never_moved(os.path.abspath(path), cls.name.value)
        return self.ctx.shared[key]

    def _buffers(self) -> set[str]:
        """The names of the buffers modules register (`self.register_buffer("ptr", ...)`):
        tensors on the module's device."""
        if self.buffers is None:
            names = (literal(first.value) for site in self.ctx.calls.get("register_buffer", ())
                     for first in [positional(site.node, 0)] if first is not None)
            self.buffers = {name for name in names if type(name) is str}
        return self.buffers


def _version_branches(ctx, scope: Scope) -> set[int]:
    """Ids of the nodes, in the function of `scope` (or the module), of the branch for PyTorch
    0.3 of an `if` that tests torch's version (`torch.__version__`, or a name assigned it): the
    branch that reads `x.data[0]`, which no current PyTorch runs."""
    owner = scope.node
    memo = ctx.shared.setdefault(_version_branches, {})
    found = memo.get(id(owner))
    if found is None and not any("__version__" in unit.text for unit in ctx.units):
        found = memo[id(owner)] = set()  # (the cheap test first: most sources never read torch's version)
    if found is None:
        def versioned(test: cst.BaseExpression) -> bool:
            return any(type(n) is cst.Attribute and n.attr.value == "__version__" or type(n) is cst.Name and (
                origin := ctx.origin(n, scope)) is not None and "__version__" in code(origin[0]) for n in walk(test))
        roots = [owner] if owner is not None else ctx.modules
        found = memo[id(owner)] = {id(n) for root in roots for branch in walk(root) if type(branch) is cst.If and versioned(branch.test)
                                   for part in (branch.body, branch.orelse) if part is not None and any(
                                       type(r) is cst.Subscript and legacy_read(r) is not None for r in walk(part))
                                   for n in walk(part)}
    return found


def _first_runs(owner: cst.CSTNode | None) -> set[int]:
    """Ids of the nodes of `owner` (a function) in the `else` of `if name:` that assigns `name`:
    what starts a running value on the first step (`if loss_ema: ... else: loss_ema = loss.item()`)."""
    if owner is None:
        return set()
    return remembered(_first_runs, owner, lambda: {
        id(n) for branch in walk(owner) if type(branch) is cst.If and type(branch.test) is cst.Name
        and type(branch.orelse) is cst.Else and assigned_in(branch.orelse, branch.test.value) for n in walk(branch.orelse)})


def _sets_its_state(branch: cst.If, scope: Scope) -> bool:
    """Whether the branch assigns the state of the object its test reads (`self.params[2]`,
    directly or through a local name assigned from it): a value set on the first run, and
    read as set afterwards (CMC's normalisation constant)."""
    tested = [n for n in walk(branch.test) if type(n) is cst.Name]
    read = [value for name in tested for value in scope.assignments.get(name.value, ()) if value is not None] + [branch.test]
    state = {code(n) for value in read for n in walk(value) if isinstance(n, (cst.Attribute, cst.Subscript)) and root_name(n) == "self"}
    return bool(state) and any(type(n) is cst.AssignTarget and code(n.target) in state for n in walk(branch.body))


def _loss_call(call: cst.Call) -> bool:
    """`criterion(out, y)`, `F.mse_loss(out, y)`, `self.loss_fn(out, y)`."""
    callee = (dotted(call.func) or "").rsplit(".", 1)[-1].lower()
    return "loss" in callee or "criterion" in callee


def _model_call(callee: str) -> bool:
    """`model(x)`, `self.net(x)`, `ddp_model(x)`, `model_2(x)`: a module's forward returns tensors."""
    callee = callee.rstrip("0123456789").removesuffix("_")
    return callee in MODEL_NAMES or (callee.endswith("_model") and not callee.startswith(_MAKERS))


_MAKERS = ("build", "create", "get", "load", "make", "init", "setup", "prepare", "wrap")


def _host_copy(call: cst.Call) -> bool:
    """`x.item()`, `x.cpu()`, `x.numpy()`, `x.tolist()`, `x.to("cpu")`."""
    if type(call.func) is not cst.Attribute:
        return False
    name = call.func.attr.value
    if name in HOST_COPY_METHODS:
        return not call.args
    return name == "to" and literal(argument(call, 0, "device") or cst.Name("None")) == "cpu"


def _host_copy_below(expr: cst.BaseExpression) -> bool:
    """Whether a receiver chain (`x.cpu().numpy()` below `.numpy()`) already copies to the host."""
    while True:
        if type(expr) is cst.Call:
            if _host_copy(expr):
                return True
            expr = expr.func
        elif type(expr) is cst.Attribute or type(expr) is cst.Subscript:
            expr = expr.value
        else:
            return False


def _comprehended_values(for_in: cst.CompFor) -> tuple[str, cst.BaseExpression] | None:
    """(name, dict) for a comprehension over a dict's values: `v` and `d` of
    `for k, v in d.items()` and of `for v in d.values()`."""
    it, target = for_in.iter, for_in.target
    if type(it) is not cst.Call or type(it.func) is not cst.Attribute or it.args:
        return None
    if it.func.attr.value == "values" and type(target) is cst.Name:
        return target.value, it.func.value
    if it.func.attr.value == "items" and type(target) is cst.Tuple and len(target.elements) == 2:
        value = target.elements[1].value
        return (value.value, it.func.value) if type(value) is cst.Name else None
    return None


def _nonnegative_test(test: cst.BaseExpression) -> bool:
    """`n > 0`, `n >= 0`, `n != 0`: a test that a count or a counter is there (LitEma's `if
    self.num_updates >= 0:`), true on most steps."""
    return type(test) is cst.Comparison and len(test.comparisons) == 1 and literal(test.comparisons[0].comparator) == 0 \
        and type(test.comparisons[0].operator) in (cst.GreaterThan, cst.GreaterThanEqual, cst.NotEqual)


def _selects_with_tested(branch: cst.If, scope: Scope) -> bool:
    """Whether an `if`'s body indexes with a name its test reads (`if known.any(): t = target[known]`,
    `if positive.sum() > 0: ... x[positive, :]`), or one a name it reads is computed from once in
    `scope` (`nM = mask.sum().float()`, then `if nM > 0: p_box[mask]`): the test asks whether the
    mask selects anything."""
    tested = names_in(branch.test)
    for name in list(tested):
        values = scope.assignments.get(name, [])
        if len(values) == 1 and values[0] is not None:
            tested |= names_in(values[0], attributes=False)
    return any(type(node) is cst.Subscript and type(index := _mask_index(node)) is cst.Name and index.value in tested
               for node in walk(branch.body))


# methods giving back a boolean tensor as such: moved, or reshaped (not a cast to a number type)
_MASK_KEEPING = {"to", "cuda", "unsqueeze", "squeeze", "view", "reshape", "expand", "expand_as", "repeat", "flatten",
                 "contiguous", "transpose", "permute", "view_as", "reshape_as", "clone", "detach"}


def _mask_index(node: cst.Subscript) -> cst.BaseExpression | None:
    """The first index of `x[i, ...]` when it may be a boolean mask: a comparison (`flat ==
    token`), `~m`, `m.bool()`, a name or a call of a function by name; None for a number, a
    slice, anything else."""
    index = node.slice[0].slice if node.slice else None
    if type(index) is not cst.Index:
        return None
    value = index.value
    if type(value) is cst.Call and type(value.func) is cst.Name:
        return value  # (a function of the project may give back a mask: `logits[is_unknown(y)]`)
    return value if type(value) is cst.Name and value.value not in ("None", "Ellipsis") or _mask_form(value) else None


def _mask_form(value: cst.BaseExpression, itself: str = "") -> bool:
    """A boolean tensor's form: a comparison, `~m`, `m.bool()` (`m.byte()`, older PyTorch's mask), `torch.ge(a, b)` / `a.ge(b)` (and
    the other comparisons), `torch.isnan(x)`, and `&`, `|` or `*` of two of those (or of one
    and the mask `itself` being rebound: `obj_mask & ~nan`)."""
    if type(value) is cst.Name:
        return bool(itself) and value.value == itself
    if type(value) is cst.Comparison:
        return not any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in value.comparisons)
    if type(value) is cst.UnaryOperation:
        return type(value.operator) is cst.BitInvert
    if type(value) is cst.BinaryOperation:  # `(u > 0) * (l == u)`, `a & ~b`: of two masks
        return type(value.operator) in (cst.BitAnd, cst.BitOr, cst.Multiply) and _mask_form(value.left, itself) and _mask_form(
            value.right, itself)
    if type(value) is not cst.Call:
        return False
    name = call_name(value)
    if type(value.func) is cst.Attribute and dotted(value.func.value) == "torch":
        return name in MASK_MAKERS and len(value.args) >= (1 if name in ONE_TENSOR_TESTS else 2)
    return type(value.func) is cst.Attribute and (name in ("bool", "byte") and not value.args or name in MASK_MAKERS - ONE_TENSOR_TESTS
                                                  and len(value.args) == 1)



def _text(expr: cst.BaseExpression) -> bool:
    """A string, or one built of strings (`"%11s" * 2 + "%11.4g" * 5`): the left of a `%` that formats."""
    if type(expr) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
        return True
    return type(expr) is cst.BinaryOperation and (_text(expr.left) or _text(expr.right))
