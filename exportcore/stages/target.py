"""Stages lower and load, and the checks in a target's runtime (aoti, onnx, executorch): exportcore.targets."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Check the case in ``ctx.target``'s runtime (exportcore.targets.pipeline.run_target)."""
    # Imported here: without targets in the session no target module loads at all.
    from exportcore.targets.pipeline import run_target

    run_target(ctx)
