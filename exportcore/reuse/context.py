"""What the proof and the stores read from a run: a Protocol, so this package never imports exportcore.context.

exportcore.context.Run (built by exportcore.check, above this package) is the one run there is; the
proof's parts are read off it and the stores' donations written back to its outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol

if TYPE_CHECKING:
    import hypothesis
    import torch
    from torch.export import ExportedProgram

    from exportcore.modes import Mode
    from exportcore.outcome import Outcome
    from exportcore.reuse.eager_code import CodeRecord
    from exportcore.reuse.proof import BeforeCapture, Proof
    from exportcore.reuse.session import EngineSession
    from exportcore.sandbox.model_state import ModelState
    from exportcore.shapes.spec import ShapeSpec

__all__ = ["EagerAnswer", "ReuseRun"]


class EagerAnswer(Protocol):
    """Eager's run on the examples (an exportcore.programs.execute.RunResult): the proof's ``answer`` part."""

    outputs: Any
    buffers: Any
    grads: Any


class ReuseRun(Protocol):
    """The parts of exportcore.context.Run the proof and the stores read, and those they set."""

    # the case and its options: what the proof's options part names
    model: torch.nn.Module
    args: tuple
    kwargs: dict[str, Any]
    mode: Mode
    checks: frozenset[str]
    rtol: float | None
    atol: float | None
    examples: int
    inputs: Any  # the user's factory (shapes, rng) -> (args, kwargs) or a hypothesis strategy, or None
    seed: int
    findings_as_errors: bool
    hypothesis_settings: hypothesis.settings | None
    spec: ShapeSpec | None
    target: str | None
    device: str
    export_kwargs: Mapping[str, Any]  # torch.export.export's own options (a rescue's)
    outcome: Outcome  # a donation taken is written here (reused_from, findings, notes)
    session: EngineSession  # the stores
    # what the steps built
    model_state: ModelState | None
    code_records: tuple[CodeRecord, CodeRecord] | None
    ep: ExportedProgram | None
    # the proof, each half taken once (exportcore.reuse.prove)
    before_capture: BeforeCapture | None
    proof: Proof | None
    whole: Any  # exportcore.reuse.whole.WholeState, taken before eager
    clock: Any  # exportcore.clock.StageClock: the gate's time is a stage of its own

    @property
    def reference(self) -> EagerAnswer | None:
        """Eager's run on the examples (None before it ran)."""
