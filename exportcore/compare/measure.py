"""How close each compared leaf came to its tolerance: measured while comparing, on passes too.

A pass says only that every element stayed within ``atol + rtol * |eager|``; a torch upgrade that
moves the error from 0.1x to 0.9x of that budget is invisible until it fails. The comparison
(exportcore.compare.tree, .tensors, .rounding) hands each leaf's measurement to a Meter: the
largest |program - eager|, the largest relative error (over the elements where eager is not 0,
where it is defined), the distance in units in the last place for floating tensors, and the
fraction of the tolerance budget used, with the same tolerances the verdict uses. Pure Python.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

__all__ = ["UNBOUNDED", "LeafError", "Meter", "finite"]

#: The fraction of a leaf that differs where its budget is zero (an integer, bool or string leaf, a
#: NaN/inf position, a shape or a type, zero tolerances): written as the largest float, JSON has no inf.
UNBOUNDED = sys.float_info.max


@dataclass
class LeafError:
    """One leaf's measured error against eager."""

    path: str  # its pytree path: "output[0]", "grads['w']"
    fraction: float  # the largest |program - eager| / (atol + rtol * |eager|) over its elements
    max_abs: float = 0.0
    max_rel: float = 0.0  # over the elements where eager is not 0
    max_ulp: float = 0.0  # floating tensors only: the largest distance in representable values
    forgiven: bool = False  # past its tolerance yet forgiven as rounding (exportcore.compare.rounding)


class Meter:
    """The leaves one comparison measured, by path: a leaf measured again (the rounding walk) is replaced."""

    def __init__(self) -> None:
        self.leaves: dict[str, LeafError] = {}

    def add(self, leaf: LeafError) -> None:
        self.leaves[leaf.path] = leaf

    def differs(self, path: str, max_abs: float | None = None) -> None:
        """A leaf that differs with no finite budget to measure against (unless already measured)."""
        if path not in self.leaves:
            self.leaves[path] = LeafError(path, UNBOUNDED, finite(max_abs or 0.0))

    def forgive(self, path: str) -> None:
        if path in self.leaves:
            self.leaves[path].forgiven = True

    def worst(self) -> LeafError | None:
        """The leaf that used most of its budget (the first of equals), or None when nothing was measured."""
        worst = None
        for leaf in self.leaves.values():
            if worst is None or leaf.fraction > worst.fraction:
                worst = leaf
        return worst

    def largest(self, name: str) -> float:
        return max((getattr(leaf, name) for leaf in self.leaves.values()), default=0.0)


def finite(value: float) -> float:
    """``value``, or UNBOUNDED for inf and NaN (JSON holds neither)."""
    return value if math.isfinite(value) else UNBOUNDED
