"""The torch and training-framework names the analyzers share (TorchFix's common.py is the model).

One set per meaning. Where a rule needs a different set, it says so next to its own addition
(`_PER_CALL = PER_CALL_METHODS | {...}`) rather than keeping a diverging copy.
"""

from __future__ import annotations

import re

# Clocks a program reads to time an interval of wall time.
CLOCKS = {
    "time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
    "time.monotonic_ns", "timeit.default_timer",
}
# The names the calls of CLOCKS end with (`perf_counter` of `time.perf_counter()`).
CLOCK_NAMES = {name.rpartition(".")[2] for name in CLOCKS}

# Tensor methods that copy a value to the host, and so wait for the GPU to finish its queued work.
HOST_COPY_METHODS = {"item", "cpu", "numpy", "tolist"}
# `math` tests that turn their argument into a Python float first: a host read of a tensor.
MATH_TESTS = frozenset({"math.isnan", "math.isinf", "math.isfinite"})
ONE_TENSOR_TESTS = frozenset({"isnan", "isinf", "isfinite", "logical_not"})  # a boolean tensor of one tensor
# torch functions and tensor methods making a boolean tensor (`torch.ge(a, b)`, `a.ne(b)`, `torch.isnan(x)`)
MASK_MAKERS = frozenset({"ge", "gt", "le", "lt", "eq", "ne", "logical_and", "logical_or"}) | ONE_TENSOR_TESTS
# Methods that wait for the GPU: the host copies, a stream's or event's synchronize, an event's elapsed time.
SYNC_METHODS = HOST_COPY_METHODS | {"synchronize", "elapsed_time"}

# torch factories that fill a new tensor of the size they are given with one value.
CONSTANT_FACTORIES = {"zeros", "ones", "empty", "full"}
# torch factories that fill a new tensor of the size they are given with random values.
RANDOM_FACTORIES = {"rand", "randn", "randint"}
# torch factories of a new tensor from a size alone: what every rule counts as a factory.
SIZED_FACTORIES = CONSTANT_FACTORIES | RANDOM_FACTORIES
# torch factories whose values do not depend on a random generator.
DETERMINISTIC_FACTORIES = CONSTANT_FACTORIES | {"arange", "linspace", "logspace", "eye", "tensor", "as_tensor"} | {
    f"{window}_window" for window in ("hann", "hamming", "blackman", "bartlett", "kaiser")}  # (STFT windows too)
# Older code's typed constructors (`torch.FloatTensor(n, d)`, `torch.cuda.LongTensor`).
LEGACY_TENSOR_TYPES = frozenset(
    f"{kind}Tensor" for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool"))
# torch functions that make a tensor on the CPU unless given a device (not `torch.round(x)`: where
# x is), the typed constructors of `torch` (not of `torch.cuda`) too.
HOST_FACTORIES = DETERMINISTIC_FACTORIES | RANDOM_FACTORIES | LEGACY_TENSOR_TYPES | {"from_numpy", "randperm", "Tensor"}
# Tensor methods whose result lives where the tensor does (casts, reshapes, copies, arithmetic,
# in-place fills): a CPU tensor stays one through them (not `.type(...)`, which may move it).
SAME_DEVICE_METHODS = frozenset({
    "unsqueeze", "squeeze", "view", "reshape", "expand", "repeat", "flatten", "t", "float", "half", "bfloat16",
    "double", "long", "int", "bool", "contiguous", "fill_", "fill_diagonal_", "zero_", "transpose", "permute", "expand_as", "view_as",
    "reshape_as", "clone", "detach", "div", "mul", "random_", "normal_", "uniform_",
})

# elementwise math a tensor's method does where the tensor is (`x.sign().mul(x.abs().sqrt())`)
ELEMENTWISE_METHODS = frozenset({"add", "sub", "pow", "neg", "abs", "sign", "exp", "log", "sqrt", "sin", "cos", "sigmoid", "tanh"})

# tensor methods that copy to another dtype (unless it is the same), and the types `.type()`/`.to()` cast to
CAST_METHODS = frozenset({"float", "double", "half", "long", "int"})
CAST_TYPES = frozenset({"FloatTensor", "DoubleTensor", "LongTensor", "float", "float32", "float64", "double", "long", "int64"})

# torch functions whose result is on the device of their first argument (`torch.triu(torch.ones(n, n))`)
SAME_DEVICE_FUNCTIONS = frozenset({"triu", "tril", "flip", "roll"})

# torch namespaces other than `torch` itself whose public functions run tensor ops.
LIGHTNING_MODULES = frozenset(f"{package}.LightningModule" for package in (  # as imports spell it
    "pytorch_lightning", "pytorch_lightning.core", "lightning", "lightning.pytorch", "lightning.pytorch.core"))
TORCH_MODULES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})  # `nn.Module` as imports spell it
# other deep-learning frameworks: a source importing one of them and nothing built on torch is not PyTorch code
OTHER_FRAMEWORKS = frozenset({"mxnet", "gluoncv", "tensorflow", "keras", "paddle", "jax", "flax", "mindspore", "oneflow"})
TORCH_PACKAGES = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning", "composer",
                            "accelerate", "ignite", "monai", "timm", "deepspeed"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})  # custom ops: `Op.apply(x)`
