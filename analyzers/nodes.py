"""Helpers over libcst nodes that every analysis uses: a node's children, its source text,
the parts of a call, the constant a literal holds, and the memo store that keeps what they
compute per document (`remembered`). Nothing here depends on where a node is met; facts
about a source's names, scopes and loops are in context.py.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Sequence
from typing import cast

import libcst as cst

from .vocabulary import FABRICS, ITER_WRAPPERS, LIGHTNING_1_ONLY, LIGHTNING_DEVICES

# What a value is when it is not provably constant: false, and never equal to a value.
UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN", "__bool__": lambda self: False})()

# Fields that hold only whitespace, punctuation or operators: no rule looks at them as nodes.
_SKIPPED_FIELDS = (
    "whitespace", "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma",
    "semicolon", "equal", "colon", "dot", "trailing_whitespace", "lbrace", "rbrace", "lbracket", "rbracket",
    "newline", "operator", "indent", "star", "asynchronous", "first_line", "empty_lines", "last_line",
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}  # isinstance(x, CSTNode) by type: CSTNode is an ABC, slow to test
# Concrete node classes have no subclasses, so the analyzers test `type(x) is C`
# (an isinstance test that fails goes through ABCMeta.__instancecheck__).


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's children that can matter to a rule, in field order (source order for
    everything but a function's parameters): whitespace and punctuation are left out.
    Several times cheaper than libcst's `children`, which visits the node to find them."""
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = tuple(f.name for f in dataclasses.fields(node) if not f.name.startswith(_SKIPPED_FIELDS))
        _CHILD_FIELDS[type(node)] = fields
    found: list[cst.CSTNode] = []
    for name in fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            found.extend(v for v in value if _is_node(type(v)))
        elif _is_node(kind):
            found.append(value)
    return found


def _is_node(kind: type) -> bool:
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


_ANALYSIS = threading.local()  # the memos of the analysis running in this thread


def use_memos(memos: dict) -> None:
    """Where `remembered` keeps results for the analysis about to run in this thread:
    the document's (kept across its analyses, whose unchanged statements are the same
    nodes) or a fresh dict."""
    _ANALYSIS.memos = memos


def document_memo(owner) -> dict:
    """A dict `owner` keeps for the document under analysis (fresh for a one-off analysis),
    emptied with its remembered results."""
    memos = getattr(_ANALYSIS, "memos", None)
    if memos is None:
        memos = _ANALYSIS.memos = {}
    memo = memos.get(owner)
    if memo is None:
        memo = memos[owner] = {}
    return memo


def remembered(owner, node: cst.CSTNode, compute, *extra):
    """`compute()`, the result of `owner` (a function of the immutable `node` and the
    hashable `extra` only), computed once per document: kept in its DocumentState, so
    the statements an edit left alone are not computed again. Keyed by `id` (libcst's
    node hash is a Python method), with the node kept alive next to its result."""
    memo: dict[object, tuple[cst.CSTNode, object]] = document_memo(owner)
    key: object = (id(node), *extra) if extra else id(node)
    found = memo.get(key)
    if found is None or found[0] is not node:
        found = memo[key] = (node, compute())
    return found[1]


def code(node: cst.CSTNode) -> str:
    """The node's source text (remembered: rendering is slow)."""
    return remembered(code, node, lambda: cst.Module([]).code_for_node(node))


def short_code(node: cst.CSTNode, limit: int = 40) -> str:
    """The node's source text for a message, cut at `limit` characters."""
    return shortened(code(node), limit)


