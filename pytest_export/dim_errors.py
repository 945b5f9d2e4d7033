"""Explain torch refusing to build a ``Dim`` (``min >= max``, a bad name) in one line, without torch's traceback.

torch raises a bare AssertionError from inside ``torch.export.dynamic_shapes`` while the test
builds its ``dynamic_shapes``; the user needs the dim, its arguments and their own line.
No torch import here: the exception and its frames say everything.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any

from pytest_export.runner import ExportCheckFailed

__all__ = ["InvalidDim", "explain_dim_error"]

_TORCH_MODULE = "torch.export.dynamic_shapes"


def explain_dim_error(exc: BaseException) -> str | None:
    """Return a one-line explanation if ``exc`` is torch refusing a Dim's arguments, else None."""
    if not isinstance(exc, AssertionError):
        return None
    frames = list(_frames(exc.__traceback__))
    inside = [i for i, (frame, _) in enumerate(frames) if frame.f_globals.get("__name__") == _TORCH_MODULE]
    if not inside:
        return None
    torch_frame = frames[inside[-1]][0]
    dim = _describe(torch_frame.f_locals)
    where = ""
    if inside[0] > 0:
        caller, line = frames[inside[0] - 1]
        where = f" at {os.path.basename(caller.f_code.co_filename)}:{line}"
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid arguments"
    return f"dynamic_shapes: {dim}{where} is invalid: {reason}"


def _frames(tb: TracebackType | None) -> Any:
    while tb is not None:
        yield tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next


def _describe(local: dict[str, Any]) -> str:
    name = local.get("name")
    args = [repr(name)] if isinstance(name, str) else []
    args += [f"{k}={local[k]!r}" for k in ("min", "max") if k in local]
    hint = getattr(getattr(local.get("self"), "type", None), "name", None)  # Dim.DYNAMIC(...) / Dim.AUTO(...)
    what = f"Dim.{hint}" if isinstance(hint, str) and not isinstance(name, str) else "Dim"
    return f"{what}({', '.join(args)})"


class InvalidDim(ExportCheckFailed):
    """The test's own dynamic_shapes could not be built; shown as its one-line explanation."""
