"""Check reject: out-of-spec shapes (below min, above max, a static dim changed, a relation broken) are refused.

Each program under test whose guards are its own (a mode's ep.module(), and its decomposed or
reloaded program when that one's input checks are not proven ep.module()'s, Run.own_guards;
a target's runtime) is called on each input. A mode's program
that computes on one fails the check (must_reject); a runtime that does gets the finding
``reject_unguarded`` instead (several compile without input checks by design), and for a runtime
each dim declared ``min >= 2`` is also tried at ``min - 1`` (a mode's program meets sizes 0 and 1
in the size01 check, since torch specializes them). One that crashes inside instead of refusing
the input at its checks gets the finding ``reject_unguarded``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.programs.table import add_row, keeps_table, probe_cell, shapes_text
from exportcore.diagnosis.failures import guard_accepted
from exportcore.guards import ranges_text
from exportcore.programs.under_test import sides
from exportcore.programs.sides import prepare, run_side
from exportcore.targets.base import flat_tensors

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Call each program on out-of-spec inputs; each must be refused (a runtime's acceptance is a finding)."""
    from exportcore.shapes.explore import below_min_inputs, reject_inputs

    probing = sides(ctx, guards=True)
    comparable = not any(side.stateful for side in probing)
    accepted: dict[str, list[str]] = {side.label: [] for side in probing}
    crashed: dict[str, list[str]] = {side.label: [] for side in probing}
    with ctx.clock.stage("guards"):
        cases = reject_inputs(ctx.spec, ctx.args, ctx.kwargs, count=max(4, min(ctx.examples, 12)), seed=ctx.seed,
                              notes=ctx.outcome.notes)
        if keeps_table(ctx):  # a runtime has no 0/1 specialization: its lowest sizes are probed here
            cases = below_min_inputs(ctx.spec, ctx.args, ctx.kwargs, seed=ctx.seed, notes=ctx.outcome.notes) + cases
        seen: set[str] = set()
        for label, args, kwargs in cases:
            shapes = shapes_text(args, kwargs)
            if shapes in seen:
                continue
            seen.add(shapes)
            reference = _eager(ctx, args, kwargs) if keeps_table(ctx) and comparable else None
            cells: dict[str, str] = {}
            for side in probing:
                cell, exc = probe_cell(ctx, side, args, kwargs, reference, comparable)
                cells[side.column] = cell
                if not side.judged:
                    continue
                if cell == "rejected":
                    ctx.outcome.examples.rejected += 1
                elif exc is not None:
                    crashed[side.label].append(side.crash_text(label, shapes, exc))
                elif side.must_reject:
                    add_row(ctx, args, kwargs, f"out of range ({label})", cells)
                    side.out_of_spec_findings(ctx, [], crashed[side.label])  # what it crashed on before this
                    ctx.fail(guard_accepted(label, ranges_text(ctx.outcome.declared, ctx.ranges, ctx.symbols)))
                else:
                    accepted[side.label].append(f"{shapes} ({label}{', wrong result' if cell == 'wrong result' else ''})")
            add_row(ctx, args, kwargs, f"out of range ({label})", cells)
    prepare(ctx)
    for side in probing:
        if side.judged:
            side.out_of_spec_findings(ctx, accepted[side.label], crashed[side.label])


def _eager(ctx: Run, args: tuple, kwargs: dict) -> list | None:
    """Eager's flat outputs on one input (None when eager refuses it), for the table's 'wrong result'."""
    try:
        return flat_tensors(run_side(ctx, ctx.model, args, kwargs).outputs)
    except Exception:  # noqa: BLE001 - no reference: the cells say accepted or rejected only
        return None