def shortened(text: str, limit: int = 40) -> str:
    """`text` for a message, on one line (`f(\n    a,\n)`: `f(a,)`), cut at `limit` characters."""
    if "\n" in text:
        text = _INSIDE_BRACKETS.sub("", _LINE_BREAK.sub(" ", text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


_LINE_BREAK = re.compile(r"[ \t]*(?:#[^\n]*)?\\?\r?\n[ \t]*")  # a line's end, its comment and the next indentation
_INSIDE_BRACKETS = re.compile(r"(?<=[(\[{]) | (?=[)\]}])")


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if type(expr) is cst.Name:
        return expr.value
    parts = []
    while type(expr) is cst.Attribute:
        parts.append(expr.attr.value)
        expr = expr.value
    if type(expr) is cst.Name:
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def call_name(call: cst.Call) -> str | None:
    """The last name of a call's callee: `loss.item()` -> "item", `f()` -> "f"."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value
    if type(func) is cst.Name:
        return func.value
    return None


def iteration_source(expr: cst.BaseExpression) -> cst.BaseExpression:
    """What a loop's iterable takes its items from: `loader` of `enumerate(tqdm(loader))`."""
    while type(expr) is cst.Call and call_name(expr) in ITER_WRAPPERS - {"zip"} and expr.args:
        expr = expr.args[0].value
    return expr


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def star_kwargs(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.star == "**"]


def positional(call: cst.Call, index: int) -> cst.Arg | None:
    plain = [arg for arg in call.args if arg.keyword is None and arg.star == ""]
    return plain[index] if index < len(plain) else None


def argument(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """The expression passed as parameter `name` (keyword, or positional `index`)."""
    arg = keyword(call, name) or (positional(call, index) if index >= 0 else None)
    return None if arg is None else arg.value


def passed_for(call: cst.Call, function: cst.FunctionDef, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """What `call` passes for the parameter of `function` that `value` (what it returns or
    yields the items of) is: `cycle(DataLoader(val_ds))` gives its loader, not every caller's."""
    inner = iteration_source(value)
    names = [param.name.value for param in function.params.params]
    if type(inner) is not cst.Name or inner.value not in names or type(call.func) is not cst.Name or any(
            arg.star for arg in call.args):
        return None
    return argument(call, names.index(inner.value), inner.value)


_CONSTANTS = {"True": True, "False": False, "None": None}


def literal(expr: cst.BaseExpression):
    """The value of a literal expression, or UNKNOWN."""
    if type(expr) is cst.Name:
        return _CONSTANTS.get(expr.value, UNKNOWN)
    if type(expr) is cst.Integer:
        try:
            return int(expr.value.replace("_", ""), 0)
        except ValueError:
            return UNKNOWN
    if type(expr) is cst.Float:
        try:
            return float(expr.value.replace("_", ""))
        except ValueError:
            return UNKNOWN
    if type(expr) is cst.SimpleString or type(expr) is cst.ConcatenatedString:
        string = expr
        value = remembered(literal, string, lambda: string.evaluated_value)  # ast.literal_eval: slow
        return value if isinstance(value, str) else UNKNOWN
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        value = literal(expr.expression)
        return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN
    return UNKNOWN


def trainer_device(call: cst.Call, value) -> str | None:
    """The device a Lightning Trainer's keywords choose: "cpu" (`accelerator="cpu"`, `gpus=0`, or a
    1.x Trainer, known by a keyword 2.0 removed, that chooses no device: 1.x trained on the CPU
    unless told otherwise), "gpu" (`accelerator="gpu"` or `"cuda"`, `gpus=1`: a count other than 0,
    a list of indices), None when they do not say (2.0 takes the GPU when there is one). `value`
    reads a keyword's expression (`literal`, or the context's `value` in the call's scope)."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    accelerator = value(keywords["accelerator"]) if "accelerator" in keywords else None
    gpus = keywords.get("gpus")
    count = value(gpus) if gpus is not None else None
    if accelerator == "cpu" or count == 0:
        return "cpu"
    if accelerator in ("gpu", "cuda") or (type(gpus) is cst.List and bool(gpus.elements) if count is UNKNOWN else
                                          type(count) is int and count != 0 or type(count) is str and count not in ("", "0")):
        return "gpu"
    if keywords.keys() & LIGHTNING_1_ONLY and not keywords.keys() & LIGHTNING_DEVICES and not any(arg.star for arg in call.args):
        return "cpu"
    return None


def trainer_gpu(qualified: str, call: cst.Call, value=literal) -> bool:
    """Whether `call`, of `qualified`, makes a Lightning Trainer or Fabric not told to use the
    CPU (see `trainer_device`, given `value`), or a composer Trainer not given another device
    (`device="cpu"`, "tpu", "mps"): they take the GPU when there is one and move the model and
    the batches to it."""
    if qualified.startswith("composer.") and qualified.endswith(".Trainer"):
        device = keyword(call, "device")
        chosen = value(device.value) if device is not None else None
        made = dotted(device.value.func) or "" if device is not None and type(device.value) is cst.Call else ""
        return chosen not in ("cpu", "tpu", "mps") and not made.endswith(("DeviceCPU", "DeviceTPU", "DeviceMPS"))
    return (qualified in FABRICS or qualified.endswith(".Trainer") and qualified.startswith(("lightning.", "pytorch_lightning."))) \
        and trainer_device(call, value) != "cpu"


def names_in(root: cst.CSTNode, attributes: bool = True) -> set[str]:
    """Every name under `root` (`root` itself included); without `attributes`, only the names
    it reads (`os` of `os.cpu_count()`, not the attribute `cpu_count`)."""
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if not attributes:
                node.value.visit(self)
            return attributes

    root.visit(Names())
    return found


def assigned_in(block: cst.CSTNode, name: str, before: cst.CSTNode | None = None) -> list:
    """The values `block` assigns to `name` (`X, y = X.to("cpu"), y` gives `X.to("cpu")`;
    an unpacked value, None); with `before`, only by statements that end before that node is
    evaluated (not `labels = f(labels.numpy())`, which reads `labels` first)."""
    found: list[cst.BaseExpression | None] = []
    met = False

    class Assignments(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal met
            met = met or node is before
            return not met and super().on_visit(node)

        def leave_Assign(self, node: cst.Assign) -> None:
            if met:
                return
            for target in node.targets:
                if type(target.target) is cst.Name and target.target.value == name:
                    found.append(node.value)
                elif type(target.target) in (cst.Tuple, cst.List) and name in names_in(target.target):
                    elements = cast(cst.Tuple, target.target).elements
                    values = node.value.elements if type(node.value) is cst.Tuple else ()
                    index = next(i for i, e in enumerate(elements) if name in names_in(e.value))
                    found.append(values[index].value if len(values) == len(elements) else None)

    block.visit(Assignments())
    return found


def call_result_name(statement: cst.SimpleStatementLine) -> str | None:
    """The name the statement's first part binds to a call's result (`start = time.time()`)."""
    small = statement.body[0] if statement.body else None
    if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
        if type(small.value) is cst.Call:
            return small.targets[0].target.value
    return None


def subtracts(statements: Sequence[cst.CSTNode], name: str) -> bool:
    """Whether any of the statements computes `... - name` (the interval is used)."""
    return any(name in _subtracted(statement) for statement in statements)


def _subtracted(statement: cst.CSTNode) -> frozenset[str]:
    """The names `n` of the `... - n` the statement computes (remembered)."""

    def names() -> frozenset[str]:
        return frozenset(node.right.value for node in walk(statement) if type(node) is cst.BinaryOperation
                         and type(node.operator) is cst.Subtract and type(node.right) is cst.Name)

    return remembered(_subtracted, statement, names)


_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def aborts(branch: cst.If) -> bool:
    """Whether an `if`'s body ends the program (`raise`, `sys.exit(...)`): it runs at most once."""
    body = branch.body.body
    last = body[-1] if body else None
    if type(last) is not cst.SimpleStatementLine or not last.body:
        return False
    small = last.body[-1]
    if type(small) is cst.Raise:
        return True
    return type(small) is cst.Expr and type(small.value) is cst.Call and dotted(small.value.func) in _EXITS


def leaves_loop(branch: cst.If) -> bool:
    """Whether an `if`'s body ends in `break` or ends the program: in a loop, it runs at most once."""
    body = branch.body.body
    last = body[-1] if body else None
    return type(last) is cst.SimpleStatementLine and bool(last.body) and type(last.body[-1]) is cst.Break or aborts(branch)


def moves_itself(value: cst.BaseExpression | None, name: str) -> bool:
    """`name.to(device)` / `name.cuda()`: what `name = name.cuda()` assigns (also as one side of a
    choice whose other is `name` itself: `padding.cuda() if x.is_cuda else padding`)."""
    if type(value) is cst.IfExp:
        sides = (value.body, value.orelse)
        return any(moves_itself(side, name) for side in sides) and any(dotted(side) == name for side in sides)
    return type(value) is cst.Call and call_name(value) in ("to", "cuda") and type(value.func) is cst.Attribute \
        and dotted(value.func.value) == name


def lazy_init(branch: cst.If) -> bool:
    """`if cache is None:` (also `and`-ed with other conditions, or `or`-ed with tests of the
    same value: `if cache is None or cache.shape[0] != n:`): a branch that fills a value on its
    first run only, or again when what it depends on changes; or one that sets the attribute
    it tests (`if not self.initialized: ... self.initialized = True`, `if
    self.data_initialized.item() == 0: ... self.data_initialized.fill_(1)`): it runs once;
    or one that fills the entry of a cache it tests for (`if key not in hann_window:
    hann_window[key] = ...`): once per key."""
    if _flips_its_flag(branch) or _fills_its_entry(branch):
        return True
    tests = [branch.test]
    while tests:
        test = tests.pop()
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            tests += [test.left, test.right]
        elif type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
            cache = _none_tested(test.left)
            if cache is not None and cache in {dotted(n) for n in walk(test.right) if isinstance(n, cst.BaseExpression)}:
                return True
        elif _none_tested(test) is not None:
            return True
    return False


def _fills_its_entry(branch: cst.If) -> bool:
    """`if key not in cache:` whose body assigns `cache[key]` (a memo: vits' mel basis and
    window per dtype and device)."""
    test = branch.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.NotIn:
        return False
    cache, key = dotted(test.comparisons[0].comparator), code(test.left)
    return cache is not None and any(
        type(node) is cst.AssignTarget and type(node.target) is cst.Subscript and dotted(node.target.value) == cache
        and len(node.target.slice) == 1 and type(node.target.slice[0].slice) is cst.Index
        and code(node.target.slice[0].slice.value) == key for node in walk(branch.body))


def _flips_its_flag(branch: cst.If) -> bool:
    """Whether the branch sets a `self.` attribute its test reads: assigns it or fills it in place."""
    tested = {text for n in walk(branch.test) if type(n) is cst.Attribute and (text := dotted(n)) and text.startswith("self.")}
    if not tested:
        return False
    for node in walk(branch.body):
        if type(node) is cst.AssignTarget and dotted(node.target) in tested:
            return True
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("fill_", "copy_", "add_") \
                and dotted(node.func.value) in tested:
            return True
    return False


def option_test(branch: cst.If, params) -> bool:
    """`elif labels is None and mask is None:` where each name tested is one of `params`, the
    function's parameters: an option left out of a call, so the branch runs on every such call
    (not a cache filled once)."""
    tested = [found[0] for n in walk(branch.test) if (found := none_test(n)) is not None and found[1]]
    return bool(tested) and all(type(t) is cst.Name and t.value in params for t in tested)


def none_test(test: cst.CSTNode) -> tuple[cst.BaseExpression, bool] | None:
    """For `x is None` (`x is not None`): what is tested, and whether the test is `is`; None
    for another test."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or literal(test.comparisons[0].comparator) is not None:
        return None
    operator = type(test.comparisons[0].operator)
    return (test.left, operator is cst.Is) if operator in (cst.Is, cst.IsNot) else None


def _none_tested(test: cst.BaseExpression) -> str | None:
    """The name or attribute that `test` compares with `is None`, or finds empty (`not
    len(self.q)`, `len(cache) == 0`: filled on the first run), or None."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = cst.Comparison(test.expression, [cst.ComparisonTarget(cst.Equal(), cst.Integer("0"))])
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.Equal \
            and literal(test.comparisons[0].comparator) == 0 and type(test.left) is cst.Call and type(test.left.func) is cst.Name \
            and test.left.func.value == "len" and len(test.left.args) == 1 and type(test.left.args[0].value) in (cst.Name, cst.Attribute):
        return dotted(test.left.args[0].value)
    found = none_test(test)
    return dotted(found[0]) if found is not None and found[1] and type(found[0]) in (cst.Name, cst.Attribute) else None


def contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether `node` is `root` or inside it."""
    return root is node or any(contains(child, node) for child in root.children)


def walk(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """`node` and every node below it (remembered: the rules walk the same functions and loops
    for many questions, and an edit leaves most of them as they were)."""
    return remembered(walk, node, lambda: _walk(node))


def _walk(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    found, pending = [], [node]
    while pending:
        found.append(pending.pop())
        pending.extend(children(found[-1]))
    return tuple(found)


def statement_assignments(statement: cst.CSTNode) -> dict[str, cst.BaseExpression | None]:
    """The names a statement assigns: to the value, for a plain `name = value` line; to
    None (unknown) for anything else that binds them (unpacking, loops, nested blocks).
    Remembered."""

    def compute() -> dict:
        found: dict = {}
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
                    found[small.targets[0].target.value] = small.value
                    continue
                _bound_names(small, found)
        else:
            _bound_names(statement, found)
        return found

    return remembered(statement_assignments, statement, compute)


def _bound_names(node: cst.CSTNode, found: dict) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.FunctionDef or type(current) is cst.ClassDef:
            found[current.name.value] = None
            continue
        if (type(current) is cst.AssignTarget or type(current) is cst.AugAssign or type(current) is cst.AnnAssign
                or type(current) is cst.For):
            targets: list[cst.BaseExpression] = [current.target]
            while targets:
                target = targets.pop()
                if type(target) is cst.Name:
                    found[target.value] = None
                elif type(target) is cst.Tuple or type(target) is cst.List:
                    targets.extend(e.value for e in target.elements)
                elif type(target) is cst.StarredElement:
                    targets.append(target.value)
        elif type(current) is cst.NamedExpr and type(current.target) is cst.Name:
            found[current.target.value] = None
        elif type(current) is cst.AsName and type(current.name) is cst.Name:
            found[current.name.value] = None
        stack.extend(children(current))


def reaching_assignment(root: cst.CSTNode, target: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The value of the plain `name = value` that reaches `target` from the statements above it
    in the innermost block of `root` holding it (`j = r.max(2)[0] < t`, then `t = t[j]`); None
    when none of them assigns `name`, or one binds it otherwise (unpacking, a nested block)."""
    statements: Sequence[cst.BaseStatement] = ()
    index, node = -1, root
    while node is not target:
        child = next((c for c in children(node) if contains(c, target)), None)
        if child is None:
            return None
        if type(node) is cst.IndentedBlock or type(node) is cst.Module:
            statements, index = node.body, list(node.body).index(cast(cst.BaseStatement, child))
        node = child
    for statement in reversed(statements[:max(index, 0)]):
        assigned = statement_assignments(statement)
        if name in assigned:
            return assigned[name]
    return None


def main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"` (a script's entry, skipped when the module is imported)."""
    return type(test) is cst.Comparison and dotted(test.left) == "__name__"


def legacy_read(node: cst.Subscript) -> cst.BaseExpression | None:
    """`x` of `x.data[0]` (how PyTorch 0.3 read a one-element tensor on the host), or None."""
    value = node.value
    if type(value) is not cst.Attribute or value.attr.value != "data" or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    return value.value if type(index) is cst.Index and type(index.value) is cst.Integer and index.value.value == "0" else None
