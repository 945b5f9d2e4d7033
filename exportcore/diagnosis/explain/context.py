"""What the explanation reads from a failed check: a Protocol, so this package never imports exportcore.check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from exportcore.case import Case, EngineOptions
from exportcore.outcome import Outcome

if TYPE_CHECKING:
    from exportcore.reuse.session import EngineSession

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
    session: EngineSession  # the run's own: a re-check shares its stores like any other check


#: The engine's one entry, exportcore.check.run_check(case, options, session), passed in by the check itself
#: to check the case again (a corrected spec, an export option).
Recheck = Callable[[Case, EngineOptions, "EngineSession"], Outcome]


def reset(run: FailedRun) -> None:
    """Put the model back in its snapshot state and its mode's train/eval setting (as the stages do)."""
    run.model_state.prepare(run.model, run.mode.training)
