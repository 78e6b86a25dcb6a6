"""jupyterlab-lsp's virtual document of a notebook, read back as the IPython it shows.

jupyterlab-lsp joins a notebook's cells into one Python document (two blank lines apart)
and rewrites IPython on the way (its src/transclusions/ipython/overrides.ts):

    %timeit -n 3 f(x)     ->  get_ipython().run_line_magic("timeit", " -n 3 f(x)")
    !ls / ?x / x?         ->  get_ipython().getoutput("ls") / ...run_line_magic('pinfo', 'x')
    %%time (first line)   ->  # START_CELL_MAGIC("time", "") + the cell's lines + # END_CELL_MAGIC
    %%timeit, %%writefile ->  get_ipython().run_cell_magic("timeit", "", \"\"\"the cell's lines\"\"\")

Each rewritten line or cell is masked here as `mask_ipython` masks its original, on the
same lines and at the columns the original has in its cell: jupyterlab-lsp shows a virtual
line's diagnostics on the cell line at the same offset, at the same columns. (It shifts the
lines of a `run_cell_magic` cell up by one: its first line holds the magic and the cell's
second line; those keep their place in the document.)
"""

from __future__ import annotations

import dataclasses
import re

from .source import RUNS_CELL, Block, Magic, Unit, _classify, _parses, mask_ipython, mask_line

_ASSIGNED = r"(?P<prefix>\s*|\s*\S+\s*=\s*)"
_LINE_MAGIC = re.compile(_ASSIGNED + r'get_ipython\(\)\.run_line_magic\("(?P<name>\S+?)", "(?P<args>.*)"\)$')
_SHELL = re.compile(_ASSIGNED + r'get_ipython\(\)\.getoutput\("(?P<command>.*)"\)$')
_HELP = re.compile(r"(?P<prefix>\s*)get_ipython\(\)\.run_line_magic\('(?P<kind>pinfo2?)',(?P<gap> {1,2})'(?P<name>.*)'\)$")
_START = re.compile(r'# START_CELL_MAGIC\("(?P<name>\S+?)", "(?P<args>.*)"\)$')
_END = "# END_CELL_MAGIC"
_CALL = re.compile(r'get_ipython\(\)\.run_cell_magic\("(?P<name>\S+?)", "(?P<args>.*?)", """')
_CLOSE = re.compile(r'(?<!\\)"""\)$')
_ESCAPED = re.compile(r'\\(["\\])')


def virtual_unit(text: str, lines: list[str]) -> Unit | None:
    """The unit of a virtual document, its IPython masked; None if it has none."""
    code, magics, blocks = list(lines), [], []
    index = 0
    while index < len(lines):
        line = lines[index]
        found = _cell(lines, index) if line.startswith(("# START_CELL_MAGIC(", "get_ipython().run_cell_magic(")) else None
        if found is not None:
            block, cell_code, cell_magics = found
            code[block.start:block.start + len(cell_code)] = cell_code
            magics += cell_magics
            blocks.append(block)
            index = block.end
            continue
        original = _original_line(line) if "get_ipython()" in line else None
        magic = _classify(original, index) if original is not None else None
        if original is not None and magic is not None:
            magics.append(dataclasses.replace(magic, text_end=len(line) - 2))  # before the closing `")`
            code[index] = mask_line(original, magic)
        index += 1
    if not magics and not blocks:
        return None
    return Unit(None, text, "\n".join(code), tuple(magics), tuple(blocks), lines=lines)


def _original_line(line: str) -> str | None:
    """The IPython line a rewritten line came from (None: not one)."""
    match = _LINE_MAGIC.match(line)
    if match:
        return f"{match['prefix']}%{match['name']}{_unescape(match['args'])}"
    match = _SHELL.match(line)
    if match:
        return f"{match['prefix']}!{match['command']}"
    match = _HELP.match(line)
    if match:
        marks = "?" if match["kind"] == "pinfo" else "??"
        name = match["name"]
        return match["prefix"] + (f"{marks}{name}" if len(match["gap"]) == 1 else f"{name}{marks}")
    return None


def _cell(lines: list[str], start: int) -> tuple[Block, list[str], list[Magic]] | None:
    """A rewritten cell magic's cell at line `start`: its block, masked lines and magics."""
    match = _START.match(lines[start])
    if match:
        end = next((i for i in range(start + 1, len(lines)) if lines[i] == _END), None)
        if end is None:
            return None
        unit = mask_ipython(_cell_text(match, lines[start + 1:end]))
        magics = [dataclasses.replace(m, line=m.line + start) for m in unit.magics]
        return Block(start, end, (end - 1, len(lines[end - 1]))), unit.code.split("\n"), magics
    match = _CALL.match(lines[start])
    return _called(lines, start, match) if match else None


def _called(lines: list[str], start: int, match: re.Match) -> tuple[Block, list[str], list[Magic]] | None:
    """A `run_cell_magic` cell: its lines are in the string, the first after the call's opening."""
    last = next((i for i in range(start, len(lines)) if _CLOSE.search(lines[i], match.end() if i == start else 0)), None)
    if last is None:
        return None
    body = [lines[start][match.end():], *lines[start + 1:last + 1]]
    body[-1] = body[-1][:-4]  # the closing `""")`
    block = Block(start, last + 1, (last, len(lines[last]) - 4), shifted=True)
    magic = _classify(f"%%{match['name']}{_unescape(match['args'])}", start)
    assert magic is not None  # a line starting `%%` is a magic
    if match["name"] not in RUNS_CELL:  # the cell is the magic's text (a file, a script), not Python
        return block, ["pass", *[""] * (last - start)], [magic]
    masked = mask_ipython(_cell_text(match, body))
    code = masked.code.split("\n")  # a line more than the block: the magic's and the cell's second share one
    first = "pass;" + " " * (match.end() - 5) + code[1]
    code = [first if code[1].strip() and _parses(first) else code[1] or "pass", *code[2:]]
    magics = [magic] + [dataclasses.replace(m, line=m.line - 1 + start) for m in masked.magics if m.line > 1]
    return block, code, magics


def _cell_text(match: re.Match, body: list[str]) -> str:
    """The cell as the notebook has it: the magic's line, then its lines unescaped."""
    first = f"%%{match['name']}{_unescape(match['args'])}"
    return "\n".join([first, *body]).replace('\\"\\"\\"', '"""')


def _unescape(args: str) -> str:
    return _ESCAPED.sub(r"\1", args)
