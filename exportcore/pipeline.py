"""The pipeline: the ordered table of stages and checks one check() walks for a (case, mode).

Adding a check is one module with ``run(ctx: Run) -> None`` (in exportcore/checks/) and one
``Step`` below; a new ``--export-checks`` name also goes into exportcore.case.CHECKS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from exportcore.checks import (accept, calls, dtype, dynamism, numerics, recorded, reject, size01, specialization,
                              state)
from exportcore.outcome import GraphStats
from exportcore.programs.sides import prepare
from exportcore.reuse import whole
from exportcore.reuse.donations import Reuse
from exportcore.stages import capture, decompose, eager, keep, module, runtime, serialize
from exportcore.sandbox.warning_filters import torch_warnings

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["Step", "PIPELINE", "TARGET_PIPELINE", "walk"]


@dataclass(frozen=True)
class Step:
    """One stage or check of the pipeline."""

    name: str
    run: Callable[[Run], None]
    #: The ``checks=`` / ``--export-checks`` names that enable the step (any one); empty: always runs.
    enabled_by: tuple[str, ...] = ()
    #: Runs only for a case with a dynamic_shapes spec (there are no other shapes to try without one).
    dynamic: bool = False
    #: Only runs the programs: another mode that captured the same program may donate its result.
    reusable: bool = False

    def wanted(self, run: Run) -> bool:
        """Return whether this step runs for ``run``."""
        if self.dynamic and run.spec is None:
            return False
        return not self.enabled_by or any(name in run.checks for name in self.enabled_by)


#: What check() does for a mode, in order; a step that fails stops the rest (Run.fail).
PIPELINE: tuple[Step, ...] = (
    Step("eager", eager.run),
    Step("capture", capture.run),
    Step("keep", keep.run),
    Step("module", module.run),
    Step("decompose", decompose.run, ("decompose",), reusable=True),
    Step("serialize", serialize.run, ("serialize",), reusable=True),
    Step("numerics", numerics.run, ("numerics",), reusable=True),
    Step("state", state.run, ("state",)),
    Step("calls", calls.run, ("numerics",)),
    Step("specialization", specialization.run, ("accept", "reject"), dynamic=True),
    Step("recorded inputs", recorded.run, ("numerics", "accept")),
    Step("drawn shapes", accept.run, ("numerics", "accept"), dynamic=True, reusable=True),
    Step("reject", reject.run, ("reject",), dynamic=True, reusable=True),
    Step("size01", size01.run, ("accept", "reject"), dynamic=True, reusable=True),
    Step("dtype", dtype.run, ("dtype",), dynamic=True, reusable=True),
)

#: What check() does for a target (aoti, onnx, executorch): the mode's inference export, lowered and
#: loaded in the runtime (exportcore.stages.runtime), then the mode's own checks with the runtime as
#: the program under test (exportcore.programs.under_test.sides).
TARGET_PIPELINE: tuple[Step, ...] = (
    Step("runtime", runtime.available),
    Step("eager", eager.run),
    Step("capture", runtime.capture),
    Step("lower", runtime.lower),
    Step("load", runtime.load),
    Step("examples", numerics.run),
    Step("drawn shapes", accept.run, ("numerics", "accept"), dynamic=True),
    Step("reject", reject.run, ("reject",), dynamic=True),
    Step("size01", size01.in_range, ("accept", "reject"), dynamic=True),
)


def walk(run: Run) -> None:
    """Run every wanted step of the run's pipeline in order; Run.fail() (CheckFailed) stops the walk.

    torch's warnings on the way never become errors (exportcore.sandbox.warning_filters): a user's
    ``-W error`` is for their code and the plugin's findings, not for torch's internals; those
    raised from torch's own files are notes on the outcome, not warnings in the user's summary.
    """
    if run.target is None and whole.served(run):
        return  # proven unchanged before eager: the whole outcome was taken (exportcore.reuse.whole)
    with torch_warnings(kept=run.outcome.notes):
        try:
            _walk(run)
        finally:
            dynamism.record(run)  # whatever stopped the walk: a failure on a dim names the dim


def _walk(run: Run) -> None:
    if run.target is not None:
        with runtime.workspace(run):
            for step in TARGET_PIPELINE:
                if step.wanted(run):
                    step.run(run)
        return
    reuse = Reuse(run)
    for step in PIPELINE:
        if not step.wanted(run):
            continue
        if step.reusable and reuse.served(step.name):
            continue
        findings, notes = len(run.outcome.findings), len(run.outcome.notes)
        step.run(run)
        if step.reusable:
            reuse.ran(step.name, findings, notes)
    reuse.finish()
    if run.spec is not None:
        # The drawn-shape probes call programs that share the model's tensors: leave the model as its snapshot.
        prepare(run)
    run.outcome.graph = run.outcome.graph or GraphStats()
