"""The pieces of the shape model: a root dim, an input axis, a tensor slot (see exportcore.shapes.spec).

Kept apart from ShapeSpec so the parser can build them without importing the spec that
calls the parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import sympy

from exportcore.shapes.solve import symbol

__all__ = ["DimRange", "Root", "Axis", "Slot"]


class DimRange(NamedTuple):
    min: int  # declared lower bound
    max: int  # declared upper bound, or the drawing cap when unbounded
    kind: str  # "named" | "auto" | "dynamic"


@dataclass(frozen=True)
class Root:
    name: str
    kind: str
    min: int  # declared lower bound (torch's default for Dim is 0)
    max: int | None  # declared upper bound; None = unbounded
    example: int | None = None  # value at the example inputs, when known
    keep01: bool = False  # size 1 is in the exported range (a ShapesSpec dim is unbacked)


@dataclass(frozen=True)
class Axis:
    key: str  # "args[0].shape[1]"
    field: str  # where it was declared, e.g. "dynamic_shapes['x'][1]"
    size: int  # size in the example input
    root: str | None = None  # None: static axis
    expr: sympy.Expr | None = None  # size as A*root + B
    label: str = ""  # the user's name for it: "batch", "2*d + 1"

    @property
    def static(self) -> bool:
        return self.root is None

    @property
    def derived(self) -> bool:
        return self.root is not None and self.expr != symbol(self.root)


@dataclass(frozen=True)
class Slot:
    path: str  # "args[0]", "kwargs['mask']", "args[1]['x']"
    shape: tuple[int, ...]
    axes: tuple[Axis, ...]
    itemsize: int = 1  # bytes per element of the example tensor, for the input budget

    @property
    def dynamic(self) -> bool:
        return any(not a.static for a in self.axes)
