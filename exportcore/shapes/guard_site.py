"""Find the line of the user's code that made a non-strict export specialize a dynamic dim.

Strict export names it (dynamo keeps the user's frame: "at model.py:13 in forward"); non-strict
export raises its constraint violation after tracing, from torch's solver, with no user frame on
the stack and none in the message (the guard's location is a line of torch's reference ops). The
frame was on the stack when torch decided, though: non-strict tracing runs the model's forward as
Python. So a failing non-strict export is run once more with a handler on torch's shape-guard log,
and the first decision that fixed a symbol to the constant torch names (``set_replacement s77 = 4``
or the guard ``Eq(s77, 4)``) is traced back to the deepest frame of the user's own code. Only on
that failure path: turning the log on costs every guard a formatted message.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any, Callable

from exportcore.outcome import SourceLocation
from exportcore.sources import is_user_file, location

__all__ = ["specialization_site", "specialized_to"]

_LOGGER = "torch.fx.experimental.symbolic_shapes"
_CONSTANT = re.compile(r"specialized it to be a constant \((-?\d+)\)")


def specialized_to(message: str) -> int | None:
    """The constant a constraint violation says a declared-dynamic dim was specialized to, if it says."""
    found = _CONSTANT.search(message)
    return int(found.group(1)) if found else None


def specialization_site(export: Callable[[], Any], constant: int) -> SourceLocation | None:
    """Run ``export`` (expected to fail again) and return the user's line that fixed a size to ``constant``."""
    decision = re.compile(rf"^(?:set_replacement s\d+ = {constant}\b|eval Eq\(s\d+, {constant}\) \[guard added\])")
    found: list[SourceLocation] = []

    class _Sites(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if found or not decision.match(record.getMessage()):
                return
            frame = sys._getframe(1)
            while frame is not None:
                code = frame.f_code
                if is_user_file(code.co_filename):
                    found.append(location(code.co_filename, frame.f_lineno, code.co_name, ""))
                    return
                frame = frame.f_back

    logger = logging.getLogger(_LOGGER)
    handler = _Sites(logging.INFO)
    level, propagate, handlers = logger.level, logger.propagate, logger.handlers
    # only this handler hears it: torch's own (TORCH_LOGS) and the user's would print every guard
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        export()
    except Exception:  # noqa: BLE001 - the failure is already classified; only the site is wanted
        pass
    finally:
        logger.handlers = handlers
        logger.setLevel(level)
        logger.propagate = propagate
    return found[0] if found else None
