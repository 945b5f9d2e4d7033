"""Keep torch's own log output out of a failing test's report unless -vv / --tb=long asks for it.

torch logs through its own stderr handlers (``Error while creating guard`` tracebacks,
repeated once per guard) and, in some configurations, through the root logger into
pytest's "Captured log call". The engine already turns the exception into a failure
report, so these records only repeat it. With -vv or --tb=long they are left alone.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

__all__ = ["torch_logs_hidden"]


def _from_torch(record: logging.LogRecord) -> bool:
    return record.name == "torch" or record.name.startswith("torch.")


class _DropTorch(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _from_torch(record)


@contextlib.contextmanager
def torch_logs_hidden(hide: bool = True) -> Iterator[None]:
    """Drop torch's log records at every handler they can reach while the block runs (if ``hide``)."""
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
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(drop)
