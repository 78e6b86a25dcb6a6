"""Input generators shared by the fuzz tests and bench/fuzz.py: valid programs, mutated
real training scripts, malformed notebooks, and statements or notebook JSON nested too
deep for recursive parsers."""

from __future__ import annotations

import json
import pathlib

from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.py"))]
MAX_INPUT = 200_000  # characters: a mutated script grows no further (duplicates compounded into GBs)
SAMPLE = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"  # TPL101 on line 2
LAST = "loader2 = DataLoader(ds)\n"  # a TPL101 after a deep statement

_SNIPPETS = ["(", ")", ":", "\\", "'", '"""', "\x00", "\ufeff", "\r", "\r\n", "é🚀", "\t", "    ", "%%time\n",
             "!ls\n", "?", "# noqa: TPL101", "lambda", "DataLoader(", "torch.cuda.synchronize()", "\u2028", "\x0c"]


@st.composite
def mutated_script(draw) -> str:
    """A real training script with deletions, truncations, insertions and newline mixes."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 6))):
        if not text:
            break
        kind = draw(st.sampled_from(["delete", "truncate", "insert", "newlines", "nest", "duplicate"]))
        at = draw(st.integers(0, len(text)))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif kind == "truncate":
            text = text[:at]
        elif kind == "insert":
            piece = draw(st.one_of(st.sampled_from(_SNIPPETS), st.text(max_size=8)))
            text = text[:at] + piece + text[at:]
        elif kind == "newlines":
            text = text.replace("\n", draw(st.sampled_from(["\r\n", "\r", "\n\r"])), draw(st.integers(1, 30)))
        elif kind == "nest":
            depth = draw(st.integers(1, 300))
            text = text[:at] + "(" * depth + "x" + ")" * depth + text[at:]
        else:
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line = text[line_start:line_end if line_end >= 0 else len(text)]
            times = draw(st.integers(2, 200))
            if len(text) + len(line) * times <= MAX_INPUT:
                text = text[:line_start] + line * times + text[line_start:]
    return text


_BINARY = ["+", "*", "-", "and", "or", "<", "==", "|", "@", "**", "if c else"]
_UNARY = ["-", "~", "+", "not ", "await ", "lambda: "]
_TRAILERS = [".b", "()", "[0]", ".c()", "(1)[2]"]
_BRACKETS = [("(", ")"), ("[", "]"), ("{", "}"), ("f(", ")"), ("{'k': ", "}"), ("(yield ", ")")]
_BLOCKS = ["if x:", "for i in y:", "while x:", "with x:", "with a as b:", "def f():", "class C:", "async def g():"]


@st.composite
def deep_statement(draw) -> str:
    """One statement (or a few) nested up to thousands deep, as recursive parsers and
    visitors meet them: elif chains, operator, unary, trailer and string chains, brackets,
    lambdas and blocks (up to and past Python's own limits), maybe inside a DataLoader call."""
    n = draw(st.one_of(st.integers(1, 700), st.integers(700, 6000)))
    kind = draw(st.sampled_from(["elif", "binary", "unary", "trailers", "strings", "brackets", "blocks"]))
    sep = draw(st.sampled_from([" ", "\n    ", " \\\n    "]))
    if kind == "elif":
        return "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, n))
    if kind == "blocks":
        depth = min(n, draw(st.integers(1, 102)))  # Python stops at 100 levels
        return "".join("    " * i + draw(st.sampled_from(_BLOCKS)) + "\n" for i in range(depth)) + "    " * depth + "pass\n"
    if kind == "binary":
        op = draw(st.sampled_from(_BINARY))
        expr = "(" + f"{sep}{op} ".join(["a"] * n) + ")"
    elif kind == "unary":
        expr = "(" + draw(st.sampled_from(_UNARY)) * n + "a)"
    elif kind == "trailers":
        pattern = draw(st.lists(st.sampled_from(_TRAILERS), min_size=1, max_size=3))
        expr = "(a" + sep.join(pattern[i % len(pattern)] for i in range(n)) + ")"
    elif kind == "strings":
        pattern = draw(st.lists(st.sampled_from(["'a'", '"b"', "f'{x}'", "u'c'", "b'd'"]), min_size=1, max_size=3))
        expr = "(" + sep.join(pattern[i % len(pattern)] for i in range(n)) + ")"
    else:
        opening, closing = draw(st.sampled_from(_BRACKETS))
        depth = min(n, draw(st.integers(1, 210)))  # Python stops at 200
        expr = opening * depth + "a" + closing * depth
    if draw(st.booleans()):
        return f"loader3 = DataLoader(ds, batch_size={expr})\n"  # a finding inside the deep statement
    return f"x = {expr}\n"


@st.composite
def deep_script(draw) -> str:
    """SAMPLE, a deep statement (maybe in a function), LAST."""
    statement = draw(deep_statement())
    if draw(st.booleans()):
        statement = "async def f():\n" + "".join("    " + line for line in statement.splitlines(keepends=True))
    return SAMPLE + statement + LAST


@st.composite
def deep_notebook(draw) -> bytes:
    """Notebook JSON nested thousands deep or with huge integers where nbformat keeps numbers
    or objects, or a valid notebook with a deep statement in a code cell."""
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": SAMPLE}
    cells = [cell, {**cell, "source": draw(deep_script())}]
    text = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
    kind = draw(st.sampled_from(["deep-code", "nested", "huge-int"]))
    if kind == "deep-code":
        return text.encode()
    where = draw(st.sampled_from(['"nbformat": 4', '"nbformat_minor": 5', '"metadata": {}', '"execution_count": 1',
                                  '"outputs": []', '"source": ']))
    key = where.split(":")[0]
    if kind == "huge-int":
        value = draw(st.sampled_from(["", "-"])) + "9" * draw(st.integers(4000, 200_000))
    else:
        depth = draw(st.integers(100, 200_000))
        opening, closing = draw(st.sampled_from([("[", "]"), ('{"a": ', "}"), ("[1, ", "]")]))
        value = opening * depth + "0" + closing * depth
    if key == '"source"':
        return text.replace(where, f"{key}: {value}, \"x\": ", 1).encode()
    return text.replace(where, f"{key}: {value}", 1).encode()


def _cell(draw) -> object:
    source = draw(st.one_of(
        mutated_script().map(lambda t: t[:400]),
        st.lists(st.text(max_size=30), max_size=4),
        st.sampled_from(["%%time\nimport torch\ny = torch.ones(2).cuda() @ 2", "%%bash\nls", "x = %time f()", None, 3]),
    ))
    cell = {"cell_type": draw(st.sampled_from(["code", "code", "markdown", "raw", "unknown", None])), "source": source}
    for key in ("metadata", "outputs", "execution_count"):
        if draw(st.booleans()):
            cell[key] = draw(st.sampled_from([{}, [], None, "x", 1]))
    if draw(st.integers(0, 10)) == 0:
        cell.pop("source")
    return cell


@st.composite
def malformed_notebook(draw) -> bytes:
    kind = draw(st.sampled_from(["v4", "v4", "v3", "garbage", "not-dict", "no-cells", "bad-cells"]))
    if kind == "garbage":
        return draw(st.binary(max_size=200))
    if kind == "not-dict":
        return json.dumps(draw(st.sampled_from([[], 3, "cells", None]))).encode()
    if kind == "no-cells":
        return json.dumps({"nbformat": 4, "metadata": {}}).encode()
    if kind == "bad-cells":
        return json.dumps({"nbformat": 4, "cells": draw(st.sampled_from([{}, "x", None, [1, "a", None]]))}).encode()
    cells = [_cell(draw) for _ in range(draw(st.integers(0, 6)))]
    if kind == "v3":
        return json.dumps({"nbformat": 3, "worksheets": [{"cells": cells}], "metadata": {}}).encode()
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}, ensure_ascii=False).encode()


def encodings(text: str) -> st.SearchStrategy[bytes]:
    """The same text as bytes in right and wrong encodings, with and without a BOM."""
    return st.sampled_from([
        text.encode("utf-8", "surrogatepass"),
        b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass"),
        text.encode("utf-16", "surrogatepass"),
        b"# -*- coding: latin-1 -*-\n" + text.encode("latin-1", "replace"),
        b"# -*- coding: no-such-codec -*-\n" + text.encode("utf-8", "surrogatepass"),
        text.encode("utf-8", "surrogatepass")[: max(len(text) // 2, 1)] + b"\xff\xfe",
    ])