OPTIMIZERS = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})  # a custom optimizer's `step`: once per training step
# Hugging Face's Trainer and trl's, whose `compute_loss` and `training_step` run on every training step
HF_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
                         *(f"trl.{name}Trainer" for name in ("SFT", "DPO", "KTO", "GRPO", "RLOO", "Reward", "ORPO", "CPO", "PPO"))})
# the hooks a Hugging Face Trainer subclass overrides to hand the Trainer its loaders (it copies each
# batch to `args.device`, the GPU when there is one): the training loader every epoch, the evaluation
# loader at each evaluation of an `eval_strategy` other than "no"
HF_LOADER_HOOKS = frozenset({"get_train_dataloader", "get_eval_dataloader"})
HF_TRAINING_ARGUMENTS = frozenset({"transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments",
                                   "transformers.training_args.TrainingArguments"})
# AMP's loss scalers: `get_scale()` (and `state_dict()`, which calls it) reads the CUDA scale with `.item()`
GRAD_SCALERS = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
                          "torch.amp.grad_scaler.GradScaler"})
# coqui's Trainer (the `trainer` package of coqui TTS): the base of its models, the hooks it gets their
# loaders from (copying each batch to the GPU when it trains on one), and those it runs on every step
COQUI_MODELS = frozenset({"trainer.TrainerModel", "trainer.model.TrainerModel"})
COQUI_LOADER_HOOKS = frozenset({"get_data_loader", "get_train_data_loader", "get_eval_data_loader"})
COQUI_STEP_HOOKS = ("format_batch_on_device", "train_step")
MODULE_CLASSES = TORCH_MODULES | LIGHTNING_MODULES
TENSOR_NAMESPACES = ("torch.nn.functional", "torch.linalg", "torch.fft", "torch.special")
# Functions of `torch` that neither run tensor ops nor return a tensor.
NOT_TENSOR_OPS = {
    "device", "save", "load", "compile", "no_grad", "enable_grad", "inference_mode", "manual_seed", "seed",
    "initial_seed", "typename", "dtype", "finfo", "iinfo", "use_deterministic_algorithms", "numel",
}

# Methods a framework calls once per batch.
PER_CALL_METHODS = {"forward", "__call__", "training_step"}

# A function's name that says it evaluates: `_eval_step(model, dataset)`, `validate`, DLRM's `inference`.
EVALUATION_NAME = re.compile(r"eval|valid|test|infer|predict", re.I)

# Words that a name holding a module (or a function running one) contains: `model`, `self.encoder`.
MODEL_WORDS = ("model", "net", "module", "encoder", "decoder")
# Whole names that hold a module in training scripts: `model(x)`, `net(x)`.
MODEL_NAMES = ("model", "net", "network", "model_engine")

# A name that holds a device (`device`, `args.gpu`, `local_rank`).
DEVICE_LIKE = re.compile(r"(device|dev|gpu|cuda|rank)", re.IGNORECASE)
# A name that holds a dtype (`dtype`, `torch.float16`): a `.to(x)` with it moves no tensor to a device.
DTYPE_LIKE = re.compile(r"dtype|float|half|bfloat|int\d|long|double|bool", re.IGNORECASE)

