"""What to export: a model, example inputs, a dynamic-shape spec and expectations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Case", "CHECKS", "DEFAULT_CHECKS", "DEFAULT_EXAMPLES"]

#: Checks a user can switch on or off (``checks=`` / ``--export-checks``).
#: numerics: exported module == eager on the example inputs and on drawn shapes.
#: decompose: run_decompositions() to core ATen, then numerics on that program.
#: serialize: torch.export.save/load round trip, then numerics on the reloaded program.
#: accept / reject: guards accept every in-spec shape and reject out-of-spec ones.
#: state: exported parameters/buffers match the model's.
#: dtype: flag that the exported module silently accepts another dtype.
CHECKS = ("numerics", "decompose", "serialize", "accept", "reject", "state", "dtype")
DEFAULT_CHECKS = CHECKS
#: Drawn shapes per case and mode when neither the caller nor a hypothesis profile says.
DEFAULT_EXAMPLES = 10


@dataclass
class Case:
    """One exportable case; the plugin's tests return this (or a plain tuple)."""

    model: Any
    args: tuple = ()
    kwargs: dict[str, Any] | None = None
    dynamic_shapes: Any = None
    name: str = ""
    #: Input factory for drawn shapes: a callable ``(shapes, rng) -> (args, kwargs)``
    #: or a hypothesis strategy of ``(args, kwargs)``; default resizes the examples.
    inputs: Callable[..., Any] | Any = None
    rtol: float | None = None
    atol: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
