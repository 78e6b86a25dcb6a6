"""What the analyses of one document keep between its versions (the editor's), so that
after an edit only what it touched is parsed, split, searched and computed again."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .parse import ChunkPool, Split


@dataclass(eq=False)
class DocumentState:
    """One document's analysis state, used by one analysis at a time (`lock`)."""

    chunks: ChunkPool = field(default_factory=ChunkPool)  # its statements parsed, by text
    splits: dict[int, Split] = field(default_factory=dict)  # unit index -> its last split
    memos: dict = field(default_factory=dict)  # perf_lint.analyzers.nodes.remembered's answers for its nodes
    places: dict = field(default_factory=dict)  # unit index -> (its last text, where each rule trigger first occurs)
    located: dict = field(default_factory=dict)  # the last analysis's findings, by what made them (engine._locate)
    shallow: bool = False  # an analysis ran out of stack: statements deeper than MAX_DEPTH are left out from now on
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self) -> None:
        """A new analysis: every kept chunk may be handed out again, and the memos of nodes
        long gone are dropped once they outgrow the chunks."""
        self.chunks.begin()
        if sum(map(len, self.memos.values())) > 20 * self.chunks.size:
            self.memos.clear()
