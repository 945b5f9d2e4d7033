"""Stage eager: run the user's model on copies of the example inputs; the reference every program must match."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.diagnosis.classify import classify
from exportcore.reuse.eager_code import CodeRecord
from exportcore.programs.sides import prepare, run_side
from exportcore.reuse.prove import before_capture

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Set ``ctx.reference``; a model that fails in eager is an error of the case, not of the export."""
    with ctx.clock.stage("eager"):
        prepare(ctx)
        try:
            if ctx.session.disk is None:
                ctx.reference = run_side(ctx, ctx.model, ctx.args, ctx.kwargs)
            else:  # what a later session must also have run to be served this one's results
                examples = CodeRecord()
                ctx.reference = examples.run(lambda: run_side(ctx, ctx.model, ctx.args, ctx.kwargs))
                eager_code = examples.digest()
                # and what runs at other shapes from here on (exportcore.reuse.code_witnesses)
                ctx.code_records = (examples, CodeRecord(after=examples))
        except Exception as exc:  # the model itself is broken: say so, not "export failed"
            ctx.fail(classify(exc, "eager"), status="error")
        else:
            # Restores skip weights whose version counter did not move; a forward that writes
            # behind the counter (``p.data.add_``) is caught here, once, and turns that off.
            ctx.model_state.find_untracked_writes()
            ctx.state_writes = ctx.model_state.changed(ctx.model)
        prepare(ctx)
    if ctx.code_records is not None and ctx.target is None:
        # the proof's parts before capture, eager's code among them, as eager left them
        before_capture(ctx, eager_code)
