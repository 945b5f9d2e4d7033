"""Check reject: out-of-spec shapes (below min, above max, a static dim changed, a relation broken) raise a guard error.

A program that computes on such an input fails the check; one that crashes inside instead of
refusing it at its guards gets the finding ``reject_unguarded``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.execute import clone_tree
from exportcore.guards import is_guard_error, ranges_text
from exportcore.failures import guard_accepted
from exportcore.sides import call_quiet, prepare

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Call ep.module() on out-of-spec inputs; each must be refused by a guard."""
    from exportcore.shapes.explore import reject_inputs

    exported = ctx.programs["exported"]
    with ctx.clock.stage("guards"):
        cases = reject_inputs(ctx.spec, ctx.args, ctx.kwargs, count=max(4, min(ctx.examples, 12)), seed=ctx.seed,
                              notes=ctx.outcome.notes)
        for label, args, kwargs in cases:
            args, kwargs = clone_tree((args, kwargs))
            try:
                call_quiet(exported, args, kwargs)
            except Exception as exc:
                if is_guard_error(exc, runtime_asserts=ctx.spec.runtime_asserts):
                    ctx.outcome.examples.rejected += 1
                else:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    ctx.finding(
                        "reject_unguarded",
                        f"out-of-spec input ({label}) passed the guards and failed inside the program "
                        f"({type(exc).__name__}: {first[:200]})",
                    )
                continue
            ctx.fail(guard_accepted(label, ranges_text(ctx.outcome.declared, ctx.ranges, ctx.symbols)))
    prepare(ctx)
