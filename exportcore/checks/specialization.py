"""Findings specialized / narrowed: a dim declared dynamic that the export made static or narrower.

Static facts read off the exported program; recorded before the drawn shapes ctx, so they are
reported even when the accept check fails afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.guards import root_axes

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Record ``specialized`` and ``narrowed`` findings, one per declared root dim axis."""
    exported = ctx.exported_shapes
    for path, axis, name in root_axes(ctx.spec):
        shape = exported.get(path)
        if shape is None or axis >= len(shape):
            continue
        if isinstance(shape[axis], int):
            ctx.finding(
                "specialized",
                f"{path} dim {axis} ({name}) was declared dynamic but the export specialized it to "
                f"{shape[axis]}",
                input=path,
            )
            continue
        exported_range = ctx.ranges.get(shape[axis])
        root = ctx.spec.roots.get(name)
        if exported_range is None or root is None or root.kind != "named":
            continue
        lo, hi = exported_range.floor, exported_range.ceiling
        dlo, dhi = root.min, (float("inf") if root.max is None else root.max)
        # lo > dlo only counts from 2 up: torch's 0/1 specialization is reported by the size01 check.
        if (lo > dlo and lo > 2) or hi < dhi:
            ctx.finding(
                "narrowed",
                f"{path} dim {axis} ({name}) declared [{dlo}, {dhi}] but exported as {exported_range.text()}",
                input=path,
            )
