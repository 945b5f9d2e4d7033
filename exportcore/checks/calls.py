"""Finding python_state: eager's second call differs from the program's, because a forward changes Python state.

torch.export traces one call: a Python attribute a forward changes (``self.calls += 1``, a cache
rebound from None, a list it appends to) is read as the traced call saw it, and the program keeps
none of it. Every comparison of the other checks starts both sides from the model as given, so
they hold the program to eager's first call. When eager's run on the examples changed such state
(Run.state_writes), this check calls eager and ep.module() twice in a row on the examples, each
from the model as given, and compares the second calls: a difference means the program answers
every call as the first, where eager does not. A warning finding (an error under
``--export-findings=error``): the first call is right, and a model used once per instance is fine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.programs.execute import run_inference, run_training
from exportcore.programs.sides import prepare, traced_path

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.programs.execute import RunResult

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Record a python_state finding when eager's second call on the examples differs from ep.module()'s."""
    from exportcore.compare import compare

    if not ctx.state_writes or ctx.target is not None:
        return
    program = ctx.programs.get("exported")
    if program is None:
        return
    with ctx.clock.stage("run"):
        try:
            expected = _second_call(ctx, ctx.model)
            actual = _second_call(ctx, program)
        except Exception:  # noqa: BLE001 - a second call that raises is not this check's to judge
            return
        finally:
            prepare(ctx)
    found = compare(expected.outputs, actual.outputs, rtol=ctx.rtol, atol=ctx.atol, path="output")
    if found is None:
        return
    names = ", ".join(ctx.state_writes[:6]) + (" ..." if len(ctx.state_writes) > 6 else "")
    ctx.finding(
        "python_state",
        f"eager's second call on the example inputs differs from ep.module()'s ({_first_line(found.message)}): "
        f"the forward changes Python state ({names}) that the program does not carry, so it answers every call as "
        "the one torch.export traced; keep such state in a registered buffer (register_buffer) to export it",
    )


def _second_call(ctx: Run, fn: Any) -> RunResult:
    """Call ``fn`` twice on the examples from the model as given, without a restore in between; the second result."""
    prepare(ctx)
    state = ctx.program_states.get(id(fn))
    if state is not None:
        state.restore(fn)
    call = run_training if ctx.mode.training else run_inference
    options = {"backward": False} if ctx.mode.training else {}
    with traced_path():
        call(fn, ctx.args, ctx.kwargs, seed=ctx.seed, **options)
        return call(fn, ctx.args, ctx.kwargs, seed=ctx.seed, **options)


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]
