"""Stage capture: torch.export.export, exactly once per (case, mode); a failure is classified."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.classify import classify
from exportcore.execute import clone_tree
from exportcore.graph_stats import graph_stats
from exportcore.guards import exported_ranges
from exportcore.sides import prepare

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run", "describe_program"]


def run(ctx: Run) -> None:
    """Set ``ctx.ep`` and its ranges; the outcome gets the ranges (as text) and the graph statistics."""
    import torch

    from exportcore.export_hooks import no_leaked_hooks

    with ctx.clock.stage("capture"):
        prepare(ctx)
        args, kwargs = clone_tree((ctx.args, ctx.kwargs))
        try:
            with no_leaked_hooks():
                ep = torch.export.export(
                    ctx.model, args, kwargs or None, dynamic_shapes=ctx.dynamic_shapes, strict=ctx.mode.strict
                )
        except Exception as exc:
            prepare(ctx)
            ctx.fail(classify(exc, "capture"))
        prepare(ctx)
    describe_program(ctx, ep)
    ctx.ep = ep


def describe_program(ctx: Run, ep: Any) -> None:
    """Read ``ep``'s ranges into the Run (numbers) and the outcome (text), and its graph statistics."""
    ctx.ranges = exported_ranges(ep)
    ctx.outcome.range_constraints = {symbol: r.text() for symbol, r in ctx.ranges.items()}
    ctx.outcome.graph = graph_stats(ep)
