"""Dynamic shapes: the shape model, hypothesis strategies, input synthesis and the check loop.

Importing this package does not import torch (hypothesis and sympy load here); torch is
imported by the functions that build or read tensors.
"""

from __future__ import annotations

from exportcore.shapes.explore import (
    DEFAULT_EXAMPLES, ExploreResult, Probe, examples_for, explore, hypothesis_settings, reject_inputs,
)
from exportcore.shapes.spec import DEFAULT_SPAN, SIZE_FLOOR, Axis, DimRange, Root, ShapeSpec, Slot
from exportcore.shapes.strategies import concrete_invalid, valid_assignments, violation_kinds
from exportcore.shapes.synth import Drawn, input_shapes, inputs_strategy, synthesize

__all__ = [
    "DEFAULT_SPAN", "SIZE_FLOOR", "Axis", "DimRange", "Root", "ShapeSpec", "Slot",
    "valid_assignments", "concrete_invalid", "violation_kinds",
    "Drawn", "synthesize", "inputs_strategy", "input_shapes",
    "Probe", "ExploreResult", "explore", "reject_inputs", "hypothesis_settings", "examples_for", "DEFAULT_EXAMPLES",
]
