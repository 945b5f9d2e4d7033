"""exportcore: check that a PyTorch model exports with torch.export and behaves like eager.

Usable from a script or notebook, no pytest needed::

    import exportcore
    outcome = exportcore.check(model, (x,), dynamic_shapes={"x": {0: Dim("b")}}, mode="strict")
    print(outcome.status, outcome.failure and outcome.failure.headline())

Importing this package does not import torch; torch loads on the first ``check``.
"""

from __future__ import annotations

from exportcore.case import CHECKS, DEFAULT_CHECKS, Case
from exportcore.outcome import (
    SCHEMA_VERSION,
    Counterexample,
    ExampleStats,
    Failure,
    Finding,
    GraphStats,
    Outcome,
    SchemaError,
    SourceLocation,
)

# check.py imports torch only inside functions; importing it eagerly also keeps the
# name `exportcore.check` bound to the function rather than to the submodule.
from exportcore.check import check, check_case
from exportcore.modes import MODES, Mode, register_mode

__all__ = [
    "CHECKS", "DEFAULT_CHECKS", "Case", "SCHEMA_VERSION", "Counterexample", "ExampleStats",
    "Failure", "Finding", "GraphStats", "Outcome", "SchemaError", "SourceLocation",
    "MODES", "Mode", "check", "check_case", "register_mode",
]

