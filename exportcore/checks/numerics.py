"""Check numerics: every program under test equals eager on the example inputs.

A mode's programs (exported, decomposed, reloaded) are also held to the shapes and dtypes their
graph declares (exportcore.programs.output_meta); a target's runtime runs here even with the numerics
check off (it must at least run the examples), compared only with it on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.checks.nonfinite import NOT_COUNTED, nothing_to_compare
from exportcore.programs.table import add_row, quiet_cell
from exportcore.diagnosis.classify import EXAMPLE_SHAPE_HINT
from exportcore.programs.parity import EXAMPLE_INPUTS
from exportcore.programs.under_test import sides
from exportcore.programs.sides import prepare
from exportcore.targets.base import flat_tensors

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]

_WHERE = EXAMPLE_INPUTS


def run(ctx: Run) -> None:
    """Fail on the first program that raises on, or differs from eager on, the example inputs."""
    args, kwargs = ctx.args, ctx.kwargs
    numerics = "numerics" in ctx.checks
    cells: dict[str, str] = {}
    with ctx.clock.stage("run"):
        for side in sides(ctx):
            if not side.judged:
                cells[side.column] = quiet_cell(ctx, side, args, kwargs, flat_tensors(ctx.reference.outputs))
                continue
            try:
                actual = side.call(ctx, args, kwargs)
            except Exception as exc:
                cells[side.column] = "rejected" if side.rejects(ctx, exc) else "error"
                add_row(ctx, args, kwargs, "example", cells)
                ctx.fail(side.raised(exc, _WHERE))
            failure = side.compare(ctx, ctx.reference, actual, _WHERE, (args, kwargs), values=numerics)
            cells[side.column] = "accepted" if failure is None else "wrong result"
            if failure is not None and (numerics or failure.exc_type == "OutputMetadataMismatch"):
                add_row(ctx, args, kwargs, "example", cells)
                if failure.exc_type == "ShapeMismatch":
                    failure.hint = EXAMPLE_SHAPE_HINT  # "declare the dim dynamic" cannot apply to the examples
                ctx.fail(failure)
        add_row(ctx, args, kwargs, "example", cells)
    if numerics and nothing_to_compare(ctx.reference.outputs):
        # NaN compares equal to NaN: a pass here says the programs run, not that they compute what eager does
        ctx.outcome.notes.append(f"the example inputs: {NOT_COUNTED}; only that each program runs on them was checked")
    prepare(ctx)
