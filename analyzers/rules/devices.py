"""TPL501: tensors created on the CPU and copied to the GPU on every iteration."""

from __future__ import annotations

import os
from typing import cast

import libcst as cst

from ..context import IF, MODULE_CHAIN, CallSite, Scope, Site
from ..nodes import (UNKNOWN, argument, assigned_in, call_name, children, code, contains, dotted, keyword, lazy_init, literal, moves_itself,
                     none_test, option_test, reaching_assignment, remembered, short_code, star_kwargs, walk)
from ..findings import Related
from ..importers import built_once, forward_caller, importing, step_caller, unused_function
from ..project import (SourceNamespace, call_target, derives_from, device_moves, maybe_project_call, returns_cpu_factory,
                       used_arguments)
from .base import CallNames, Example, FixPlan, Here, Replace
from .edits import with_keywords
from .tracking import Nesting, TrainingSteps, calls_under_ifs, few_iterations, interval_test, never_taken
from ..vocabulary import (CAST_METHODS, CONSTANT_FACTORIES, DETERMINISTIC_FACTORIES, DEVICE_LIKE, DTYPE_LIKE, ELEMENTWISE_METHODS, HOST_COPY_METHODS,
                          LEGACY_TENSOR_TYPES, LIGHTNING_MODULES, MODULE_CLASSES, PER_CALL_METHODS, RANDOM_FACTORIES, SAME_DEVICE_FUNCTIONS, SAME_DEVICE_METHODS)

_RANDOM = RANDOM_FACTORIES | {"randperm", "normal", "bernoulli"}
_FACTORIES = DETERMINISTIC_FACTORIES | _RANDOM | LEGACY_TENSOR_TYPES | {"range"}
_MOVES = {"cuda", "to", "type_as", "type"}
_TENSOR_FACTS = {"shape", "size", "dtype", "ndim", "dim"}  # what only a tensor has, of the names `.to(x)` is given
_ONE_DIMENSIONAL = {"randperm", "arange", "linspace", "range"}  # factories of a vector: an element is a number
# what to make on the device instead, where it is not the same factory with `device=`
_ON_DEVICE = {"range": "torch.arange(..., device=...)", "from_numpy": "torch.tensor(..., device=...), or a buffer made once", **{
    name: "torch.tensor/zeros/arange(..., dtype=..., device=...) (a typed constructor cannot make it there)"
    for name in LEGACY_TENSOR_TYPES | {"Tensor"}}}
_CALL_DEPTH = 3  # calls between a forward and the function that runs in it
_LOSS_METHODS = frozenset({"loss", "compute_loss", "get_loss"})  # a module's loss, computed at each step by its callers
_CONTAINER_METHODS = frozenset(name for kind in (dict, list, set, str, bytes) for name in dir(kind))  # `d.update(...)`: not a method of the source
_RANDOM_FILLS = frozenset({"random_", "normal_", "uniform_"})  # in-place draws: another generator on the GPU
_NUMPY_FILLS = frozenset({"numpy.zeros", "numpy.ones", "numpy.full", "numpy.empty"})
_NUMPY_IDENTITY = frozenset({"numpy.eye", "numpy.identity"})
_ARRAY_SHAPING = frozenset({"astype", "flatten", "reshape", "ravel"})
_NUMPY_INDICES = frozenset({"numpy.arange", "numpy.random.permutation", "numpy.random.choice", "numpy.random.randint",
                            "numpy.zeros", "numpy.ones"})  # (an array of zeros or ones as an index: a mask filled in place)

_TABLE_INDEXERS = frozenset({"iloc", "loc", "iat", "at"})  # pandas' indexers: a table's rows, never a tensor's



def _optional_branches(function: cst.FunctionDef) -> set[int]:
    """Ids of the nodes under `if option:` in `function`, `option` a parameter defaulting to
    False or None (wsolevaluation's `forward(self, x, labels=None, return_cam=False)`: the CAM
    branch, which the evaluation asks for, not the training step), or under `if x is None: x =
    ...`, `x` a parameter without a default (a stand-in for an input the caller may not have:
    PyG's `if x is None: x = torch.ones(...)` for point clouds without features)."""
    params = function.params
    off = {p.name.value for p in (*params.params, *params.kwonly_params) if p.default is not None and type(p.default) is cst.Name
           and p.default.value in ("False", "None")}
    given = {p.name.value for p in params.params if p.default is None}
    return remembered(_optional_branches, function, lambda: {
        id(n) for branch in walk(function.body) if type(branch) is cst.If and (
            type(branch.test) is cst.Name and branch.test.value in off or _stands_in(branch, given)) for n in walk(branch.body)})


def _stands_in(branch: cst.If, params: set[str]) -> bool:
    """`if x is None: x = ...` for one of `params`."""
    tested = none_test(branch.test)
    return tested is not None and tested[1] and type(tested[0]) is cst.Name and tested[0].value in params and bool(
        assigned_in(branch.body, tested[0].value))


# methods of a tensor or a NumPy array giving back the same data, reshaped or cast
_ARRAY_KEEPING = SAME_DEVICE_METHODS | {"astype"}

# functions writing a file per call
_FILE_WRITERS = frozenset({"torchvision.utils.save_image", "cv2.imwrite", "matplotlib.pyplot.savefig", "imageio.imwrite",
                           "imageio.imsave", "torch.save", "numpy.save"})

