"""Find the line of the user's code that made an export specialize a dynamic dim.

Strict export names it from torch 2.8 on ("at model.py:13 in forward", from dynamo's message);
non-strict export (and strict on torch 2.6-2.7) raises its constraint violation after tracing,
from torch's solver, with no user frame on the stack and none in the message (the guard's
location is a line of torch's reference ops). The user's frame was there when torch decided,
though: non-strict tracing runs the model's forward as Python, and dynamo keeps the user's stack
in its tracing context. So the failing export is run once more with a handler on torch's
shape-guard log, and the first decision that fixed a symbol to the constant torch names (``set_replacement s77 = 4``
or the guard ``Eq(s77, 4)``) is traced back to the deepest frame of the user's own code. Only on
that failure path: turning the log on costs every guard a formatted message.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Any, Callable

from exportcore.outcome import SourceLocation
from exportcore.diagnosis.sources import is_user_file, location

__all__ = ["specialization_site", "specialized_to"]

_LOGGER = "torch.fx.experimental.symbolic_shapes"
_EXPORT_ENTRY = os.path.join("torch", "export", "__init__.py")
#: torch 2.8+ and torch 2.6-2.7 word it differently
_CONSTANT = re.compile(r"(?:specialized it to be|inferred to be) a constant \((-?\d+)\)")


def specialized_to(message: str) -> int | None:
    """The constant a constraint violation says a declared-dynamic dim was specialized to, if it says."""
    found = _CONSTANT.search(message)
    return int(found.group(1)) if found else None


def _traced_stack() -> list:
    try:
        from torch._guards import TracingContext

        return list(TracingContext.extract_stack())
    except Exception:  # noqa: BLE001 - no tracing context (non-strict), or a torch without the API
        return []


def specialization_site(export: Callable[[], Any], constant: int) -> SourceLocation | None:
    """Run ``export`` (expected to fail again) and return the user's line that fixed a size to ``constant``."""
    decision = re.compile(rf"^(?:set_replacement s\d+ = {constant}\b|eval Eq\(s\d+, {constant}\) \[guard added\])")
    found: list[SourceLocation] = []

    class _Sites(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if found or not decision.match(record.getMessage()):
                return
            # strict: dynamo runs no user frame; its tracing context holds the user's stack (with whole
            # file names, where the log's own text cuts them short)
            user = [f for f in _traced_stack() if is_user_file(f.filename)]
            if user:
                found.append(location(user[-1].filename, user[-1].lineno or 0, user[-1].name, ""))
                return
            frame = sys._getframe(1)
            while frame is not None:  # non-strict: the user's forward runs as Python, under this call
                code = frame.f_code
                if code.co_name == "export" and code.co_filename.endswith(_EXPORT_ENTRY):
                    return  # past the export call: the caller's line is not the model's
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
