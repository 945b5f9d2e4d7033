"""The pipeline: the ordered table of stages and checks one check() walks for a (case, mode).

Adding a check is one module with ``run(ctx: Run) -> None`` (in exportcore/checks/) and one
``Step`` below; a new ``--export-checks`` name also goes into exportcore.case.CHECKS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from exportcore.checks import accept, dtype, numerics, reject, size01, specialization, state
from exportcore.outcome import GraphStats
from exportcore.sides import prepare
from exportcore.stages import capture, decompose, eager, keep, module, serialize, target

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
    Step("decompose", decompose.run, ("decompose",)),
    Step("serialize", serialize.run, ("serialize",)),
    Step("numerics", numerics.run, ("numerics",)),
    Step("state", state.run, ("state",)),
    Step("specialization", specialization.run, ("accept", "reject"), dynamic=True),
    Step("drawn shapes", accept.run, ("numerics", "accept"), dynamic=True),
    Step("reject", reject.run, ("reject",), dynamic=True),
    Step("size01", size01.run, ("accept", "reject"), dynamic=True),
    Step("dtype", dtype.run, ("dtype",), dynamic=True),
)

#: What check() does for a target (aoti, onnx, executorch): its own stages and checks, in that runtime.
TARGET_PIPELINE: tuple[Step, ...] = (Step("target", target.run),)


def walk(run: Run) -> None:
    """Run every wanted step of the run's pipeline in order; Run.fail() (CheckFailed) stops the walk."""
    if run.target is not None:
        for step in TARGET_PIPELINE:
            step.run(run)
        return
    for step in PIPELINE:
        if step.wanted(run):
            step.run(run)
    if run.spec is not None:
        # The drawn-shape probes call programs that share the model's tensors: leave the model as its snapshot.
        prepare(run)
    run.outcome.graph = run.outcome.graph or GraphStats()