# A loop of at most this many iterations (`for i in range(5):`) runs too few times for its cost to matter.
SHORT_LOOP = 10

# Positions of DataLoader's parameters in its signature.
NUM_WORKERS, COLLATE_FN, PIN_MEMORY = 5, 6, 7
# Lightning: the Trainer methods that run the fit loop, and a module's loader hooks they call every epoch.
FIT_METHODS = {"fit", "validate"}
EVERY_EPOCH_HOOKS = {"train_dataloader", "val_dataloader"}
# Callback methods a training loop's framework calls on every batch: fastai's (and its course's
# miniai), Lightning's, Hugging Face's TrainerCallback, Keras-style; of a class named for callbacks.
BATCH_HOOKS = {"before_batch", "after_pred", "after_loss", "before_backward", "after_backward", "before_step", "after_step",
               "after_batch", "on_train_batch_start", "on_train_batch_end", "on_before_backward", "on_after_backward",
               "on_before_optimizer_step", "on_before_zero_grad", "on_step_begin", "on_step_end", "on_substep_end",
               "on_batch_begin", "on_batch_end",
               "on_forward", "on_loss_and_meter", "on_backward", "on_update"}  # (ClassyVision's ClassyHook, VISSL's hooks)
CALLBACK_CLASS = re.compile(r"(Callback|CB|ClassyHook)$")
# Trainer keywords Lightning 2.0 removed (a 1.x Trainer, which used the CPU unless a keyword of
# LIGHTNING_DEVICES chose otherwise), and those keywords.
LIGHTNING_1_ONLY = {"progress_bar_refresh_rate", "weights_summary", "checkpoint_callback", "flush_logs_every_n_steps",
                    "resume_from_checkpoint", "distributed_backend", "amp_backend", "amp_level", "auto_lr_find",
                    "auto_scale_batch_size", "replace_sampler_ddp", "track_grad_norm", "move_metrics_to_cpu",
                    "stochastic_weight_avg", "terminate_on_nan", "weights_save_path", "log_gpu_memory",
                    "reload_dataloaders_every_epoch", "process_position", "prepare_data_per_node"}
LIGHTNING_DEVICES = {"accelerator", "gpus", "devices", "tpu_cores", "ipus", "auto_select_gpus", "strategy", "num_processes"}

# Calls a loop's iterable passes through on its way to the loop: `enumerate(loader)`, `tqdm(loader)`.
ITER_WRAPPERS = {"enumerate", "tqdm", "iter", "zip", "track", "progress_bar", "list"}

# Signs that code runs on a GPU: a device string (or the GPU-only backend), the accelerator
# APIs and engines. Asking whether there is a GPU is no such sign.
CUDA_DEVICE = re.compile(r"cuda(:\d+)?|nccl")
CUDA_STRING = re.compile(rf"""^[rRbBuU]?(['"])({CUDA_DEVICE.pattern})\1$""")  # the same, as a string literal's code
GPU_APIS = ("torch.cuda.", "torch.accelerator.", "deepspeed.")
# (nn.DataParallel: only there to spread the work over GPUs; without one it just calls the module)
GPU_ENGINES = {"accelerate.Accelerator", "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
               "torch.nn.parallel.data_parallel.DataParallel"}
FABRICS = {"lightning.Fabric", "lightning.fabric.Fabric", "lightning.fabric.fabric.Fabric", "lightning_fabric.Fabric"}
GPU_QUERIES = {  # (and the seeding of CUDA's generators, which scripts do whether or not they use a GPU)
    f"torch.{backend}.{query}" for backend in ("cuda", "accelerator")
    for query in ("is_available", "device_count", "get_device_name", "get_device_properties", "get_device_capability")
} | {f"torch.cuda.{seed}" for seed in ("manual_seed", "manual_seed_all", "seed", "seed_all")}


def gpu_api(qualified: str) -> bool:
    """Whether a call of `qualified` (a dotted name, imports resolved) puts work on a GPU."""
    return qualified.startswith(GPU_APIS) and qualified not in GPU_QUERIES or qualified in GPU_ENGINES
