"""What the explanation reads from a failed check: a Protocol, so this package never imports exportcore.check."""

from __future__ import annotations

from typing import Any, Callable, Protocol

from exportcore.outcome import Outcome

__all__ = ["FailedRun", "Recheck", "reset"]


class FailedRun(Protocol):
    """The parts of exportcore.check.Run the explanation uses (the run has finished, its verdict is final)."""

    model: Any
    args: tuple
    kwargs: dict
    dynamic_shapes: Any
    mode: Any  # exportcore.modes.Mode
    examples: int
    checks: frozenset[str]  # exportcore.case.CHECKS: what the run checked
    rtol: float | None
    atol: float | None
    findings_as_errors: bool
    target: str | None  # a runtime's column (exportcore.targets), None for a mode's
    device: str
    target_options: dict[str, Any]
    inputs: Any
    seed: int
    outcome: Outcome
    spec: Any  # exportcore.shapes.ShapeSpec | None
    model_state: Any
    cache: Any  # exportcore.reuse.result_cache.ResultCache | None


#: exportcore.check.check, passed in by check() itself to re-export a corrected spec.
Recheck = Callable[..., Outcome]


def reset(run: FailedRun) -> None:
    """Put the model back in its snapshot state and its mode's train/eval setting (as the stages do)."""
    run.model_state.prepare(run.model, run.mode.training)
