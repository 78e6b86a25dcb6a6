"""What one item of a dataset costs to load: a small, bounded model of `__getitem__`.

The loader rules (TPL101) ask it whether a dataset is worth loading in worker
processes. A dataset class is read with `ast` (its source text: the class node of the
analyzed source rendered, or a module next to the analyzed file, cached by path and
modification time), and its `__getitem__` judged by what it calls:

- *expensive*: per-item file I/O (`open`, `Image.open`, `cv2.imread`, `read_image`,
  audio loads, `np.load`, `torch.load`, reads from an HDF5/LMDB/memmap store opened in
  `__init__`), image decoding and processing, transforms/augmentation
  (`self.transform(x)`, torchvision transforms) and tokenization (`tokenizer(...)`,
  `.encode(...)`), followed into the class's own methods and the module's functions;
- *on-device*: it moves items to the GPU (`.cuda()`, `.to(device)`): worker processes
  cannot do that;
- *cheap*: it only indexes tensors, arrays, lists and dicts held in memory and builds
  small tensors (`torch.tensor(row)`) from them (computing an item, with random tensors
  or math over a whole image, is CPU work: *unknown*);
- *rows*: a Hugging Face `datasets` table, read a row at a time (tens of microseconds
  each: it matters with large batches only);
- *unknown*: anything else (a call the model does not know): callers keep their
  default behaviour.

A branch of `__getitem__` on an attribute that `__init__` copies from a parameter is left out
when the construction decides it (`ModelNet40(partition='test')` never takes `if
self.partition == 'train':`, with its augmentation).

Library datasets are known by name (torchvision's decode a PIL image per item, a
`TensorDataset` indexes tensors, a Hugging Face `datasets` table reads a row from Arrow
memory).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import overload

from .project import Namespace, Place, ast_dotted, base_name, body_nodes, parameter_defaults, parameters
from .vocabulary import DEVICE_LIKE, DTYPE_LIKE

CHEAP, ROWS, UNKNOWN_COST, EXPENSIVE, ON_DEVICE = "cheap", "rows", "unknown", "expensive", "on-device"
_RANK = {CHEAP: 0, ROWS: 1, UNKNOWN_COST: 2, EXPENSIVE: 3, ON_DEVICE: 4}  # which of several wins
# ROWS: a Hugging Face `datasets` table read a row at a time: tens of microseconds a row,
# which only adds up with large batches (ROWS_BATCH rows: milliseconds per step).
ROWS_BATCH = 256
_MAX_DEPTH = 4  # methods and functions followed from __getitem__
_Definition = tuple[ast.FunctionDef | ast.AsyncFunctionDef, Namespace, Place]  # as a namespace's `function` finds it


@dataclass(frozen=True)
class Cost:
    """A dataset's per-item cost: `kind`, what makes it so (`reason`, for a message), the
    code that does (`code`) and where, in a module next to the file ("data.py:31"; empty
    for the analyzed source itself and when not known)."""

    kind: str
    reason: str = ""
    where: str = ""
    code: str = ""  # the call or expression that makes it so
    # a cheap class whose items come from what its constructor is passed: the (parameter
    # name, position) of each such argument, whose own cost the caller must add
    passed: tuple[tuple[str, int], ...] = ()
    in_memory: bool = False  # items converted from arrays held in memory (torchvision's MNIST): no file read

    def worse(self, other: "Cost | None") -> "Cost":
        """The worse of two costs; of two as bad, one held in memory only if both are."""
        if other is None:
            return self
        if _RANK[other.kind] == _RANK[self.kind] and self.in_memory and not other.in_memory:
            return other
        return other if _RANK[other.kind] > _RANK[self.kind] else self

    def described(self) -> str:
        """The reason with its code and place, for a message."""
        said = ", ".join(part for part in (f"`{self.code}`" if self.code else "", self.where) if part)
        return f"{self.reason} ({said})" if said else self.reason


UNKNOWN_DATASET = Cost(UNKNOWN_COST)


@overload
def combine(costs: Iterable[Cost | None], empty: Cost = ...) -> Cost: ...
@overload
def combine(costs: Iterable[Cost | None], empty: None) -> Cost | None: ...
def combine(costs: Iterable[Cost | None], empty: Cost | None = UNKNOWN_DATASET) -> Cost | None:
    """The cost of a dataset that may be any of `costs` (None entries: ignored): the worst;
    `empty` when there is none."""
    found = None
    for cost in costs:
        if cost is not None:
            found = cost if found is None else found.worse(cost)
    return found if found is not None else empty


# -- library datasets ------------------------------------------------------------------
# torchvision datasets held in memory as arrays, which still make a PIL image of every item
_PIL_IN_MEMORY = {"MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10",
                  "USPS", "SEMEION", "FakeData", "Omniglot"}
TENSOR_DATASET = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
WRAPPERS = {"Subset", "ConcatDataset", "ChainDataset", "random_split"}  # torch.utils.data: the cost of what they wrap
HF_SOURCES = {"datasets.load_dataset", "datasets.load_from_disk", "datasets.Dataset.from_dict",
              "datasets.Dataset.from_pandas", "datasets.Dataset.from_list", "datasets.Dataset.from_generator",
              "datasets.Dataset.from_csv", "datasets.Dataset.from_json", "datasets.Dataset.from_parquet"}
# methods of a `datasets.Dataset`/`DatasetDict` that return another one, computed up front
HF_METHODS = {"map", "filter", "with_format", "remove_columns", "rename_column", "rename_columns", "select",
              "select_columns", "shuffle", "train_test_split", "cast", "cast_column", "flatten", "sort",
              "class_encode_column", "add_column", "flatten_indices", "shard", "take", "skip"}
HF_TRANSFORMS = {"with_transform", "set_transform"}  # run on every access
HF_ROWS = Cost(ROWS, "reads its rows one at a time from a Hugging Face Arrow table")
# transformers' (deprecated) text datasets, which tokenize the whole file in `__init__`
_TOKENIZED_UP_FRONT = {"TextDataset", "LineByLineTextDataset", "LineByLineWithRefDataset", "LineByLineWithSOPTextDataset",
                       "TextDatasetForNextSentencePrediction"}


def library_cost(qualified: str, has_transform: bool) -> Cost | None:
    """The per-item cost of a library dataset class called by its qualified name, or None."""
    if qualified in TENSOR_DATASET:
        return Cost(CHEAP, "a TensorDataset only indexes tensors held in memory")
    head, _, last = qualified.rpartition(".")
    if head.startswith("torchvision.datasets"):
        if last in _PIL_IN_MEMORY:
            what = "and applies its `transform`" if has_transform else ""
            return Cost(EXPENSIVE, f"torchvision's {last} makes a PIL image of every item {what}".rstrip(), in_memory=True)
        return Cost(EXPENSIVE, f"torchvision's {last} reads and decodes an image file per item")
    if head.startswith("torchaudio.datasets"):
        return Cost(EXPENSIVE, f"torchaudio's {last} loads an audio file per item")
    if qualified in HF_SOURCES:
        return HF_ROWS
    if last in _TOKENIZED_UP_FRONT and head.startswith("transformers"):
        return Cost(CHEAP, f"transformers' {last} tokenizes the text once and holds the token ids in memory")
    return None


# -- what __getitem__ calls ------------------------------------------------------------
_IMAGE = "decodes an image per item"
_AUDIO = "loads audio per item"
_FILE = "reads a file per item"
_VIDEO = "decodes a video per item"
IO_CALLS = {
    "open": "opens a file per item", "io.open": "opens a file per item",
    "PIL.Image.open": _IMAGE, "PIL.Image.fromarray": "makes a PIL image per item",
    "cv2.imread": _IMAGE, "cv2.imdecode": _IMAGE, "imageio.imread": _IMAGE, "imageio.v2.imread": _IMAGE,
    "imageio.v3.imread": _IMAGE, "skimage.io.imread": _IMAGE, "matplotlib.pyplot.imread": _IMAGE,
    "torchvision.io.read_image": _IMAGE, "torchvision.io.decode_image": _IMAGE, "torchvision.io.decode_jpeg": _IMAGE,
    "torchvision.io.decode_png": _IMAGE, "torchvision.io.read_file": _FILE, "torchvision.io.read_video": _VIDEO,
    "torchvision.datasets.folder.default_loader": _IMAGE, "torchvision.datasets.folder.pil_loader": _IMAGE,
    "soundfile.read": _AUDIO, "librosa.load": _AUDIO, "torchaudio.load": _AUDIO, "scipy.io.wavfile.read": _AUDIO,
    "numpy.load": _FILE, "numpy.fromfile": _FILE, "numpy.loadtxt": _FILE, "numpy.genfromtxt": _FILE,
    "torch.load": _FILE, "pickle.load": _FILE, "json.load": _FILE, "h5py.File": "opens an HDF5 file per item",
    "lmdb.open": "opens an LMDB environment per item", "glob.glob": "lists a directory per item",
    "os.listdir": "lists a directory per item", "pandas.read_csv": _FILE, "pandas.read_parquet": _FILE,
    "pandas.read_json": _FILE, "cv2.VideoCapture": _VIDEO, "decord.VideoReader": _VIDEO,
}
_IO_PREFIXES = (
    ("cv2.", "processes an image per item with OpenCV"),
    ("torchvision.transforms", "applies torchvision transforms per item"),
    ("albumentations", "applies albumentations augmentations per item"), ("PIL.", "processes a PIL image per item"),
    ("kornia.augmentation", "augments every item"), ("torchvision.io.", _FILE),
    ("librosa.", "computes audio features per item"), ("torchaudio.", "processes audio per item"),
)
# attributes holding a store that reads from disk when indexed
STORE_CALLS = {"h5py.File": "reads from an HDF5 file", "lmdb.open": "reads from an LMDB database",
               "numpy.memmap": "reads from a memory-mapped file", "zarr.open": "reads from a zarr store",
               "tables.open_file": "reads from an HDF5 file", "numpy.load": None}  # np.load: only with mmap_mode
_STORE_PREFIXES = (("torchvision.datasets.", "indexes a torchvision dataset, which decodes an image per item"),
                   ("torchaudio.datasets.", "indexes a torchaudio dataset, which loads an audio file per item"))
_TRANSFORM_NAME = re.compile(r"transform|augment|^aug|_aug|preprocess|processor|feature_extractor", re.IGNORECASE)
_TOKENIZER_NAME = re.compile(r"tokeni[sz]er|^tok$|sentencepiece|^sp$|bpe", re.IGNORECASE)


def tokenizes(name: str) -> bool:
    """Whether a dotted callee name is a tokenizer's (`tokenizer`, `self.tok.encode`)."""
    parts = name.split(".")
    return parts[-1] in _TOKENIZE_METHODS or any(_TOKENIZER_NAME.search(part) for part in parts)
