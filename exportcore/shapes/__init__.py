"""Dynamic shapes: the shape model, hypothesis strategies, input synthesis and the check loop.

The package's names load on first use (PEP 562), as exportcore's do: the plugin reads
``shapes.input_budget`` while it resolves its options, in sessions that never run an export and
must not pay for hypothesis and sympy (tests/integration/test_no_torch.py). torch is imported by
the functions that build or read tensors.
"""

from __future__ import annotations

import importlib
from typing import Any

_SOURCES = {
    **dict.fromkeys(("DEFAULT_EXAMPLES", "ExploreResult", "Probe", "examples_for", "explore",
                     "hypothesis_settings", "reject_inputs"), "exportcore.shapes.explore"),
    **dict.fromkeys(("DEFAULT_SPAN", "SIZE_FLOOR", "Axis", "DimRange", "Root", "ShapeSpec", "Slot"),
                    "exportcore.shapes.spec"),
    **dict.fromkeys(("concrete_invalid", "valid_assignments", "violation_kinds"), "exportcore.shapes.strategies"),
    **dict.fromkeys(("Drawn", "input_shapes", "inputs_strategy", "synthesize"), "exportcore.shapes.synth"),
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> Any:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'exportcore.shapes' has no attribute {name!r}")
    return getattr(importlib.import_module(source), name)
