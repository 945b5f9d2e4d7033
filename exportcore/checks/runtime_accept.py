"""Check a target's runtime on hypothesis-drawn in-range shapes: each accepted (accept) and equal to eager (numerics)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.checks.runtime_table import MODULE_COLUMN, add_row, eager_outputs, module_verdict, shapes_text
from exportcore.compare import compare
from exportcore.execute import clone_tree
from exportcore.failures import target_guard_rejected, target_numerics
from exportcore.sides import prepare
from exportcore.targets.failures import target_failure

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Explore ``ctx.examples`` drawn shapes in the runtime; stop at the first (shrunk) rejection or mismatch."""
    from exportcore.shapes import Probe, explore

    side = ctx.runtime
    name = side.name
    if ctx.examples <= 0:
        return
    tol = None if side.stateful else side.tolerance  # None: no numerics after the first call
    last: dict[str, Any] = {}

    def probe(args: tuple, kwargs: dict) -> Any:
        if ctx.device != "cpu":  # a user's inputs= factory builds CPU tensors
            from exportcore.devices import move_inputs

            args, kwargs = move_inputs(args, kwargs, ctx.device)
        expected = eager_outputs(ctx, args, kwargs)
        if expected is None:
            return Probe("discard", "eager rejected the drawn shape")
        row = {"shapes": shapes_text(args, kwargs), "kind": "in range",
               MODULE_COLUMN: module_verdict(ctx, args, kwargs, expected, tol is not None)}
        try:
            actual = side.call(*clone_tree((args, kwargs)))
        except Exception as exc:
            rejected = side.target.rejection(exc)
            row[name] = "rejected" if rejected else "error"
            add_row(ctx, row)
            if rejected and "accept" not in ctx.checks:
                return Probe("discard", "runtime rejected (accept check off)")
            last["exc"] = exc
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            if rejected:
                return Probe("fail", f"{name} rejected an in-range shape ({first})", stage="guards")
            return Probe("fail", f"{name} raised {type(exc).__name__} on an in-range shape: {first}", stage="run")
        mismatch = None if tol is None else compare(expected, actual, rtol=tol[0], atol=tol[1], path="output")
        row[name] = "accepted" if mismatch is None else "wrong result"
        add_row(ctx, row)
        if mismatch is not None and "numerics" in ctx.checks:
            last["mismatch"] = mismatch
            return Probe("fail", f"{name} output differs from eager: {mismatch.message}", stage="numerics")
        return Probe("ok")

    with ctx.clock.stage("run"):
        result = explore(ctx.spec, ctx.args, ctx.kwargs, probe, examples=ctx.examples, seed=ctx.seed,
                         inputs=ctx.inputs, settings=ctx.hypothesis_settings)
    prepare(ctx)
    ctx.outcome.examples = result.stats
    if result.failure is None:
        return
    ctx.outcome.counterexample = result.counterexample
    if result.counterexample is not None:
        result.counterexample.reproduce = result.counterexample.reproduce.replace(
            "got = ep.module()(*args, **kwargs)", f"got = <the loaded {name} artifact>(*args, **kwargs)")
    shapes = result.counterexample.shapes if result.counterexample else {}
    stage = result.failure.stage
    if stage == "run" and "exc" in last:
        failure = target_failure(last["exc"], "run", name)
    elif stage == "numerics" and "mismatch" in last:
        failure = target_numerics(name, last["mismatch"], "a drawn in-range shape", tol)
    else:
        failure = target_guard_rejected(name, result.failure.message.splitlines()[0])
    failure.message = f"{failure.message} (minimal failing shapes: {shapes})"[:500]
    failure.detail = result.failure.message + ("\n" + failure.detail if failure.detail else "")
    ctx.fail(failure)
