"""The per-case deadline: a SIGALRM timer that interrupts a hanging case without harming anything else."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from typing import Any

__all__ = ["CaseTimeout", "deadline", "guard_outer_alarm", "warm_up"]


class CaseTimeout(BaseException):
    """Raised inside a case that ran past its time limit.

    A BaseException, like KeyboardInterrupt: the stages catch ``Exception`` to classify
    a model's own errors, and a timeout must pass through them to check() untouched.
    """

    def __init__(self, message: str = "", limit: float | None = None) -> None:
        super().__init__(message)
        #: The limit that ran out, in seconds (an outer pytest-timeout may have made it shorter than asked).
        self.limit = limit


def deadline(seconds: float | None) -> contextlib.AbstractContextManager[None]:
    """Raise CaseTimeout in the running code after ``seconds`` (main thread, POSIX only).

    A signal is the one way to interrupt a Python-level hang (an infinite loop in
    ``forward``) and keep the process and every other result alive. Off the main
    thread, or on platforms without SIGALRM, no limit is enforced here, and a hang
    inside C++ code that never returns to Python is not interrupted either: then
    only pytest-timeout (which ends the process) and xdist's crash recovery help.
    """
    usable = (
        seconds is not None
        and 0 < seconds < _NO_LIMIT_S  # also False for NaN; inf and ~30 years overflow setitimer
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )
    return _Deadline(float(seconds)) if usable else contextlib.nullcontext()  # type: ignore[arg-type]


class _Deadline:
    """The armed timer of one case. Race-free: whenever the alarm lands, it never escapes the case.

    Python runs a signal handler between any two bytecodes, so an alarm can land while the
    timer is being armed or disarmed (a tiny limit makes that certain). The handler therefore
    never raises inside this class's own methods: there it re-arms a short retry, which the
    body meets (and raises in) or which __exit__ cancels.
    """

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.started = 0.0
        self.finished = False
        self.expired = False
        self.previous: Any = None
        self.owner: Any = None
        self.outer: tuple[float, float] = (0.0, 0.0)

    def __enter__(self) -> None:
        warm_up()
        self.owner = sys._getframe(1)  # the frame running the case (its `with` statement)
        self.started = time.monotonic()
        # An outer timer (pytest-timeout's signal method) keeps its deadline: ours fires first, with a
        # tenth of what is left of it to spare for recording the timeout, and it gets the rest back
        # afterwards (firing at once if it is due).
        self.outer = signal.getitimer(signal.ITIMER_REAL)
        if self.outer[0] > 0:
            self.limit = min(self.limit, self.outer[0] * _OUTER_SHARE)
        self.previous = signal.signal(signal.SIGALRM, self._expire)
        signal.setitimer(signal.ITIMER_REAL, self.limit)
        if self.expired:  # the limit ran out while arming (a tiny limit): the case does not start
            self.__exit__()
            raise CaseTimeout(self._message(), self.limit)

    def __exit__(self, *exc: object) -> None:
        # First: from here on a late alarm (however it was queued) is a no-op.
        self.finished = True
        self.owner = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        if self.outer[0] > 0 and callable(self.previous):
            # The outer timer (pytest-timeout) is nearly due: its alarm must not land in an import
            # either (recording the outcome may import lazily), or the next tests inherit the damage.
            signal.signal(signal.SIGALRM, _import_safe(self.previous))
            left = self.outer[0] - (time.monotonic() - self.started)
            # A case this deadline stopped has given up the hang; what follows is recording its
            # timeout (on a loaded machine more than the tenth of the outer limit kept for it).
            floor = _RECORD_GRACE_S if exc and isinstance(exc[1], CaseTimeout) else 0.001
            signal.setitimer(signal.ITIMER_REAL, max(left, floor), self.outer[1])
        else:
            signal.signal(signal.SIGALRM, self.previous)

    def _expire(self, signum: int, frame: Any) -> None:
        # Once the case is over a late (backstop) alarm must not raise into whoever runs next.
        if self.finished:
            if callable(self.previous):
                self.previous(signum, frame)
            return
        if not _on_stack(self.owner, frame):
            # The case's frame is gone: a timeout raised between the body's end and __exit__
            # skipped the cleanup. Do it now, and pass the alarm on rather than into other code.
            self.__exit__()
            if callable(self.previous):
                self.previous(signum, frame)
            return
        if frame is not None and frame.f_code in _OWN_CODE:
            self.expired = True
            signal.setitimer(signal.ITIMER_REAL, _RETRY_S)
            return
        # Raising inside an import leaves a half-initialized module in sys.modules and
        # breaks every later case (torch imports lazily during the first export), and one
        # raised in a gc callback is dropped: wait until the interrupted code is the case's
        # own (within a grace period) and raise there.
        if _must_wait(frame) and time.monotonic() - self.started < self.limit + _IMPORT_GRACE_S:
            signal.setitimer(signal.ITIMER_REAL, _RETRY_S)
            return
        # Python drops exceptions raised in gc callbacks, __del__ and weakref callbacks
        # (hypothesis runs one on every collection): if this one is lost, fire again.
        signal.setitimer(signal.ITIMER_REAL, _RERAISE_S)
        raise CaseTimeout(self._message(), self.limit)

    def _message(self) -> str:
        return f"case exceeded its time limit of {self.limit:g} s"


def guard_outer_alarm() -> None:
    """Make the SIGALRM handler in place (pytest-timeout's) wait for a running import before it acts."""
    if hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGALRM)
        if callable(handler):
            signal.signal(signal.SIGALRM, _import_safe(handler))


