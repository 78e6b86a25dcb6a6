"""TPL901: notebook cells that IPython refuses to run."""

from __future__ import annotations

from typing import cast

import libcst as cst

from ..context import Site
from ..findings import Range
from .base import Example, Rule
from .timing import TIMING_MAGICS

class MisplacedCellMagic(Rule):
    """
    ## What it does
    In notebooks, finds a cell magic (`%%capture`, `%%writefile`, `%%bash`, `%%prun`, ...)
    that is not at the top of its cell: below code, a comment, or a line magic. Stacked
    cell magics at the top (`%%capture` then `%%time`) are fine, and so is `%%` text in the
    body of `%%writefile` or `%%bash`. `%%time` and `%%timeit` are TPL202's.

    ## Why is this bad?
    IPython only treats `%%` as a cell magic on the cell's first line. Anywhere else it
    is read as a line magic named `%capture`, which does not exist: the cell fails with
    `UsageError` and none of it runs, so a "Run all" stops there. Even the lines above
    the magic are skipped.

    ## Example
    ```python
    import subprocess
    %%capture
    !pip install timm
    ```

    ## Fix
    Put the cell magic on the first line of its own cell:
    ```python
    %%capture
    !pip install timm
    ```
    """

    code = "TPL901"
    name = "misplaced-cell-magic"
    summary = "Cell magic (%%capture, %%writefile, ...) not on its cell's first line: the cell does not run"
    triggers = ("%%", 'magic("%', "torch")  # 'magic("%': jupyterlab-lsp's form; "torch": the cells that parse
    severity = "error"
    VALID = (
        Example(("import torch", "%%capture\n!pip install timm")),
        Example(("import torch", "%%capture\n%%time\nx = torch.ones(3)")),
        Example(("import torch", "\n%%writefile train.py\nimport torch")),
        Example(("import torch", "%%writefile notes.md\nUse\n%%capture\nto hide output")),
    )
    INVALID = (
        Example(("import torch", "x = torch.ones(3)\n%%capture\nprint(x)")),
        Example(("import torch", "# install\n%%bash\npip install timm")),
        Example(("import torch", "%%capture\nimport timm\n%%writefile out.txt\nx")),
    )

    def finish(self) -> None:
        for index, unit in enumerate(self.ctx.units):
            for magic in unit.misplaced_cell_magics:
                if magic.name in TIMING_MAGICS:
                    continue  # TPL202's
                self.report(
                    Site(cast(cst.CSTNode, None), index, self.ctx.module_scope),  # a magic line has no node
                    f"%%{magic.name} is not on the first line of its cell, so IPython reads it as an unknown line "
                    "magic and refuses the whole cell (UsageError): nothing in it runs. Move it to the first line "
                    "of its own cell.",
                    at=(index, Range(magic.line, 0, magic.line, len(magic.text))),
                )
