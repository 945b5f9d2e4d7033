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


def run(run: Run) -> None:
    """Set ``run.ep`` and its ranges; the outcome gets the ranges (as text) and the graph statistics."""
    import torch

    from exportcore.export_hooks import no_leaked_hooks

    with run.clock.stage("capture"):
        prepare(run)
        args, kwargs = clone_tree((run.args, run.kwargs))
        try:
            with no_leaked_hooks():
                ep = torch.export.export(
                    run.model, args, kwargs or None, dynamic_shapes=run.dynamic_shapes, strict=run.mode.strict
                )
        except Exception as exc:
            prepare(run)
            run.fail(classify(exc, "capture"))
        prepare(run)
    describe_program(run, ep)
    run.ep = ep


def describe_program(run: Run, ep: Any) -> None:
    """Read ``ep``'s ranges into the run (numbers) and the outcome (text), and its graph statistics."""
    run.ranges = exported_ranges(ep)
    run.outcome.range_constraints = {symbol: r.text() for symbol, r in run.ranges.items()}
    run.outcome.graph = graph_stats(ep)
