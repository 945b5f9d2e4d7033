"""Stage keep: hold on to the inference export for the case's targets (only while the session keeps exports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.modes import TARGET_MODES

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Store ``ctx.ep`` for a later target column of the same case (xdist/serial alike)."""
    if ctx.session.exports.enabled and ctx.mode.name in TARGET_MODES:
        from exportcore.stages.runtime import remember_export

        remember_export(ctx, ctx.ep)
