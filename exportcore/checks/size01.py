"""Finding size01_accepted: torch does not guard the lower bound 2 it infers for Dim.AUTO/DYNAMIC.

Sizes 0 and 1 then get through ep.module()'s guards although the exported range excludes them,
and the results for those sizes are unchecked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.guards import root_axes
from exportcore.sides import call_quiet

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Probe sizes 0 and 1 of every dynamic root dim whose exported range starts at 2 or above."""
    from exportcore.shapes.synth import synthesize

    exported = ctx.exported_shapes
    program = ctx.programs["exported"]
    seen: set[str] = set()
    for path, axis, name in root_axes(ctx.spec):
        shape = exported.get(path)
        if name in seen or shape is None or axis >= len(shape) or isinstance(shape[axis], int):
            continue
        seen.add(name)
        rng = ctx.ranges.get(shape[axis])
        if rng is None or rng.floor < 2:
            continue
        for size in (0, 1):
            try:
                shapes = ctx.spec.shapes_for(ctx.spec.example_assignment() | {name: size})
                args, kwargs = synthesize(ctx.args, ctx.kwargs, shapes, seed=ctx.seed)
                call_quiet(program, args, kwargs, ctx)
            except Exception:
                continue
            ctx.finding(
                "size01_accepted",
                f"ep.module() accepted size {size} for {name} ({path} dim {axis}) although the exported range "
                f"is {rng.text()}: torch does not guard the 0/1 specialization; results for that size are unchecked",
                input=path,
            )
            break