_TOKENIZE_METHODS = {"encode", "encode_plus", "batch_encode_plus", "tokenize", "encode_batch", "apply_chat_template",
                     "encode_ordinary", "EncodeAsIds", "word_tokenize"}
_DATA_METHODS = {  # methods whose names say they read, decode or process data
    **dict.fromkeys(("read", "read_bytes", "read_text", "readlines", "readline", "load"), _FILE),
    **dict.fromkeys(("decode", "imdecode"), "decodes data per item"),
    **dict.fromkeys(("convert", "resize", "crop", "thumbnail", "rotate"), "processes an image per item"),
}
_CHEAP_BUILTINS = {
    "len", "int", "float", "str", "bool", "list", "tuple", "dict", "set", "frozenset", "range", "min", "max", "abs",
    "sum", "zip", "enumerate", "isinstance", "round", "sorted", "reversed", "any", "all", "getattr", "hasattr",
    "slice", "divmod", "iter", "next", "map", "filter", "print", "super", "type", "hash", "ord", "chr", "format",
    "repr", "pow", "bytes", "object", "id", "callable", "ValueError", "IndexError", "KeyError", "TypeError",
    "RuntimeError", "AssertionError", "NotImplementedError", "StopIteration", "Exception",
}
# Moving data is cheap: indexing, converting, allocating small tensors, Python scalars and
# strings. Computing it is not: random tensors, elementwise math and reductions over an item
# (a synthesized or augmented image) are CPU work per item, left to the "unknown" default.
_CHEAP_MODULES = ("math.", "random.", "copy.", "itertools.", "functools.", "operator.", "collections.",
                  "os.path.", "bisect.", "string.", "re.", "typing.", "dataclasses.", "json.dumps", "json.loads")
