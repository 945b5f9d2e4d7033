"""exportcore: check that a PyTorch model exports with torch.export and behaves like eager.

Usable from a script or notebook, no pytest needed::

    import exportcore
    outcome = exportcore.check(model, (x,), dynamic_shapes={"x": {0: Dim("b")}}, mode="strict")
    print(outcome.status, outcome.failure and outcome.failure.headline())

Importing this package does not import torch; torch loads on the first ``check``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from exportcore.check import check as check

__all__ = [
    "CHECKS", "DEFAULT_CHECKS", "Case", "SCHEMA_VERSION", "Counterexample", "ExampleStats",
    "Failure", "Finding", "GraphStats", "Outcome", "SchemaError", "SourceLocation",
    "MODES", "check",
]

MODES = ("strict", "non_strict", "training")


def __getattr__(name: str) -> Any:
    # Lazy so that `import exportcore` stays torch-free (the plugin imports it at startup).
    if name == "check":
        from exportcore.check import check

        return check
    raise AttributeError(f"module 'exportcore' has no attribute {name!r}")
