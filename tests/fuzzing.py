"""Input generators shared by the fuzz tests and bench/fuzz.py: valid programs, mutated
real training scripts and malformed notebooks."""

from __future__ import annotations

import json
import pathlib

from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.py"))]

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
            text = text[:line_start] + line * draw(st.integers(2, 200)) + text[line_start:]
    return text


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