_CHEAP_FUNCTIONS = {
    f"{module}.{name}" for module, names in (
        ("torch", ("tensor", "as_tensor", "from_numpy", "Tensor", "LongTensor", "FloatTensor", "IntTensor",
                   "BoolTensor", "ByteTensor", "DoubleTensor", "HalfTensor", "stack", "cat", "concat", "zeros",
                   "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
                   "tensor_split", "split", "chunk", "flatten", "squeeze", "unsqueeze", "reshape", "is_tensor",
                   "numel", "long", "float", "where", "flip", "fliplr", "flipud", "roll", "permute", "transpose")),
        # (where: a selection, masked_fill's functional form; flip, roll: data moved, not computed)
        ("numpy", ("array", "asarray", "ascontiguousarray", "int64", "int32", "int16", "int8", "uint8", "float32",
                   "float64", "float16", "bool_", "zeros", "ones", "full", "empty", "concatenate", "stack", "arange",
                   "zeros_like", "ones_like", "full_like", "reshape", "squeeze", "expand_dims", "where", "flip",
                   "transpose")),
    ) for name in names
}
_CHEAP_METHODS = {
    "long", "float", "int", "double", "half", "bool", "byte", "clone", "detach", "view", "view_as", "reshape",
    "squeeze", "unsqueeze", "permute", "transpose", "contiguous", "flatten", "numpy", "tolist", "item", "copy",
    "append", "extend", "insert", "get", "items", "keys", "values", "pop", "setdefault", "update", "astype",
    "index", "count", "split", "strip", "lstrip", "rstrip", "lower", "upper", "format", "join", "replace",
    "startswith", "endswith", "size", "dim", "type", "fill_", "masked_fill", "masked_fill_", "expand", "repeat",
    "narrow", "numel", "new_tensor", "new_zeros", "new_ones", "new_full", "zero_", "ravel", "tobytes", "chunk",
    "unbind", "t", "cpu", "copy_", "fill", "tensor_split", "__getitem__", "__len__", "rfind", "find", "partition",
    "rpartition", "splitlines", "zfill", "isdigit", "title", "capitalize", "sample", "choice", "choices",
    "randint", "random", "shuffle", "uniform", "most_common", "iloc", "loc", "flip", "roll",
}


