"""Check numerics: every built program (exported, decomposed, reloaded) equals eager on the example inputs,
and returns the shapes and dtypes its graph declares (exportcore.checks.output_meta)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.checks.output_meta import contradiction
from exportcore.failures import output_metadata_mismatch
from exportcore.classify import EXAMPLE_SHAPE_HINT, classify
from exportcore.parity import PROGRAM_NAMES, compare_runs
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
            # the metadata first: eager runs the same kernels, so a lying fake kernel passes the comparison
            wrong = contradiction(program, ctx.args, ctx.kwargs, actual.outputs)
            if wrong is not None:
                ctx.fail(output_metadata_mismatch(PROGRAM_NAMES.get(label, label), wrong))
            failure = compare_runs(
                ctx, label, ctx.reference, actual, grads=label != "decomposed", inputs=(ctx.args, ctx.kwargs)
            )
            if failure is not None:
                if failure.exc_type == "ShapeMismatch":
                    failure.hint = EXAMPLE_SHAPE_HINT  # "declare the dim dynamic" cannot apply to the examples
                ctx.fail(failure)
        prepare(ctx)
