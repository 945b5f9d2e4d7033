"""Stage capture: torch.export.export, exactly once per (case, mode); a failure is classified."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.diagnosis.classify import classify
from exportcore.programs.execute import clone_tree
from exportcore.programs.graph_stats import graph_stats
from exportcore.guards import exported_input_shapes, exported_ranges, symbol_names
from exportcore.shapes.guard_site import specialization_site, specialized_to
from exportcore.programs.sides import prepare
from exportcore.reuse.whole import capture_record

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.outcome import SourceLocation

__all__ = ["run", "describe_program"]


def run(ctx: Run) -> None:
    """Set ``ctx.ep`` and its ranges; the outcome gets the ranges (as text) and the graph statistics."""
    import torch

    from exportcore.sandbox.export_hooks import no_leaked_hooks

    with ctx.clock.stage("capture"):
        prepare(ctx)
        args, kwargs = clone_tree((ctx.args, ctx.kwargs))
        record = capture_record(ctx)  # what the capture runs: the incremental gate's witnesses

        def export() -> Any:
            return torch.export.export(ctx.model, args, kwargs or None, dynamic_shapes=ctx.dynamic_shapes,
                                       strict=ctx.mode.strict, **ctx.export_kwargs)

        try:
            with no_leaked_hooks():
                ep = record.run(export) if record is not None else export()
        except Exception as exc:
            prepare(ctx)
            failure = classify(exc, "capture")
            if failure.source is None:
                failure.source = _specialization_site(ctx, failure.message)
            ctx.fail(failure)
        prepare(ctx)
    describe_program(ctx, ep)
    ctx.ep = ep


def _specialization_site(ctx: Run, message: str) -> SourceLocation | None:
    """Where the user's code made the tracer fix a declared-dynamic dim, where torch's error does not say.

    Non-strict never says; strict says in the message from torch 2.8 on (there, not asked).
    """
    constant = specialized_to(message)
    if constant is None:
        return None
    import torch

    from exportcore.sandbox.export_hooks import no_leaked_hooks

    def export() -> None:
        args, kwargs = clone_tree((ctx.args, ctx.kwargs))
        with no_leaked_hooks():
            torch.export.export(ctx.model, args, kwargs or None, dynamic_shapes=ctx.dynamic_shapes,
                                strict=ctx.mode.strict, **ctx.export_kwargs)

    try:
        return specialization_site(export, constant)
    finally:
        prepare(ctx)


def describe_program(ctx: Run, ep: Any) -> None:
    """Read the program's facts once: its ranges (numbers on the Run, text on the outcome), its input
    shapes, torch's symbols by the user's dim names, and its graph statistics."""
    ctx.ranges = exported_ranges(ep)
    if ctx.spec is not None:  # what reads them (the checks of a declared spec, the dim names) needs one
        ctx.exported_shapes = exported_input_shapes(ep, ctx.args, ctx.kwargs)
        try:
            ctx.symbols = symbol_names(ctx.spec, ctx.exported_shapes)
        except Exception:  # noqa: BLE001 - naming is cosmetic: messages and ranges keep torch's symbols
            ctx.symbols = {}
    ctx.outcome.range_constraints = {symbol: r.text() for symbol, r in ctx.ranges.items()}
    ctx.outcome.graph = graph_stats(ep)
