"""Check numerics: every built program (exported, decomposed, reloaded) equals eager on the example inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.classify import classify
from exportcore.parity import compare_runs
from exportcore.sides import prepare, run_side

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run", "PROGRAMS"]

#: The programs the stages may build, in the order they are checked.
PROGRAMS = ("exported", "decomposed", "reloaded")


def run(run: Run) -> None:
    """Fail on the first program that raises on, or differs from eager on, the example inputs."""
    with run.clock.stage("run"):
        for label in PROGRAMS:
            program = run.programs.get(label)
            if program is None:
                continue
            try:
                actual = run_side(run, program, run.args, run.kwargs, backward=label != "decomposed")
            except Exception as exc:
                failure = classify(exc, "run")
                failure.message = f"{label} program failed on the example inputs: {failure.message}"
                run.fail(failure)
            failure = compare_runs(
                run, label, run.reference, actual, grads=label != "decomposed", inputs=(run.args, run.kwargs)
            )
            if failure is not None:
                run.fail(failure)
        prepare(run)
