"""exportcore: check that a PyTorch model exports with torch.export and behaves like eager.

Usable from a script or notebook, no pytest needed::

    import exportcore
    outcome = exportcore.check(model, (x,), dynamic_shapes={"x": {0: Dim("b")}}, mode="strict")
    print(outcome.status, outcome.failure and outcome.failure.headline())

Checks that pass one ``exportcore.EngineSession()`` share work (a second mode proven to capture the
same program takes the first one's results); without one, each check runs on its own.

Importing this package does not import torch; torch loads on the first ``check``.
"""

from __future__ import annotations

import importlib
from typing import Any

from exportcore.case import CHECKS, DEFAULT_CHECKS, Case

# check.py imports its engine only inside check(): importing it eagerly keeps the name
# `exportcore.check` bound to the function rather than to the submodule, at no cost.
from exportcore.check import check, check_case

__all__ = [
    "CHECKS", "DEFAULT_CHECKS", "Case", "SCHEMA_VERSION", "Counterexample", "ExampleStats",
    "Failure", "Finding", "GraphStats", "Outcome", "SchemaError", "SourceLocation",
    "MODES", "Mode", "check", "check_case", "register_mode", "EngineSession", "EngineOptions",
    "spec_from_recorded",
]

# The rest of the public API loads on first use (PEP 562): the pytest plugin imports this
# package in every session, and the outcome's dataclasses alone cost milliseconds to build.
_LAZY = {
    **dict.fromkeys(("SCHEMA_VERSION", "Counterexample", "ExampleStats", "Failure", "Finding", "GraphStats",
                     "Outcome", "SchemaError", "SourceLocation"), "exportcore.outcome"),
    **dict.fromkeys(("MODES", "Mode", "register_mode"), "exportcore.modes"),
    "EngineSession": "exportcore.reuse.session",
    "EngineOptions": "exportcore.case",
    "spec_from_recorded": "exportcore.shapes.recorded_spec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'exportcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
