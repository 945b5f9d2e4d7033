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


def run(ctx: Run) -> None:
    """Fail on the first program that raises on, or differs from eager on, the example inputs."""
    with ctx.clock.stage("run"):
        for label in PROGRAMS:
            program = ctx.programs.get(label)
            if program is None:
                continue
            try:
                actual = run_side(ctx, program, ctx.args, ctx.kwargs, backward=label != "decomposed")
            except Exception as exc:
                failure = classify(exc, "run")
                failure.message = f"{label} program failed on the example inputs: {failure.message}"
                ctx.fail(failure)
            failure = compare_runs(
                ctx, label, ctx.reference, actual, grads=label != "decomposed", inputs=(ctx.args, ctx.kwargs)
            )
            if failure is not None:
                ctx.fail(failure)
        prepare(ctx)
