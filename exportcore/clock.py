"""Stage bookkeeping: which stage is running and how long each took."""

from __future__ import annotations

import contextlib
import time
from typing import Iterator

__all__ = ["StageClock"]


class StageClock:
    """Times stages and remembers the one currently running (reported on timeout)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.current: str = "input"

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        start = time.perf_counter()
        finished = False
        try:
            yield
            finished = True
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - start, 6)
            # On an exception (a timeout above all) keep naming the stage it came from.
            if finished:
                self.current = previous if previous != "input" else name

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Time ``name`` without making it the stage a timeout names (bookkeeping, not a stage of STAGES)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - start, 6)
