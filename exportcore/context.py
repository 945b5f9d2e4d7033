"""The context one check() carries through its pipeline steps: the case, the mode, the programs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from exportcore.clock import StageClock
from exportcore.modes import Mode
from exportcore.outcome import Failure, Finding, Outcome

if TYPE_CHECKING:
    import hypothesis
    import torch
    from torch.export import ExportedProgram

    from exportcore.guards import ExportedRange
    from exportcore.programs.execute import RunResult
    from exportcore.programs.under_test import RuntimeSide
    from exportcore.reuse.eager_code import CodeRecord
    from exportcore.reuse.proof import BeforeCapture, Proof
    from exportcore.sandbox.model_state import ModelState
    from exportcore.reuse.session import EngineSession
    from exportcore.shapes.spec import ShapeSpec

__all__ = ["CheckFailed", "Run"]


class CheckFailed(Exception):
    """Internal: stops the pipeline once ``outcome.failure`` is set."""


@dataclass
class Run:
    """Everything one check needs while it runs; dropped when check() returns.

    The first block is the case and its options (set by check()); the second is what the
    pipeline's steps produce for the steps after them.
    """

    model: torch.nn.Module  # a plain callable arrives wrapped (check._as_module)
    args: tuple
    kwargs: dict[str, Any]
    dynamic_shapes: Any  # as the user wrote it, passed to torch.export unchanged
    mode: Mode
    checks: frozenset[str]
    rtol: float | None
    atol: float | None
    examples: int
    inputs: Any  # the user's factory (shapes, rng) -> (args, kwargs) or a hypothesis strategy, or None
    seed: int
    findings_as_errors: bool
    hypothesis_settings: hypothesis.settings | None
    outcome: Outcome
    clock: StageClock
    spec: ShapeSpec | None = None  # the parsed dynamic_shapes; None: nothing declared dynamic
    target: str | None = None  # exportcore.targets: check this runtime instead of the mode's programs
    device: str = "cpu"
    target_options: Mapping[str, Any] = field(default_factory=dict)
    #: torch.export.export's own keyword options (exportcore.case.EXPORT_KWARGS; a rescue's), for the capture
    export_kwargs: Mapping[str, Any] = field(default_factory=dict)
    recorded_inputs: Any = None  # the user's recorded input sets as given (exportcore.checks.recorded)
    #: the stores this walk may take from and donate to, and the engine's caches (exportcore.reuse.session)
    session: EngineSession = None  # type: ignore[assignment]

    model_state: ModelState | None = None  # the model's snapshot every side starts from (set by check())
    reference: RunResult | None = None  # eager on the example inputs (step "eager")
    #: With a disk store: what eager ran on the examples, then what every later run of eager and the programs ran
    #: (exportcore.reuse.eager_code.CodeRecord; exportcore.reuse.code_witnesses names the difference in the entry)
    code_records: tuple[CodeRecord, CodeRecord] | None = None
    #: Module attributes eager's run on the examples changed (ModelState.changed): checked by exportcore.checks.calls
    state_writes: list[str] = field(default_factory=list)
    ep: ExportedProgram | None = None  # the one torch.export.export result (step "capture")
    ranges: dict[str, ExportedRange] = field(default_factory=dict)  # ep's range_constraints, by torch symbol
    #: ep's input shapes per tensor path (ints where static, torch's symbols where dynamic), read once in capture
    exported_shapes: dict[str, list[Any]] = field(default_factory=dict)
    symbols: dict[str, str] = field(default_factory=dict)  # torch symbol -> the user's dim name(s) ("s6" -> "batch")
    programs: dict[str, torch.nn.Module] = field(default_factory=dict)  # "exported"/"decomposed"/"reloaded"
    program_states: dict[int, ModelState] = field(default_factory=dict)  # id(program) -> its own snapshot
    #: A program proven the same as an earlier one ("reloaded" -> "exported"): not probed again on drawn shapes.
    same_as: dict[str, str] = field(default_factory=dict)
    #: A program whose input checks were not proven ep.module()'s (exportcore.reuse.identity.guard_structure):
    #: the reject check probes it too.
    own_guards: set[str] = field(default_factory=set)
    #: The proof of this walk (exportcore.reuse.proof), each half taken once: none of its parts changes
    #: during a walk, and hashing a large model twice is not free.
    before_capture: BeforeCapture | None = None
    proof: Proof | None = None
    #: the incremental gate's parts and key, taken before eager (exportcore.reuse.whole.WholeState)
    whole: Any = None
    #: A target's program under test, its loaded artifact (set by exportcore.stages.runtime).
    runtime: RuntimeSide | None = None

    def fail(self, failure: Failure, status: str = "failed") -> None:
        """Record ``failure`` as the verdict and stop the pipeline."""
        self.outcome.status = status
        self.outcome.failure = failure
        raise CheckFailed

    def finding(self, kind: str, message: str, input: str | None = None) -> None:
        """Record a finding: a warning, or an error under --export-findings=error."""
        severity = "error" if self.findings_as_errors else "warning"
        self.outcome.findings.append(Finding(kind=kind, severity=severity, message=message, input=input))