def _import_safe(handler: Any) -> Any:
    """Return ``handler`` wrapped so that an alarm landing inside an import waits until the import is done."""
    if getattr(handler, "_import_safe", False):
        return handler

    first: list[float] = []

    def safe(signum: int, frame: Any) -> Any:
        first.append(time.monotonic())
        if _must_wait(frame) and first[-1] - first[0] < _IMPORT_GRACE_S:
            signal.setitimer(signal.ITIMER_REAL, _RETRY_S)
            return None
        first.clear()
        return handler(signum, frame)

    safe._import_safe = True  # type: ignore[attr-defined]
    return safe


def _on_stack(owner: Any, frame: Any) -> bool:
    while frame is not None:
        if frame is owner:
            return True
        frame = frame.f_back
    return False


#: Where the handler must not raise: arming and disarming the timer.
_OWN_CODE = frozenset({_Deadline.__enter__.__code__, _Deadline.__exit__.__code__})


#: How long past the limit a timeout may wait for an import to finish, and how often it looks again.
_IMPORT_GRACE_S = 60.0
_RETRY_S = 0.05
#: When a raised timeout fires again if it was swallowed. A backstop only (gc callbacks are waited
#: out above); long enough that it never cuts into torch's cleanup while the first one unwinds.
_RERAISE_S = 2.0
#: Limits from here on mean "no limit" (setitimer overflows a C time_t near 1e10 s on some platforms).
_NO_LIMIT_S = 1e8
#: How long an outer timer waits, after this deadline stopped a case, for its timeout to be recorded.
_RECORD_GRACE_S = 10.0
#: The share of an outer timer's remaining time a case may use (the rest is for recording its timeout).
_OUTER_SHARE = 0.9


def _must_wait(frame: Any) -> bool:
    """Return whether raising at ``frame`` would be lost (a gc callback) or do harm (an import)."""
    import gc

    if frame is not None and any(getattr(cb, "__code__", None) is frame.f_code for cb in gc.callbacks):
        return True
    current = frame
    while current is not None:
        if current.f_code.co_filename.startswith("<frozen importlib"):
            return True
        current = current.f_back
    return False


def _exported_before() -> bool:
    """Whether this process already paid the first export's imports (an earlier session's check did)."""
    return all(name in sys.modules for name in ("hypothesis", "torch.export._trace", "torch._dynamo.convert_frame",
                                                "torch._functorch.aot_autograd", "torch._export.serde.serialize"))


def warm_up() -> None:
    """Pay the process's one-time export cost (lazy imports, first traces) once, outside any case.

    The first export in a fresh process (each xdist worker) takes several seconds more than
    the next ones (once per engine session: a second session in the process pays only the small
    exports below); with a per-case limit that time would be charged to whichever case runs
    first, and a healthy case would time out.
    """
    from exportcore.sandbox.session_caches import active

    session = active()  # the caches of the plugin's session around the test, or the check's
    if session.warm or _exported_before():
        return
    session.warm = True
    import io

    import hypothesis  # noqa: F401 - the drawn shapes need it; its first import takes seconds too
    import torch

    class _Tiny(torch.nn.Module):
        def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.linear(x, w).relu() + x.sin()

    args = (torch.ones(3, 2), torch.ones(2, 2))
    try:
        for strict in (False, True):
            shapes = ({0: torch.export.Dim("n", min=2, max=8)}, None)
            ep = torch.export.export(_Tiny(), args, dynamic_shapes=shapes, strict=strict)
        ep.run_decompositions().module()(*args)
        buffer = io.BytesIO()
        torch.export.save(ep, buffer)
        buffer.seek(0)
        torch.export.load(buffer).module()(*args)
    except Exception:  # noqa: BLE001 - warming up is best effort; the case itself reports real problems
        pass
    finally:
        torch._dynamo.reset()
