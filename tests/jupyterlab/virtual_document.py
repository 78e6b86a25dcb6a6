"""jupyterlab-lsp's virtual document of a notebook's code cells, ported from its
src/transclusions/ipython/overrides.ts and src/virtual/document.ts (jupyterlab-lsp 5):
what perf-lint's server receives from JupyterLab. test_jupyterlab_e2e checks the port
against the document a real JupyterLab sends."""

from __future__ import annotations

import re

BLANK_LINES_BETWEEN_CELLS = 2
_LINE_PREFIX = r"^(\s*|\s*\S+\s*=\s*)"
_IDENTIFIER = r"([^?\s'\"\(\)-\+\/#]+)"
_UNWRAPPED = ("time", "capture")


def _escape(text: str) -> str:
    return re.sub(r'(["\\])', r"\\\1", text)


def _pinfo(prefix: str, marks: str, name: str, gap: str) -> str:
    return f"{prefix}get_ipython().run_line_magic('{'pinfo' if marks == '?' else 'pinfo2'}',{gap}'{name}')"


# The line overrides in their order; each replaces the first match in a line (JS `replace`).
_LINE_OVERRIDES = (
    (re.compile(_LINE_PREFIX + r"!([^=\s]+)(.*)"), lambda m: f'{m[1]}get_ipython().getoutput("{m[2]}{m[3]}")'),
    (re.compile(r"^(\s*)(\?{1,2})" + _IDENTIFIER + r"$"), lambda m: _pinfo(m[1], m[2], m[3], " ")),
    (re.compile(r"^(\s*)" + _IDENTIFIER + r"(\?{1,2})"), lambda m: _pinfo(m[1], m[3], m[2], "  ")),
    (re.compile(_LINE_PREFIX + r"%(\S+)(.*)"), lambda m: f'{m[1]}get_ipython().run_line_magic("{m[2]}", "{_escape(m[3])}")'),
)
_CELL_MAGIC = re.compile(r"^%%(\S+)(.*\n)([\s\S]*)")


def _cell_override(match: re.Match) -> str:
    name, first, content = match[1], _escape(match[2])[:-1], match[3].replace('"""', '\\"\\"\\"')
    if name in _UNWRAPPED:
        return f'# START_CELL_MAGIC("{name}", "{first}")\n{content}\n# END_CELL_MAGIC'
    return f'get_ipython().run_cell_magic("{name}", "{first}", """{content}""")'


def rewrite_cell(cell: str) -> str:
    """A code cell as jupyterlab-lsp puts it in the virtual document."""
    match = _CELL_MAGIC.match(cell)
    if match:
        return cell[:match.start()] + _cell_override(match) + cell[match.end():]
    lines = []
    for line in cell.split("\n"):
        for pattern, replace in _LINE_OVERRIDES:
            found = pattern.search(line)
            if found:
                line = line[:found.start()] + replace(found) + line[found.end():]
                break
        lines.append(line)
    return "\n".join(lines)


def virtual_document(cells: list[str | None]) -> tuple[str, list[int]]:
    """The document of a notebook's cells (None: a markdown or raw cell, an empty line
    there) and the first line of each cell in it."""
    blocks, starts, line = [], [], 0
    for cell in cells:
        rewritten = "" if cell is None else rewrite_cell(cell)
        starts.append(line)
        blocks.append(rewritten + "\n")
        line += rewritten.count("\n") + 1 + BLANK_LINES_BETWEEN_CELLS
    return ("\n" * BLANK_LINES_BETWEEN_CELLS).join(blocks), starts
