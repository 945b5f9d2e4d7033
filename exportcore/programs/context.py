"""What the programs under test read from a run: a Protocol, so this package never imports exportcore.context.

exportcore.context.Run (built by exportcore.check, above this package) is the one run there is. A
target's runtime side is read through exportcore.programs.under_test.ColumnRun, beside the Side it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import torch
    from torch.export import ExportedProgram

    from exportcore.guards import ExportedRange
    from exportcore.modes import Mode
    from exportcore.outcome import Outcome
    from exportcore.programs.execute import RunResult
    from exportcore.reuse.eager_code import CodeRecord
    from exportcore.sandbox.model_state import ModelState
    from exportcore.shapes.spec import ShapeSpec

__all__ = ["ProgramRun"]


class ProgramRun(Protocol):
    """The parts of exportcore.context.Run the programs under test are run and compared with."""

    # the case and how its sides run and compare
    model: torch.nn.Module
    args: tuple
    kwargs: dict[str, Any]
    mode: Mode
    rtol: float | None
    atol: float | None
    seed: int
    device: str
    spec: ShapeSpec | None
    outcome: Outcome
    # what the steps built: the snapshot every side starts from, eager's answer, the programs
    model_state: ModelState | None
    reference: RunResult | None
    code_records: tuple[CodeRecord, CodeRecord] | None
    ep: ExportedProgram | None
    ranges: dict[str, ExportedRange]
    symbols: dict[str, str]
    programs: dict[str, torch.nn.Module]
    program_states: dict[int, ModelState]
    same_as: dict[str, str]
    own_guards: set[str]

    def finding(self, kind: str, message: str, input: str | None = None) -> None:
        """Record a finding: a warning, or an error under --export-findings=error."""
