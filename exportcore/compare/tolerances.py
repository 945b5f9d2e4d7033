"""What a difference is (Mismatch) and how much of one is forgiven per dtype (see the package docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["MISMATCH_KINDS", "PY_FLOAT", "Mismatch", "default_tolerances", "tolerance_problem"]


MISMATCH_KINDS = ("structure", "type", "shape", "dtype", "device", "value", "nonfinite")


# dtype name -> (rtol, atol); see the module docstring for why float32 is looser than torch.testing.
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "float16": (1e-3, 1e-5),
    "complex32": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}


_OTHER_FLOAT = (1.25e-1, 1e-3)


PY_FLOAT = _TOLERANCES["float32"]


@dataclass
class Mismatch:
    """The first leaf where two output trees differ."""

    path: str
    kind: str  # one of MISMATCH_KINDS
    message: str
    max_abs: float | None = None
    max_rel: float | None = None  # over the mismatched elements only
    fraction: float | None = None  # mismatched elements / all elements
    worst_index: list[int] | None = None

    def __str__(self) -> str:
        return self.message


def default_tolerances(dtype: Any) -> tuple[float, float]:
    """Return the default ``(rtol, atol)`` for a torch dtype (or a dtype name)."""
    name = str(dtype).removeprefix("torch.")
    if name in _TOLERANCES:
        return _TOLERANCES[name]
    return _OTHER_FLOAT


def tolerance_problem(value: Any) -> str | None:
    """Return why ``value`` is no rtol/atol ("must be ..., got ..."), or None if it is one (None included)."""
    # NaN compares false with everything and inf forgives everything: either would pass any mismatch.
    if value is None or (not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < math.inf):
        return None
    return f"must be a finite non-negative number, got {value!r}"
