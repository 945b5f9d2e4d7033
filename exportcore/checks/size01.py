"""Sizes 0 and 1, which torch traces around (0/1 specialization) and the drawn shapes never reach.

Where the exported range starts at 2 or above (Dim.AUTO/DYNAMIC, ``min=2``), torch does not guard
that lower bound: sizes 0 and 1 get through ep.module()'s guards although the range excludes them,
and their results are unchecked (finding size01_accepted). Where it holds 0 or 1 (a declared
``Dim("b", max=8)`` exports [0, 8]), the programs are held to eager there (exportcore.checks.small_sizes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from exportcore.checks import small_sizes
from exportcore.guards import root_axes
from exportcore.programs.sides import call_quiet

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.guards import ExportedRange

__all__ = ["run", "in_range"]


def run(ctx: Run) -> None:
    """Probe sizes 0 and 1 of every dynamic root dim: outside its exported range for acceptance, inside it as checks."""
    from exportcore.shapes.synth import synthesize

    program = ctx.programs["exported"]
    for path, axis, name, rng in _dims(ctx):
        if rng.floor < 2:  # 0 or 1 promised: run there (exportcore.checks.small_sizes)
            with ctx.clock.stage("run"):
                small_sizes.check(ctx, path, axis, name, rng)
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


def in_range(ctx: Run) -> None:
    """A target's sizes 0 and 1 inside the exported range, held to eager (those outside it are its reject check's)."""
    for path, axis, name, rng in _dims(ctx):
        if rng.floor < 2:
            with ctx.clock.stage("run"):
                small_sizes.check(ctx, path, axis, name, rng)


def _dims(ctx: Run) -> Iterator[tuple[str, int, str, ExportedRange]]:
    """(input path, axis, dim name, exported range) of each dynamic root dim, once per name."""
    exported = ctx.exported_shapes
    seen: set[str] = set()
    for path, axis, name in root_axes(ctx.spec):
        shape = exported.get(path)
        if name in seen or shape is None or axis >= len(shape) or isinstance(shape[axis], int):
            continue
        seen.add(name)
        rng = ctx.ranges.get(shape[axis])
        if rng is not None:
            yield path, axis, name, rng
