"""The analyses' thread pool, whose queue lets targets someone is waiting for go first."""

from __future__ import annotations

import asyncio
import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol


class Target(Protocol):
    urgent: int  # requests waiting for this target's result


class PriorityWorkers:
    """A thread pool whose queue lets targets with `urgent` requests go first, then the oldest."""

    def __init__(self, size: int) -> None:
        self.executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="perf-lint-analysis")
        self.free = size
        self.waiting: list[tuple[int, Target, asyncio.Future]] = []
        self.seq = itertools.count()

    async def run(self, state: Target, fn, *args):
        if self.free == 0:
            slot = asyncio.get_running_loop().create_future()
            item = (next(self.seq), state, slot)
            self.waiting.append(item)
            try:
                await slot
            except asyncio.CancelledError:
                if item in self.waiting:
                    self.waiting.remove(item)
                elif slot.done() and not slot.cancelled():
                    self._release()
                raise
        else:
            self.free -= 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        finally:
            self._release()

    def _release(self) -> None:
        live = [item for item in self.waiting if not item[2].done()]
        if not live:
            self.waiting.clear()
            self.free += 1
            return
        best = min(live, key=lambda item: (0 if item[1].urgent else 1, item[0]))
        self.waiting.remove(best)
        best[2].set_result(None)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
