"""What the analyzer returns: findings with ranges, optional fixes and profiler probes."""

from __future__ import annotations

from dataclasses import dataclass, field


def cell_label(index: int) -> str:
    """A cell as people see it, "cell N": N counts from 1 over all the cells of a notebook
    (markdown ones too) or over the `# %%` cells of a script; `index` is 0-based."""
    return f"cell {index + 1}"

@dataclass(frozen=True, order=True)
class Range:
    """0-based lines, code-point columns, within one unit (a file or a notebook cell)."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Edit:
    """Replace `range` of unit `cell` with `text` (an insertion when the range is empty)."""

    cell: int | None
    range: Range
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """Another place a finding depends on (a function of another file it reaches, or a
    further read in the statement it flags): `path` (None: the finding's own file or cell),
    a 0-based `line` (in that cell for a notebook's), and what happens there."""

    path: str | None
    line: int
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    severity: str
    cell: int | None  # notebook cell index (0-based in `cells`), None outside notebooks
    range: Range
    fix: Fix | None = None
    probe: str | None = None  # how the profiler measures it (see perf_lint.profiler)
    related: tuple[Related, ...] = ()
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def __hash__(self) -> int:
        """The hash of the compared fields, made once: every analysis and every report of the
        server hashes its findings, and `engine._locate` hands out the same ones again."""
        found = self.__dict__.get("_hash")
        if found is None:
            found = hash((self.code, self.message, self.severity, self.cell, self.range, self.fix, self.probe, self.related))
            object.__setattr__(self, "_hash", found)
        return found

    def __getstate__(self) -> dict:
        """Pickled without its hash: another process hashes strings differently."""
        return {name: value for name, value in self.__dict__.items() if name != "_hash"}

    def sort_key(self) -> tuple:
        r = self.range
        return (-1 if self.cell is None else self.cell, r.start_line, r.start_col, r.end_line, r.end_col, self.code)

    def to_dict(self) -> dict:
        """The JSON shape: 1-based lines, columns and cells (see `cell_label`)."""
        r = self.range
        return {
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            "line": r.start_line + 1,
            "column": r.start_col + 1,
            "end_line": r.end_line + 1,
            "end_column": r.end_col + 1,
            "cell": None if self.cell is None else self.cell + 1,
            "fix": None if self.fix is None else {
                "title": self.fix.title,
                "edits": [
                    {
                        "cell": None if e.cell is None else e.cell + 1,
                        "line": e.range.start_line + 1,
                        "column": e.range.start_col + 1,
                        "end_line": e.range.end_line + 1,
                        "end_column": e.range.end_col + 1,
                        "text": e.text,
                    }
                    for e in self.fix.edits
                ],
            },
            "related": [{"path": r.path, "cell": None if r.path is not None or self.cell is None else self.cell + 1,
                         "line": r.line + 1, "message": r.message} for r in self.related],
        }