def _self_attr(node: ast.expr) -> str | None:
    """`self.x` (or `self.x.y...`, `self.x[i]`): "x"."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        inner = node.func if isinstance(node, ast.Call) else node.value
        if type(node) is ast.Attribute and type(inner) is ast.Name and inner.id == "self":
            return node.attr
        node = inner
    return None


def _own_attr(node: ast.AST) -> str | None:
    """`self.x`: "x" (not `self.x.y`)."""
    return node.attr if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self" else None


def _short(node: ast.AST, limit: int = 40) -> str:
    """The node's code for a message; a long call as `callee(...)`, a long item as `value[...]`."""
    try:
        text = " ".join(ast.unparse(node).split())
    except Exception:  # an odd node: no snippet
        return ""
    if len(text) <= limit:
        return text
    inner = node.func if type(node) is ast.Call else node.value if type(node) is ast.Subscript else None
    name = ast_dotted(inner) if inner is not None else None
    if name is not None and len(name) <= limit:
        return f"{name}(...)" if type(node) is ast.Call else f"{name}[...]"
    return text[: limit - 3] + "..."


def _device_move(call: ast.Call) -> bool | None:
    """True for `.cuda()` and `.to(<a device>)`, False for `.to(<a dtype>)`, None if neither."""
    func = call.func
    if type(func) is not ast.Attribute:
        return None
    if func.attr == "cuda":
        return True
    if func.attr != "to":
        return None
    target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if target is None:
        return False
    if type(target) is ast.Constant and isinstance(target.value, str):
        return target.value.startswith("cuda")
    text = (ast_dotted(target) or "").rsplit(".", 1)[-1]
    return bool(text) and not DTYPE_LIKE.search(text) and bool(DEVICE_LIKE.search(text))


# -- the cost of a class ---------------------------------------------------------------
def class_cost(found: tuple | None, has_transform: bool = False, depth: int = 0, given: tuple = ()) -> Cost:
    """The per-item cost of a dataset class, as found by a namespace's `klass` (its
    definition, namespace and place); `given`: the constants its construction passes, as
    (keyword or position, value) pairs, which decide the branches of `__getitem__` on the
    attributes `__init__` copies them to (`if self.partition == 'train':` of a test set)."""
    if found is None or depth > 2:
        return UNKNOWN_DATASET
    cls, namespace, place = found
    methods, stores, libraries = _members(cls, namespace, place, depth)
    getitem = methods.get("__getitem__")
    if getitem is None:
        for qualified in libraries:
            cost = library_cost(qualified, has_transform)
            if cost is not None:
                return cost
        return UNKNOWN_DATASET
    body = _Body(cls.name, namespace, methods, stores, libraries, has_transform)
    body.arguments = _arguments(methods.get("__init__"))
    decisive = deciding(found)
    body.constants = _constants(methods.get("__init__"), {attr: place for attr, place in body.arguments.items()
                                                          if place[0] in decisive}, dict(given)) if decisive else {}
    cost = body.function(*getitem, depth=0)
    if cost.kind == CHEAP:
        passed = tuple(sorted(body.indexed.items()))
        return Cost(CHEAP, f"`{cls.name}.__getitem__` only indexes data held in memory", passed=passed)
    return Cost(cost.kind, f"`{cls.name}.__getitem__` {cost.reason}", cost.where, cost.code)


