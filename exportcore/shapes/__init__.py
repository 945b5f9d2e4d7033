"""Dynamic shapes: the shape model, hypothesis strategies, input synthesis and the check loop.

Importing this package does not import torch; hypothesis and sympy load here.
"""

from __future__ import annotations

from exportcore.shapes.spec import DEFAULT_SPAN, SIZE_FLOOR, Axis, DimRange, Root, ShapeSpec, Slot

__all__ = ["DEFAULT_SPAN", "SIZE_FLOOR", "Axis", "DimRange", "Root", "ShapeSpec", "Slot"]
