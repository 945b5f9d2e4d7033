"""Keep torch's own output out of a failing test's report unless -vv / --tb=long asks for it.

torch logs through its own stderr handlers (``Error while creating guard`` tracebacks,
repeated once per guard) and, in some configurations, through the root logger into
pytest's "Captured log call"; it also prints to ``sys.stderr`` outright (a failed export's
partial graph, once per nested export wrapper) into "Captured stderr call". The engine
already turns the exception into a failure report, so this output only repeats it. With -vv
or --tb=long it is left alone. What the user's own code prints (a model's debug print) is
kept: a write is dropped only when the code that made it is torch's.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any, Iterator

__all__ = ["torch_logs_hidden"]

#: Modules that write on behalf of their caller: the caller decides whose output it is.
_ON_BEHALF = ("traceback", "logging", "warnings", "pprint", "contextlib", "codecs")


def _from_torch(record: logging.LogRecord) -> bool:
    return record.name == "torch" or record.name.startswith("torch.")


def _is_torch(module: str) -> bool:
    return module.split(".", 1)[0] in ("torch", "functorch")


class _DropTorch(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _from_torch(record)


class _WithoutTorch:
    """A stand-in for sys.stdout / sys.stderr that drops what torch's own code writes to it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if _written_by_torch():
            return len(text)
        return self._stream.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _written_by_torch() -> bool:
    try:
        frame = sys._getframe(2)  # 0: here, 1: write(), 2: print()'s caller (print itself has no frame)
    except ValueError:  # written from C with no Python caller
        return False
    for _ in range(8):
        if frame is None:
            return False
        module = frame.f_globals.get("__name__", "")
        if module.split(".", 1)[0] not in _ON_BEHALF:
            return _is_torch(module)
        frame = frame.f_back
    return False


@contextlib.contextmanager
def _prints_hidden() -> Iterator[None]:
    saved = {name: getattr(sys, name) for name in ("stdout", "stderr")}
    proxies = {name: _WithoutTorch(stream) for name, stream in saved.items()}
    for name, proxy in proxies.items():
        setattr(sys, name, proxy)
    try:
        yield
    finally:
        for name, proxy in proxies.items():
            if getattr(sys, name) is proxy:  # something swapped it meanwhile: leave that alone
                setattr(sys, name, saved[name])


@contextlib.contextmanager
def torch_logs_hidden(hide: bool = True) -> Iterator[None]:
    """Drop torch's log records and prints wherever they would surface while the block runs (if ``hide``)."""
    if not hide:
        yield
        return
    import torch  # noqa: F401 - its loggers and handlers exist once it is imported; an export follows anyway

    names = [n for n in list(logging.Logger.manager.loggerDict) if n == "torch" or n.startswith("torch.")]
    handlers = {h for logger in [logging.getLogger(), *map(logging.getLogger, names)] for h in logger.handlers}
    drop = _DropTorch()
    for handler in handlers:
        handler.addFilter(drop)
    try:
        with _prints_hidden():
            yield
    finally:
        for handler in handlers:
            handler.removeFilter(drop)
