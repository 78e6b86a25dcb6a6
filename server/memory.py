"""The language server's memory policy, in one place.

Two parts, each measured against editor latency (docs/performance.md): the cyclic
collector paused while analyses run and what they leave frozen (`ANALYSES_RUNNING`), and
full collections run once the server is idle (`IdleCollector`).
"""

from __future__ import annotations

import asyncio
import gc
import threading


class _Uncollected:
    """While any analysis runs, the cyclic garbage collector waits.

    An analysis allocates tens of thousands of objects that live until it ends (and are
    then freed by reference counting: the engine breaks its cycles). Collections in its
    middle only walk them, ten young collections and one older per edit, several ms of
    each keystroke's latency. Once the last running analysis ends, what survives it (the
    new statements' trees and facts, the findings) is frozen (`gc.freeze`: moved out of
    the generations at no cost) rather than walked by the next young collections, right
    while the diagnostics are sent (0.5 ms per edit, and every tenth edit an older
    collection of up to 10 ms); `IdleCollector` unfreezes and collects everything once
    the server is idle."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0

    def __enter__(self) -> None:
        with self.lock:
            self.running += 1
            if self.running == 1:
                gc.disable()

    def __exit__(self, *exc) -> None:
        with self.lock:
            self.running -= 1
            if self.running == 0:
                gc.freeze()
                gc.enable()


ANALYSES_RUNNING = _Uncollected()  # `with ANALYSES_RUNNING:` around each analysis


class IdleCollector:
    """Full garbage collections wait until the server has been idle a moment.

    A full collection walks every object, the cached statements of every open document
    included (a few hundred ms with a large file open); run by the allocation counters in
    the middle of an edit, it was most of the p95 latency. Young generations are still
    collected as usual between analyses (not during one, and not what an analysis left:
    `ANALYSES_RUNNING`), and this runs a full one, with what analyses froze, after each
    quiet spell."""

    def __init__(self, delay_s: float = 2.0) -> None:
        self.delay_s = delay_s
        self.timer: asyncio.TimerHandle | None = None

    def busy(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(self.delay_s, self.collect)

    @staticmethod
    def collect() -> None:
        gc.unfreeze()
        gc.collect()
