"""Stage module: ep.module(), the program users call; its own state snapshot is kept for later runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.diagnosis.classify import classify
from exportcore.programs.sides import prepare, remember

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Set ``ctx.programs["exported"]``."""
    prepare(ctx)
    with ctx.clock.stage("module"):
        try:
            remember(ctx, "exported", ctx.ep.module())
        except Exception as exc:
            ctx.fail(classify(exc, "module"))
