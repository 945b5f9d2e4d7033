"""Check a target's runtime on the example inputs: it runs them and matches eager (numerics)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.checks.runtime_table import MODULE_COLUMN, add_row, module_verdict, shapes_text
from exportcore.compare import compare
from exportcore.execute import clone_tree
from exportcore.failures import target_numerics
from exportcore.targets.base import flat_tensors
from exportcore.targets.failures import target_failure

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Fail when the runtime raises on the examples, or (with the numerics check) differs from eager."""
    side = ctx.runtime
    name = side.name
    expected = flat_tensors(ctx.reference.outputs)
    row = {"shapes": shapes_text(ctx.args, ctx.kwargs), "kind": "example",
           MODULE_COLUMN: module_verdict(ctx, ctx.args, ctx.kwargs, expected)}
    with ctx.clock.stage("run"):
        try:
            actual = side.call(*clone_tree((ctx.args, ctx.kwargs)))
        except Exception as exc:
            row[name] = "rejected" if side.target.rejection(exc) else "error"
            add_row(ctx, row)
            failure = target_failure(exc, "run", name)
            failure.message = f"{name} failed on the example inputs: {failure.message}"
            ctx.fail(failure)
    tol = side.tolerance
    mismatch = compare(expected, actual, rtol=tol[0], atol=tol[1], path="output")
    row[name] = "accepted" if mismatch is None else "wrong result"
    add_row(ctx, row)
    if mismatch is not None and "numerics" in ctx.checks:
        ctx.fail(target_numerics(name, mismatch, "the example inputs", tol))