def _arguments(init) -> dict[str, tuple[str, int]]:
    """Attributes `__init__` sets straight from a parameter (`self.x = x`): attribute ->
    (parameter, its position in a call, `self` left out)."""
    if init is None:
        return {}
    function = init[0]
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)][1:]
    keywords = [a.arg for a in function.args.kwonlyargs]
    found = {}
    for target, value in _self_assignments(function):
        if type(value) is not ast.Name:
            continue
        if value.id in params:
            found[target.attr] = (value.id, params.index(value.id))
        elif value.id in keywords:
            found[target.attr] = (value.id, -1)
    return found


def deciding(found: tuple) -> frozenset:
    """The parameters of a dataset class's `__init__` (by name and position) copied to an
    attribute that a test of its methods reads (`self.partition = partition`, then `if
    self.partition == 'train':`): the constants of a construction that `class_cost` uses.
    Kept on the class node."""
    cls = found[0]
    known = cls.__dict__.get("_perf_lint_deciding")
    if known is None:
        init = next((node for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
        arguments = _arguments((init,) if init is not None else None)
        tested = {attr for node in ast.walk(cls) if type(node) is ast.If
                  for part in ast.walk(node.test) if (attr := _own_attr(part)) is not None}
        known = frozenset(key for attr, (param, index) in arguments.items() if attr in tested for key in (param, index))
        cls.__dict__["_perf_lint_deciding"] = known
    return known


def _constants(init, arguments: dict[str, tuple[str, int]], given: dict) -> dict[str, object]:
    """The attributes `__init__` copies a parameter to, with the constant the construction
    passes it (by keyword or position) or, not passed, the parameter's constant default."""
    if init is None:
        return {}
    defaults = parameter_defaults(init[0])
    found = {}
    for attr, (param, index) in arguments.items():
        if param in given or index in given:
            found[attr] = given.get(param, given.get(index))
        elif type(default := defaults.get(param)) is ast.Constant:
            found[attr] = default.value
    return found


def _self_assignments(function) -> list[tuple[ast.Attribute, ast.expr]]:
    """The `self.x = value` assignments of a function (`self.x, self.y = x, y` as two),
    in walking order; kept on the node (a pure function of it: every analysis asks)."""
    found = function.__dict__.get("_perf_lint_self_assignments")
    if found is None:
        found = []
        for item in ast.walk(function):
            if type(item) is not ast.Assign or len(item.targets) != 1:
                continue
            target, value = item.targets[0], item.value
            pairs = [(target, value)]
            if type(target) is ast.Tuple and type(value) is ast.Tuple and len(target.elts) == len(value.elts):
                pairs = list(zip(target.elts, value.elts))
            found += [(t, v) for t, v in pairs if type(t) is ast.Attribute and ast_dotted(t.value) == "self"]
        function.__dict__["_perf_lint_self_assignments"] = found
    return found


def _members(cls: ast.ClassDef, namespace: Namespace, place: Place,
             depth: int) -> tuple[dict[str, _Definition], dict[str, str], list[str]]:
    """The class's methods (with those inherited from classes of the same project), the
    attributes that hold an on-disk store (attribute -> what reading it does) and the
    qualified names of its library base classes."""
    methods: dict[str, _Definition] = {}
    stores: dict[str, str] = {}
    libraries: list[str] = []
    for base in cls.bases:
        name = base_name(base)
        if name is None:
            continue
        local = namespace.klass(name) if "." not in name else None
        if local is not None and depth < 2 and local[0] is not cls:
            inherited, inherited_stores, inherited_libraries = _members(*local, depth + 1)
            methods.update(inherited)
            stores.update(inherited_stores)
            libraries += inherited_libraries
        else:
            qualified = namespace.qualname(name)
            if qualified is not None:
                libraries.append(qualified)
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[node.name] = (node, namespace, place)
    for _ in range(2):  # a store made from another one (`self.imgs = self.h5["images"]`)
        for node, _, _ in methods.values():
            for target, value in _self_assignments(node):
                what = _store(value, namespace, stores)
                if what is not None:
                    stores[target.attr] = what
    return methods, stores, libraries


def _store(value: ast.expr, namespace: Namespace, stores: dict[str, str]) -> str | None:
    """What indexing an attribute assigned `value` does, when it is an on-disk store."""
    if type(value) is ast.Call:
        name = ast_dotted(value.func)
        qualified = namespace.qualname(name) if name else None
        if qualified in STORE_CALLS:
            if qualified == "numpy.load":
                return "reads from a memory-mapped file" if any(k.arg == "mmap_mode" for k in value.keywords) else None
            return STORE_CALLS[qualified]
        for prefix, what in _STORE_PREFIXES:
            if qualified and qualified.startswith(prefix):
                return what
    attr = _self_attr(value)
    return stores.get(attr) if attr is not None and type(value) in (ast.Subscript, ast.Call, ast.Attribute) else None


class _Body:
    """Judges the calls of `__getitem__` and of what it calls."""

    def __init__(self, name, namespace, methods, stores, libraries, has_transform) -> None:
        self.name, self.namespace, self.methods, self.stores = name, namespace, methods, stores
        self.libraries, self.has_transform = libraries, has_transform
        self.seen: set[int] = set()
        self.arguments: dict[str, tuple[str, int]] = {}  # attributes holding a constructor argument
        self.constants: dict[str, object] = {}  # of those, the ones the construction makes constants
        self.indexed: dict[str, int] = {}  # the parameters whose arguments __getitem__ indexes

    def function(self, node, namespace: Namespace, place: Place, depth: int) -> Cost:
        if id(node) in self.seen or depth > _MAX_DEPTH:
            return Cost(CHEAP)  # (a recursion: judged where it started)
        self.seen.add(id(node))
        found = Cost(CHEAP)
        untaken = {id(n) for branch in body_nodes(node) if type(branch) is ast.If
                   and (taken := self._decided(branch.test)) is not None
                   for part in (branch.orelse if taken else branch.body) for n in ast.walk(part)} if self.constants else ()
        judged = sorted((n for n in body_nodes(node, lambdas=True) if type(n) in (ast.Call, ast.Subscript) and id(n) not in untaken),
                        key=lambda n: (n.lineno, n.col_offset, n.end_col_offset or 0))
        for item in judged:  # in source order: the first of the worst is the one reported
            if type(item) is ast.Call:
                cost = self.call(item, namespace, place, depth)
            else:
                cost = self.subscript(item, place)
            found = found.worse(cost)
            if found.kind == ON_DEVICE:
                break
        return found

    def _decided(self, test: ast.expr) -> bool | None:
        """The value of a test on an attribute holding a constant of the construction
        (`self.partition == 'train'`, `self.augment`, `not self.train`), or None."""
        if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            inner = self._decided(test.operand)
            return None if inner is None else not inner
        attr = _own_attr(test)
        if attr is not None:
            return bool(self.constants[attr]) if attr in self.constants else None
        if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in (ast.Eq, ast.NotEq) or type(
                test.comparators[0]) is not ast.Constant:
            return None
        attr = _own_attr(test.left)
        if attr is None or attr not in self.constants:
            return None
        return (self.constants[attr] == test.comparators[0].value) == (type(test.ops[0]) is ast.Eq)

    def subscript(self, node: ast.Subscript, place: Place) -> Cost | None:
        held = node.value
        if type(held) is not ast.Attribute or type(held.value) is not ast.Name:
            return None
        attr = _self_attr(held)
        if attr is not None and attr in self.stores:
            return Cost(EXPENSIVE, f"{self.stores[attr]} per item", place(node.lineno), _short(node))
        if attr is not None and attr in self.arguments:
            name, index = self.arguments[attr]
            self.indexed[name] = index  # a tensor or list is cheap to index, another dataset is not
        return None

    def call(self, node: ast.Call, namespace: Namespace, place: Place, depth: int) -> Cost | None:
        func = node.func
        where = place(node.lineno)
        snippet = _short(node)
        moved = _device_move(node)
        if moved is not None:
            return Cost(ON_DEVICE, "moves each item to the GPU", where, snippet) if moved else None
        name = ast_dotted(func)
        last = func.attr if type(func) is ast.Attribute else name
        if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self":
            if func.attr in self.methods:
                method = self.methods[func.attr]
                return self.function(method[0], method[1], method[2], depth + 1)
            if func.attr in self.stores:
                return Cost(EXPENSIVE, f"{self.stores[func.attr]} per item", where, snippet)
        if type(func) is ast.Attribute and type(func.value) is ast.Call and ast_dotted(func.value.func) == "super":
            for qualified in self.libraries:
                cost = library_cost(qualified, self.has_transform)
                if cost is not None:
                    return Cost(cost.kind, cost.reason, where) if cost.kind != CHEAP else cost
            return UNKNOWN_DATASET if func.attr == "__getitem__" else None
        qualified = namespace.qualname(name) if name else None
        if qualified is not None:
            if qualified in IO_CALLS:
                return Cost(EXPENSIVE, IO_CALLS[qualified], where, snippet)
            for prefix, what in _IO_PREFIXES:
                if qualified.startswith(prefix):
                    return Cost(EXPENSIVE, what, where, snippet)
        elif name in IO_CALLS:  # a builtin (`open`)
            return Cost(EXPENSIVE, IO_CALLS[name], where, snippet)
        receiver = _self_attr(func.value) if type(func) is ast.Attribute else None
        if receiver is not None and receiver in self.stores:
            return Cost(EXPENSIVE, f"{self.stores[receiver]} per item", where, snippet)
        parts = name.split(".") if name else ([last] if last else [])
        if last == "encode" and _str_encode(node):
            return None
        if tokenizes(name or last or ""):
            return Cost(EXPENSIVE, "tokenizes each item", where, snippet)
        if any(_TRANSFORM_NAME.search(part) for part in parts):
            return Cost(EXPENSIVE, "applies a transform to each item", where, snippet)
        if type(func) is ast.Name:
            if func.id in _CHEAP_BUILTINS:
                return None
            local = namespace.function(func.id)
            if local is not None:
                return self.function(local[0], local[1], local[2], depth + 1)
        if qualified is not None and (qualified in _CHEAP_FUNCTIONS or qualified.startswith(_CHEAP_MODULES)):
            return None
        if type(func) is ast.Attribute:
            if func.attr in _DATA_METHODS:
                return Cost(EXPENSIVE, _DATA_METHODS[func.attr], where, snippet)
            if func.attr in _CHEAP_METHODS and (qualified is None or not qualified.startswith(("PIL.", "cv2."))):
                return None
        return Cost(UNKNOWN_COST, "calls a function perf-lint does not know", where, snippet)


def _str_encode(call: ast.Call) -> bool:
    """`text.encode("utf-8")`, `"...".encode()`: a string to bytes, not a tokenizer (a bare
    `encode(...)` is not a method of a string)."""
    func = call.func
    if type(func) is not ast.Attribute:
        return False
    receiver = func.value
    if type(receiver) is ast.Constant and isinstance(receiver.value, str):
        return True
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "encoding"), None)
    return type(given) is ast.Constant and isinstance(given.value, str)