class CpuTensorMovedEachStep(Nesting):
    """
    ## What it does
    Finds a tensor created by a torch factory (`torch.zeros`, `torch.ones`, `torch.arange`,
    `torch.tensor`, `torch.randn`, ...) and moved with `.cuda()` or `.to(device)` (right
    away or after reshapes, casts, indexing and elementwise math with numbers:
    `torch.arange(n).unsqueeze(0).to(device)`, `torch.exp(-c * torch.arange(half) / half).to(t.device)`,
    `torch.eye(d)[None, :, :].cuda()`, and `torch.from_numpy` of a NumPy constant,
    `np.array([1, 0, 0, 1])` or `np.eye(k)`; or in a later statement of the same function, `z = z.type_as(x)`,
    `padding = padding.cuda() if x.is_cuda else padding`, `Variable(noise).cuda()`, a constant of the
    module made a tensor, `torch.LongTensor([[SOS_token]])`; not a tensor
    filled with the program's values before the move, but one filled on the GPU after it), inside a loop, a module's
    `forward` or `training_step` (or an ignite Engine's process function, a training-step
    method other files call, `algorithm.update(minibatches)`), or a function that one of
    those calls (through up to three calls, also as the parameter it is passed to), or the
    function a loop calls as such a parameter (`sample(ddim_step, model)` calling `f(x_t, t)`
    at each sampling step). A device variable counts in code
    that uses CUDA, and so does a tensor the function reads the shape, size or dtype of
    (`torch.randn(x_t.shape).to(x_t)`); `.to(x.device)` (another tensor's device, also
    `.to(x.get_device())`) always does, since creating
    the tensor there is never slower (but for an `x` the function made on the CPU itself:
    stochastic depth's `var = torch.bernoulli(torch.tensor(p))`). Likewise a factory tensor without `device=` that indexes
    another tensor (`x[torch.arange(n), ids]`, directly or through arithmetic and names) there,
    in a loop only in code that uses CUDA: indexing a GPU tensor copies the index over (not a
    tensor made on the CPU and kept there, a sampler's `indices[torch.randperm(n, generator=g)]`; not a
    name another branch makes on the device, `if use_cuda: index = ....cuda() else: index =
    torch.randperm(n)`: the CPU one indexes CPU data). And
    `torch.tensor(items)` of a list of elements of a GPU tensor, then moved there: a
    device-to-host copy per element (`torch.stack(items)` stays on the GPU). And
    `torch.tensor([t] * n, device=...)` (or `.to(device)` after it; `torch.tensor([i / n_T])`,
    `torch.tensor(i / n_T)` likewise, also given `device=`: `torch.tensor(unet_number - 1, device=d)`;
    `torch.Tensor([len(y)]).long().to(device)` too, cast first,
    with no fix: the dtype is the user's choice), one number made a tensor on the host and copied
    (`torch.full((n,), t, device=...)` fills it on the device). And, in a loop, the
    move of what a function of the source called with constants only returns when that is a CPU
    tensor (`tokenize([""]).to(device)`): the same tensor built and copied at every step. And
    a Python `range(n)` indexing a tensor the function made with torch (`t[range(n), cls] = 1`,
    a CPU index tensor copied over) in a forward, a loss's `__call__` or a step function. And
    the move of what a function of the source returns when each of its returns is a torch
    factory's tensor made on the CPU (`create_noise(b, z).to(device)`, returning
    `torch.rand(b, z) * 2 - 1`), or a function or method of another module of the project
    (`causal_mask(n).to(device)` with dataset.py's `return torch.triu(torch.ones(1, n, n)) == 0`;
    `hidden = decoder.init_hidden(b)`, then `hidden = hidden.cuda()`), named as a related
    location (not one that fills the tensor with the program's data: CLIP's `tokenize`). And, in a loop that trains, the move of a tensor a factory
    made once before the loop (`x = init.uniform(torch.Tensor(n, 1), -15, 15)`, then
    `model(x.cuda())` at each full-batch step): the same copy every step.
    A function the training loop calls on every step counts as the loop (`real_loss(out)`
    making `torch.ones(n).cuda()`), not under an interval guard (`if step % 200 == 0:`), and so
    does a class's constructor where the class is made (`TriangularCausalMask(B, L, device=...)`
    in a forward); so
    does a function that only other modules call, when one calls it in a module's `forward`
    (the diffusion codebases' `timestep_embedding` in util.py, called by the UNet's forward)
    or in a training loop, not under an interval test (pycls' `net.mixup(inputs, labels)` in
    trainer.py), a method of a helper object that a training loop of another module calls, or
    that such a method calls (SiT's `transport.training_losses(...)` calling `self.sample(x1)`,
    the object made there by a function of the project, `transport = create_transport()`), a
    training-step method a loop calls (SAC's `agent.update()`, also inside its
    loop of `gradient_steps`, 1 by default), a helper called in each iteration of a loop in code
    that uses CUDA when neither it nor the functions between have a loop of their own (MAR's
    `mask_by_order(...)` in each of `sample_tokens`' iterations),
    and a module's `loss` method (`compute_loss`, `get_loss`) that the source never calls: the
    training loops of other modules call `model.loss(scores, labels)` at each step.
    Data NumPy draws or fills in the loop (`torch.from_numpy(np.random.uniform(...)).cuda()`, also cast first:
    `vec = np.random.randn(1, 512).astype("float32")`)
    is copied the same way. Older scripts' idiom counts too: `Tensor(np.random.normal(...))` or
    `torch.randn(...).type(Tensor)` where `Tensor` is a CUDA tensor type
    (`torch.cuda.FloatTensor if cuda else torch.FloatTensor`). So is a factory tensor given (or
    a name assigned only it, then given) to a function of the project that moves what it is
    passed (`create_variable(torch.zeros(n))` with `return Variable(tensor.cuda())`). And, in a
    loop of code that uses CUDA (or a function that runs as often), a NumPy index array
    (`np.arange`, `np.random.permutation`, sliced or reshaped: PPO's `mb_inds =
    b_inds[start:end]`; a mask filled in place and wrapped, `torch.from_numpy(~mask)` of
    `np.zeros(n, dtype=bool)`) indexing a tensor moved to or made on the device (`b_obs[mb_inds]`),
    reported once per index, at its first indexing. And the move in a module's `forward` (or what
    runs as often) of a tensor it holds as a plain attribute (`self.pos_embedding.to(device)`) that
    its `__init__` made on the CPU, by a torch factory or a function of the project returning one
    (SimpleViT's `posemb_sincos_2d(...)`; one converting the list it is given, BasicSR's
    `make_resample_kernel(k)`), also through names `__init__` assigns and math on them (`kernel =
    kernel / kernel.sum()`, `self.kernel = kernel.repeat(c, 1, 1, 1)`, scaled again there), and that
    nothing registers as a buffer or assigns outside `__init__`:
    `model.to(device)` moves parameters and buffers, not attributes, so it is copied on every call
    (likewise in a class deriving from nothing, whose tensors nothing moves: DPM-Solver's
    `NoiseScheduleVP.t_array`, copied by each `marginal_log_mean_coeff` of a sampling step);
    likewise such an attribute indexing a GPU tensor there (NT-Xent's `sim[self.mask]`, the mask
    made in `__init__`), in a project that uses CUDA. And a CPU factory's tensor copied into
    a tensor on the device (a name moved there, or a buffer the module registers) with `copy_`
    where it runs as often: NoisyNet's `self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))`
    of `torch.randn(size)` noise, a GAN's `noises.data.copy_(torch.randn(b, nz, 1, 1))`, or
    assigned into a part of it (YOLO's `gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]`, the
    sizes of a layer's output, in its loss). And `torch.tensor([[0, 0], [1, 0], [0, 1]],
    device=...)`, a table written out as a Python list, built and copied again where it runs
    as often (YOLO's offsets in `build_targets`), instead of once. And
    `torch.from_numpy(arr).to(device)` of a parameter its callers pass constant NumPy arrays
    of their object (made in `__init__` only), in a function that runs as often or that a loop
    of the source runs through a few calls: the diffusion codebases' `_extract_into_tensor`,
    copying a noise schedule at every training and sampling step. And `torch.tensor(self.name,
    device=...)` of what the object sets once in `__init__`, where it runs as often (the
    respacing wrapper's `th.tensor(self.timestep_map, device=ts.device)` at every model call).

    Silent for an index of a tensor the function fills a CPU tensor through, which puts it on the
    CPU too (MLM's `mask_tokens`: `probability_matrix = torch.full(labels.shape, p)`, then
    `probability_matrix.masked_fill_(labels.eq(pad), 0.0)`, masking the batch before the step
    moves it), for a tensor made under `if buffer is None:` (not `if hidden is None:` testing a parameter
    each call may leave out: DRNN's `init_hidden`; but in a forward, `if x is None: x = ...` for an
    input without a default stands in for one the caller may not have, PyG's point clouds
    without features), `if not len(self.q):`, `if key not in
    cache:` filling `cache[key]` (once per key: vits' window per dtype and device), in a branch for a
    batch with nothing to compute that returns at once (`if positive_num == 0: return
    torch.tensor(0.).to(device)`: rare) or a test of a flag
    the branch sets (`if self.data_initialized.item() == 0: ... self.data_initialized.fill_(1)`) (made once, on the first
    iteration; not when what is tested is a parameter, `mask=None`, left out of each call) or under an interval guard in the loop (`if i % 500 == 0:`), in an epoch
    loop around the loop that trains (once per epoch), in a loop over a dict's entries
    outside a loop or forward (`for k, v in data.items():`: a few keys), in a loop over settings
    that does not train and repeats an inner loop after making it (a speed test's input, made
    once per batch size of `for bs in [4, 8, 16]:` and timed over ten forwards), in a helper
    called in a few iterations (`for k in (10, 20, 100):`) or that loops itself (the accumulators
    a `validate()` makes before its batch loop, once per call), in a function nothing in the
    project runs (a sampler's DDIM loop that only an uncalled `ddim_sample_loop` uses); and for an element of a vector (`ind = perm[i]`:
    PyTorch reads a 0-dimensional index as a number, nothing is copied), under a test of a flag the
    source only ever sets to a false constant (`self.stratified = False`), or in the `else` of one
    it only sets to a true constant (also through a parameter of `__init__` that every construction
    of the class in the file leaves at its default or passes so: minRF's `RF(model)` with
    `ln=True`); and for torch's factories
    in a source that makes the GPU the default device (`torch.set_default_device("cuda")`,
    NeRF's `torch.set_default_tensor_type('torch.cuda.FloatTensor')`), or whose importers do
    (yolact's train.py, for its losses): they make CUDA tensors (not the CPU tensor types:
    `torch.LongTensor(n)` is still made on the CPU).
    Of two branches on an optional parameter that both make the tensor (`if batch_size is None:
    h0 = torch.zeros(1, self.batch_size, n).cuda() else: h0 = torch.zeros(1, batch_size, n).cuda()`),
    only the branch that calls leaving the option out take is reported: one thing to fix.

    ## Why is this bad?
    The tensor is allocated and filled on the CPU, then copied from pageable memory to the
    GPU: a synchronous host-to-device copy that blocks the CPU, on every iteration or
    forward call. Created with `device=`, it is allocated (and filled by a kernel)
    directly on the GPU, asynchronously.

    ## Example
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], 1).to(x.device)
    ```

    ## Fix
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], 1, device=x.device)
    ```
    No automatic fix for random factories (`randn`, `rand`, ...): on the GPU they draw
    from the CUDA generator, so the values change for a given seed.
    """

    code = "TPL501"
    name = "cpu-tensor-moved-each-step"
    summary = "torch.zeros(...).cuda() / .to(device) in a loop or forward: create it with device="
    triggers = (".cuda(", ".to(", ".type_as(", "arange(", "ones(", "zeros(", "randperm(", "randint(", "Tensor(", ".type(",
                "tensor(", "[range(")
    calls = CallNames(frozenset(_MOVES | {"tensor", "copy_"}), suffix="Tensor")
    probe = "syncs"
    VALID = (
        # a sampler shuffling indices it made on the CPU itself (detectron2's samplers)
        Example(
            """
            import torch
            model = Net().cuda()
            class Sampler:
                def __init__(self, size):
                    self._indexes = torch.randperm(size)[: size // 2]
                def _epoch_indices(self, g):
                    return torch.tensor(self._counts, dtype=torch.int64)
                def __iter__(self):
                    g = torch.Generator()
                    while True:
                        yield from self._indexes[torch.randperm(len(self._indexes), generator=g)].tolist()
                        indices = self._epoch_indices(g)
                        yield from indices[torch.randperm(len(indices), generator=g)].tolist()
            """
        ),
        # a sampler shuffling a NumPy array of dataset indices with a CPU randperm (VISSL's balanced
        # sampler): host data indexed on the host, once per epoch, in code that uses CUDA elsewhere
        Example(
            """
            import numpy as np
            import torch
            class BalancedSampler:
                def __iter__(self):
                    g = torch.Generator()
                    g.manual_seed(self.epoch)
                    for t in range(self.num_classes):
                        indices = np.array(self.class_index[t])
                        indices = indices[torch.randperm(len(indices), generator=g)]
                        yield from indices
            model = Net().cuda()
            """,
        ),
        # MLM masking of the batch on the CPU, before the training step moves it: a CPU tensor is
        # filled through a mask of `labels`, so `labels` (and the `inputs` it copies) is on the CPU
        Example(
            """
            import torch
            def mask_tokens(inputs, tokenizer, p):
                labels = inputs.clone()
                probability_matrix = torch.full(labels.shape, p)
                probability_matrix.masked_fill_(labels.eq(tokenizer.pad_token_id), value=0.0)
                masked_indices = torch.bernoulli(probability_matrix).bool()
                labels[~masked_indices] = -100
                inputs[torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices] = tokenizer.mask_token_id
                return inputs, labels
            for batch in loader:
                inputs, labels = mask_tokens(batch, tokenizer, 0.15)
                model(inputs.cuda(), labels=labels.cuda()).loss.backward()
                optimizer.step()
            """,
        ),
        # the offsets table built once, in `__init__`; the layer's sizes copied into a CPU tensor
        Example(
            """
            import torch
            class ComputeLoss:
                def __init__(self, model):
                    self.device = next(model.parameters()).device
                    self.off = torch.tensor([[0, 0], [1, 0], [0, 1]], device=self.device) * 0.5
                def __call__(self, p, targets):
                    gain = torch.ones(7)
                    for i in range(len(p)):
                        gain[2:6] = torch.tensor(p[i].shape)[[3, 2, 3, 2]]
                    return (targets * gain.to(self.device) + self.off.sum()).sum()
            compute_loss = ComputeLoss(model.cuda())
            for images, targets in loader:
                compute_loss(model(images.cuda()), targets.cuda()).backward()
                optimizer.step()
            """,
        ),
        # noise drawn in place on the device, a CPU staging tensor filled on the host, and a pinned
        # buffer made once that carries each batch to the GPU (nanochat's loader)
        Example(
            """
            import torch
            noises = torch.randn(64, 100, 1, 1).to("cuda")
            staging = torch.empty(64, 100)
            cpu_buffer = torch.empty(64, 100, pin_memory=True)
            gpu_buffer = torch.empty(64, 100).to("cuda")
            for img, _ in loader:
                noises.data.normal_()
                staging.copy_(torch.randn(64, 100))
                cpu_buffer.copy_(img)
                gpu_buffer.copy_(cpu_buffer, non_blocking=True)
                netd(netg(noises), gpu_buffer).mean().backward()
                optimizer.step()
            """,
        ),
        # a DQN's replay batch: host data (arrays of a NumPy buffer, reshaped) copied as it must be
        Example(
            """
            import torch
            device = torch.device("cuda")
            for step in range(100000):
                samples = memory.sample_batch()
                action = torch.LongTensor(samples["acts"].reshape(-1, 1)).to(device)
                reward = torch.FloatTensor(samples["rews"].reshape(-1, 1)).to(device)
                loss = model(action, reward)
                loss.backward()
                optimizer.step()
            """,
        ),
        # a notebook that never uses a GPU: `type_as` of a CPU batch only casts
        Example(
            """
            import torch
            for k in range(20000):
                x0 = sample_gaussians(256)
                t = torch.rand(x0.shape[0]).type_as(x0)
                loss = model(x0, t).mean()
                loss.backward()
                optimizer.step()
            """,
        ),
        # a speed test's input, made once per batch size of the sweep and timed over ten forwards
        Example(
            """
            import time
            import torch
            model = torchvision.models.resnet50().cuda().eval()
            for bs in [4, 8, 16, 32]:
                batch = torch.randn(bs, 3, 224, 224).to("cuda")
                with torch.no_grad():
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                    for _ in range(10):
                        model(batch)
                    torch.cuda.synchronize()
                print(bs, (time.perf_counter() - start) / 10)
            """,
        ),
        # a stand-in for an input the caller may not have (PyG's point clouds without features)
        Example(
            """
            import torch
            class PointTransformer(torch.nn.Module):
                def forward(self, x, pos, batch=None):
                    if x is None:
                        x = torch.ones((pos.shape[0], 1)).to(pos.device)
                    return self.mlp(torch.cat([x, pos], dim=1))
            """
        ),
        # a batch with nothing to compute returns a zero loss at once (SimpleAICV's losses): rare
        Example(
            """
            import torch

            class RetinaLoss(torch.nn.Module):
                def forward(self, preds, annotations):
                    positive = (annotations[:, 4] > 0).sum()
                    if positive == 0:
                        return torch.tensor(0.).to(preds.device)
                    return preds.sum() / positive

            criterion = RetinaLoss()
            for images, annotations in loader:
                loss = criterion(model(images.cuda()), annotations.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        # a notebook redefines a helper for its collate_fn: the training loop's cells ran the first
        Example(
            (
                "%matplotlib inline\nimport torch\nmodel = UNet().cuda()\n"
                "def noisify(x0):\n    device = x0.device\n    t = torch.randint(0, 1000, (len(x0),), device=device)\n    return x0, t",
                "for x0 in loader:\n    xt, t = noisify(x0.cuda())\n    model(xt, t).mean().backward()\n    optimizer.step()",
                "def noisify(x0):\n    device = x0.device\n    t = torch.randint(0, 1000, (len(x0),))\n    return x0, t.to(device)\n"
                "def collate_ddpm(b):\n    return noisify(default_collate(b))",
            )
        ),
        # sampling loops of a few steps in a notebook: `n_steps` is 5, then 10; four noise levels
        Example(
            (
                "%matplotlib inline\nimport torch\nmodel = Net().cuda()\nn_steps = 5",
                "n_steps = 10\nxb = torch.rand(80, 1, 28, 28).cuda()",
                "for i in range(n_steps):\n"
                "    noise = torch.ones((xb.shape[0],)).to('cuda') * (1 - i / n_steps)\n"
                "    xb = model(xb, noise)",
                "for sig in reversed([5.0, 10.0, 20.0, 40.0]):\n"
                "    xb = model(xb + sig * torch.randn(xb.shape).cuda())",
            )
        ),
        # vits' mel_spectrogram_torch: the window is made once per dtype and device, kept in a cache
        Example(
            """
            import torch
            hann_window = {}
            def mel_spectrogram(y, win_size):
                key = str(win_size) + "_" + str(y.dtype) + "_" + str(y.device)
                if key not in hann_window:
                    hann_window[key] = torch.hann_window(win_size).to(dtype=y.dtype, device=y.device)
                return torch.stft(y, win_size, window=hann_window[key], return_complex=True).abs()
            for x, y in loader:
                loss = (mel_spectrogram(model(x.cuda()), 1024) - mel_spectrogram(y.cuda(), 1024)).abs().mean()
                loss.backward()
                optimizer.step()
            """
        ),
        # a branch of forward for an option off by default, which the evaluation asks for (wsolevaluation's CAMs)
        Example(
            """
            import torch
            class ResNetCam(torch.nn.Module):
                def forward(self, x, labels=None, return_cam=False):
                    feature = self.features(x)
                    if return_cam:
                        return feature[range(x.shape[0]), labels]
                    return self.fc(feature.mean((2, 3)))
            model = ResNetCam().cuda()
            """,
        ),
        # each iteration writes an image file: the copy of a latent is small next to it (lightweight-gan's generate)
        Example(
            """
            import torch
            import torchvision
            G = Generator().cuda()
            for i in range(num_images):
                latents = torch.randn((1, 256)).cuda()
                torchvision.utils.save_image(G(latents)[0], f"generated-{i}.png")
            """,
        ),
        # the `else` of a flag every construction of the class leaves at its default, True
        Example(
            """
            import torch
            class RF:
                def __init__(self, model, ln=True):
                    self.model = model
                    self.ln = ln
                def forward(self, x, cond):
                    if self.ln:
                        t = torch.sigmoid(torch.randn((x.size(0),), device=x.device))
                    else:
                        t = torch.rand((x.size(0),)).to(x.device)
                    return self.model(x, t, cond)
            rf = RF(model.cuda())
            for x, c in loader:
                loss = rf.forward(x.cuda(), c.cuda())
                loss.backward()
                optimizer.step()
            """,
        ),
        # a branch on a flag the source only ever sets to False: it never runs
        Example(
            """
            import torch
            class RF(torch.nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.model = model
                    self.stratified = False
                def forward(self, x, cond):
                    b = x.size(0)
                    if self.stratified:
                        quantiles = torch.linspace(0, 1, b + 1).to(x.device)
                        t = quantiles[:-1] + torch.rand((b,)).to(x.device) / b
                    else:
                        t = torch.sigmoid(torch.randn((b,), device=x.device))
                    return self.model(x, t, cond)
            """,
        ),
        # a random row of a pandas table: `.iloc` indexes no tensor
        Example(
            """
            import torch
            for fname in files:
                annotations_df = annotations[annotations.file == fname]
                rows = annotations_df.iloc[torch.randint(len(annotations_df) - 1, (1,))]
                samples.append((fname, rows))
            model = Net().cuda()
            """,
        ),
        # CutMix in a DataLoader's collate_fn: it shuffles CPU batches, in the workers
        Example(
            """
            import torch
            from torch.utils.data.dataloader import default_collate
            def cutmix(batch, alpha):
                data, targets = batch
                indices = torch.randperm(data.size(0))
                return data[indices], targets[indices]
            class CutMixCollator:
                def __call__(self, batch):
                    return cutmix(default_collate(batch), self.alpha)
            loader = torch.utils.data.DataLoader(dataset, collate_fn=CutMixCollator())
            for x, y in loader:
                loss = model(x.cuda(), y.cuda())
            """,
        ),
        # context dropout drawn from a tensor on the batch's device: `torch.bernoulli` draws there
        Example(
            """
            import torch
            class DDPM(torch.nn.Module):
                def forward(self, x, c):
                    context_mask = torch.bernoulli(torch.zeros_like(c) + self.drop_prob).to(self.device)
                    return self.nn_model(x, c, context_mask)
            ddpm = DDPM().to("cuda")
            """,
        ),
        # made once before the loop of a method `train`: `self.D.train()` in the loop is no call of it
        Example(
            """
            import torch
            def tensor2var(x):
                return x.cuda()
            class Trainer:
                def train(self):
                    fixed_z = tensor2var(torch.randn(self.batch_size, self.z_dim))
                    for step in range(self.total_step):
                        self.D.train()
                        self.G.train()
                        d_loss = self.D(self.G(fixed_z)).mean()
                        d_loss.backward()
                        self.d_optimizer.step()
                    return fixed_z
            """,
        ),
        # a one-time initialization: the branch sets the flag it tests
        Example(
            """
            import torch
            class VQVAEQuantize(torch.nn.Module):
                def forward(self, z):
                    flatten = z.reshape(-1, self.dim)
                    if self.training and self.data_initialized.item() == 0:
                        rp = torch.randperm(flatten.size(0))
                        self.embed.weight.data.copy_(flatten[rp[:self.n_embed]])
                        self.data_initialized.fill_(1)
                    return self.embed(flatten)
            model = VQVAEQuantize().cuda()
            """,
        ),
        # the GPU made torch's default device: factories given no device make CUDA tensors
        Example(
            """
            import torch
            def train():
                for i in range(200000):
                    rand_idx = torch.randperm(rays_rgb.shape[0])
                    rays_rgb = rays_rgb[rand_idx]
                    noise = torch.randn(rays_rgb.shape[0], 3).cuda()
            if __name__ == "__main__":
                torch.set_default_tensor_type("torch.cuda.FloatTensor")
                train()
            """,
        ),
        # stochastic depth's survival draw: a tensor made on the CPU moved to another CPU tensor's device
        Example(
            """
            import torch
            class Block(torch.nn.Module):
                def survival(self):
                    var = torch.bernoulli(torch.tensor(self.p).float())
                    return torch.equal(var, torch.tensor(1).float().to(var.device))
                def forward(self, x):
                    return self.residual(x) + x if self.survival() else x
            """,
        ),
        # a replay buffer held in NumPy, indexed with NumPy indices: nothing is copied to the device
        Example(
            """
            import numpy as np
            import torch
            device = torch.device("cuda")
            buffer = np.zeros((100000, 4), dtype=np.float32)
            for step in range(total_steps):
                idxs = np.random.randint(0, size, size=batch_size)
                batch = torch.as_tensor(buffer[idxs], device=device)
                loss = agent.loss(batch)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
        ),
        # a range indexing a NumPy array: nothing goes to the device
        Example(
            """
            import numpy as np
            import torch
            class Metric:
                def __call__(self, probs, labels):
                    p = np.asarray(probs)
                    return p[range(len(labels)), labels].mean()
            model = model.cuda()
            """
        ),
        # the helper makes the noise on the device it is given
        Example(
            """
            import torch
            def create_noise(batch_size, z_size, device):
                return torch.rand(batch_size, z_size, device=device) * 2 - 1
            for x, _ in loader:
                input_z = create_noise(x.size(0), 100, "cuda").to("cuda")
                gen(input_z).mean().backward()
            """
        ),
        # a sample's first token, made every 500 steps
        Example(
            """
            import torch
            for i in range(100000):
                loss = model(next(train_loader).cuda())
                loss.backward()
                optim.step()
                if i != 0 and i % 500 == 0:
                    start_tokens = (torch.ones((1, 1)) * 1).long().to("cuda")
                    sample = model.generate(start_tokens, 256)
            """
        ),
        # an element of a permutation (a number to PyTorch), and a dataset's few entries subsampled once
        Example(
            """
            import torch
            def recurrent_generator(self, num_processes, per_batch):
                perm = torch.randperm(num_processes)
                for start in range(0, num_processes, per_batch):
                    for offset in range(per_batch):
                        ind = perm[start + offset]
                        yield self.obs[:-1, ind].cuda()

            class ExpertDataset(torch.utils.data.Dataset):
                def __init__(self, file_name):
                    trajectories = torch.load(file_name, map_location="cuda")
                    idx = torch.randperm(trajectories["states"].size(0))[:4]
                    self.trajectories = {k: v[idx] for k, v in trajectories.items()}
                    for k, v in trajectories.items():
                        self.trajectories[k] = v[idx]
            """
        ),
        # a batch filled with the program's data on the CPU, then given to a function that moves it
        Example(
            """
            import torch
            def create_variable(tensor):
                return tensor.cuda() if torch.cuda.is_available() else tensor
            for names in loader:
                seqs = torch.zeros(len(names), 20).long()
                for i, name in enumerate(names):
                    seqs[i, :len(name)] = torch.LongTensor([ord(c) for c in name])
                seqs = seqs[order(names)]
                model(create_variable(seqs)).sum().backward()
            """
        ),
        # a CPU batch indexed before it is moved (stargan: shuffled target labels)
        Example(
            """
            import torch
            device = torch.device("cuda")
            def train(data_iter, num_iters):
                for i in range(num_iters):
                    x_real, label_org = next(data_iter)
                    rand_idx = torch.randperm(label_org.size(0))
                    label_trg = label_org[rand_idx]
                    label_org = label_org.to(device)
                    label_trg = label_trg.to(device)
                    loss = D(x_real.to(device), label_org, label_trg).mean()
                    loss.backward()
                    optimizer.step()
            """,
        ),
        # a loop of a few iterations (ten plots)
        Example(
            """
            import torch
            device = torch.device("cuda")
            for i in range(10):
                W = torch.randn(2, 2).to(device)
                show_scatterplot(X @ W.t())
            """
        ),
        # a CUDA tensor type given sizes allocates on the GPU; a CPU tensor type copies nothing
        Example(
            """
            import numpy as np
            import torch
            Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
            for imgs, _ in loader:
                valid = Tensor(imgs.size(0), 1).fill_(1.0)
                noise = torch.FloatTensor(np.random.normal(0, 1, (imgs.shape[0], 100)))
            """
        ),
        # made once: a buffer filled on the first iteration; state reset once per epoch
        Example(
            """
            import torch
            features = None
            for epoch in range(100):
                hidden = torch.zeros(2, 64, 256).cuda()
                for x, y in loader:
                    if rank == 0 and features is None:
                        features = torch.zeros(len(loader.dataset), 128).cuda()
                    loss = model(x.cuda(), hidden).sum()
                    loss.backward()
                    optimizer.step()
            """
        ),
        # a helper called in a loop that does not train (a few k of a kNN evaluation), or every
        # 200 steps
        Example(
            """
            import torch
            def knn(features, k):
                votes = torch.zeros(k, 1000).to(features.device)
                return votes
            for k in (10, 20, 100):
                print(knn(features, k))
            def sample():
                return torch.zeros(10, 1).to("cuda")
            for step, (x, y) in enumerate(loader):
                model(x.cuda()).sum().backward()
                optimizer.step()
                if step % 200 == 0:
                    sample()
            """
        ),
        # once per epoch: the loop calls a function that loops over the training steps itself
        Example(
            """
            import torch
            def train(epoch):
                for x, y in loader:
                    loss = model(x.cuda()).sum()
                    loss.backward()
                    optimizer.step()
            for epoch in range(10):
                train(epoch)
                sample = torch.randn(64, 20).cuda()
                save(model.decode(sample), epoch)
            """,
        ),
        # a CPU index into a CPU tensor of the program's values: nothing is copied
        Example(
            """
            import torch
            def negatives(y):
                for i, label in enumerate(y):
                    allowed = [k for k in range(10) if k != label]
                    y[i] = torch.tensor(allowed)[torch.randint(len(allowed), size=(1,))]
                return y.cuda()
            """,
        ),
        Example(
            """
            import torch
            for x in loader:
                mask = torch.ones(8, 8, device='cuda')
            """,
        ),
        Example(
            """
            import torch
            mask = torch.ones(8, 8).cuda()
            for x in loader:
                y = x * mask
            """,
        ),
        Example(
            """
            import torch
            for x in loader:
                mask = torch.ones(8, 8).to(torch.float16)
            """,
        ),
        Example(
            """
            import torch
            for x in loader:
                mask = torch.ones(8, 8).to(device)
            """,
        ),
        # a cache filled on the first forward and when the size changes
        Example(
            """
            import torch
            from torch import nn
            class Attention(nn.Module):
                def rel_indices(self, n):
                    return torch.zeros(1, n, n, 3).to(self.qk.weight.device)
                def forward(self, x):
                    if self.cache is None or self.cache.shape[1] != x.shape[1]:
                        self.cache = self.rel_indices(x.shape[1])
                    return x + self.cache
            """,
        ),
        # a sample on the first step only (`epoch == 1`), then at an interval
        Example(
            """
            import torch
            def sample():
                return torch.zeros(1, 64).cuda()
            while epoch < n_epochs:
                epoch += 1
                loss = model(next_batch()).sum()
                loss.backward()
                optimizer.step()
                if epoch == 1:
                    sample()
                    continue
                if epoch % 100 == 0:
                    sample()
            """,
        ),
        # an ONNX export wrapper: its forward is traced once
        Example(
            """
            import torch
            from torch import nn
            class SamOnnxModel(nn.Module):
                def forward(self, x):
                    return x * torch.tensor([1.0]).to(x.device)
            """,
        ),
        # a CPU tensor made once, moved in a loop that does not train: where to keep it is the user's
        # choice (GPU memory)
        Example(
            """
            import torch
            x = torch.randn(8)
            for step in range(10):
                y = x.cuda() * 2
            """,
        ),
        Example(
            """
            import torch
            def sample(steps):
                x = torch.randn(8)
                for step in range(steps):
                    y = x.cuda() * 2
            """,
        ),
        # a list of host numbers: copied however the tensor is made
        Example(
            """
            import torch
            from ignite.engine import Engine
            device = torch.device('cuda')
            def test_step(engine, batch):
                x, labels = batch
                picked = []
                for i in range(len(labels)):
                    picked.append(int(labels[i]))
                picked = torch.tensor(picked).to(device)
            evaluator = Engine(test_step)
            """,
        ),
        # the batch's own captions: data, copied however it is made
        Example(
            """
            import torch
            def main(tokenizer, text_encoder, loader, accelerator):
                def tokenize(captions):
                    inputs = tokenizer(captions, padding='max_length', return_tensors='pt')
                    return inputs.input_ids
                for batch in loader:
                    states = text_encoder(tokenize(batch['text']).to(accelerator.device))[0]
            """,
        ),
        # both on the CPU: no copy
        Example(
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    table = torch.zeros(10)
                    return x + table[torch.arange(3)].sum().item()
            """,
        ),
        # a loop in code that never uses a GPU
        Example(
            """
            import torch
            for x in loader:
                y = x[torch.arange(x.shape[0]), 0]
            """,
        ),
        Example(
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    return x[torch.arange(x.shape[0], device=x.device), 0]
            """,
        ),
        # host data (an environment's observation) reaches the GPU by a copy however it is made
        Example(
            """
            import torch
            import lightning as L
            class Agent:
                def act(self, net):
                    state = torch.tensor([self.state])
                    return net(state.cuda())
            class DQN(L.LightningModule):
                def training_step(self, batch):
                    self.agent.act(self.net)
            """,
        ),
        # the CPU index of the branch that keeps the batch on the CPU (`use_cuda` False)
        Example(
            """
            import numpy as np
            import torch
            def mixup_data(x, y, alpha=1.0, use_cuda=True):
                lam = np.random.beta(alpha, alpha)
                if use_cuda:
                    index = torch.randperm(x.size(0), device=x.device)
                else:
                    index = torch.randperm(x.size(0))
                return lam * x + (1 - lam) * x[index, :], y, y[index], lam
            use_cuda = torch.cuda.is_available()
            for x, y in loader:
                if use_cuda:
                    x, y = x.cuda(), y.cuda()
                x, y_a, y_b, lam = mixup_data(x, y, use_cuda=use_cuda)
                model(x).sum().backward()
                optimizer.step()
            """,
        ),
        # filled on the first step only (`if not len(self.q)`)
        Example(
            """
            import torch
            class GroupDRO(torch.nn.Module):
                def update(self, minibatches):
                    if not len(self.q):
                        self.q = torch.ones(len(minibatches)).cuda()
                    loss = (self.q * self.losses(minibatches)).sum()
                    loss.backward()
                    self.optimizer.step()
            """,
        ),
        # a buffer filled with the batch's own values: host data, copied however it is made
        Example(
            """
            import torch
            def batches(loader, max_docs):
                for tokens, starts in loader:
                    lengths = torch.full((max_docs,), len(tokens))
                    lengths[:len(starts)] = starts
                    yield tokens.cuda(), lengths.cuda()
            """,
        ),
        # a module's table registered as a buffer, or moved in forward and kept there: moved once
        Example(
            """
            import torch
            from torch import nn
            class ViT(nn.Module):
                def __init__(self, n, dim):
                    super().__init__()
                    self.register_buffer("pos_embedding", torch.randn(n, dim), persistent=False)
                    self.mask = torch.ones(n, n).tril()
                def forward(self, x):
                    self.mask = self.mask.to(x.device)
                    return (x + self.pos_embedding.to(x.device)) @ self.mask
            """,
        ),
        # a mask registered as a buffer of a loss module moved to the GPU indexes on the device
        Example(
            """
            import torch
            from torch import nn
            class NTXent(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.register_buffer("mask", ~torch.eye(n, dtype=torch.bool), persistent=False)
                    self.table = torch.arange(n)
                def forward(self, z):
                    sim = z @ z.T
                    return sim[self.mask].sum() + self.table[self.table].sum()
            criterion = NTXent(256).cuda()
            for x in loader:
                criterion(model(x.cuda())).backward()
            """,
        ),
    )
    INVALID = (
        # noise drawn on the CPU and wrapped before the move (a GAN notebook of PyTorch 0.3); a
        # buffer moved, then filled on the GPU with the encoder's outputs, and the start token, a
        # constant of the module (seq2seq)
        Example(
            """
            import torch
            from torch.autograd import Variable
            SOS_token = 0
            for x, _ in loader:
                decoder_input = Variable(torch.LongTensor([[SOS_token]]))
                decoder_input = decoder_input.cuda()
                noise = (torch.rand(x.shape[0], 96) - 0.5) / 0.5
                fake = G(Variable(noise).cuda())
                outputs = Variable(torch.zeros(10, 256))
                outputs = outputs.cuda()
                for i in range(10):
                    outputs[i] = encoder(x.cuda())[i]
                loss = D(fake).mean() + outputs.sum() + decoder(decoder_input).sum()
                loss.backward()
                optimizer.step()
            """,
            count=3,
        ),
        # in-batch labels listed from a range the line above, made a tensor and copied every step
        # (simpletransformers' retrieval `_get_inputs_dict`): torch.arange(n, device=device)
        Example(
            """
            import torch
            def get_inputs(batch, device):
                labels = [i for i in range(len(batch["ids"]))]
                labels = torch.tensor(labels, dtype=torch.long).to(device)
                return batch["ids"].to(device), labels
            device = torch.device("cuda")
            for batch in loader:
                loss = model(*get_inputs(batch, device))
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            def get_inputs(batch, device):
                labels = [i for i in range(len(batch["ids"]))]
                labels = torch.tensor(labels, dtype=torch.long, device=device)
                return batch["ids"].to(device), labels
            device = torch.device("cuda")
            for batch in loader:
                loss = model(*get_inputs(batch, device))
                loss.backward()
                optimizer.step()
            """,
        ),
        # a plain object's schedule made on the CPU in `__init__` and copied at every sampling step
        Example(
            """
            import torch
            class NoiseScheduleVP:
                def __init__(self, betas):
                    self.t_array = torch.linspace(0.0, 1.0, len(betas) + 1)[1:].reshape((1, -1))
                def marginal_log_mean_coeff(self, t):
                    return (t.reshape((-1, 1)) * self.t_array.to(t.device)).sum(1)
            ns = NoiseScheduleVP(betas)
            x = torch.randn(4, 3, 64, 64, device="cuda")
            for t in torch.linspace(1.0, 0.0, 20, device="cuda"):
                x = model(x, ns.marginal_log_mean_coeff(t))
            """,
        ),
        # YOLO's loss building its targets every step: a constant offsets table written out with
        # device=, and a CPU tensor of the layer's sizes copied into a slice of a CUDA tensor
        Example(
            """
            import torch
            class ComputeLoss:
                def __init__(self, model):
                    self.device = next(model.parameters()).device
                def __call__(self, p, targets):
                    gain = torch.ones(7, device=self.device)
                    off = torch.tensor([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]], device=self.device).float() * 0.5
                    for i in range(len(p)):
                        gain[2:6] = torch.tensor(p[i].shape)[[3, 2, 3, 2]]
                        targets = targets * gain + off.sum()
                    return targets.sum()
            compute_loss = ComputeLoss(model.cuda())
            for images, targets in loader:
                compute_loss(model(images.cuda()), targets.cuda()).backward()
                optimizer.step()
            """,
            count=2,
        ),
        # a NumPy draw cast, then wrapped and moved for each image (pixel2style2pixel's style injection)
        Example(
            """
            import numpy as np
            import torch
            net = Net().cuda()
            for image in images:
                vec = np.random.randn(1, 512).astype("float32")
                out = net(torch.from_numpy(vec).to("cuda"), image.cuda())
            """,
        ),
        # kernels a module keeps as plain attributes, made in `__init__` through names, math and
        # a function converting the list it is given (BasicSR's StyleGAN2 and DFDNet blurs)
        Example(
            """
            import torch
            from torch import nn
            def make_kernel(k):
                k = torch.tensor(k, dtype=torch.float32)
                k = k[None, :] * k[:, None]
                k /= k.sum()
                return k
            class Blur(nn.Module):
                def __init__(self, channels, factor=2):
                    super().__init__()
                    kernel = torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=torch.float32)
                    kernel = kernel / kernel.sum()
                    self.kernel = kernel.repeat(channels, 1, 1, 1)
                    self.resample = make_kernel([1, 3, 3, 1]) * (factor**2)
                def forward(self, x):
                    x = conv(x, self.kernel.type_as(x))
                    return conv(x, self.resample.type_as(x))
            """,
            count=2,
        ),
        # guided-diffusion's respacing wrapper: a list the object keeps, made a tensor at every model call
        Example(
            """
            import torch as th
            class _WrappedModel:
                def __init__(self, model, timestep_map):
                    self.model = model
                    self.timestep_map = timestep_map
                def __call__(self, x, ts, **kwargs):
                    map_tensor = th.tensor(self.timestep_map, device=ts.device, dtype=ts.dtype)
                    return self.model(x, map_tensor[ts], **kwargs)
            model = _WrappedModel(unet.cuda(), list(range(0, 1000, 10)))
            """,
        ),
        # guided-diffusion's `_extract_into_tensor`: a constant NumPy schedule copied at every sampling step
        Example(
            """
            import numpy as np
            import torch as th
            class GaussianDiffusion:
                def __init__(self, betas):
                    self.betas = np.array(betas, dtype=np.float64)
                    self.sqrt_betas = np.sqrt(self.betas)
                def q_sample(self, x_start, t):
                    return _extract_into_tensor(self.sqrt_betas, t, x_start.shape) * x_start
                def p_sample_loop(self, model, shape):
                    img = th.randn(*shape, device="cuda")
                    for i in range(1000):
                        img = self.q_sample(model(img), i)
                    return img
            def _extract_into_tensor(arr, timesteps, broadcast_shape):
                res = th.from_numpy(arr).to(device=timesteps.device)[timesteps].float()
                return res.expand(broadcast_shape)
            """,
        ),
        # NoisyNet's layer: noise drawn on the CPU and copied into its CUDA buffer after every update
        Example(
            """
            import torch
            from torch import nn
            class NoisyLinear(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.register_buffer("weight_epsilon", torch.Tensor(n, n))
                def reset_noise(self):
                    eps = self.scale_noise(self.weight_epsilon.size(0))
                    self.weight_epsilon.copy_(eps.ger(eps))
                def forward(self, x):
                    return x @ self.weight_epsilon
                @staticmethod
                def scale_noise(size):
                    x = torch.randn(size)
                    return x.sign().mul(x.abs().sqrt())
            net = NoisyLinear(8).cuda()
            for batch in loader:
                net(batch.cuda()).sum().backward()
                optimizer.step()
                net.reset_noise()
            """,
        ),
        # a GAN's noise buffer refilled from a CPU draw at every step (pytorch-book's chapter 10)
        Example(
            """
            import torch
            noises = torch.randn(64, 100, 1, 1).to("cuda")
            for img, _ in loader:
                noises.data.copy_(torch.randn(64, 100, 1, 1))
                netd(netg(noises)).mean().backward()
                optimizer.step()
            """,
        ),
        # ResNeSt's mixup loader: a generator's helper draws the permutation on the CPU for every batch
        Example(
            """
            import numpy as np
            import torch
            def mixup_loader(loader, alpha):
                def mixup(data, target):
                    c = np.random.beta(alpha, alpha)
                    perm = torch.randperm(data.size(0)).cuda()
                    return c * data + (1 - c) * data[perm], target
                for input, target in loader:
                    yield mixup(input.cuda(), target.cuda())
            """,
        ),
        # SimCLR's LARS: a custom optimizer's step makes a constant on the host for every parameter
        Example(
            """
            import torch
            from torch.optim.optimizer import Optimizer
            class LARS(Optimizer):
                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:
                            g_norm = torch.norm(p.grad)
                            device = g_norm.get_device()
                            ratio = torch.where(g_norm.ge(0), torch.norm(p) / g_norm, torch.Tensor([1.0]).to(device))
                            p.data.add_(p.grad, alpha=-ratio)
            optimizer = LARS(model.parameters(), {})
            """,
        ),
        # SimCLR's NT-Xent loss: a mask made once on the CPU indexes the similarity matrix at every step
        Example(
            """
            import torch
            from torch import nn
            class NTXent(nn.Module):
                def __init__(self, batch_size):
                    super().__init__()
                    self.mask = self.correlated_mask(batch_size)
                def correlated_mask(self, batch_size):
                    mask = torch.ones((2 * batch_size, 2 * batch_size), dtype=bool)
                    mask = mask.fill_diagonal_(0)
                    for i in range(batch_size):
                        mask[i, batch_size + i] = 0
                    return mask
                def forward(self, z):
                    sim = z @ z.T
                    return sim[self.mask].sum()
            criterion = NTXent(256)
            for x in loader:
                criterion(model(x.cuda())).backward()
            """,
        ),
        # face.evoLVe's ArcFace head: a one-hot made on the CPU, then moved to a GPU given by its index
        Example(
            """
            import torch
            from torch import nn
            class ArcFace(nn.Module):
                def __init__(self, device_id=None):
                    super().__init__()
                    self.device_id = device_id
                def forward(self, cosine, label):
                    one_hot = torch.zeros(cosine.size())
                    if self.device_id != None:
                        one_hot = one_hot.cuda(self.device_id[0])
                    one_hot.scatter_(1, label.view(-1, 1).long(), 1)
                    return one_hot * cosine
            """,
        ),
        # moved to where a layer's output is (`.to(x)`: its device and dtype)
        Example(
            """
            import torch
            from torch import nn
            class Encoder(nn.Module):
                def __init__(self, n, dim):
                    super().__init__()
                    self.embed = nn.Linear(dim, dim)
                    self.pos_embedding = torch.randn(n, dim) * 0.02
                def forward(self, tokens):
                    x = self.embed(tokens)
                    x += self.pos_embedding.to(x)
                    return x
            """,
        ),
        # SimpleViT's positional table: a plain CPU attribute that `model.to(device)` leaves behind
        Example(
            """
            import torch
            from torch import nn
            def posemb_sincos_1d(n, dim, temperature: int = 10000):
                position = torch.arange(n)[:, None]
                omega = 1.0 / (temperature ** (torch.arange(dim // 2) / (dim // 2 - 1)))
                angles = position * omega[None, :]
                return torch.cat((angles.sin(), angles.cos()), dim=1)
            class SimpleViT(nn.Module):
                def __init__(self, n, dim):
                    super().__init__()
                    self.pos_embedding = posemb_sincos_1d(n, dim)
                def forward(self, x):
                    device = x.device
                    return x + self.pos_embedding.to(device, dtype=x.dtype)
            """,
        ),
        # DALLE2's decoder trainer: a step counter's index made from a Python number on the host
        Example(
            """
            import torch
            class DecoderTrainer(torch.nn.Module):
                def update(self, unet_number=None):
                    self.optimizer.step()
                    self.steps += torch.nn.functional.one_hot(
                        torch.tensor(unet_number - 1, device=self.steps.device), num_classes=len(self.steps))
            trainer = DecoderTrainer().cuda()
            for images in loader:
                trainer(images.cuda()).backward()
                trainer.update(1)
            """,
            fixed="""
            import torch
            class DecoderTrainer(torch.nn.Module):
                def update(self, unet_number=None):
                    self.optimizer.step()
                    self.steps += torch.nn.functional.one_hot(
                        torch.full((), unet_number - 1, device=self.steps.device), num_classes=len(self.steps))
            trainer = DecoderTrainer().cuda()
            for images in loader:
                trainer(images.cuda()).backward()
                trainer.update(1)
            """,
        ),
        # a script's training loop: the targets made, then wrapped and moved together with the batch
        # (znxlwm's DCGAN, PyTorch 0.3)
        Example(
            """
            import torch
            from torch.autograd import Variable
            for epoch in range(20):
                for x_, _ in train_loader:
                    y_real_ = torch.ones(x_.size()[0])
                    y_fake_ = torch.zeros(x_.size()[0])
                    x_, y_real_, y_fake_ = Variable(x_.cuda()), Variable(y_real_.cuda()), Variable(y_fake_.cuda())
                    loss = BCE_loss(D(x_), y_real_) + BCE_loss(D(G(x_)), y_fake_)
                    loss.backward()
                    D_optimizer.step()
            """,
            count=2,
        ),
        # a decoding `while` loop that holds an inner loop of its own (sgrvinod's beam search)
        Example(
            """
            import torch
            model = Transformer().cuda().eval()
            step = 1
            while True:
                scores = torch.zeros(1).to("cuda")
                for k in range(4):
                    scores = scores + model(scores)
                step += 1
                if step > 100:
                    break
            """,
            """
            import torch
            model = Transformer().cuda().eval()
            step = 1
            while True:
                scores = torch.zeros(1, device="cuda")
                for k in range(4):
                    scores = scores + model(scores)
                step += 1
                if step > 100:
                    break
            """,
        ),
        # the device of a tensor by its index (a VAE's reparameterization, every forward)
        Example(
            """
            import torch
            class VAE(torch.nn.Module):
                def reparameterize(self, z_mu, z_log_var):
                    eps = torch.randn(z_mu.size(0), z_mu.size(1)).to(z_mu.get_device())
                    return z_mu + eps * torch.exp(z_log_var / 2.0)
                def forward(self, x):
                    return self.reparameterize(self.z_mean(x), self.z_log_var(x))
            """,
        ),
        # one number in a legacy constructor, cast and moved (a CTC loss's lengths): no fix, the dtype to choose
        Example(
            """
            import torch
            device = torch.device("cuda")
            for img, label in dataset:
                output = model(img.to(device)).log_softmax(2)
                pred_len = torch.Tensor([len(output)]).long().to(device)
                loss = criterion(output, label, pred_len)
                loss.backward()
                optimizer.step()
            """,
        ),
        # the step function a sampler is given, called at each of its steps (fastai's DDIM notebooks):
        # its noise is made on the CPU and moved to the device of the image (`.to(x_t)`)
        Example(
            """
            import torch
            def ddim_step(x_t, t, noise, eta):
                x_t = x_t - noise * eta
                if t > 0:
                    x_t += eta * torch.randn(x_t.shape).to(x_t)
                return x_t
            @torch.no_grad()
            def sample(f, model, sz, n_steps):
                x_t = torch.randn(sz).cuda()
                for t in reversed(range(n_steps)):
                    x_t = f(x_t, t, model(x_t, t), 1.0)
                return x_t
            samples = sample(ddim_step, model, (16, 1, 32, 32), 100)
            """,
        ),
        Example(
            """
            import torch
            @torch.no_grad()
            def sample(model, sz, n_steps=1000):
                device = next(model.parameters()).device
                x_t = torch.randn(sz, device=device)
                for t in reversed(range(n_steps)):
                    z = (torch.randn(x_t.shape) if t > 0 else torch.zeros(x_t.shape)).to(device)
                    x_t = step(x_t, model(x_t, t), t) + z
                return x_t
            samples = sample(UNet().cuda(), (16, 1, 32, 32))
            """,
        ),
        # a constant NumPy array made into a tensor in every forward (pointnet's STN3d), and a
        # part of a factory's tensor (`torch.eye(d)[None, :, :]`)
        Example(
            """
            import numpy as np
            import torch
            class STN3d(torch.nn.Module):
                def forward(self, x):
                    iden = torch.from_numpy(np.array([1, 0, 0, 0, 1, 0, 0, 0, 1]).astype(np.float32)).view(1, 9)
                    if x.is_cuda:
                        iden = iden.cuda()
                    return self.fc(x) + iden
            class Regularized(torch.nn.Module):
                def forward(self, trans):
                    eye = torch.eye(trans.size(1))[None, :, :]
                    return (trans - eye.cuda()).norm()
            """,
            count=2,
        ),
        # a loop over two datasets inside a long training loop runs on every iteration (StarGAN's train_multi)
        Example(
            """
            import torch
            device = torch.device("cuda")
            for i in range(200000):
                for dataset in ["CelebA", "RaFD"]:
                    x = next(loaders[dataset]).to(device)
                    alpha = torch.rand(x.size(0), 1, 1, 1).to(device)
                    D(alpha * x).mean().backward()
            """,
        ),
        # a class whose constructor makes the tensor, made in a module's forward
        Example(
            """
            import torch
            class TriangularCausalMask():
                def __init__(self, B, L, device="cpu"):
                    self.mask = torch.ones([B, 1, L, L], dtype=torch.bool).to(device)
            class Attention(torch.nn.Module):
                def forward(self, q):
                    return q.masked_fill(TriangularCausalMask(1, q.shape[1], device=q.device).mask, 0)
            model = Attention().cuda()
            """,
            """
            import torch
            class TriangularCausalMask():
                def __init__(self, B, L, device="cpu"):
                    self.mask = torch.ones([B, 1, L, L], dtype=torch.bool, device=device)
            class Attention(torch.nn.Module):
                def forward(self, q):
                    return q.masked_fill(TriangularCausalMask(1, q.shape[1], device=q.device).mask, 0)
            model = Attention().cuda()
            """,
        ),
        # an index tuple holding a CPU arange, made in the training loop (SlowFast's mixup labels)
        Example(
            """
            import torch
            def train_epoch(loader, model, optimizer):
                for inputs, labels in loader:
                    preds = model(inputs.cuda())
                    loss = loss_fun(preds, labels.cuda())
                    loss.backward()
                    optimizer.step()
                    _, top = torch.topk(labels.cuda(), 2, dim=1)
                    idx_top1 = torch.arange(labels.shape[0]), top[:, 0]
                    preds = preds.detach()
                    preds[idx_top1] += 1.0
            """,
        ),
        # both branches of an optional parameter's test make the hidden state: one finding, on the
        # branch a call leaving the option out takes (the fix makes both on the device)
        Example(
            """
            import torch
            class Classifier(torch.nn.Module):
                def forward(self, x, batch_size=None):
                    if batch_size is None:
                        h = torch.zeros(1, self.batch_size, 8).cuda()
                    else:
                        h = torch.zeros(1, batch_size, 8).cuda()
                    return self.rnn(x, h)
            """,
            """
            import torch
            class Classifier(torch.nn.Module):
                def forward(self, x, batch_size=None):
                    if batch_size is None:
                        h = torch.zeros(1, self.batch_size, 8, device="cuda")
                    else:
                        h = torch.zeros(1, batch_size, 8, device="cuda")
                    return self.rnn(x, h)
            """,
        ),
        # full-batch training on inputs made once on the CPU: the same copy at every step
        Example(
            """
            import torch
            import torch.nn.init as init
            x = init.uniform(torch.Tensor(1000, 1), -15, 15)
            model = Net().cuda()
            for i in range(5000):
                optimizer.zero_grad()
                loss = loss_func(model(x.cuda()), label)
                loss.backward()
                optimizer.step()
            """
        ),
        # older code's latent drawn by `init.normal` into an uninitialised `torch.Tensor`, each step
        Example(
            """
            import torch
            import torch.nn.init as init
            from torch.autograd import Variable
            for image, label in train_loader:
                z = Variable(init.normal(torch.Tensor(batch_size, 100), mean=0, std=0.1)).cuda()
                loss = generator(z).mean()
                loss.backward()
                optimizer.step()
            """
        ),
        # DiT's label dropout: a mask drawn on the CPU by comparing with a number, moved twice
        Example(
            """
            import torch
            class LabelEmbedder(torch.nn.Module):
                def token_drop(self, labels, force_drop_ids=None):
                    if force_drop_ids is None:
                        drop_ids = torch.rand(labels.shape[0]) < self.dropout_prob
                        drop_ids = drop_ids.cuda()
                        drop_ids = drop_ids.to(labels.device)
                    else:
                        drop_ids = force_drop_ids == 1
                    return torch.where(drop_ids, self.num_classes, labels)
                def forward(self, labels, train):
                    if train and self.dropout_prob > 0:
                        labels = self.token_drop(labels)
                    return self.embedding_table(labels)
            """,
        ),
        # a timestep made into a tensor of one number at each sampling step, then moved
        Example(
            """
            import torch
            def sample(model, z, sample_steps):
                b = z.size(0)
                for i in range(sample_steps, 0, -1):
                    t = i / sample_steps
                    t = torch.tensor([t] * b).to(z.device)
                    t_is = torch.tensor([i / sample_steps]).to(z.device)
                    z = z - model(z, t, t_is) / sample_steps
                return z
            """,
            """
            import torch
            def sample(model, z, sample_steps):
                b = z.size(0)
                for i in range(sample_steps, 0, -1):
                    t = i / sample_steps
                    t = torch.full((b,), t, device=z.device)
                    t_is = torch.full((1,), i / sample_steps, device=z.device)
                    z = z - model(z, t, t_is) / sample_steps
                return z
            """,
            count=2,
        ),
        # an STFT window made in every forward (HiFi-GAN's mel spectrogram, Demucs' spectrogram)
        Example(
            """
            import torch
            class Spec(torch.nn.Module):
                def forward(self, y):
                    window = torch.hann_window(1024).to(y.device)
                    return torch.stft(y, 1024, window=window, return_complex=True)
            """,
            """
            import torch
            class Spec(torch.nn.Module):
                def forward(self, y):
                    window = torch.hann_window(1024, device=y.device)
                    return torch.stft(y, 1024, window=window, return_complex=True)
            """,
        ),
        # OGB's virtual node: a cast to another tensor's dtype, then the move to its device
        Example(
            """
            import torch
            class GNN_node_Virtualnode(torch.nn.Module):
                def forward(self, batched_data):
                    edge_index, batch = batched_data.edge_index, batched_data.batch
                    n = batch[-1] + 1
                    return self.virtualnode_embedding(torch.zeros(n).to(edge_index.dtype).to(edge_index.device))
            """,
            """
            import torch
            class GNN_node_Virtualnode(torch.nn.Module):
                def forward(self, batched_data):
                    edge_index, batch = batched_data.edge_index, batched_data.batch
                    n = batch[-1] + 1
                    return self.virtualnode_embedding(torch.zeros(n, device=edge_index.device).to(edge_index.dtype))
            """,
        ),
        # a module's `loss` method, which the training loop of another module calls at each step
        Example(
            """
            import torch
            import torch.nn as nn
            class GCNNet(nn.Module):
                def __init__(self, net_params):
                    super().__init__()
                    self.n_classes = net_params["n_classes"]
                    self.device = net_params["device"]
                def loss(self, pred, label):
                    cluster_sizes = torch.zeros(self.n_classes).long().to(self.device)
                    cluster_sizes[torch.unique(label)] = torch.bincount(label)
                    weight = 1.0 / cluster_sizes.float().clamp(min=1)
                    return nn.CrossEntropyLoss(weight=weight)(pred, label)
            model = GCNNet({"n_classes": 6, "device": torch.device("cuda")})
            """,
            """
            import torch
            import torch.nn as nn
            class GCNNet(nn.Module):
                def __init__(self, net_params):
                    super().__init__()
                    self.n_classes = net_params["n_classes"]
                    self.device = net_params["device"]
                def loss(self, pred, label):
                    cluster_sizes = torch.zeros(self.n_classes, device=self.device).long()
                    cluster_sizes[torch.unique(label)] = torch.bincount(label)
                    weight = 1.0 / cluster_sizes.float().clamp(min=1)
                    return nn.CrossEntropyLoss(weight=weight)(pred, label)
            model = GCNNet({"n_classes": 6, "device": torch.device("cuda")})
            """,
        ),
        # a training-step method other files call (`algorithm.update(minibatches)` in train.py)
        Example(
            """
            import torch
            class GroupDRO(torch.nn.Module):
                def update(self, minibatches):
                    losses = torch.zeros(len(minibatches)).cuda()
                    for m, (x, y) in enumerate(minibatches):
                        losses[m] = self.network(x).sum()
                    loss = losses.mean()
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
            """,
            """
            import torch
            class GroupDRO(torch.nn.Module):
                def update(self, minibatches):
                    losses = torch.zeros(len(minibatches), device="cuda")
                    for m, (x, y) in enumerate(minibatches):
                        losses[m] = self.network(x).sum()
                    loss = losses.mean()
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
            """,
        ),
        # PPO's minibatches: NumPy indices copied to the GPU at each indexing of the rollout buffers
        Example(
            """
            import numpy as np
            import torch
            device = torch.device("cuda")
            obs = torch.zeros((num_steps, num_envs, 4)).to(device)
            b_inds = np.arange(batch_size)
            for update in range(num_updates):
                b_obs = obs.reshape((-1, 4))
                for epoch in range(update_epochs):
                    np.random.shuffle(b_inds)
                    for start in range(0, batch_size, minibatch_size):
                        mb_inds = b_inds[start:start + minibatch_size]
                        loss = agent.loss(b_obs[mb_inds])
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
            """,
        ),
        # pytorch-dilated-rnn: the hidden state made under `if hidden is None:`, an option each call
        # leaves out (no cache), moved under a flag; and a padding moved by a choice of expressions
        Example(
            """
            import torch
            use_cuda = torch.cuda.is_available()
            class DRNN(torch.nn.Module):
                def forward(self, inputs, hidden=None):
                    if hidden is None:
                        hidden = self.init_hidden(inputs.size(1), 64)
                    padding = torch.zeros(inputs.size(1), 1)
                    padding = padding.cuda() if inputs.is_cuda else padding
                    return self.cell(torch.cat([inputs, padding], -1), hidden)
                def init_hidden(self, batch_size, hidden_dim):
                    hidden = torch.zeros(batch_size, hidden_dim)
                    if use_cuda:
                        hidden = hidden.cuda()
                    return hidden
            """,
            count=2,
        ),
        # learn2learn's task split: a NumPy mask (and its complement) made a CPU tensor, indexing the
        # batch the function moved, in a function the training loop calls for every task
        Example(
            """
            import numpy as np
            import torch
            def fast_adapt(batch, learner, device):
                data, labels = batch
                data, labels = data.to(device), labels.to(device)
                adaptation = np.zeros(data.size(0), dtype=bool)
                adaptation[np.arange(5) * 2] = True
                evaluation = torch.from_numpy(~adaptation)
                adaptation = torch.from_numpy(adaptation)
                learner.adapt(loss(learner(data[adaptation]), labels[adaptation]))
                return loss(learner(data[evaluation]), labels[evaluation])
            device = torch.device("cuda")
            for iteration in range(60000):
                for task in range(32):
                    error = fast_adapt(tasks.sample(), maml.clone(), device)
                    error.backward()
                opt.step()
            """,
            count=2,
        ),
        # SAC's `update()`: a training step the environment loop calls, looping `gradient_steps` times
        # (1 by default): its NumPy minibatch indices are copied at every call
        Example(
            """
            import numpy as np
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            class SAC:
                def update(self):
                    s = torch.tensor(self.states).float().to(device)
                    for _ in range(1):
                        index = np.random.choice(range(10000), 128, replace=False)
                        loss = self.value_net(s[index]).mean()
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()
            agent = SAC()
            for episode in range(1000):
                for t in range(200):
                    agent.store(env.step(agent.act()))
                    agent.update()
            """,
        ),
        # `mask is None` tests an option of the call, not a cache: the eye is made at every call
        Example(
            """
            import torch
            class SupConLoss(torch.nn.Module):
                def forward(self, features, labels=None, mask=None):
                    device = torch.device("cuda") if features.is_cuda else torch.device("cpu")
                    if labels is None and mask is None:
                        mask = torch.eye(features.shape[0]).to(device)
                    return (features @ features.T * mask).sum()
            """,
            """
            import torch
            class SupConLoss(torch.nn.Module):
                def forward(self, features, labels=None, mask=None):
                    device = torch.device("cuda") if features.is_cuda else torch.device("cpu")
                    if labels is None and mask is None:
                        mask = torch.eye(features.shape[0], device=device)
                    return (features @ features.T * mask).sum()
            """,
        ),
        # indices listed from sizes on every forward, indexing a GPU tensor (dlrm's interaction)
        Example(
            """
            import torch
            class DLRM(torch.nn.Module):
                def forward(self, T):
                    Z = torch.bmm(T, torch.transpose(T, 1, 2))
                    _, ni, nj = Z.shape
                    li = torch.tensor([i for i in range(ni) for j in range(i)])
                    lj = torch.tensor([j for i in range(nj) for j in range(i)])
                    return Z[:, li, lj]
            model = DLRM().cuda()
            """,
            count=2,
        ),
        # a Python range indexing a tensor in a loss's __call__: a CPU index copied at each call
        Example(
            """
            import torch
            class ComputeLoss:
                def __call__(self, pcls, tcls):
                    n = pcls.shape[0]
                    t = torch.full_like(pcls, 0.0, device="cuda")
                    t[range(n), tcls] = 1.0
                    return self.bce(pcls, t)
            """
        ),
        # a helper returns noise drawn on the CPU, moved by the step function the loop calls
        Example(
            """
            import torch
            def create_noise(batch_size, z_size):
                input_z = torch.rand(batch_size, z_size) * 2 - 1
                return input_z
            def d_train(x):
                input_z = create_noise(x.size(0), 100).to(device)
                loss = loss_fn(disc(gen(input_z)), x)
                loss.backward()
                d_optimizer.step()
            device = torch.device("cuda")
            for epoch in range(100):
                for x, _ in loader:
                    d_train(x.to(device))
            """
        ),
        # the timestep embedding of diffusion models: frequencies computed on the CPU at each forward
        # (torch imported as `th`, as improved-diffusion does)
        Example(
            """
            import math
            import torch as th
            class TimestepEmbedder(th.nn.Module):
                def forward(self, t, dim=256, max_period=10000):
                    half = dim // 2
                    freqs = th.exp(
                        -math.log(max_period) * th.arange(start=0, end=half, dtype=th.float32) / half
                    ).to(device=t.device)
                    args = t[:, None].float() * freqs[None]
                    return th.cat([th.cos(args), th.sin(args)], dim=-1)
            """,
        ),
        # a sampling loop's timestep batch, a list made on the host at each of its 1,000 steps
        Example(
            """
            import torch as th
            def p_sample_loop(model, shape, device):
                img = th.randn(*shape, device=device)
                for i in reversed(range(1000)):
                    t = th.tensor([i] * shape[0], device=device, dtype=th.long)
                    img = model(img, t)
                return img
            p_sample_loop(model, (4, 3, 64, 64), "cuda")
            """,
            fixed="""
            import torch as th
            def p_sample_loop(model, shape, device):
                img = th.randn(*shape, device=device)
                for i in reversed(range(1000)):
                    t = th.full((shape[0],), i, device=device, dtype=th.long)
                    img = model(img, t)
                return img
            p_sample_loop(model, (4, 3, 64, 64), "cuda")
            """,
        ),
        # a function of the project moves what it is given to the GPU (hunkim's `create_variable`)
        Example(
            """
            import torch
            from torch.autograd import Variable
            def create_variable(tensor):
                if torch.cuda.is_available():
                    return Variable(tensor.cuda())
                return Variable(tensor)
            class RNN(torch.nn.Module):
                def forward(self, x):
                    hidden = torch.zeros(2, x.size(1), 64)
                    return self.gru(x, create_variable(hidden))
            """
        ),
        # in-place fills between the factory and the move (a random fill gets no fix: on the GPU
        # the draw comes from another generator)
        Example(
            """
            import torch
            device = torch.device("cuda")
            for x, y in loader:
                pad = torch.zeros(4, 8).fill_(1).to(device)
            """,
            """
            import torch
            device = torch.device("cuda")
            for x, y in loader:
                pad = torch.zeros(4, 8, device=device).fill_(1)
            """,
        ),
        Example(
            """
            import torch
            for x, y in loader:
                z = torch.empty(64).random_(10).cuda()
            """,
        ),
        # data made on the host and copied by a CUDA tensor type, as older scripts do (no fix:
        # the draw would come from another generator)
        Example(
            """
            import numpy as np
            import torch
            cuda = torch.cuda.is_available()
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            for imgs, _ in loader:
                z = Tensor(np.random.normal(0, 1, (imgs.shape[0], 100)))
                style = torch.randn(imgs.shape[0], 8).type(Tensor)
                loss = G(z, style).mean()
                loss.backward()
            """,
            count=2,
        ),
        # noise drawn by NumPy each step and wrapped (no fix: the draw would come from another generator)
        Example(
            """
            import numpy as np
            import torch
            train_on_gpu = torch.cuda.is_available()
            for images, _ in loader:
                z = np.random.uniform(-1, 1, size=(images.size(0), 100))
                z = torch.from_numpy(z).float()
                if train_on_gpu:
                    z = z.cuda()
                D(G(z)).mean().backward()
            """,
        ),
        # older code: a Variable around the factory, a typed constructor, a range
        Example(
            """
            import torch
            from torch.autograd import Variable
            USE_CUDA = True
            def train(loader, decoder, n_objects):
                for x, y in loader:
                    context = Variable(torch.zeros(1, 64))
                    if USE_CUDA:
                        context = context.cuda()
                    idx = torch.LongTensor(range(n_objects)).cuda()
                    ids = torch.LongTensor(x.tolist()).cuda()  # (the data: copied however it is made)
                    decoder(context, idx, ids).sum().backward()
            """,
            count=2,
        ),
        # a function the training loop calls on every step
        Example(
            """
            import torch
            def real_loss(out):
                labels = torch.ones(out.size(0))
                labels = labels.cuda()
                return criterion(out.squeeze(), labels)
            for images, _ in loader:
                loss = real_loss(D(images.cuda()))
                loss.backward()
                optimizer.step()
            """,
        ),
        Example(
            """
            import torch
            for step in range(1000):
                noise = torch.zeros(64, 128).cuda()
            """,
            """
            import torch
            for step in range(1000):
                noise = torch.zeros(64, 128, device="cuda")
            """,
        ),
        Example(
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1)).to(x.device, non_blocking=True)
                    return x + pos
            """,
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1), device=x.device)
                    return x + pos
            """,
        ),
        Example(
            """
            import torch
            for x in loader:
                eps = torch.randn(x.shape).cuda()
            """,
        ),
        # made on the CPU, then cast to another tensor's type and device (Lightning's idiom)
        Example(
            """
            import torch
            import lightning as L
            class GAN(L.LightningModule):
                def training_step(self, batch):
                    imgs, _ = batch
                    fake = torch.zeros(imgs.size(0), 1).type_as(imgs)
            """,
            """
            import torch
            import lightning as L
            class GAN(L.LightningModule):
                def training_step(self, batch):
                    imgs, _ = batch
                    fake = torch.zeros(imgs.size(0), 1, device=imgs.device).type_as(imgs)
            """,
        ),
        Example(
            """
            import torch
            import lightning as L
            class GAN(L.LightningModule):
                def training_step(self, batch):
                    imgs, _ = batch
                    valid = torch.ones(imgs.size(0), 1)
                    valid = valid.type_as(imgs)
            """,
        ),
        # made again for each use, each time cast to the batch's device
        Example(
            """
            import torch
            import lightning as L
            class GAN(L.LightningModule):
                def training_step(self, batch):
                    imgs, _ = batch
                    valid = torch.ones(imgs.size(0), 1)
                    valid = valid.type_as(imgs)
                    real = self.d(imgs) - valid
                    valid = torch.ones(imgs.size(0), 1)
                    valid = valid.type_as(imgs)
            """,
            count=2,
        ),
        # an ignite Engine's process function runs on every batch
        Example(
            """
            import torch
            from ignite.engine import Engine
            device = torch.device('cuda')
            def test_step(engine, batch):
                x, y = batch
                ones, y = torch.ones(len(y)).to(device), y.to(device)
                return ones
            evaluator = Engine(test_step)
            """,
            """
            import torch
            from ignite.engine import Engine
            device = torch.device('cuda')
            def test_step(engine, batch):
                x, y = batch
                ones, y = torch.ones(len(y), device=device), y.to(device)
                return ones
            evaluator = Engine(test_step)
            """,
        ),
        # to a device read from another tensor, through a name
        Example(
            """
            import torch
            from torch import nn
            class PositionalEncoding(nn.Module):
                def forward(self, shape):
                    device = self.proj.weight.device
                    mask = torch.zeros(shape).to(device=device, dtype=torch.bool)
                    return self.proj(mask.cumsum(1))
            """,
        ),
        # in a helper of a helper of forward
        Example(
            """
            import torch
            from torch import nn
            def radius_graph(pos):
                return torch.ones(pos.size(1)).long().to(pos.device)
            def extend_graph(pos):
                return radius_graph(pos)
            class GNN(nn.Module):
                def _forward(self, pos):
                    return extend_graph(pos)
                def forward(self, pos):
                    return self._forward(pos)
            """,
            """
            import torch
            from torch import nn
            def radius_graph(pos):
                return torch.ones(pos.size(1), device=pos.device).long()
            def extend_graph(pos):
                return radius_graph(pos)
            class GNN(nn.Module):
                def _forward(self, pos):
                    return extend_graph(pos)
                def forward(self, pos):
                    return self._forward(pos)
            """,
        ),
        # a CPU index into a GPU tensor: copied to the device at each forward
        Example(
            """
            import torch
            from torch import nn
            class CLIP(nn.Module):
                def encode_text(self, text):
                    x = self.transformer(self.embed(text))
                    return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.proj
                def forward(self, image, text):
                    return self.encode_text(text)
            """,
        ),
        # through arithmetic, in a helper of a helper of forward: both coordinate tensors
        Example(
            """
            import torch
            from torch import nn
            def get_rel_pos(q_size, k_size, rel_pos):
                q_coords = torch.arange(q_size)[:, None] * max(k_size / q_size, 1.0)
                k_coords = torch.arange(k_size)[None, :] * max(q_size / k_size, 1.0)
                relative = (q_coords - k_coords) + (k_size - 1)
                return rel_pos[relative.long()]
            def add_rel_pos(attn, q, rel_pos):
                return attn + get_rel_pos(q.size(1), q.size(1), rel_pos)
            class Attention(nn.Module):
                def forward(self, x):
                    return add_rel_pos(x, x, self.rel_pos)
            """,
            count=2,
        ),
        # a mask made every step of a CUDA training loop, indexing the embedding matrix
        Example(
            """
            import torch
            def train(model, loader, vocab, new_id):
                model.cuda()
                for batch in loader:
                    keep = torch.ones((vocab,), dtype=torch.bool)
                    keep[new_id] = False
                    with torch.no_grad():
                        model.weight[keep] = model.original[keep]
            """,
        ),
        # a list of elements of a GPU tensor made into a CPU tensor and moved back, every batch
        Example(
            """
            import torch
            from ignite.engine import Engine
            device = torch.device('cuda')
            def test_step(engine, batch):
                x, labels = batch
                labels = labels.to(device)
                picked = []
                for i in range(len(labels)):
                    label = labels[i]
                    picked.append(label)
                picked = torch.tensor(picked)
                x, picked = x.to(device), picked.to(device)
            evaluator = Engine(test_step)
            """,
        ),
        # a constant prompt tokenized and copied every step
        Example(
            """
            import torch
            def main(tokenizer, text_encoder, loader, accelerator):
                def tokenize(captions):
                    inputs = tokenizer(captions, padding='max_length', return_tensors='pt')
                    return inputs.input_ids
                for batch in loader:
                    null = text_encoder(tokenize(['']).to(accelerator.device))[0]
            """,
        ),
        # in a helper that forward calls
        Example(
            """
            import torch
            from torch import nn
            class MoCo(nn.Module):
                def _shuffle(self, x):
                    return x[torch.randperm(x.shape[0]).cuda()]
                def forward(self, x):
                    return self._shuffle(x)
            """,
        ),
    )

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        # (move, factory, device or the tensor of type_as, enclosing function)
        self.moves: list[tuple[CallSite, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        # (subscript, the CPU-made factory calls its index computes with, enclosing function)
        self.indexings: list[tuple[Site, list[cst.Call], cst.FunctionDef | None]] = []
        # (subscript, the `range(...)` index, enclosing function): `res[range(n), range(n)] = 0` on a tensor
        self.ranges: list[tuple[Site, cst.Call, cst.FunctionDef]] = []
        self.constants: list[tuple[CallSite, cst.BaseExpression | None]] = []  # moves of `make_ids([""])`
        self.gathers: list[tuple[CallSite, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        self.guarded: dict[int, set[int]] = {}  # id(loop) -> _intervals(loop)
        self.host_arrays: list[tuple[CallSite, cst.FunctionDef | None]] = []  # `Tensor(np.ones(...))`, a CUDA type
        # (move in a loop, the factory that made the name it moves once before the loop, device, enclosing function)
        self.hoists: list[tuple[CallSite, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        # (move, the NumPy call drawing the data, device, enclosing function): `torch.from_numpy(np.random...)`
        self.numpy_moves: list[tuple[CallSite, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        self.repeated: list[tuple[CallSite, cst.FunctionDef | None]] = []  # `torch.tensor([t] * n, device=device)`
        self.tables: list[tuple[CallSite, cst.FunctionDef | None]] = []  # `torch.tensor([[0, 0], [1, 0]], device=device)`
        # (move, factory, device, function): `torch.tensor([i / n_T]).to(device)`, `torch.tensor([t] * b).to(z.device)`
        self.filled: list[tuple[CallSite, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        # (move, the helper's call, the factory it returns, device, enclosing function): `create_noise(b, z).to(device)`
        self.returned: list[tuple[CallSite, cst.Call, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        # (move, call of a function of another module, device, enclosing function): see _note_helper_move
        self.helper_moves: list[tuple[CallSite, cst.Call, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        # (subscript, the NumPy call making its index, enclosing function): `b_obs[mb_inds]`, mb_inds from np.arange
        self.numpy_indexings: list[tuple[Site, cst.Call, cst.FunctionDef | None]] = []
        self.elsewhere: dict[str, str | None] = {}  # module-level function -> how often other modules run it; `Class.method` -> the training loop calling it
        # (move of `self.name`, name, device or the tensor of type_as, enclosing method): `self.pos_embedding.to(device)`
        self.attributes: list[tuple[CallSite, str, cst.BaseExpression | None, cst.FunctionDef | None]] = []
        self.held_indexings: list[tuple[Site, str, cst.FunctionDef | None]] = []  # (subscript, name, method): `sim[self.mask]`
        # (`torch.tensor(self.name, device=...)`, name, function): guided-diffusion's `_WrappedModel.__call__`
        self.held_conversions: list[tuple[CallSite, str, cst.FunctionDef | None]] = []
        # (move, the parameter `torch.from_numpy` converts, function): guided-diffusion's `_extract_into_tensor`
        self.parameter_copies: list[tuple[CallSite, str, cst.FunctionDef]] = []
        # (site, destination on the device, what is copied into it, enclosing function): `dest.copy_(...)`,
        # NoisyNet's `reset_noise`; `dest[i] = ...`, YOLO's `gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]`
        self.copies: list[tuple[Site, cst.BaseExpression, cst.BaseExpression, cst.FunctionDef | None]] = []

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name == "tensor" and node.args and type(node.args[0].value) is cst.Attribute and dotted(node.args[0].value.value) == "self" \
                and keyword(node, "device") is not None and (self.ctx.qualname(node.func) or "") == "torch.tensor":
            self.held_conversions.append((self.ctx.call_site(node), node.args[0].value.attr.value, self.function()))
            return  # (`th.tensor(self.timestep_map, device=ts.device)`: asked in `finish`)
        if name == "tensor" and _literal_table(node) and keyword(node, "device") is not None and (
                self.ctx.qualname(node.func) or "") == "torch.tensor":
            self.tables.append((self.ctx.call_site(node), self.function()))
            return
        if name == "tensor":
            one = _one_value(node)
            if one is not None and (_repeated(node) is not None or _surely_number(one[0])) and keyword(
                    node, "device") is not None and (self.ctx.qualname(node.func) or "") == "torch.tensor" and not self._empty_case():
                self.repeated.append((self.ctx.call_site(node), self.function()))
            return
        if name is not None and name.endswith("Tensor"):
            if node.args and _host_array(node.args[0].value, self.ctx):
                self.host_arrays.append((self.ctx.call_site(node), self.function()))
            return
        if name == "copy_" and type(node.func) is cst.Attribute and node.args and node.args[0].keyword is None:
            if self._device_destination(node.func.value):  # `self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))`
                self.copies.append((self.ctx.call_site(node), node.func.value, node.args[0].value, self.function()))
            return  # (what it copies: asked in `finish`)
        if name not in _MOVES or type(node.func) is not cst.Attribute:
            return
        if name == "type" and len(node.args) != 1:
            return  # (`.type()`: the type's name; a move is `x.type(torch.cuda.FloatTensor)`)
        if self._empty_case():
            return  # (`if n == 0: return torch.tensor(0.).cuda()`: a rare batch with nothing to compute)
        held = _held_attribute(node.func.value) if name in ("cuda", "to", "type_as") else None
        if held is not None:
            device = argument(node, 0, "other" if name == "type_as" else "device")
            self.attributes.append((self.ctx.call_site(node), held, device, self.function()))
            return
        if self.ctx.loops and self._constant_cpu_call(node.func.value):
            device = argument(node, 0, "device")
            if name == "cuda" or device is not None:
                self.constants.append((self.ctx.call_site(node), device))
            return
        if name in ("cuda", "to"):
            self._note_helper_move(node)
        returned = self._returned_factory(node.func.value) if name in ("cuda", "to") else None
        if returned is not None:
            device = argument(node, 0, "device")
            if name == "cuda" or device is not None:
                self.returned.append((self.ctx.call_site(node), cast(cst.Call, node.func.value), returned, device,
                                      self.function()))
            return
        made = _factory_below(node.func.value, self.ctx)
        base = node.func.value  # (`mask.unsqueeze(-1).cuda()`: the tensor `mask` names, reshaped)
        while type(base) is cst.Call and (type(base.func) is cst.Attribute and call_name(base) in SAME_DEVICE_METHODS or type(
                base.func) is cst.Name and base.func.value == "Variable" and base.args):  # (`Variable(noise).cuda()`)
            base = base.func.value if type(base.func) is cst.Attribute else base.args[0].value
        if made is None and type(base) is cst.Name:
            made = self._created(base.value, node)  # `z = torch.randn(n, d)` ... `z = z.type_as(x)`
            before = self._made_before_loop(base.value) if made is None and name in ("cuda", "to") else None
            if before is not None:
                device = argument(node, 0, "device")
                if name == "cuda" or device is not None:
                    self.hoists.append((self.ctx.call_site(node), before, device, self.function()))
                return
        parameter = self._converted_parameter(node.func.value) if made is None and name in ("cuda", "to") else None
        if parameter is not None:  # `th.from_numpy(arr).to(device=timesteps.device)`, `arr` a parameter
            self.parameter_copies.append((self.ctx.call_site(node), parameter, cast(cst.FunctionDef, self.ctx.scope.node)))
            return
        if made is None and name in ("cuda", "to") and (self.ctx.loops or self.ctx.scope.node is not None):
            drawn = self._numpy_drawn(node.func.value)  # `z = torch.from_numpy(np.random.uniform(...))`, also in a
            # function that runs as often (a schedule sampler's `sample`, a forward)
            device = argument(node, 0, "device")
            if drawn is not None and (name == "cuda" or device is not None):
                self.numpy_moves.append((self.ctx.call_site(node), drawn, device, self.function()))
            return
        receiver = node.func.value
        cast_of = type(receiver) is cst.Call and type(receiver.func) is cst.Attribute and not receiver.args and call_name(
            receiver) in CAST_METHODS and receiver.func.value is made  # (`torch.Tensor([len(y)]).long().to(device)`)
        filled = _one_value(made) if made is not None and (made is receiver or cast_of) and keyword(made, "device") is None else None
        maker = (self.ctx.qualname(made.func) or "") if made is not None else ""
        if made is not None and filled is not None and (maker == "torch.tensor" or maker.removeprefix("torch.") in ("Tensor", *LEGACY_TENSOR_TYPES)
                                   and filled[1] is not None and not self._listed(made, filled[0])) and len(node.args) <= 1:
            device = argument(node, 0, "device")
            if name == "cuda" or device is not None:
                self.filled.append((self.ctx.call_site(node), made, device, self.function()))
            return
        if made is not None and _from_host_data(made, self.ctx) and self._gpu_elements(made):
            device = argument(node, 0, "device")
            if name == "cuda" or device is not None:
                self.gathers.append((self.ctx.call_site(node), made, device, self.function()))
            return
        if made is None or keyword(made, "device") is not None or _from_host_data(made, self.ctx, root=self.function()):
            return  # (made on a device: `.type_as` only casts; host data is copied either way)
        qualified = self.ctx.qualname(made.func) or ""
        if qualified.count(".") != 1 or not qualified.startswith("torch."):
            return
        device = argument(node, 0, {"type_as": "other", "type": "dtype"}.get(name, "device"))
        if name != "cuda" and device is None:
            return
        if self._made_once():
            return  # `if buffer is None: buffer = torch.zeros(n).cuda()`: made once
        self.moves.append((self.ctx.call_site(node), made, device, self.function()))

    def _listed(self, made: cst.Call, value: cst.BaseExpression) -> bool:
        """Whether `value`, the one element of a legacy constructor's list, is a list or a name
        bound to one (`torch.LongTensor([src_seq])`: the data itself, not one number), or a
        parameter the constructor wraps once (`torch.FloatTensor([state])`: an observation the
        caller passes, not `torch.IntTensor([n] * b)`)."""
        if type(value) in (cst.List, cst.ListComp, cst.Tuple):
            return True  # (`torch.LongTensor([[start]] * k)`: k rows of data)
        if type(value) is not cst.Name:
            return False
        if value.value in self.ctx.scope.params and _repeated(made) is None:
            return True
        owner = self.ctx.scope.owner_of(value.value)
        return owner is not None and any(type(v) in (cst.List, cst.ListComp, cst.Tuple) or type(v) is cst.Call and call_name(v) in (
            "list", "tuple", "split") for v in owner.assignments.get(value.value, ()) if v is not None)

    def _made_once(self) -> bool:
        """Whether the node visited is under `if buffer is None:` or a branch setting its own
        flag (`if not self.initialized:`): it runs once (not a test of a parameter, `mask=None`)."""
        return any(frame.kind == IF and lazy_init(cast(cst.If, frame.node)) and not option_test(
            cast(cst.If, frame.node), self.ctx.scope.params) for frame in self.local_frames())

    def _empty_case(self) -> bool:
        """Whether the node visited is in a branch for an empty batch that returns early (`if
        positive_count == 0: return torch.tensor(0.).to(device)`): rare, not every step."""
        return any(frame.kind == IF and _empty_test(cast(cst.If, frame.node).test) and _returns_last(cast(cst.If, frame.node))
                   for frame in self.local_frames())

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if type(target) is cst.Subscript and _factory_below(node.value, self.ctx) is not None and self._device_destination(target.value):
            self.copies.append((self.ctx.site(node), target.value, node.value, self.function()))  # `gain[2:6] = torch.tensor(shape)`

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if type(node.value) is cst.Attribute and node.value.attr.value in _TABLE_INDEXERS:
            return  # (`annotations_df.iloc[torch.randint(n, (1,))]`: a row of a pandas table, on the host)
        indices = [e.slice.value for e in node.slice if type(e.slice) is cst.Index]
        made = [factory for index in indices if not self._made_on_device_too(index) for factory in self._cpu_made(index)]
        if made and not self._cpu_made(node.value) and not self._host_tensor(node.value) and not self._numpy_held(
                node.value) and not self._moved_later(node.value) and not self._made_once():
            self.indexings.append((self.ctx.site(node), made, self.function()))
        held = next((name for index in indices if type(index) is cst.Attribute and (name := _held_attribute(index))), None)
        if held is not None and _held_attribute(node.value) is None and not self._cpu_made(node.value) and not self._host_tensor(node.value):
            self.held_indexings.append((self.ctx.site(node), held, self.function()))  # `sim[self.mask]`
        if (self.ctx.loops or self.ctx.scope.node is not None) and not made:
            drawn = next((d for index in indices if (d := self._numpy_index(index, 0)) is not None), None)
            if drawn is not None and self._on_device(node.value, 0):
                self.numpy_indexings.append((self.ctx.site(node), drawn, self.function()))
        ranges = [index for index in indices if type(index) is cst.Call and type(index.func) is cst.Name
                  and index.func.value == "range" and "range" not in self.ctx.imports]
        enclosing = self.function()
        if ranges and enclosing is not None and self._torch_made(node.value):
            self.ranges.append((self.ctx.site(node), ranges[0], enclosing))

    def _made_on_device_too(self, expr: cst.BaseExpression) -> bool:
        """`index`, made on the GPU in the other branch (`if use_cuda: index =
        torch.randperm(n).cuda() else: index = torch.randperm(n)`): the CPU one indexes CPU data."""
        values = self.ctx.scope.assignments.get(expr.value, ()) if type(expr) is cst.Name else ()
        return len(values) > 1 and any(self._on_device(value, 0) for value in values)

    def _latest(self, expr: cst.Name, within: tuple | None) -> cst.BaseExpression | None:
        """The value last assigned (before here, in the pass) to the name `expr` in its scope; or,
        `within` the value of an assignment to that name that is being followed, (name, value),
        the one before it (`mask = torch.from_numpy(mask)`, `labels = labels[idx].long()`)."""
        values = list(self.ctx.scope.assignments.get(expr.value, ()))
        if within is not None and within[0] == expr.value:
            values = values[: next((i for i, v in enumerate(values) if v is within[1]), len(values))]
        return values[-1] if values else None

    def _numpy_index(self, expr: cst.BaseExpression | None, depth: int, within: tuple | None = None) -> cst.Call | None:
        """The NumPy call making the integer array or boolean mask `expr` is (`np.arange(n)`,
        shuffled in place, then sliced: `mb_inds = b_inds[start:end]`; `np.zeros(n, dtype=bool)`
        filled in place, then `torch.from_numpy(~mask)`: a CPU tensor sharing its memory), or
        None. `within`: (name, value) of the assignment whose value is being followed, where that
        name is its earlier value (`mask = torch.from_numpy(mask)`)."""
        if expr is None or depth > 8:
            return None
        if type(expr) is cst.Name:
            value = self._latest(expr, within)
            return self._numpy_index(value, depth + 1, (expr.value, value))
        if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.BitInvert:
            return self._numpy_index(expr.expression, depth + 1, within)  # (`~mask`: the other elements)
        if type(expr) is cst.Call and self.ctx.qualname(expr.func) == "torch.from_numpy" and len(expr.args) == 1:
            return self._numpy_index(expr.args[0].value, depth + 1, within)
        if type(expr) is cst.Subscript and any(type(e.slice) is cst.Slice for e in expr.slice):
            return self._numpy_index(expr.value, depth + 1)  # (`b_inds[start:end]`, `flatinds[:, mbenvinds]`)
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in ("ravel", "flatten", "reshape"):
            return self._numpy_index(expr.func.value, depth + 1)
        if type(expr) is cst.Call and (self.ctx.qualname(expr.func) or "") in _NUMPY_INDICES:
            return expr
        return None

    def _on_device(self, expr: cst.BaseExpression | None, depth: int, within: tuple | None = None) -> bool:
        """Whether `expr` is a tensor this scope moved to a device or made there (`obs =
        torch.zeros(n, d).to(device)`, then `b_obs = obs.reshape(-1, d)`)."""
        if expr is None or depth > 6:
            return False
        if type(expr) is cst.Name:
            value = self._latest(expr, within)
            return self._on_device(value, depth + 1, (expr.value, value))
        if type(expr) is cst.BinaryOperation:
            return self._on_device(expr.left, depth + 1, within) or self._on_device(expr.right, depth + 1, within)
        if type(expr) is cst.Subscript:
            return self._on_device(expr.value, depth + 1, within)  # (a selection: on its tensor's device)
        if type(expr) is not cst.Call:
            return False
        name = call_name(expr)
        qualified = self.ctx.qualname(expr.func) or ""
        if type(expr.func) is cst.Attribute and name in ("to", "cuda"):
            device = argument(expr, 0, "device")
            return name == "cuda" or device is not None and literal(device) != "cpu"
        if type(expr.func) is cst.Attribute and name not in HOST_COPY_METHODS and not qualified.startswith("torch."):
            return self._on_device(expr.func.value, depth + 1, within)  # (a tensor's method: on its device, `.clip(-5, 5)`)
        if qualified.startswith("torch.") and name is not None and name.endswith("_like") and expr.args:
            return self._on_device(expr.args[0].value, depth + 1, within)
        given = keyword(expr, "device")
        return qualified.startswith("torch.") and given is not None and literal(given.value) != "cpu"

    def _torch_made(self, expr: cst.BaseExpression) -> bool:
        """A name the current function last assigned a torch call or a method's result
        (`t = torch.full_like(p, 0.0)`, `res = res.clone()`): a tensor, not a list."""
        values = self.ctx.scope.assignments.get(expr.value, ()) if type(expr) is cst.Name else ()
        value = next((v for v in reversed(values) if not (  # (past `x = x[range(n), a]`: still that tensor)
            type(v) is cst.Subscript and type(v.value) is cst.Name and v.value.value == cast(cst.Name, expr).value)), None)
        if type(value) is not cst.Call:
            return False
        qualified = self.ctx.qualname(value.func) or ""
        if qualified.startswith("torch."):
            return True
        return type(value.func) is cst.Attribute and not qualified.startswith("numpy") and (
            dotted(value.func.value) or "").split(".")[0] not in ("np", "numpy")

    def _moved_later(self, expr: cst.BaseExpression) -> bool:
        """`labels[idx]` before `labels = labels.to(device)` in the loop, with no move of it met
        before: the tensor is still on the CPU here (where the loader put it)."""
        if type(expr) is not cst.Name or not self.ctx.loops:
            return False
        name = expr.value
        met = self.ctx.scope.assignments.get(name, ())  # (those met so far in the pass)
        loop = cast(cst.For, self.ctx.loops[-1])  # (a `for` or `while`: both have a body)
        return any(moves_itself(v, name) for v in assigned_in(loop.body, name)) and not any(
            moves_itself(v, name) for v in met)

    def _numpy_held(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is a name the function binds to a NumPy array and to parts of itself only
        (VISSL's sampler: `t_indices = np.array(...)`, then `t_indices[torch.randperm(n, generator=g)]`):
        host data, which a CPU index indexes in place."""
        if type(expr) is not cst.Name or self.ctx.scope.node is None:
            return False
        values = self.ctx.scope.assignments.get(expr.value, [])
        made = [type(v) is cst.Call and _host_array(v, self.ctx) for v in values]
        return any(made) and all(numpy or type(v) is cst.Subscript and type(v.value) is cst.Name and v.value.value == expr.value
                                 for numpy, v in zip(made, values))

    def _host_tensor(self, expr: cst.BaseExpression) -> bool:
        """`torch.tensor(values)` without a device: a CPU tensor of the program's data, which a
        CPU index indexes in place (nothing is copied)."""
        return type(expr) is cst.Call and _from_host_data(expr, self.ctx) and keyword(expr, "device") is None and (
            self.ctx.qualname(expr.func) or "").startswith("torch.")

    def _on_host(self, expr: cst.BaseExpression, scope, depth: int) -> bool:
        """Whether `expr` is a tensor made on the CPU: by a torch function without a device from
        constants, host data or such tensors (through casts and reshapes, and the name's last value)."""
        if depth > _CALL_DEPTH:
            return False
        if type(expr) is cst.Name:
            values = scope.assignments.get(expr.value, []) if scope.node is not None else []
            return bool(values) and values[-1] is not None and self._on_host(values[-1], scope, depth + 1)
        if type(expr) is not cst.Call:
            return False
        if type(expr.func) is cst.Attribute and call_name(expr) in SAME_DEVICE_METHODS:
            return self._on_host(expr.func.value, scope, depth + 1)
        if self._host_tensor(expr) or self._on_cpu(expr):
            return True
        qualified = self.ctx.qualname(expr.func) or ""
        return qualified.count(".") == 1 and qualified.startswith("torch.") and bool(expr.args) and all(
            arg.keyword is None and arg.star == "" and self._on_host(arg.value, scope, depth + 1) for arg in expr.args)

    def _cpu_made(self, expr: cst.BaseExpression, depth: int = 0) -> list[cst.Call]:
        """The torch factory calls without a device whose tensors `expr` computes with (through
        casts, reshapes, slices, arithmetic and names assigned in the current function)."""
        if type(expr) is cst.Call:
            if type(expr.func) is cst.Attribute and call_name(expr) in SAME_DEVICE_METHODS:
                return self._cpu_made(expr.func.value, depth)
            return [expr] if self._on_cpu(expr) else []
        if type(expr) is cst.Subscript:
            made = self._cpu_made(expr.value, depth)
            if len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index and not self._cpu_made(
                    expr.slice[0].slice.value, depth) and all(map(_vector, made)):
                return []  # `perm[i]`: an element, a 0-dimensional index PyTorch reads as a number (nothing is copied)
            return made
        if type(expr) is cst.BinaryOperation:
            return self._cpu_made(expr.left, depth) + self._cpu_made(expr.right, depth)
        if type(expr) is cst.UnaryOperation:
            return self._cpu_made(expr.expression, depth)
        if type(expr) is cst.Tuple:  # `idx = torch.arange(n), inds[:, 0]`, then `preds[idx]`: an index per dimension
            return [made for element in expr.elements for made in self._cpu_made(element.value, depth)]
        scope = self.ctx.scope
        if type(expr) is cst.Name and depth < _CALL_DEPTH and scope.node is not None and scope.assignments.get(expr.value):
            value = scope.assignments[expr.value][-1]  # the latest met in the pass
            return [] if value is None else self._cpu_made(value, depth + 1)
        return []

    def _on_cpu(self, call: cst.Call, scope: Scope | None = None) -> bool:
        """A torch factory call that makes its tensor on the CPU, from constants or sizes (also
        names `scope` assigns sizes: `shape = p.shape`)."""
        qualified = self.ctx.qualname(call.func) or ""
        return _constant_array(call, self.ctx) or (
            call_name(call) in _FACTORIES and qualified.count(".") == 1 and qualified.startswith("torch.")
            and keyword(call, "device") is None and not star_kwargs(call) and not _from_host_data(call, self.ctx, scope)
        )

    def _constant_cpu_call(self, expr: cst.BaseExpression) -> bool:
        """`tokenize([""])`: a call, with constant arguments only, of a function of the source that
        returns a tensor made on the CPU (`tokenizer(..., return_tensors="pt").input_ids`, a torch
        factory without device): the same tensor each time."""
        if type(expr) is not cst.Call or type(expr.func) is not cst.Name or not expr.args:
            return False
        if not all(arg.keyword is None and arg.star == "" and _constant(arg.value) for arg in expr.args):
            return False
        returned, scope = self._source_returns(expr)
        return bool(returned) and all(value is not None and self._cpu_tensor(value, scope) for value in returned)

    def _source_returns(self, call: cst.Call, scope: Scope | None = None) -> tuple[list, Scope | None]:
        """What the function of the source that `call` names (`make(...)`, or `self.make(...)`,
        a method of the class of the call's function, `scope`'s or the one visited) returns, and
        its scope; ([], None) for another callee."""
        caller = (scope or self.ctx.scope).node
        if type(call.func) is cst.Name:
            defs = self.ctx.functions.get(call.func.value)
        elif type(call.func) is cst.Attribute and dotted(call.func.value) == "self" and caller is not None:
            cls = self.ctx.class_of.get(id(caller))
            defs = [(d, inner) for d, inner in self.ctx.functions.get(call.func.attr.value, ())
                    if cls is not None and self.ctx.class_of.get(id(d)) is cls]
        else:
            defs = None
        if not defs:
            return [], None
        function, scope = defs[-1]
        return [node.value for node in _returns(function.body)], scope

    def _converted_parameter(self, expr: cst.BaseExpression) -> str | None:
        """`arr` of `torch.from_numpy(arr)` (through casts and reshapes) when `arr` is a parameter of
        the function visited; None otherwise."""
        while type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in SAME_DEVICE_METHODS:
            expr = expr.func.value
        if type(expr) is not cst.Call or self.ctx.qualname(expr.func) != "torch.from_numpy" or len(expr.args) != 1:
            return None
        array = expr.args[0].value
        return array.value if type(array) is cst.Name and array.value in self.ctx.scope.params and self.ctx.scope.node is not None else None

    def _constant_arrays(self, function: cst.FunctionDef, parameter: str) -> list[str]:
        """The constant NumPy arrays calls of `function` in the source pass as `parameter` (a
        NumPy array on every call, since `torch.from_numpy` takes one): attributes of `self` the
        caller's class assigns in `__init__` only, from NumPy (`self.betas = np.array(betas)`,
        `self.sqrt_alphas_cumprod = np.sqrt(self.alphas_cumprod)`), also in math with numbers."""
        params = [p.name.value for p in function.params.params]
        index = params.index(parameter) if parameter in params else -1
        passed: list[str] = []
        for call in self.ctx.calls.get(function.name.value, ()) if index >= 0 else ():
            given = argument(call.node, index, parameter)
            cls = self.ctx.class_of.get(id(call.scope.node)) if call.scope.node is not None else None
            held = [dotted(part) or "" for part in (walk(given) if given is not None else ()) if type(part) is cst.Attribute]
            passed += [name for name in held if name.startswith("self.") and name.count(".") == 1 and cls is not None
                       and _numpy_constant(cls, name[5:], self.ctx)]
        return list(dict.fromkeys(passed))

    def _called_repeatedly(self, function: cst.FunctionDef) -> str | None:
        """Where a loop of the source (not a few iterations) runs `function`, through up to
        `_CALL_DEPTH` + 1 calls (guided-diffusion's `p_sample_loop` calling `p_sample`, which calls
        `p_mean_variance`, which calls `_extract_into_tensor`): the function holding the loop."""
        names, seen = [function.name.value], {function.name.value}
        for _ in range(_CALL_DEPTH + 1):
            callers = []
            for name in names:
                for call in self.ctx.calls.get(name, ()):
                    if call.loops and not all(few_iterations(loop, self.ctx, call.scope) for loop in call.loops):
                        return call.scope.node.name.value if call.scope.node is not None else "the script"
                    if call.scope.node is not None and call.scope.node.name.value not in seen:
                        seen.add(call.scope.node.name.value)
                        callers.append(call.scope.node.name.value)
            names = callers
        return None

    def _copied_factory(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> cst.Call | None:
        """The torch factory call without a device (through names `scope` assigns once, math and a
        function of the source returning one: `epsilon_out = self.scale_noise(n)`) whose CPU
        tensor `expr` is, or None."""
        if depth > 4:
            return None
        made = _factory_below(expr, self.ctx)
        if made is not None:
            return made if keyword(made, "device") is None and self._on_cpu(made, scope) else None
        if type(expr) is cst.Name:
            values = scope.assignments.get(expr.value) if scope.node is not None else None
            return self._copied_factory(values[0], scope, depth + 1) if values and len(values) == 1 and values[0] is not None else None
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in _PRODUCTS:
            return self._copied_factory(expr.func.value, scope, depth + 1)  # (`epsilon_out.ger(epsilon_in)`)
        return self._returned_factory(expr, scope)

    def _device_destination(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` (what `copy_` fills, `.data` of it too) is on the device: a name this scope
        moved there or made there, or a buffer or parameter its module registers (`self.weight_epsilon`)."""
        if type(expr) is cst.Attribute and expr.attr.value == "data":
            expr = expr.value
        held = _held_attribute(expr) if type(expr) is cst.Attribute else None
        if held is None:
            return self._on_device(expr, 0)
        cls = self.ctx.class_of.get(id(self.ctx.scope.node)) if self.ctx.scope.node is not None else None
        return cls is not None and _names_attribute(cls, held)

    def _note_helper_move(self, move: cst.Call) -> None:
        """Note `move` (a `.cuda()`/`.to(device)`) when what it moves is what a function of another
        module of the project returns (`causal_mask(n).type_as(mask).to(device)`; `hidden =
        decoder.init_hidden(b)`, then `hidden = hidden.cuda()`): `finish` asks whether that
        function makes it with a torch factory given no device (dataset.py's `return
        torch.triu(torch.ones(1, n, n)) == 0`), once the names of the source are all known."""
        func = cast(cst.Attribute, move.func)
        device = argument(move, 0, "device")
        if func.attr.value == "to" and device is None:
            return
        expr: cst.BaseExpression = func.value
        for _ in range(6):
            if type(expr) is cst.Call and type(expr.func) is cst.Attribute and (
                    call_name(expr) in SAME_DEVICE_METHODS or call_name(expr) == "type_as"):
                expr = expr.func.value
            elif type(expr) is cst.Name:
                values = [v for v in self.ctx.scope.assignments.get(expr.value, ()) if not moves_itself(v, expr.value)]
                if not values or values[-1] is None:
                    return
                expr = values[-1]
            else:
                break
        if type(expr) is cst.Call and maybe_project_call(self.ctx, expr.func) and not (
                type(expr.func) is cst.Name and expr.func.value in self.ctx.functions):  # (one of the source:
            self.helper_moves.append((self.ctx.call_site(move), expr, device, self.function()))  # `_returned_factory`)

    def _returned_factory(self, expr: cst.BaseExpression, caller: Scope | None = None) -> cst.Call | None:
        """For `create_noise(b, z)`, a call of a function of the source each of whose returns is
        a torch factory's tensor made on the CPU (`torch.rand(b, z) * 2 - 1`, directly or through
        names it assigns only such tensors): the first of those factory calls."""
        if type(expr) is not cst.Call:
            return None
        returned, scope = self._source_returns(expr, caller)
        made = [self._factory_made(value, scope, 0) for value in returned]
        return made[0] if made and all(made) else None

    def _factory_made(self, value: cst.BaseExpression | None, scope, depth: int) -> cst.Call | None:
        """The torch factory call (made on the CPU) whose tensor `value` is, through reshapes,
        casts, math with numbers and names assigned only such values in `scope`."""
        while type(value) is cst.Call and type(value.func) is cst.Attribute and call_name(value) in _SAME_PLACE_METHODS:
            value = value.func.value  # (`x.sign().mul(x.abs().sqrt())` of `x = torch.randn(size)`)
        if type(value) is cst.Name and depth < 2:
            values = scope.assignments.get(value.value) or [None]
            found = [self._factory_made(v, scope, depth + 1) for v in values]
            return found[0] if all(found) else None
        made = _factory_below(value, self.ctx) if value is not None else None
        return made if made is not None and self._on_cpu(made) else None

    def _cpu_data(self, value: cst.BaseExpression | None, scope, depth: int = 0) -> bool:
        """Whether `value` is a tensor made on the CPU and kept there: a torch factory without a
        device, through slices (`x[:n]`), names and `self.` attributes bound only to such tensors,
        and the returns of a function of the source (detectron2's samplers: `indices =
        self._get_epoch_indices(g)`, returning `torch.tensor(indices, dtype=torch.int64)`)."""
        while type(value) is cst.Subscript:
            value = value.value
        if value is None or depth > 3:
            return False
        if type(value) is cst.Name:
            owner = scope.owner_of(value.value) if scope is not None else None
            values = owner.assignments.get(value.value, ()) if owner is not None else ()
            return bool(values) and all(self._cpu_data(v, owner, depth + 1) for v in values)
        if type(value) is cst.Attribute and dotted(value.value) == "self":
            bound = self.ctx.attributes.get(dotted(value) or "", [])
            return bool(bound) and all(self._cpu_data(v, where, depth + 1) for v, where in bound)
        if type(value) is not cst.Call:
            return False
        qualified = self.ctx.qualname(value.func) or ""
        if qualified.startswith("torch.") and qualified.count(".") == 1 and call_name(value) in _FACTORIES:
            return keyword(value, "device") is None and not star_kwargs(value)
        returned, inner = self._source_returns(value, scope)
        return bool(returned) and all(self._cpu_data(v, inner, depth + 1) for v in returned)

    def _cpu_tensor(self, value: cst.BaseExpression | None, scope) -> bool:
        """A torch factory call without device, or a `return_tensors="pt"` call's output (or an
        attribute of it), directly or through a name assigned once in `scope`."""
        if type(value) is cst.Attribute:
            value = value.value
        if type(value) is cst.Name:
            values = scope.assignments.get(value.value, ())
            value = values[0] if len(values) == 1 else None
        if type(value) is not cst.Call:
            return False
        pt = keyword(value, "return_tensors")
        return (pt is not None and literal(pt.value) == "pt") or self._on_cpu(value)

    def _gpu_elements(self, made: cst.Call) -> bool:
        """`torch.tensor(items)` where `items` is a list of the current function filled only with
        elements of tensors on the GPU (`items.append(labels[i])`, `labels = labels.to(device)`)."""
        data, scope = made.args[0].value, self.ctx.scope
        if type(data) is not cst.Name or scope.node is None:
            return False
        appended = [
            site.node.args[0].value for site in self.ctx.calls.get("append", ())
            if site.scope is scope and site.node.args and type(site.node.func) is cst.Attribute
            and dotted(site.node.func.value) == data.value
        ]
        return bool(appended) and all(self._gpu_element(value, scope) for value in appended)

    def _gpu_element(self, value: cst.BaseExpression, scope) -> bool:
        """`labels[i]` (directly or through a name) of a tensor moved to the GPU in `scope`."""
        if type(value) is cst.Name:
            values = scope.assignments.get(value.value) or [None]
            return all(v is not None and type(v) is cst.Subscript and self._gpu_element(v, scope) for v in values)
        if type(value) is not cst.Subscript or type(value.value) is not cst.Name:
            return False
        made = scope.assignments.get(value.value.value, ())
        return any(type(v) is cst.Call and self._moved_to_gpu(v, scope) for v in made)

    def _moved_to_gpu(self, call: cst.Call, scope) -> bool:
        """`x.cuda()`, or `x.to(device)` with a device that is CUDA here (`_device`)."""
        device = argument(call, 0, "device") if call_name(call) == "to" else None
        return self.ctx.made_on_cuda(call, scope) or (
            device is not None and self._device(device, Site(call, self.ctx.unit, scope))
        )

    def _cpu_type(self, made: cst.Call) -> bool:
        """Whether `made` is on the CPU whatever torch's default device: a CPU tensor type
        (`torch.LongTensor(n)`), or `torch.from_numpy`."""
        qualified = self.ctx.qualname(made.func) or ""
        return qualified == "torch.from_numpy" or qualified.startswith("torch.") and qualified[6:] in LEGACY_TENSOR_TYPES

    def finish(self) -> None:
        if (self.moves or self.indexings or self.returned or self.hoists) and self.ctx.default_cuda():
            # (torch's factories make CUDA tensors; a CPU tensor type, `torch.LongTensor(n)`, stays one)
            cpu = self._cpu_type
            self.moves = [move for move in self.moves if cpu(move[1])]
            self.hoists = [hoist for hoist in self.hoists if cpu(hoist[1])]
            self.returned = [found for found in self.returned if cpu(found[2])]
            self.indexings = [(site, made, function) for site, made, function in self.indexings if all(map(cpu, made))]
        else:
            self._report_passed_moves()
        self._report_indexings()
        self._report_numpy_indexings()
        steps = TrainingSteps.of(self.ctx)
        for site, made, device, function in self.hoists:
            where = self._every_call(site, function) if site.loops and steps.trains(site.loops[-1]) else None
            if where is None or device is not None and not self._device(device, site):
                continue  # (in a loop that does not train, where to keep it is the user's choice: GPU memory)
            self.report(
                site,
                f"`{short_code(site.node)}` copies the same CPU tensor (made once by torch.{call_name(made)}(...)) to "
                f"the GPU {where}: a blocking copy from pageable memory each time. Move it once, before the loop "
                "(or make it there with device=...).",
            )
        for site, function in self.host_arrays:
            made = site.node  # a tensor type's call (visit_Call)
            where = self._every_call(site, function)
            if where is None or self.ctx.is_cuda_device(made.func, site.scope) is not True:
                continue
            data = made.args[0].value
            shown = f"{code(data.func)}(...)" if type(data) is cst.Call else "[...]"
            self.report(
                site,
                f"`{code(made.func)}({shown})` makes the data on the host and copies it to the GPU "
                f"(`{code(made.func)}` is a CUDA tensor type) {where}: a blocking copy from pageable memory each "
                "time. Create it on the device: torch.randn/ones/zeros/randint(..., device=...).",
            )
        for site, function in self.repeated:
            where = self._every_call(site, function)
            if where is None or not self._device(cst.ensure_type(keyword(site.node, "device"), cst.Arg).value, site):
                continue
            value, count = cast(tuple, _one_value(site.node))
            shape = "()" if count is None else f"({code(count)},)"
            full = f"{code(site.node.func).removesuffix('tensor')}full({shape}, {code(value)}"
            others = "".join(f", {code(arg).rstrip(', ')}" for arg in site.node.args[1:])
            what = "a number" if count is None else "a list"
            self.report(
                site,
                f"`{short_code(site.node)}` makes {what} on the host and copies it to the GPU {where}: a blocking "
                f"copy from pageable memory each time, which waits for the GPU's queued work. Fill it on the device: "
                f"{full}, device=...).",
                fix=FixPlan("Fill the tensor on the device", (Replace(site, f"{full}{others})"),)),
            )
        for site, function in self.tables:
            where = self._every_call(site, function)
            if where is None or not self._device(cst.ensure_type(keyword(site.node, "device"), cst.Arg).value, site):
                continue
            self.report(
                site,
                f"`{short_code(site.node)}` builds the same table from a Python list and copies it to the GPU {where}: a "
                "blocking copy from pageable memory each time, which waits for the GPU's queued work. Build it once "
                "(in `__init__`; a module's as a buffer, which moves with it) and reuse it.",
            )
        for site, made, device, function in self.filled:
            where = self._every_call(site, function)
            if where is None or (device is not None and not self._device(device, site)):
                continue
            value, count = cast(tuple, _one_value(made))
            shape = "()" if count is None else f"({code(count)},)"
            place = "'cuda'" if device is None else code(device)
            exact = cst.ensure_type(site.node.func, cst.Attribute).value is made and call_name(made) == "tensor"
            others = "".join(f", {code(arg).rstrip(', ')}" for arg in made.args[1:]) if exact else ", dtype=..."
            full = f"{code(made.func).removesuffix('tensor') if exact else 'torch.'}full({shape}, {code(value)}{others}, device={place})"
            self.report(
                site,
                f"`{short_code(made)}` makes a number on the host and copies it to the GPU {where}: a blocking copy "
                f"from pageable memory each time. Fill it on the device: {full}.",
                fix=FixPlan("Fill the tensor on the device", (Replace(site, full),)) if exact else None,
            )
        for site, drawn, device, function in self.numpy_moves:
            where = self._every_call(site, function)
            if where is None or (device is not None and not self._device(device, site)):
                continue
            self.report(
                site,
                f"`{code(drawn.func)}(...)` makes the data on the host and it is copied to the GPU {where}: a "
                "blocking copy from pageable memory each time. Create it on the device: "
                "torch.rand/randn/randint/zeros(..., device=...).",
            )
        for site, device in self.constants:
            if device is not None and not self._device(device, site):
                continue
            self.report(
                site,
                f"`{short_code(_receiver(site.node))}` builds the same CPU tensor on every iteration (its arguments are constants) and it "
                "is copied to the GPU each time: a blocking copy from pageable memory per step. Build it once "
                "before the loop and move it to the device there.",
            )
        for site, helper, made, device, function in self.returned:
            where = self._every_call(site, function)
            if where is None or (device is not None and not self._device(device, site)):
                continue
            factory = call_name(made)
            self.report(
                site,
                f"`{code(helper.func)}(...)` returns torch.{factory}(...) made on the CPU, copied to the GPU {where}: "
                f"a blocking copy from pageable memory each time. Make it on the device inside `{code(helper.func)}`: "
                f"{_ON_DEVICE.get(factory or '', f'torch.{factory}(..., device=...)')}"
                + ("." if factory in DETERMINISTIC_FACTORIES or factory in _ON_DEVICE else " (random values then come from the CUDA generator)."),
            )
        for site, helper, device, function in self.helper_moves:
            found = call_target(self.ctx, helper.func, site.scope)
            use = returns_cpu_factory(found) if found is not None and found[2].path else None
            if use is None:
                continue
            where = self._every_call(site, function)
            if where is None or (device is not None and not self._device(device, site) and not self._tensor_like(device, site, function)):
                continue  # (`kernel_upsample2(zeros).to(x)`, x the input of a function that reads its shape)
            factory, called = use.code, short_code(helper.func)
            self.report(
                site,
                f"`{called}(...)` returns a tensor that torch.{factory}(...) makes on the CPU ({use.where}), copied to the GPU "
                f"{where}: a blocking copy from pageable memory each time. Make it on the device inside `{use.via}`: "
                f"{_ON_DEVICE.get(factory, f'torch.{factory}(..., device=...)')}"
                + ("." if factory in DETERMINISTIC_FACTORIES or factory in _ON_DEVICE else " (random values then come from the CUDA generator)."),
                related=(Related(use.path, use.line - 1, f"`torch.{factory}(...)` makes the tensor on the CPU"),),
            )
        for site, made, device, function in self.gathers:
            where = self._every_call(site, function)
            if where is None or (device is not None and not self._device(device, site)):
                continue
            items = code(made.args[0].value)
            self.report(
                site,
                f"torch.{call_name(made)}({items}) gathers elements of a GPU tensor into a CPU tensor, then it is "
                f"copied back {where}: a device-to-host copy (a sync) per element and a blocking copy to the "
                f"GPU. Keep them on the GPU: torch.stack({items}).",
            )
        for site, held, device, function in self.attributes:
            assignment = self._held_on_cpu(held, function)
            if assignment is None or call_name(site.node) != "cuda" and (device is None or not (
                    self._device(device, site) or self._tensor_like(device, site, function) or _input(device, function, site.node))):
                continue  # (`self.pos_embedding.to(x)`, x the forward's input: where the model runs)
            where = self._every_call(site, function)
            if where is None:
                continue
            holder = cast(cst.ClassDef, self.ctx.class_of.get(id(function)))  # (`_held_on_cpu` found it)
            self.report(
                site,
                f"`self.{held}` is a CPU tensor kept as a plain attribute, which `model.to(device)` does not move: it "
                f"is copied to the GPU {where}, a blocking copy from pageable memory each time. Register it as a "
                f"buffer instead: self.register_buffer(\"{held}\", ..., persistent=False)." if not _plain(holder) else
                f"`self.{held}` is a CPU tensor `{holder.name.value}` makes once, copied to the GPU {where}: a blocking copy "
                f"from pageable memory each time. Make it on the device the object is used with (`device=` in "
                "`__init__`), or keep the copy once made.",
                related=(Here(Site(assignment, site.unit, site.scope), f"`self.{held}` is made on the CPU"),),
            )
        for indexing, held, function in self.held_indexings:
            assignment = self._held_on_cpu(held, function)
            where = self._every_call(indexing, function) if assignment is not None else None
            if assignment is None or where is None or not self._gpu_somewhere(function) or _plain(
                    cast(cst.ClassDef, self.ctx.class_of.get(id(function)))):
                continue  # (a plain object's mask: no module to register it with)
            self.report(
                indexing,
                f"`self.{held}` is a CPU tensor kept as a plain attribute: indexing `{short_code(cast(cst.Subscript, indexing.node).value)}` "
                f"with it copies it to the GPU {where}, a blocking copy from pageable memory each time. Keep it on the GPU: a "
                f"buffer (self.register_buffer(\"{held}\", ..., persistent=False)) of a module moved there; for a fixed "
                "boolean mask, its indices (`mask.nonzero(as_tuple=True)`), which need no count on the host.",
                related=(Here(Site(assignment, indexing.unit, indexing.scope), f"`self.{held}` is made on the CPU"),),
            )
        for site, held, function in self.held_conversions:
            cls = self.ctx.class_of.get(id(function)) if function is not None else None
            constant = cls is not None and function is not None and function.name.value != "__init__" and _init_assignment(
                cls, held) is not None
            where = self._every_call(site, function) if constant and self.ctx.cuda_evidence is not None else None
            if where is None:
                continue
            self.report(
                site,
                f"`{short_code(site.node)}` converts `self.{held}`, which the object sets once in `__init__`, to a tensor "
                f"and copies it to the GPU {where}: the same data, a blocking copy from pageable memory each time. Make "
                "the tensor once (in `__init__`, or cached per device) and reuse it.",
            )
        for site, parameter, function in self.parameter_copies:
            arrays = self._constant_arrays(function, parameter) if self.ctx.cuda_evidence is not None else []
            where = self._every_call(site, function) if arrays else None
            looped = self._called_repeatedly(function) if arrays and where is None else None
            if not arrays or where is None and looped is None:
                continue
            shown = ", ".join(f"`{array}`" for array in arrays[:3]) + (", ..." if len(arrays) > 3 else "")
            self.report(
                site,
                f"`torch.from_numpy({parameter})` copies a NumPy array to the GPU "
                + (where if where is not None else f"on every call of `{function.name.value}`, which a loop of `{looped}` runs")
                + f", and its callers pass constants their object makes once ({shown}): a blocking copy from pageable "
                "memory each time. Convert the arrays to tensors on the device once and index those.",
            )
        copied: set[int] = set()
        for copying, destination_expr, source, function in self.copies if self.ctx.cuda_evidence is not None else ():
            origin = self._copied_factory(source, copying.scope, 0)
            if origin is None or id(origin) in copied or call_name(origin) in ("empty", "empty_like") or keyword(origin, "pin_memory") is not None or (
                    copying.scope.node is None or contains(copying.scope.node, origin)) and (self._loops_around(origin) or ()) != copying.loops:
                continue  # (a staging buffer made once, pinned, and filled with the program's data: nanochat's loader)
            assigned = type(copying.node) is not cst.Call  # (into a part of a tensor)
            where = None if assigned and self._built_once(function) else self._every_call(copying, function)
            if where is None:
                continue  # (a table a function fills when a model is made: Pyraformer's `get_q_k` mask)
            copied.add(id(origin))  # (one finding per factory: `reset_noise` copies one draw into two buffers)
            factory = call_name(origin)
            destination = short_code(destination_expr)
            fill = _IN_PLACE.get(factory or "") if origin is source and len(origin.args) > 0 and not assigned else None
            copied_said = (f"torch.{factory}(...) is made on the CPU and copied into `{destination}` on the GPU {where}: a "
                           f"blocking copy from pageable memory each time. Make it on the destination's device: torch.{factory}(..., "
                           f"device={destination}.device)" + (f", or fill the destination in place: {destination}.{fill}." if fill else "."))
            sizes = (f"`{short_code(origin)}` makes a tensor of sizes on the host, copied into `{destination}` on the GPU "
                     f"{where}: a blocking copy from pageable memory each time, which waits for the GPU's queued work. Assign "
                     "the sizes as Python numbers, one element each (a fill on the device, no copy), or compute it once.")
            self.report(
                copying,
                copied_said if _from_host_data(origin, self.ctx) == _from_host_data(origin, self.ctx, copying.scope) else sizes,
                related=(Here(Site(origin, copying.unit, copying.scope, copying.loops), f"torch.{factory}(...) makes it on the CPU"),),
            )
        moved: set[int] = set()
        twins = self._option_twins()
        for site, made, device, function in self.moves:
            where = self._every_call(site, function)
            if where is None or id(made) in moved or id(site.node) in never_taken(self.ctx, function) or id(site.node) in twins:
                continue  # (one finding per factory: `m = m.cuda()`, then `m = m.to(labels.device)`)
            moved_as = call_name(site.node) == "type_as"
            typed = call_name(site.node) == "type"  # `.type(Tensor)`, Tensor a CUDA tensor type
            if typed and (device is None or self.ctx.is_cuda_device(device, site.scope) is not True):
                continue
            if moved_as and not self._gpu_somewhere(function):
                continue  # (`torch.rand(n).type_as(x0)` in a notebook that never uses a GPU: a cast, no copy)
            like = device is not None and not moved_as and not typed and self._tensor_like(device, site, function)
            if device is not None and not moved_as and not typed and not like and call_name(site.node) != "cuda" and not self._device(
                    device, site):  # (`.cuda(self.device_id[0])`: a GPU whatever the index)
                continue
            moved.add(id(made))
            factory = call_name(made)
            fix = self._fix(site, made, device) if factory in DETERMINISTIC_FACTORIES and not typed and not like else None
            how = f"`.type_as({code(device)})`" if moved_as and device is not None else "copied to the GPU"
            instead = _ON_DEVICE.get(factory or "", f"torch.{factory}(..., device=...)")
            apart = not any(node is made for node in walk(site.node))  # (`y = torch.ones(n)`, then `y.cuda()`)
            self.report(
                site,
                f"torch.{factory}(...) is created on the CPU and then {how} {where}: an allocation, "
                f"a fill and a blocking copy from pageable memory each time. Create it on the device directly: {instead}."
                + ("" if factory in DETERMINISTIC_FACTORIES or factory in _ON_DEVICE else " (Random values then come from the CUDA generator.)"),
                fix,
                related=(Here(Site(made, site.unit, site.scope, site.loops), f"torch.{factory}(...) makes it on the CPU"),) if apart else (),
            )

    def _held_on_cpu(self, held: str, function: cst.FunctionDef | None) -> cst.Assign | None:
        """The assignment of the module's `__init__` that makes `self.<held>` a CPU tensor (a torch
        factory given no device, or a function of the project returning one: `posemb_sincos_2d(...)`),
        when it is the attribute's only assignment, in a class deriving from nn.Module (or from
        nothing: DPM-Solver's `NoiseScheduleVP`, whose tensors nothing moves) that neither
        registers it as a buffer nor moves its own tensors (`_apply`, `to`, `cuda`); None otherwise."""
        cls = self.ctx.class_of.get(id(function)) if function is not None else None
        if cls is None or function is None or function.name.value == "__init__" or not (derives_from(
                self.ctx, cls.name.value, MODULE_CLASSES) or _plain(cls)):
            return None
        methods = {statement.name.value: statement for statement in cls.body.body if type(statement) is cst.FunctionDef}
        if methods.keys() & {"_apply", "to", "cuda"} or _names_attribute(cls, held):
            return None  # (moves its own tensors; `register_buffer("mask", ...)`, `setattr(self, "mask", ...)`)
        assignments = _init_assignments(cls, held)
        scope = self.ctx.scopes.get(id(methods["__init__"])) if assignments else None
        if scope is None:
            return None
        made = [self._init_made_on_cpu(node.value, held, scope) for node in assignments]
        first = assignments[0]
        return first if True in made and False not in made and type(first) is cst.Assign else None

    def _init_made_on_cpu(self, value: cst.BaseExpression, held: str, scope: Scope, resolving: frozenset = frozenset(), depth: int = 0):
        """Whether `__init__` makes `value` on the CPU: a torch factory given no device, a function of
        the project returning one (`make_resample_kernel(k)`), names `__init__` assigns only such
        values (`kernel = torch.tensor(...)`, `kernel = kernel / kernel.sum()`), math of them; None
        for the attribute itself or a name being resolved (what its other assignments make)."""
        made = _factory_below(value, self.ctx)
        if made is not None:
            return keyword(made, "device") is None and (self.ctx.qualname(made.func) or "").startswith("torch.")
        base = _factory_base(value, self.ctx)
        if depth > 8 or dotted(base) == f"self.{held}" or type(base) is cst.Name and base.value in resolving:
            return None if depth <= 8 else False
        parts: list = []
        if type(base) is cst.BinaryOperation:  # (`kernel / kernel.sum()`, `self.kernel * (factor**2)`: math with a CPU tensor
            sides = [self._init_made_on_cpu(side, held, scope, resolving, depth + 1) for side in (base.left, base.right)]
            return True if True in sides else None if None in sides else False  # gives one, whatever the other side)
        if type(base) is cst.Name:
            parts = scope.assignments.get(base.value) or [cst.Name("None")]
            resolving = resolving | {base.value}
        elif type(base) is cst.Call:
            found = call_target(self.ctx, base.func, scope)
            if found is not None or type(base.func) is not cst.Attribute or call_name(base) in _MOVES:
                return found is not None and returns_cpu_factory(found, converted=True) is not None
            parts = [base.func.value]  # (`kernel.sum()`: a tensor's method gives a tensor where it is)
        results = [False if part is None else self._init_made_on_cpu(part, held, scope, resolving, depth + 1) for part in parts]
        return False if not results or False in results else True if True in results else None

    def _gpu_somewhere(self, function: cst.FunctionDef | None) -> bool:
        """Whether the source may run on a GPU: it uses one (or a module of the project importing
        it does: see the engine), `function` is a method of a LightningModule (whose Trainer picks
        a GPU when there is one), or other modules import it (a library module deep in a model's
        imports); not a script or notebook that nothing imports and that never names a GPU."""
        cls = self.ctx.class_of.get(id(function)) if function is not None else None
        path = self.ctx.path
        return self.ctx.cuda_evidence is not None or cls is not None and derives_from(self.ctx, cls.name.value, LIGHTNING_MODULES) or (
            path is not None and not path.startswith("<") and bool(importing(os.path.abspath(path), any_text=True)))

    def _option_twins(self) -> set[int]:
        """Ids of the moves in the branch of `if batch_size is None: ... else: ...` (an optional
        parameter of the function) that a call passing the option takes, when the branch a call
        leaving it out takes moves too: the same tensor made two ways, one finding (the default's)."""
        found: set[int] = set()
        moves = {id(site.node) for site, *_ in self.moves}
        for function in {id(f): f for *_, f in self.moves if f is not None}.values():
            optional = {p.name.value for p in function.params.params if p.default is not None and literal(p.default) is None}
            for branch in (n for n in walk(function.body) if type(n) is cst.If):
                tested = none_test(branch.test)
                if tested is None or type(tested[0]) is not cst.Name or tested[0].value not in optional or \
                        type(branch.orelse) is not cst.Else:
                    continue
                body, orelse = ({id(n) for n in walk(part)} & moves for part in (branch.body, branch.orelse))
                if body and orelse:
                    found |= orelse if tested[1] else body  # (`is None`: the body is what leaving it out runs)
        return found

    def _passed_moves(self):
        """(call, factory, use) for `create_variable(torch.zeros(n))`, or of a name assigned only
        that: a function of the project that moves its argument to the GPU
        (`return Variable(tensor.cuda())`), given a tensor made on the CPU for it."""
        made = {id(site.node) for name in _FACTORIES for site in self.ctx.calls.get(name, ()) if self._on_cpu(site.node)}
        for name, sites in self.ctx.calls.items() if made else ():
            for site in sites:
                if not site.node.args or name in _MOVES or not maybe_project_call(self.ctx, site.node.func):
                    continue
                given: dict[int, cst.Call] = {}  # id(argument) -> the factory it is
                for arg in site.node.args:
                    value = arg.value
                    values = site.scope.assignments.get(value.value, ()) if type(value) is cst.Name else (value,)
                    factory = _factory_below(values[0], self.ctx) if len(values) == 1 and values[0] is not None else None
                    if factory is not None and id(factory) in made:
                        given[id(value)] = factory
                for value, use in used_arguments(self.ctx, site.node, site.scope, device_moves)[1] if given else ():
                    if id(value) in given:
                        yield site, given[id(value)], use

    def _report_passed_moves(self) -> None:
        for site, made, use in self._passed_moves():
            where = self._every_call(site, site.scope.node)
            if where is None or ("cuda" not in use.code and self.ctx.cuda_evidence is None):
                continue
            factory = call_name(made) or ""
            mover = use.via.split(" -> ")[0]
            place = f", {use.where}" if use.where else ""
            instead = _ON_DEVICE.get(factory, f"torch.{factory}(..., device=...)")
            self.report(
                site,
                f"torch.{factory}(...) is created on the CPU and then copied to the GPU by `{mover}` (`{use.code}`{place}) "
                f"{where}: an allocation, a fill and a blocking copy from pageable memory each time. Create it on the "
                f"device directly: {instead}.",
                related=(Related(use.path, use.line - 1, f"`{use.code}` copies the tensor to the GPU"),) if use.path else (),
            )

    def _report_indexings(self) -> None:
        for site, index, enclosing in self.ranges:
            where = self._every_call(Site(site.node, site.unit, site.scope, ()), enclosing, through_loops=False)  # (how often the function runs)
            if where is None or self.ctx.cuda_evidence is None or self._cpu_data(cast(cst.Subscript, site.node).value, site.scope):
                continue
            indexed = short_code(cast(cst.Subscript, site.node).value)
            self.report(
                site,
                f"`{short_code(index)}` indexes the tensor `{indexed}` {where}: PyTorch makes it a CPU index tensor "
                f"and copies it to the device each time (a blocking copy from pageable memory). Index with "
                f"torch.arange(..., device={indexed}.device).",
            )
        reported: set[int] = set()
        for site, made, function in self.indexings:
            where = self._every_call(site, function, through_loops=False)  # (a helper a loop calls may index CPU data)
            if where is None or (site.loops and self.ctx.cuda_evidence is None) or id(site.node) in never_taken(self.ctx, function):
                continue  # (a loop in code that may never use a GPU)
            if function is not None and _derived_root(cast(cst.Subscript, site.node).value, site.scope) in _held_with_cpu(function, site.scope):
                continue  # (MLM's `mask_tokens`: the batch is masked on the CPU, before the caller moves it)
            if self._cpu_data(cast(cst.Subscript, site.node).value, site.scope):
                continue  # (a sampler's `indices[torch.randperm(n, generator=g)]`: CPU data indexed where it is)
            indexed = short_code(cast(cst.Subscript, site.node).value)  # an indexing's site is its subscript
            for factory in made:
                if id(factory) in reported:
                    continue
                reported.add(id(factory))
                name = call_name(factory)
                self.report(
                    Site(factory, site.unit, site.scope, site.loops),
                    f"torch.{name}(...) is created on the CPU and indexes `{indexed}` {where}: indexing a GPU "
                    "tensor with it copies the index to the device each time (a blocking copy from pageable "
                    f"memory). Create it on the indexed tensor's device: torch.{name}(..., device={indexed}.device).",
                )

    def _report_numpy_indexings(self) -> None:
        reported: set = set()
        for site, drawn, function in self.numpy_indexings:
            subscript = cast(cst.Subscript, site.node)
            index = short_code(subscript.slice[0].slice.value) if type(subscript.slice[0].slice) is cst.Index else "..."
            key = (id(drawn), index)  # (once per index, at its first indexing: `b_obs[mb_inds]`, `b_logprobs[mb_inds]`, ...;
            if key in reported:  # a mask and its complement are two: `data[mask]`, `data[~mask]`)
                continue
            where = self._every_call(site, function)
            if where is None or self.ctx.cuda_evidence is None:
                continue
            reported.add(key)
            self.report(
                site,
                f"`{index}` is made on the host by NumPy (`{short_code(drawn)}`) and indexes the GPU tensor "
                f"`{short_code(subscript.value)}` {where}: PyTorch copies the index to the device at each indexing "
                "(a blocking copy from pageable memory). Make the indices on the device: "
                "torch.randperm(n, device=device), torch.arange(n, device=device).",
            )

    def _numpy_drawn(self, expr: cst.BaseExpression) -> cst.Call | None:
        """The NumPy call (`np.random.uniform(...)`, `np.zeros(...)`) whose array `expr` wraps in
        a tensor (`torch.from_numpy(z).float()`), made in the current loop iteration (through
        names assigned in it); None otherwise."""
        before: dict[str, int] = {}
        cast_array = False  # (a draw cast, `np.random.randn(1, 512).astype("float32")`; not a fill: dgcnn's one-hot of its
        for _ in range(6):  # labels, `np.zeros(...)` filled from the batch, then `.astype(np.float32)`, is data)
            while type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(expr) in _ARRAY_KEEPING:
                cast_array = cast_array or call_name(expr) == "astype"
                expr = expr.func.value
            if type(expr) is cst.Call and (self.ctx.qualname(expr.func) or "") in ("torch.from_numpy", "torch.as_tensor",
                                                                                 "torch.tensor") and expr.args:
                expr = expr.args[0].value
            elif type(expr) is cst.Call:
                qualified = self.ctx.qualname(expr.func) or ""
                drawn = qualified.startswith("numpy.random.") or qualified in _NUMPY_FILLS and not cast_array
                return expr if drawn and self._loops_around(expr) == self.ctx.loops else None
            elif type(expr) is cst.Name and expr.value in self.ctx.scope.assignments:
                name = expr.value  # its latest value met in the pass before those followed, not a move of it
                values = self.ctx.scope.assignments[name][:before.get(name)]
                index = next((i for i in reversed(range(len(values))) if not moves_itself(values[i], name)), None)
                if index is None or values[index] is None:
                    return None
                before[name] = index  # (`z = torch.from_numpy(z)`: the z before)
                expr = values[index]
            else:
                return None
        return None

    def _made_before_loop(self, name: str) -> cst.Call | None:
        """The torch factory that made `name` once, before the loops around the current node
        (its only assignment, outside them: `x = init.uniform(torch.Tensor(n, 1), -15, 15)`, then
        `model(x.cuda())` on each of 5,000 full-batch steps): the same data copied each time."""
        owner = self.ctx.scope.owner_of(name)
        values = owner.assignments.get(name, ()) if owner is not None else ()
        if not self.ctx.loops or len(values) != 1 or values[0] is None:
            return None
        made = _factory_below(values[0], self.ctx)
        if made is None or keyword(made, "device") is not None or not (self.ctx.qualname(made.func) or "").startswith("torch."):
            return None
        around = self._loops_around(made)
        return made if around is not None and len(around) < len(self.ctx.loops) and self.ctx.loops[:len(around)] == around else None

    def _created(self, name: str, move: cst.Call) -> cst.Call | None:
        """The factory call that made `name` last, earlier in the current function (or loop of the
        module's statements) and in the same loop iteration, when the assignments since only move
        or cast it (`z = z.type_as(x)`); not the assignment of `move` itself (`y = Variable(y.cuda())`)."""
        scope = self.ctx.scope
        owner = scope.node if scope.node is not None else self.ctx.loops[0] if self.ctx.loops else None
        if owner is None or name not in scope.assignments:
            return None
        for value in reversed(scope.assignments[name]):  # those met so far in the pass
            if value is not None and any(node is move for node in walk(value)):
                continue
            made = None if value is None else _factory_below(value, self.ctx)
            if made is not None:
                return made if self._loops_around(made) == self.ctx.loops and not _filled(owner, name, move) else None
            if not (type(value) is cst.Call and type(value.func) is cst.Attribute and dotted(value.func.value) == name
                    or moves_itself(value, name)):  # (`padding = padding.cuda() if x.is_cuda else padding`)
                return None
        return None

    def _loops_around(self, call: cst.Call) -> tuple | None:
        """The loops around a call met earlier in the pass."""
        name = call_name(call)
        sites = self.ctx.calls[name] if name is not None else []  # (a factory: named)
        return next((site.loops for site in sites if site.node is call), None)

    def _saves_files(self, loop: cst.CSTNode) -> bool:
        """Whether each iteration of the loop writes a file of what it made (`save_image`,
        `cv2.imwrite`, `plt.savefig`, `imageio.imwrite`, `torch.save`): lightweight-gan's
        `generate()` saving an image per latent."""
        return any(type(node) is cst.Call and (self.ctx.qualname(node.func) in _FILE_WRITERS or call_name(node) in (
            "save_image", "imwrite", "savefig")) for node in walk(getattr(loop, "body", loop)))

    def _every_call(self, site: Site, function, through_loops: bool = True) -> str | None:
        """How often the code at `site` runs: in a loop, in a forward (or a training step), or in a
        function of the source that one of those calls (through up to three calls; a plain loop
        counts only `through_loops`); None otherwise."""
        if function is not None and self._collates(function):
            return None  # (a DataLoader's collate_fn: it runs in the workers, on CPU batches)
        cls = self.ctx.class_of.get(id(function)) if function is not None else None
        if unused_function(self.ctx, function):
            return None  # (nothing in the project runs it: a sampler's DDIM loop no script picks)
        repeats = self._repeats(site)
        if repeats is not None:
            return "on every iteration" if repeats else None
        if function is None:
            return None
        if cls is not None and "onnx" in cls.name.value.lower():
            return None  # an export wrapper: its forward runs once, to be traced
        own = self._per_call(function)
        if own is not None:
            return None if id(site.node) in _optional_branches(function) else f"on {own}"  # (not `if return_cam:`, off by default)
        steps = TrainingSteps.of(self.ctx)
        shown = cls.name.value if cls is not None and function.name.value == "__init__" and self.ctx.classes.get(
            cls.name.value) is cls else function.name.value  # (a constructor runs where its class is made)
        names, seen = [(shown, function)], {shown}
        chain = [(function.name.value, function)]  # (the functions followed: `sample`, then `training_losses` calling it)
        loopless = not _loops_in(function) and not self._saves_files(function)  # (no loop of their own in those
        # followed: not amortized by one, as the accumulators a `validate()` makes before its batch loop, called once
        # per epoch; nor a file written: BigGAN's `generate_sample` saving an image per resolution)
        namespace = SourceNamespace.of(self.ctx)
        for _ in range(_CALL_DEPTH):
            calls = [call for name, defined in names for call in self.ctx.calls.get(name, ())
                     if (type(call.node.func) is cst.Name or name not in _CONTAINER_METHODS and not (
                         name in MODULE_CHAIN and dotted(cast(cst.Attribute, call.node.func).value) != "self"))
                     and id(call.node) not in steps.cached(call.scope.node)  # (not `self.D.train()` for a method `train`)
                     and not (type(call.node.func) is cst.Name and namespace.redefined_run_by(call.node.func, call.unit) not in (
                         None, defined))]  # (a notebook's earlier definition of the name, not this one)
            handed = [call for name, defined in names if self.ctx.class_of.get(id(defined)) is None
                      for call in self.ctx.handed_calls(name)]  # (`sample(ddim_step, model)` calling `f(x_t, t)`)
            calls = [call for call in calls + handed if not (  # (not from code nothing runs: an unused DDIM loop)
                type(call.scope.node) is cst.FunctionDef and unused_function(self.ctx, call.scope.node))]
            if any(call.loops and steps.trains(call.loops[-1]) and id(call.node) not in self._intervals(call.loops[-1], call.scope)
                   for call in calls):
                return f"in `{shown}`, called on every training step"
            generator = next((call.scope.node for call in calls if call.loops and _yields_each(call.loops[-1]) and not few_iterations(
                call.loops[-1], self.ctx, call.scope)), None)
            if generator is not None:
                return f"in `{shown}`, called for every item the generator `{generator.name.value}` yields"
            driver = next((call.scope.node for call in handed if self._iterates(call)), None)
            if driver is not None:
                return f"in `{shown}`, called on every step of `{driver.name.value}`"  # (a sampler's step function)
            looped = next((call for call in calls if self._repeats(call) and not self._heavy(call.loops[-1])), None) if (
                through_loops and loopless and self.ctx.cuda_evidence) else None
            if looped is not None:  # (MAR's `mask_by_order(...)` in each of `sample_tokens`' 64 iterations)
                around = f" in `{looped.scope.node.name.value}`" if type(looped.scope.node) is cst.FunctionDef else ""
                return f"in `{shown}`, called on every iteration of a loop{around}"
            called_from = [call.scope.node for call in calls]
            callers = [caller for caller in called_from if caller is not None and caller.name.value not in seen]
            for caller in callers:
                how = self._per_call(caller)
                if how is not None:
                    return f"in `{shown}`, called on {how}"
            names = [(caller.name.value, caller) for caller in callers]
            seen.update(name for name, _ in names)
            chain += names
            loopless = loopless and not any(_loops_in(caller) or self._saves_files(caller) for _, caller in names)
        if steps.called_every_step(function) or (steps.trains(function) or any(steps.trains(loop) for loop in site.loops if not _over_entries(loop))) and any(
                call.loops for call in steps.callers(function)):
            return f"in `{shown}`, a training step"  # (a helper a step calls; a step a loop calls: SAC's `agent.update()`)
        path = self.ctx.path
        name = shown  # (a function of the module, or a class of it whose constructor makes the tensor)
        top = shown != function.name.value or any(
            d is function and s.parent is self.ctx.module_scope for d, s in self.ctx.functions.get(name, ()))
        if top and not self.ctx.calls.get(name) and path and not path.startswith("<"):
            found = self._run_elsewhere(name, path)
            if found is not None or cls is None:
                return None if found is None else f"in `{name}`, called {found}"
        if top and path and not path.startswith("<"):  # (a module function called here only by other functions
            # of it, the first of which other modules run: PyTorch-YOLOv3's `build_targets`, called by `compute_loss`,
            # which train.py calls every step)
            for outer in self._module_callers(name):
                found = self._run_elsewhere(outer, path)
                if found is not None:
                    return f"in `{shown}`, called by `{outer}`, {found}"
        if cls is None or name != function.name.value or not path or path.startswith("<") or derives_from(
                self.ctx, cls.name.value, MODULE_CLASSES):
            return None
        for method, defined in chain:  # (a helper object's method other modules' training loops call, or one its
            # method calls: SiT's `transport.training_losses(...)` calling `self.sample(x1)`; the source calls it
            # only in methods: subclasses' overrides calling `super().name(...)`)
            if self.ctx.class_of.get(id(defined)) is not cls or not all(
                    self.ctx.class_of.get(id(call.scope.node)) is not None for call in self.ctx.calls.get(method, ())):
                continue
            key = f"{cls.name.value}.{method}"
            if key not in self.elsewhere:
                self.elsewhere[key] = step_caller(path, method, cls.name.value)
            stepping = self.elsewhere[key]
            if stepping is not None:
                return f"in `{key}`, called on every training step ({stepping})" if method == name else \
                    f"in `{name}`, called by `{key}` on every training step ({stepping})"
        return None

    def _built_once(self, function: cst.FunctionDef | None) -> bool:
        """Whether `function`, a function of the module, runs only when models are made: called only
        in `__init__` methods, here or in the modules importing it."""
        if function is None or self.ctx.class_of.get(id(function)) is not None or not self.ctx.path or self.ctx.path.startswith("<"):
            return False
        calls = self.ctx.calls.get(function.name.value, [])
        if calls:
            return all(type(call.scope.node) is cst.FunctionDef and call.scope.node.name.value == "__init__" for call in calls)
        return built_once(os.path.abspath(self.ctx.path), function.name.value)

    def _module_callers(self, name: str) -> list[str]:
        """The functions of the module (at its top level) that call its function `name` by name,
        directly or through others of them (`_CALL_DEPTH` up), that nothing in the module calls."""
        found, pending, seen = [], [name], {name}
        for _ in range(_CALL_DEPTH):
            callers = {call.scope.node.name.value for current in pending for call in self.ctx.calls.get(current, ())
                       if type(call.node.func) is cst.Name and type(call.scope.node) is cst.FunctionDef
                       and call.scope.parent is self.ctx.module_scope} - seen
            seen |= callers
            found += [caller for caller in sorted(callers) if not self.ctx.calls.get(caller)]
            pending = sorted(callers)
        return found

    def _run_elsewhere(self, name: str, path: str) -> str | None:
        """How often other modules of the project run the module's function `name`: "on every
        forward call (where)" (a helper of their models), "on every training step (where)" (one of
        their training loops), or None; asked once per function."""
        if name not in self.elsewhere:
            forward = forward_caller(os.path.abspath(path), name)
            stepping = step_caller(path, name) if forward is None else None
            self.elsewhere[name] = f"on every forward call ({forward})" if forward is not None else \
                f"on every training step ({stepping})" if stepping is not None else None
        return self.elsewhere[name]

    def _repeats(self, site: Site) -> bool | None:
        """Whether the loop around `site` runs it on every iteration: not under an interval test
        (`if i % generate_every == 0:`), not per epoch, not once per iteration that writes a file
        (an image saved per latent: the copy is small next to it) or per setting of a sweep (`for bs
        in bs_list:`, then used by an inner loop's repetitions); None when no loop repeats it (none,
        or a few iterations: ten plots of a 2x2 matrix, not StarGAN's `for dataset in ["CelebA",
        "RaFD"]:` in its loop of 200,000 iterations; in a function, it runs as often as the function:
        SAC's `update()`, looping `gradient_steps` times, 1 by default, at every environment step)."""
        loops = [loop for loop in site.loops if not _over_entries(loop)]  # (a dict's entries: its few keys)
        if not loops or all(few_iterations(around, self.ctx, site.scope) for around in loops):
            return None
        loop = loops[-1]
        steps = TrainingSteps.of(self.ctx)
        if id(site.node) in self._intervals(loop, site.scope):
            return False
        if not steps.trains(loop) and (self._saves_files(loop) or _repeats_inside(loop, site, self.ctx)):
            return False
        return not steps.per_epoch(loop)

    def _heavy(self, loop: cst.CSTNode) -> bool:
        """Whether each iteration of `loop` also runs a loop of its own through a function of the
        source it calls (gpt-neox's prompt loop calling `stream_tokens`, which loops over the
        tokens): what a helper makes once per iteration is small next to it."""
        body = getattr(loop, "body", loop)  # (not a loop over a module's layers: `for blk in self.blocks:`)
        return any(type(node) is cst.Call and any(_loops_in(defined, layers=False) for defined, _ in self.ctx.functions.get(
            call_name(node) or "", ())) for node in walk(body))

    def _iterates(self, call: CallSite) -> bool:
        """Whether `call` (of a function passed as an argument: the step function a sampler is
        given) runs on every iteration of a loop around it that is not a few iterations, an
        epoch loop, nor one writing a file each time (as a factory in it would)."""
        loops = [loop for loop in call.loops if not _over_entries(loop)]
        if not loops or all(few_iterations(around, self.ctx, call.scope) for around in loops):
            return False
        loop = loops[-1]
        steps = TrainingSteps.of(self.ctx)
        return id(call.node) not in self._intervals(loop, call.scope) and not steps.per_epoch(loop) and not (
            not steps.trains(loop) and self._saves_files(loop))

    def _collates(self, function: cst.FunctionDef, depth: int = 0) -> bool:
        """Whether `function` batches a DataLoader's samples: it calls `default_collate`, is named
        for collating (`CutMixCollator.__call__`, `collate_fn`), or only such functions call it
        (`cutmix(batch, alpha)`)."""
        cls = self.ctx.class_of.get(id(function))
        if "collat" in function.name.value.lower() or cls is not None and "collat" in cls.name.value.lower() or any(
                site.scope.node is function for site in self.ctx.calls.get("default_collate", ())):
            return True
        callers = [site.scope.node for site in self.ctx.calls.get(function.name.value, ())]
        return depth < 2 and bool(callers) and all(
            caller is not None and caller is not function and self._collates(caller, depth + 1) for caller in callers)

    def _intervals(self, loop: cst.CSTNode, scope: Scope) -> set[int]:
        """Ids of the calls in a loop's body under an `if` testing an interval (`step % 200 == 0`,
        `epoch == 1`)."""
        found = self.guarded.get(id(loop))
        if found is None:
            steps = TrainingSteps.of(self.ctx)  # (not the end of a step of gradient accumulation: every step)
            found = self.guarded[id(loop)] = calls_under_ifs(loop, lambda branch: interval_test(
                self.ctx, branch.test, (loop,), scope) and not steps.accumulation_boundary(branch, (loop,), None))
        return found

    def _per_call(self, function: cst.FunctionDef) -> str | None:
        """How often a framework runs `function`: every forward call or training step."""
        steps = TrainingSteps.of(self.ctx)
        if function.name.value in steps.engines:
            return "every engine iteration"
        if steps.run_every_step(function):
            cls = self.ctx.class_of.get(id(function))
            stepping = function.name.value == "training_step" or cls is not None and (
                steps.overrides_step_helper(cls, function) or steps.trainer_step(cls, function) or steps.loss_method(cls, function)
                or steps.optimizer_step(cls, function))
            return "every training step" if stepping else "every forward call"
        if function.name.value in PER_CALL_METHODS:
            return "every forward call"
        cls = self.ctx.class_of.get(id(function))
        if function.name.value in _LOSS_METHODS and cls is not None and derives_from(self.ctx, cls.name.value, MODULE_CLASSES) \
                and not self.ctx.calls.get(function.name.value):
            return "every training step"  # `model.loss(scores, labels)`, called by the training loop of another module
        return "every training step" if steps.stepped_elsewhere(function) else None

    def _tensor_like(self, device: cst.BaseExpression, site: Site, function) -> bool:
        """`.to(x_t)` with a tensor the function reads the shape, size or dtype of
        (`torch.randn(x_t.shape).to(x_t)`), in code that uses CUDA: moved to that tensor's
        device, as with `.type_as(x_t)`."""
        if type(device) is not cst.Name or function is None or self.ctx.cuda_evidence is None or \
                DEVICE_LIKE.search(device.value) or self._on_host(device, site.scope, 0):
            return False
        return any(type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == device.value
                   and node.attr.value in _TENSOR_FACTS for node in walk(function.body))

    def _device(self, device: cst.BaseExpression, site: Site) -> bool:
        """Provably CUDA, or a device variable in code that uses CUDA."""
        cuda = self.ctx.is_cuda_device(device, site.scope)
        if cuda is not UNKNOWN:
            return cuda is True
        text = dotted(device) or ""
        last = text.rsplit(".", 1)[-1]
        values = site.scope.assignments.get(text, ()) if type(device) is cst.Name else ()
        if len(values) == 1 and type(values[0]) is cst.Call and call_name(values[0]) == "get_device":
            device = values[0]  # (`device = g_norm.get_device()`, then `.to(device)`)
        if type(device) is cst.Call and call_name(device) == "get_device" and type(device.func) is cst.Attribute and not device.args:
            return not self._on_host(device.func.value, site.scope, 0)  # (`.to(z_mu.get_device())`: its index)
        if last == "device" and "." in text or values and all(
                type(v) is cst.Attribute and v.attr.value == "device" for v in values):
            # another tensor's device (`device = z.device`): a copy whenever that tensor is on the GPU (not
            # one the function made on the host: `var = torch.bernoulli(torch.tensor(p))`, then `.to(var.device)`)
            return not (type(device) is cst.Attribute and self._on_host(device.value, site.scope, 0))
        return bool(text) and not DTYPE_LIKE.search(last) and bool(DEVICE_LIKE.search(text)) and (
            self.ctx.cuda_evidence is not None
        )

    def _fix(self, site: CallSite, made: cst.Call, device) -> FixPlan | None:
        receiver = _receiver(site.node)
        if keyword(made, "device") is not None or star_kwargs(made) or not _below(made, receiver):
            return None  # (made in another statement: no fix here)
        if any(call_name(n) in _RANDOM_FILLS for n in walk(receiver) if type(n) is cst.Call):
            return None  # `torch.empty(n).random_(k)`: on the GPU the draw comes from another generator
        if call_name(site.node) == "type_as":  # made on the other tensor's device, cast there
            created = with_keywords(made, {"device": f"{code(device)}.device"})
            return FixPlan("Create the tensor on the device", (Replace(site, site.node.deep_replace(made, created)),))
        others = [
            a for a in site.node.args
            if a.value is not device and not (a.keyword is not None and a.keyword.value == "non_blocking")
        ]
        if others:  # a dtype or copy= as well: not only a move
            return None
        created = with_keywords(made, {"device": '"cuda"' if device is None else code(device)})
        new = created if receiver is made else receiver.deep_replace(made, created)
        return FixPlan("Create the tensor on the device", (Replace(site, new),))


def _input(expr: cst.BaseExpression, function: cst.FunctionDef | None, at: cst.CSTNode) -> bool:
    """Whether `expr` is an input of the method `function` (a parameter with no default, not
    named as a dtype) or what one of the module's layers gives back (`x = self.to_patch_embedding(img)`):
    a tensor, or a device, where the module runs."""
    if type(expr) is not cst.Name or function is None or DTYPE_LIKE.search(expr.value):
        return False
    if any(param.name.value == expr.value and param.default is None for param in function.params.params[1:]):
        return True
    values = assigned_in(function.body, expr.value, before=at)  # (the last binding before the move)
    return bool(values) and type(last := values[-1]) is cst.Call and type(last.func) is cst.Attribute and dotted(
        last.func.value) == "self"


def _held_attribute(expr: cst.BaseExpression) -> str | None:
    """`name` for `self.name`, also indexed or reshaped (`self.logvar[t]`): a tensor the module holds."""
    while type(expr) is cst.Subscript or type(expr) is cst.Call and type(expr.func) is cst.Attribute and call_name(
            expr) in SAME_DEVICE_METHODS:
        expr = expr.value if type(expr) is cst.Subscript else cast(cst.Attribute, cast(cst.Call, expr).func).value
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return expr.attr.value
    return None


def _loops_in(function: cst.FunctionDef, layers: bool = True) -> bool:
    """Whether the function's body has a loop (a comprehension's is not one; without `layers`,
    nor one over a module's layers: `for blk in self.blocks:`)."""
    return any(type(node) is cst.While or type(node) is cst.For and (layers or not (
        type(node.iter) is cst.Attribute and dotted(node.iter.value) == "self")) for node in walk(function.body))


def _names_attribute(cls: cst.ClassDef, held: str) -> bool:
    """Whether the class spells `held` as a string (`register_buffer("mask", ...)`,
    `setattr(self, "mask", ...)`): it registers or sets that attribute by name, so the tensor is
    one the module moves with it."""
    text = code(cls)
    return f'"{held}"' in text or f"'{held}'" in text


def _targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What an assignment statement binds: `a = b = v`'s `a` and `b`, `(x, self.y) = ...`'s elements."""
    if type(node) is cst.Assign:
        found = [target.target for target in node.targets]
    else:
        found = [cast(cst.AnnAssign, node).target]
    return [element.value for target in found if type(target) in (cst.Tuple, cst.List)
            for element in cast(cst.Tuple, target).elements] + [t for t in found if type(t) not in (cst.Tuple, cst.List)]


def _receiver(move: cst.Call) -> cst.BaseExpression:
    """What a move (`x.to(device)`, `.cuda()`, `.type_as(t)`: a method, visit_Call) is called on."""
    return cst.ensure_type(move.func, cst.Attribute).value


def _below(made: cst.Call, receiver: cst.BaseExpression) -> bool:
    """Whether the factory call is part of the move's receiver chain."""
    expr = receiver
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        if expr is made:
            return True
        expr = expr.func.value
    return expr is made


def _one_value(made: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression | None] | None:
    """(value, count) of a tensor of one number: `torch.tensor([v] * n)`, `torch.tensor([v])`
    (count 1), `torch.tensor(i / n_T)` (no count: 0-dimensional); None for other data."""
    repeated = _repeated(made)
    if repeated is not None:
        return repeated
    data = made.args[0].value if made.args and made.args[0].keyword is None and made.args[0].star == "" else None
    if type(data) is cst.List and len(data.elements) == 1 and type(data.elements[0]) is cst.Element and _number(
            data.elements[0].value):
        return data.elements[0].value, cst.Integer("1")
    if data is not None and type(data) in (cst.Integer, cst.Float, cst.BinaryOperation, cst.UnaryOperation) and _number(data):
        return data, None
    return None


_ROUNDINGS = {"floor", "ceil", "round", "rint", "trunc"}  # NumPy's, of a number: a number


def _surely_number(expr: cst.BaseExpression) -> bool:
    """A number whatever its names hold: a literal, or arithmetic no list or array supports with
    them (`unet_number - 1`, `i / n_T`, `step + 1`; not `a + b`, which may join lists, nor `[v] * n`)."""
    if type(expr) in (cst.Integer, cst.Float):
        return True
    if type(expr) is cst.UnaryOperation:
        return _surely_number(expr.expression)
    if type(expr) is cst.Call:  # (`int(n * ratio)`, `math.floor(...)`, MAR's `np.floor(self.seq_len * mask_ratio)`)
        return _rounded(expr)
    if type(expr) is not cst.BinaryOperation or not (_number(expr.left) and _number(expr.right)):
        return False
    if type(expr.operator) in (cst.Subtract, cst.Divide, cst.FloorDivide, cst.Power):
        return True
    literal_side = any(type(side) in (cst.Integer, cst.Float) for side in (expr.left, expr.right))
    return type(expr.operator) is cst.Add and literal_side or type(expr.operator) is cst.Multiply and any(
        type(side) is cst.Float for side in (expr.left, expr.right))


def _counted(value: cst.BaseExpression) -> bool:
    """`len(y)`: a count, a number for sure (what `torch.Tensor([...])` is given is data as often:
    `torch.Tensor([reward])`, an environment's)."""
    return type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "len"


def _repeated(made: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(value, count) of `torch.tensor([value] * count, ...)`: one value repeated."""
    data = made.args[0].value if made.args and made.args[0].keyword is None and made.args[0].star == "" else None
    if type(data) is not cst.BinaryOperation or type(data.operator) is not cst.Multiply:
        return None
    for listed, count in ((data.left, data.right), (data.right, data.left)):
        if type(listed) is cst.List and len(listed.elements) == 1 and type(listed.elements[0]) is cst.Element:
            return listed.elements[0].value, count
    return None


def _init_assignments(cls: cst.ClassDef, attribute: str) -> list[cst.Assign | cst.AugAssign]:
    """The class's assignments of `self.<attribute>`, when `__init__` makes all of them (a
    constant of the object, perhaps scaled there); empty otherwise."""
    methods = [statement for statement in cls.body.body if type(statement) is cst.FunctionDef]
    assigned = [(method, node) for method in methods for node in walk(method) if type(node) in (cst.Assign, cst.AugAssign, cst.AnnAssign)
                and any(dotted(target) == f"self.{attribute}" for target in _targets(node))]
    if not assigned or any(method.name.value != "__init__" or type(node) is cst.AnnAssign for method, node in assigned):
        return []
    return [cast(cst.Assign | cst.AugAssign, node) for _, node in assigned]


def _init_assignment(cls: cst.ClassDef, attribute: str) -> cst.Assign | None:
    """The class's `__init__` assignment of `self.<attribute>`, when it is the attribute's only
    assignment (a constant of the object); None otherwise."""
    assigned = _init_assignments(cls, attribute)
    return assigned[0] if len(assigned) == 1 and type(assigned[0]) is cst.Assign else None


def _numpy_constant(cls: cst.ClassDef, attribute: str, ctx, depth: int = 0) -> bool:
    """Whether the class assigns `self.<attribute>` in `__init__` only, from NumPy: a value with a
    call of NumPy in it, or math of names and other such attributes (`betas * (1.0 -
    self.alphas_cumprod_prev)`)."""
    assignment = _init_assignment(cls, attribute) if depth <= 3 else None
    if assignment is None:
        return False
    parts = walk(assignment.value)
    if any(type(part) is cst.Call and (ctx.qualname(part.func) or "").startswith("numpy.") for part in parts):
        return True
    held = [dotted(part) or "" for part in parts if type(part) is cst.Attribute and dotted(part.value) == "self"]
    return bool(held) and all(_numpy_constant(cls, name[5:], ctx, depth + 1) for name in held)


def _vector(made: cst.Call) -> bool:
    """Whether the factory makes a vector: `torch.arange(n)`, `torch.randperm(n)`, or a draw of
    one dimension, `torch.randint(k, size=(b,))` (an element of it is a number)."""
    if call_name(made) in _ONE_DIMENSIONAL:
        return True
    size = keyword(made, "size")
    shape = size.value if size is not None else None
    return call_name(made) in _RANDOM and (type(shape) is cst.Tuple and len(shape.elements) == 1 or type(shape) is cst.Integer)


def _yields_each(loop: cst.CSTNode) -> bool:
    """`for input, target in loader: ... yield i, t`: a generator's loop handing out an item per
    iteration (ResNeSt's mixup loader, a prefetcher): what it calls runs for every batch."""
    return type(loop) is cst.For and any(type(node) is cst.Yield for node in walk(loop.body))


def _over_entries(loop: cst.CSTNode) -> bool:
    """`for k, v in d.items():` (or `.keys()`, `.values()`): a pass over a dict's entries."""
    return type(loop) is cst.For and type(loop.iter) is cst.Call and not loop.iter.args and \
        call_name(loop.iter) in ("items", "keys", "values") and type(loop.iter.func) is cst.Attribute


def _constant_array(call: cst.Call, ctx) -> bool:
    """`torch.from_numpy(...)` of an array NumPy makes from constants (`np.array([1, 0, 0, 1])`,
    `np.eye(k)`), through casts and reshapes."""
    if ctx.qualname(call.func) != "torch.from_numpy" or len(call.args) != 1:
        return False
    array = call.args[0].value
    while type(array) is cst.Call and type(array.func) is cst.Attribute and call_name(array) in _ARRAY_SHAPING:
        array = array.func.value
    if type(array) is not cst.Call or not array.args:
        return False
    qualified = ctx.qualname(array.func) or ""
    data = array.args[0].value
    return qualified in _NUMPY_IDENTITY or qualified in ("numpy.array", "numpy.asarray") and (
        type(data) is cst.List or type(data) is cst.Tuple) and all(
        type(element) is cst.Element and _number(element.value) for element in cast(cst.List, data).elements)


def _factory_below(expr: cst.BaseExpression, ctx) -> cst.Call | None:
    """The torch factory call at the bottom of `torch.arange(n).unsqueeze(0)`-like chains (and
    of the `Variable(torch.zeros(n))` wrapper and `init.normal(...)` filler older code puts
    around it), also through
    elementwise math with numbers (`torch.exp(-math.log(period) * torch.arange(half) / half)`,
    the timestep embedding of diffusion models: all of it could run on the device), and either
    branch of a conditional that makes a tensor in both."""
    expr = _factory_base(expr, ctx)
    if type(expr) is cst.Call and _constant_array(expr, ctx):
        return expr  # `torch.from_numpy(np.eye(self.k).flatten().astype(np.float32))`: the same values each time
    if type(expr) is cst.Call and (call_name(expr) in _FACTORIES or call_name(expr) == "Tensor" and (
            len(expr.args) >= 2 or (one := _one_value(expr)) is not None and (_counted(one[0]) or _surely_number(one[0])))):
        # (`torch.Tensor(b, 100)` is sized, `torch.Tensor([len(y)])`, `torch.Tensor([1.0])` one number; `torch.Tensor(image)`,
        # `torch.Tensor([reward])` convert data)
        if call_name(expr) in _DRAWN_FROM and expr.args and not _number(expr.args[0].value) and _factory_below(
                expr.args[0].value, ctx) is None:
            return None  # `torch.bernoulli(torch.zeros_like(c) + p)`: drawn where its input is, not on the CPU
        return expr
    return None


def _factory_base(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """What `expr` is made of below the reshapes, casts, wrappers and math with numbers that keep a
    tensor where it is (see `_factory_below`): a factory's call, or a name, attribute or call
    the tensor comes from."""
    while True:
        if type(expr) is cst.Call and expr.args and call_name(expr) in SAME_DEVICE_FUNCTIONS and ctx.qualname(
                expr.func) == f"torch.{call_name(expr)}":
            expr = expr.args[0].value  # `torch.triu(torch.ones(n, n), diagonal=1)`
        elif type(expr) is cst.Call and (type(expr.func) is cst.Attribute and (call_name(expr) in SAME_DEVICE_METHODS or call_name(
                expr) == "to" and len(expr.args) == 1 and ctx.is_dtype(expr.args[0].value))  # `.to(edge_index.dtype)`
                                       or call_name(expr) == "Variable" and len(expr.args) >= 1):
            expr = expr.func.value if type(expr.func) is cst.Attribute else expr.args[0].value
        elif type(expr) is cst.Call and len(expr.args) == 1 and ctx.qualname(expr.func) in _MATH:
            expr = expr.args[0].value
        elif type(expr) is cst.Call and expr.args and (ctx.qualname(expr.func) or "").startswith("torch.nn.init."):
            expr = expr.args[0].value  # `init.normal(torch.Tensor(b, 100), std=0.1)`: fills and returns its argument
        elif type(expr) is cst.BinaryOperation and _number(expr.left) != _number(expr.right):
            expr = expr.right if _number(expr.left) else expr.left
        elif type(expr) is cst.Comparison and len(expr.comparisons) == 1 and type(expr.comparisons[0].operator) in (
                cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual) and _number(expr.comparisons[0].comparator):
            expr = expr.left  # `torch.rand(n) < p`: a mask drawn on the CPU
        elif type(expr) is cst.UnaryOperation:
            expr = expr.expression
        elif type(expr) is cst.Subscript:
            expr = expr.value  # `torch.eye(d)[None, :, :]`: a part of it, where it is
        elif type(expr) is cst.IfExp and _factory_below(expr.orelse, ctx) is not None:
            expr = expr.body  # `(torch.randn(shape) if t > 0 else torch.zeros(shape)).to(device)`: made either way
        else:
            return expr


_DRAWN_FROM = {"bernoulli", "normal"}  # draws shaped by a tensor they are given, on its device
_MATH = {f"torch.{name}" for name in ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "rsqrt", "sigmoid", "tanh")}


def _number(expr: cst.BaseExpression) -> bool:
    """A number, or arithmetic on numbers, names, `math.` functions, `len()` and a process's rank
    (`-math.log(10000) / half`, `N * dist.get_rank()`): no tensor in it."""
    if type(expr) in (cst.Integer, cst.Float, cst.Name):
        return True
    if type(expr) is cst.Attribute:
        return dotted(expr) is not None
    if type(expr) is cst.UnaryOperation:
        return _number(expr.expression)
    if type(expr) is cst.BinaryOperation:
        return _number(expr.left) and _number(expr.right)
    if type(expr) is cst.Call:
        name = dotted(expr.func) or ""
        if name == "len" or name.rpartition(".")[2] in ("get_rank", "get_world_size"):
            return True  # (an int: `N * torch.distributed.get_rank()`)
        return _rounded(expr)
    return False


def _rounded(call: cst.Call) -> bool:
    """`int(...)`, `float(...)`, or a `math.` function or NumPy rounding (`np.floor`) of numbers: a number."""
    name = dotted(call.func) or ""
    module, _, function = name.rpartition(".")
    return name in ("int", "float") or (module == "math" or module in ("np", "numpy") and function in _ROUNDINGS) and all(
        _number(arg.value) for arg in call.args)



def _filled(function: cst.CSTNode, name: str, move: cst.CSTNode) -> bool:
    """Whether `function` writes values of the program into the tensor `name` (`buf[1:n + 1] =
    lengths`) before `move` copies it: a buffer of host data, which reaches the GPU by a copy
    however it is made (not a write after the move, into the GPU tensor: seq2seq's
    `encoder_outputs[ei] = encoder_output[0][0]`)."""
    writes = [node for node in walk(function) if type(node) is cst.Assign and any(
        type(t.target) is cst.Subscript and type(t.target.value) is cst.Name and t.target.value.value == name
        for t in node.targets) and literal(node.value) is UNKNOWN]
    if not writes:
        return False
    order: dict[int, int] = {}  # (the nodes in source order)
    pending = [function]
    while pending:
        node = pending.pop()
        order[id(node)] = len(order)
        pending.extend(reversed(children(node)))
    return any(order[id(write)] < order.get(id(move), len(order)) for write in writes)


def _from_host_data(made: cst.Call, ctx, scope: Scope | None = None, root: cst.CSTNode | None = None) -> bool:
    """`torch.tensor(state)`, `torch.LongTensor(ids)`: a tensor of values the program holds (not
    constants, nor a `range(n)` or sizes: `torch.FloatTensor(n, d)`; given the `scope` it is made
    in, nor a tensor's shape, `torch.tensor(x.shape)` or a name `scope` only assigns one; given
    the function `root` holding it, nor a name the line above binds to a range, `labels = [i for i
    in range(n)]`), which reach the GPU by a copy however the tensor is made."""
    if call_name(made) not in ("tensor", "as_tensor", *LEGACY_TENSOR_TYPES) or not made.args:
        return False
    data = made.args[0].value
    reaching = reaching_assignment(root, made, data.value) if root is not None and type(data) is cst.Name else None
    if type(reaching) is cst.ListComp or type(reaching) is cst.Call and reaching.args and (call_name(reaching) in (
            "range", "list", "tuple") or ctx.qualname(reaching.func) in _NUMPY_FILLS):
        data = reaching  # (`mask = np.ones(hidden.size())`; not `lengths = list()`, filled by appends: host data)
    values = scope.assignments.get(data.value, ()) if scope is not None and type(data) is cst.Name else ()
    if scope is not None and (_sizes(data) or values and all(value is not None and _sizes(value) for value in values)):
        return False  # (a tensor's shape: sizes, like torch.Size)
    if call_name(made) in LEGACY_TENSOR_TYPES and (len(made.args) > 1 or type(literal(data)) is int or _sizes(data)):
        return False  # sizes (`torch.FloatTensor(n, d)`, `torch.FloatTensor(x.shape)`): a new tensor like torch.empty
    if type(data) is cst.Call and call_name(data) in ("list", "tuple") and data.args:
        data = data.args[0].value
    if type(data) is cst.Call and call_name(data) == "range":
        return False  # made like torch.arange
    if type(data) is cst.ListComp and _over_ranges(data.for_in):
        return False  # `[i for i in range(n) for j in range(i)]`: indices from sizes, like torch.tril_indices
    if _helper_draw(data, ctx):
        return False  # (noise a helper object draws with NumPy: torch could draw it on the device)
    return any(literal(name) is UNKNOWN and not _module_constant(name, ctx) for name in _names_read(data, ctx))


def _module_constant(name: cst.BaseExpression, ctx) -> bool:
    """A name the source binds once, at the top of the module, to a literal, and nowhere else (no
    function's local or parameter): a constant, not data (seq2seq's `SOS_token = 0`, then
    `torch.LongTensor([[SOS_token]])`)."""
    if type(name) is not cst.Name:
        return False
    bound = ctx.by_name.get(name.value, ())
    return len(bound) == 1 and bound[0][1] is ctx.module_scope and bound[0][0] is not None and literal(
        bound[0][0]) is not UNKNOWN and not any(name.value in scope.params for scope in ctx.scopes.values())


def _plain(cls: cst.ClassDef) -> bool:
    """A class deriving from nothing (or `object`): nothing but its own methods moves its tensors."""
    return all(dotted(base.value) == "object" for base in cls.bases)


def _derived_root(expr: cst.BaseExpression, scope: Scope) -> str | None:
    """The name `expr` is computed from through methods, comparisons and single assignments
    (`padding_mask = labels.eq(pad)`, `labels = inputs.clone()`: `inputs`), or None."""
    for _ in range(8):
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
            expr = expr.func.value
        elif type(expr) is cst.Comparison:
            expr = expr.left
        elif type(expr) is cst.Name:
            values = scope.assignments.get(expr.value, [])
            if len(values) != 1 or values[0] is None:
                return expr.value
            expr = values[0]
        else:
            return None
    return None


def _held_with_cpu(function: cst.FunctionDef, scope: Scope) -> set[str]:
    """The names a function's CPU tensors are filled through in place (`probability_matrix =
    torch.full(labels.shape, p)`, then `probability_matrix.masked_fill_(labels.eq(pad), 0.0)`):
    tensors on the CPU too, since the fill needs its mask on the filled tensor's device."""
    found: set[str] = set()
    for node in walk(function.body):
        if type(node) is not cst.Call or call_name(node) != "masked_fill_" or type(node.func) is not cst.Attribute or not node.args:
            continue
        filled = node.func.value
        values = scope.assignments.get(filled.value, []) if type(filled) is cst.Name else []
        made = values[0] if len(values) == 1 else None
        if type(made) is cst.Call and keyword(made, "device") is None and call_name(made) in CONSTANT_FACTORIES:
            root = _derived_root(node.args[0].value, scope)
            if root is not None:
                found.add(root)
    return found


def _literal_table(made: cst.Call) -> bool:
    """`torch.tensor([[0, 0], [1, 0], [0, 1]])`: a list of two or more numbers (or of such lists)
    written out, the same values each call."""
    data = made.args[0].value if made.args and made.args[0].keyword is None and made.args[0].star == "" else None

    def written(expr: cst.BaseExpression) -> bool:
        if type(expr) in (cst.List, cst.Tuple):
            elements = cast(cst.List | cst.Tuple, expr).elements
            return bool(elements) and all(type(e) is cst.Element and written(e.value) for e in elements)
        return type(literal(expr)) in (int, float, bool)

    return type(data) is cst.List and len(data.elements) >= 2 and written(data)


def _sizes(expr: cst.BaseExpression) -> bool:
    """`x.shape`, `x.shape[2:]`, `x.size()`: a tensor's sizes."""
    if type(expr) is cst.Subscript:
        expr = expr.value
    if type(expr) is cst.Call and call_name(expr) == "size" and not expr.args:
        return True
    return type(expr) is cst.Attribute and expr.attr.value == "shape"


def _helper_draw(expr: cst.BaseExpression, ctx) -> bool:
    """`self.noise.sample()`, where `__init__` made `self.noise` an instance of a class of the
    source whose method returns only NumPy draws (TD3's `GaussianNoise.sample` returning
    `np.random.normal(...)`)."""
    if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute or type(expr.func.value) is not cst.Attribute or dotted(
            expr.func.value.value) != "self":
        return False
    held, name = expr.func.value.attr.value, expr.func.attr.value
    made = [assignment.value for cls in ctx.classes.values() if (assignment := _init_assignment(cls, held)) is not None]
    helpers = [ctx.classes.get(dotted(value.func) or "") for value in made if type(value) is cst.Call]
    methods = [statement for helper in helpers if helper is not None for statement in helper.body.body
               if type(statement) is cst.FunctionDef and statement.name.value == name]
    return bool(methods) and len(methods) == len(made) and all(
        (returned := ctx.returns.get(id(method))) and all(
            type(value) is cst.Call and (ctx.qualname(value.func) or "").startswith("numpy.random.") for value in returned)
        for method in methods)


def _over_ranges(clause: cst.CompFor | None) -> bool:
    """Whether every `for` of a comprehension iterates a `range(...)`, with no `if`."""
    while clause is not None:
        if not (type(clause.iter) is cst.Call and call_name(clause.iter) == "range") or clause.ifs:
            return False
        clause = clause.inner_for_in
    return True



def _host_array(expr: cst.BaseExpression, ctx) -> bool:
    """A NumPy array made here (`np.random.normal(...)`, `np.ones(...)`) or a list display: data on the host."""
    if type(expr) is cst.List:
        return True
    return type(expr) is cst.Call and (ctx.qualname(expr.func) or "").startswith("numpy.")


_SIZE_METHODS = {"size", "dim", "numel", "nelement"}
_PRODUCTS = {"ger", "outer"}  # a product of two tensors, made where they are
_IN_PLACE = {"randn": "normal_()", "rand": "uniform_()", "zeros": "zero_()"}  # a factory's fill of an existing tensor
# a tensor's methods giving a tensor where it is: reshapes, casts and elementwise math
_SAME_PLACE_METHODS = SAME_DEVICE_METHODS | ELEMENTWISE_METHODS


def _names_read(node: cst.CSTNode, ctx) -> list[cst.BaseExpression]:
    """The names and attributes whose values `node` reads (not the functions it calls, but
    what `x.tolist()` and `samples["acts"].reshape(-1, 1)` read: a method's receiver that is not
    an imported module, `np`)."""
    if type(node) is cst.Name or type(node) is cst.Attribute:
        return [node]
    if type(node) is not cst.Call:
        return [name for part in children(node) for name in _names_read(part, ctx)]
    parts = [arg.value for arg in node.args]
    if type(node.func) is cst.Attribute and (node.func.attr.value in HOST_COPY_METHODS or ctx.qualname(
            node.func.value) is None and node.func.attr.value not in _SIZE_METHODS):  # (`input.size()`: a shape, no data)
        parts.append(node.func.value)
    return [name for part in parts for name in _names_read(part, ctx)]


def _constant(expr: cst.BaseExpression) -> bool:
    """A literal, or a list or tuple of literals (`[""]`)."""
    if type(expr) is cst.List or type(expr) is cst.Tuple:
        return all(type(e) is cst.Element and _constant(e.value) for e in expr.elements)
    return literal(expr) is not UNKNOWN


def _empty_test(test: cst.BaseExpression) -> bool:
    """`n == 0`, `n <= 0`, `n < 1`, `not sentences` (also `or`-ed): a test for nothing to compute."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        return _empty_test(test.left) or _empty_test(test.right)
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:  # (a collection, by its plural name;
        last = (dotted(test.expression) or "").rpartition(".")[2]  # not a switch: `not self.training`, `not use_cache`)
        return last.endswith("s") and not last.startswith(("is_", "has_", "use_", "do_", "no_"))
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    bound = comparison.comparator
    if type(bound) not in (cst.Integer, cst.Float):
        return False
    value = float(cast(cst.Integer, bound).value)
    return type(comparison.operator) in (cst.Equal, cst.LessThanEqual) and value == 0 or type(
        comparison.operator) is cst.LessThan and value == 1


def _returns_last(branch: cst.If) -> bool:
    """Whether an `if`'s body ends with `return` (not `continue`: an image without boxes in a loop
    over the batch's images is common enough)."""
    body = branch.body.body
    last = body[-1] if body else None
    return type(last) is cst.SimpleStatementLine and bool(last.body) and type(last.body[-1]) is cst.Return


def _returns(body: cst.CSTNode) -> list[cst.Return]:
    """The return statements of a function body (not of the functions defined in it)."""
    found = []
    for child in children(body):
        if type(child) is cst.Return:
            found.append(child)
        elif type(child) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            found += _returns(child)
    return found


def _repeats_inside(loop: cst.CSTNode, site: Site, ctx) -> bool:
    """Whether `loop` is a `for` over settings (a list or a tuple; also a name bound to one)
    whose body holds, beside the call at `site`, a loop of its own: what is made once per
    setting serves that inner loop's iterations (a speed test's input, made once per batch size
    and timed over ten forwards)."""
    if type(loop) is not cst.For:
        return False
    bound = ctx.origin(loop.iter, site.scope) if type(loop.iter) is cst.Name else None
    settings = bound[0] if bound is not None else loop.iter
    if not (type(settings) in (cst.List, cst.Tuple) or type(settings) is cst.Call and call_name(settings) in (
            "list", "tuple", "sorted")):  # (not a `range`: steps of a rollout, a count of classes)
        return False
    return any(type(inner) in (cst.For, cst.While) and inner is not loop and not any(n is site.node for n in walk(inner))
               for inner in walk(loop.body))
