"""The context one check() carries through its stages and checks: the case, the mode, the programs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from exportcore.modes import Mode
from exportcore.outcome import Failure, Finding, Outcome
from exportcore.stages import StageClock

__all__ = ["CheckFailed", "Run"]


class CheckFailed(Exception):
    """Internal: stops the pipeline once ``outcome.failure`` is set."""


@dataclass
class Run:
    """Everything one check needs while it runs; dropped when check() returns."""

    model: Any
    args: tuple
    kwargs: dict
    dynamic_shapes: Any
    mode: Mode
    checks: frozenset[str]
    rtol: float | None
    atol: float | None
    examples: int
    inputs: Any
    seed: int
    findings_as_errors: bool
    hypothesis_settings: Any
    outcome: Outcome
    clock: StageClock
    model_state: Any = None
    spec: Any = None
    programs: dict[str, Any] = field(default_factory=dict)  # label -> callable exported module
    program_states: dict[int, Any] = field(default_factory=dict)  # id(program) -> its ModelState when built
    target: str | None = None  # exportcore.targets: check this runtime instead of the mode's programs
    device: str = "cpu"
    target_options: Mapping[str, Any] = field(default_factory=dict)

    def fail(self, failure: Failure, status: str = "failed") -> None:
        self.outcome.status = status
        self.outcome.failure = failure
        raise CheckFailed

    def finding(self, kind: str, message: str, input: str | None = None) -> None:
        severity = "error" if self.findings_as_errors else "warning"
        self.outcome.findings.append(Finding(kind=kind, severity=severity, message=message, input=input))