# -- a dataset a function of the project returns --------------------------------------------
_IN_MEMORY = Cost(CHEAP, "its items are a list held in memory")


def returned_cost(found: _Definition | None, index: int | None = None, depth: int = 0) -> Cost:
    """The per-item cost of the dataset a function of the project (as a namespace's
    `function` finds it) returns, or of element `index` of the tuple it returns; followed
    through the names the function assigns, torch's dataset wrappers (and the lists of
    datasets given to them), the functions and dataset classes of its module, and a
    `torch.load` of the file the function `torch.save`d the dataset to (the same object)."""
    if found is None or depth > _MAX_DEPTH:
        return UNKNOWN_DATASET
    returned = _Returned(*found, depth)
    values = [node.value for node in body_nodes(found[0]) if type(node) is ast.Return and node.value is not None]
    return combine(returned.cost(value, index, frozenset()) for value in values)


class _Returned:
    """The costs of a function's expressions (see `returned_cost`)."""

    def __init__(self, function, namespace: Namespace, place: Place, depth: int) -> None:
        self.function, self.namespace, self.depth = function, namespace, depth
        self.nodes = list(body_nodes(function))
        self.params = set(parameters(function).names)

    def cost(self, expr: ast.expr, index: int | None, seen: frozenset) -> Cost | None:
        """None: a name met again while resolving it (the other assignments decide)."""
        if type(expr) is ast.Tuple and index is not None:
            return self.cost(expr.elts[index], None, seen) if index < len(expr.elts) else UNKNOWN_DATASET
        if type(expr) is ast.Name:
            return self._name(expr.id, index, seen)
        if type(expr) is ast.Call:
            return self._call(expr, index, seen)
        if type(expr) is ast.Subscript and index is None:
            return self.cost(expr.value, None, seen)
        if type(expr) in (ast.List, ast.ListComp) and index is None:
            return _IN_MEMORY
        return UNKNOWN_DATASET

    def _name(self, name: str, index: int | None, seen: frozenset) -> Cost | None:
        if (name, index) in seen:
            return None
        values = self._assigned(name)
        if name in self.params or not values:
            return UNKNOWN_DATASET
        seen = seen | {(name, index)}
        return combine((self.cost(v, index if i is None else i, seen) if index is None or i is None else UNKNOWN_DATASET
                        for v, i in values), empty=None)

    def _assigned(self, name: str) -> list[tuple[ast.expr, int | None]]:
        """(value, None) for `name = value`, (value, i) for `..., name, ... = value` (element i);
        only the last, when each is a statement of the function's own body (straight-line
        code: `ds = load(); ds = Subset(ds, idx); return ds`)."""
        found: list[tuple[ast.stmt, ast.expr, int | None]] = []
        for node in self.nodes:
            targets = node.targets if type(node) is ast.Assign else [node.target] if type(node) in (ast.AnnAssign, ast.For) else []
            for target in targets:
                if type(target) is ast.Name and target.id == name:
                    found.append((node, node.value if type(node) is not ast.For else ast.Constant(None), None))
                elif type(target) is ast.Tuple and type(node) is ast.Assign:
                    found += [(node, node.value, i) for i, e in enumerate(target.elts) if type(e) is ast.Name and e.id == name]
        if len(found) > 1 and all(node in self.function.body for node, _, _ in found):
            found = [max(found, key=lambda item: item[0].lineno)]
        return [(value, i) for _, value, i in found]

    def _appended(self, name: str) -> list[ast.expr]:
        """What `name.append(x)` calls of the function add to the list `name`."""
        return [
            node.args[0] for node in self.nodes
            if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "append"
            and type(node.func.value) is ast.Name and node.func.value.id == name and len(node.args) == 1
        ]

    def _call(self, call: ast.Call, index: int | None, seen: frozenset) -> Cost | None:
        name = ast_dotted(call.func)
        qualified = (self.namespace.qualname(name) if name else None) or ""
        has_transform = any(k.arg and "transform" in k.arg and not _none(k.value) for k in call.keywords)
        if qualified == "torch.load" and call.args and index is None:
            saved = [node.args[0] for node in self.nodes if type(node) is ast.Call and len(node.args) >= 2
                     and self.namespace.qualname(ast_dotted(node.func) or "") == "torch.save"
                     and ast.dump(node.args[1]) == ast.dump(call.args[0])]
            return combine((self.cost(value, None, seen) for value in saved), empty=UNKNOWN_DATASET)
        known = library_cost(qualified, has_transform) if qualified else None
        if known is not None:
            return known
        func = call.func
        if type(func) is ast.Attribute and func.attr in HF_TRANSFORMS:
            return Cost(EXPENSIVE, f"`{func.attr}` runs a function on every item it reads", "", _short(call))
        if type(func) is ast.Attribute and func.attr in HF_METHODS and index is None:  # `table.map(tokenize)`
            base = self.cost(func.value, None, seen)
            return base if base is None or base.kind in (ROWS, EXPENSIVE) else UNKNOWN_DATASET
        head, _, last = qualified.rpartition(".")
        if head.startswith("torch.utils.data") and last in WRAPPERS and call.args:
            return combine((self.cost(inner, None, seen) for inner in self._datasets(call.args[0])), empty=None)
        if name is None or "." in name:
            return UNKNOWN_DATASET
        function = self.namespace.function(name)
        if function is not None:
            return returned_cost(function, index, self.depth + 1)
        cls = self.namespace.klass(name)
        if cls is None or index is not None:
            return UNKNOWN_DATASET
        cost = class_cost(cls, has_transform)
        if not cost.passed:
            return cost
        passed = [_passed(call, param, position) for param, position in cost.passed]
        inner = combine((self.cost(arg, None, seen) for arg in passed if arg is not None), empty=None)
        return cost if inner is None or inner.kind == CHEAP else inner

    def _datasets(self, expr: ast.expr) -> list[ast.expr]:
        """The datasets a wrapper is given: one, a list written out, or a list the function
        builds with `append`."""
        if isinstance(expr, (ast.List, ast.Tuple)):
            return list(expr.elts)
        if type(expr) is ast.Name and [v for v, _ in self._assigned(expr.id)] and all(
                type(v) is ast.List and not v.elts for v, _ in self._assigned(expr.id)):
            return self._appended(expr.id) or [expr]
        return [expr]


def _passed(call: ast.Call, param: str, position: int) -> ast.expr | None:
    """The argument a call gives the parameter `param` (at `position`; -1: keyword only)."""
    if 0 <= position < len(call.args) and type(call.args[position]) is not ast.Starred:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == param), None)


def _none(node: ast.expr) -> bool:
    return type(node) is ast.Constant and node.value is None
