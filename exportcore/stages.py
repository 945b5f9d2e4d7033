"""Stage bookkeeping: which stage is running, how long each took, and the per-case deadline."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Iterator

__all__ = ["StageClock", "CaseTimeout", "deadline"]


class CaseTimeout(Exception):
    """Raised inside a case that ran past its time limit."""


class StageClock:
    """Times stages and remembers the one currently running (reported on timeout)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.current: str = "input"

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - start, 6)
            self.current = previous if previous != "input" else name


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise CaseTimeout in the running code after ``seconds`` (main thread, POSIX only).

    A signal is the one way to interrupt a Python-level hang (an infinite loop in
    ``forward``) and keep the process and every other result alive. Off the main
    thread, or on platforms without SIGALRM, no limit is enforced here: the
    plugin then relies on pytest-timeout or xdist crash recovery.
    """
    usable = (
        seconds is not None
        and seconds > 0
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _expire(signum: int, frame: object) -> None:
        raise CaseTimeout(f"case exceeded its time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
