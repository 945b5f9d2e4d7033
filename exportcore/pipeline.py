"""The pipeline: the ordered table of stages and checks one check() walks for a (case, mode).

Adding a check is one module with ``run(ctx: Run) -> None`` (in exportcore/checks/) and one
``Step`` below; a new ``--export-checks`` name also goes into exportcore.case.CHECKS.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from exportcore.reuse import memo as reuse
from exportcore.checks import accept, calls, dtype, dynamism, numerics, reject, size01, specialization, state
from exportcore.outcome import GraphStats
from exportcore.reuse.memo import Donation
from exportcore.programs.sides import prepare
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
    donation: Donation | None = None
    key: str | None = None
    given: Donation | None = None
    for step in PIPELINE:
        if not step.wanted(run):
            continue
        if step.reusable and donation is None:
            # the first step after the mode's own program is built: is it another mode's program?
            key = reuse.key_of(run)
            given = reuse.lookup(run, key)
            if given is not None:
                _take(run, given)
            donation = given or (Donation(mode=run.mode.name, digest="", inputs=run.inputs) if key else None)
        if step.reusable and given is not None:
            run.outcome.findings.extend(copy.deepcopy(given.findings.get(step.name, [])))
            run.outcome.notes.extend(given.notes.get(step.name, []))
            continue
        findings, notes = len(run.outcome.findings), len(run.outcome.notes)
        step.run(run)
        if step.reusable and donation is not None:
            # copies: the plugin may still rewrite this outcome's findings after the walk
            donation.findings[step.name] = copy.deepcopy(run.outcome.findings[findings:])
            donation.notes[step.name] = list(run.outcome.notes[notes:])
    if donation is not None and given is None:
        if "decompose" in donation.findings:
            donation.graph = copy.deepcopy(run.outcome.graph)
        if "drawn shapes" in donation.findings:
            donation.examples = copy.deepcopy(run.outcome.examples)
        reuse.store(run, key, donation)
    if run.spec is not None:
        # The drawn-shape probes call programs that share the model's tensors: leave the model as its snapshot.
        prepare(run)
    run.outcome.graph = run.outcome.graph or GraphStats()


def _take(run: Run, given: Donation) -> None:
    run.outcome.reused_from = given.label()
    if given.graph is not None:
        run.outcome.graph = copy.deepcopy(given.graph)
    if given.examples is not None:
        run.outcome.examples = copy.deepcopy(given.examples)
    # a cache entry may come from an earlier session or another xdist worker of this one
    where = given.mode if given.origin is None else f"{given.mode}, in another process ({given.origin})"
    run.outcome.notes.append(
        f"reused from {given.label()}: this mode captured the same program (graph, ranges, constants; model "
        "state and inputs by value), so decompose, save/load and the checks that run the programs ran once, in "
        f"{where}"
    )
