"""Stage bookkeeping: which stage is running, how long each took, and the per-case deadline."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Iterator

__all__ = ["StageClock", "CaseTimeout", "deadline"]


class CaseTimeout(BaseException):
    """Raised inside a case that ran past its time limit.

    A BaseException, like KeyboardInterrupt: the stages catch ``Exception`` to classify
    a model's own errors, and a timeout must pass through them to check() untouched.
    """


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

    started = time.monotonic()

    def _expire(signum: int, frame: object) -> None:
        # Raising inside an import leaves a half-initialized module in sys.modules and
        # breaks every later case (torch imports lazily during the first export): wait
        # for the import to finish, within a grace period, then raise in the case's code.
        if _importing(frame) and time.monotonic() - started < float(seconds) + _IMPORT_GRACE_S:  # type: ignore[arg-type]
            signal.setitimer(signal.ITIMER_REAL, _RETRY_S)
            return
        raise CaseTimeout(f"case exceeded its time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: How long past the limit a timeout may wait for a running import to finish, and how often it looks.
_IMPORT_GRACE_S = 60.0
_RETRY_S = 0.05


def _importing(frame: object) -> bool:
    """Return whether ``frame`` or a caller is inside importlib (a module is being imported)."""
    current = frame
    while current is not None:
        if current.f_code.co_filename.startswith("<frozen importlib"):  # type: ignore[attr-defined]
            return True
        current = current.f_back  # type: ignore[attr-defined]
    return False
