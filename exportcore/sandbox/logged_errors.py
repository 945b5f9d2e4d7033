"""Exceptions torch logs instead of raising: kept, so the error it raises can name its cause.

torch 2.15's ``torch.export.load`` catches why its archive reader failed, logs it with
``exc_info`` ("Ran into the following error when deserializing") and raises a RuntimeError that
only says "check the warnings above". The logged exception is the cause a user needs (an output
node it cannot rebuild, an operator argument it lost); chained as ``__cause__`` it reaches the
classification, the detail and the traceback shown with -vv.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

__all__ = ["logged_errors", "chain_logged"]


class _Keep(logging.Handler):
    def __init__(self, into: list[BaseException]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and isinstance(record.exc_info[1], BaseException):
            self.into.append(record.exc_info[1])


@contextlib.contextmanager
def logged_errors(logger: str = "torch.export") -> Iterator[list[BaseException]]:
    """Collect the exceptions ``logger`` (and its children) logs with exc_info while the block runs."""
    caught: list[BaseException] = []
    handler = _Keep(caught)
    target = logging.getLogger(logger)
    target.addHandler(handler)
    try:
        yield caught
    finally:
        target.removeHandler(handler)


def chain_logged(exc: BaseException, caught: list[BaseException]) -> BaseException:
    """Return ``exc`` with the last logged exception as its cause, unless it already has one."""
    logged = [e for e in caught if e is not exc]
    if logged and exc.__cause__ is None:
        exc.__cause__ = logged[-1]
    return exc
