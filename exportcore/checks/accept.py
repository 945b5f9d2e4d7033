"""Checks accept (and numerics) on drawn shapes: every in-spec shape eager accepts, each program accepts.

One hypothesis loop serves both checks: for each drawn in-spec shape every built program
must accept it (accept) and match eager on it (numerics). A failure shrinks to a minimal
counterexample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.checks.numerics import PROGRAMS
from exportcore.classify import classify
from exportcore.guards import is_guard_error, ranges_text, symbol_names
from exportcore.links import nearest_case
from exportcore.outcome import Failure
from exportcore.parity import compare_runs
from exportcore.shapes.shapes_spec import is_shapes_spec
from exportcore.sides import prepare, run_side

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.shapes.explore import ExploreResult

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Explore ``ctx.examples`` drawn shapes; stop at the first (shrunk) rejection or mismatch."""
    from exportcore.shapes.explore import Probe, explore

    if ctx.examples <= 0:
        return

    def probe(args: tuple, kwargs: dict) -> Any:
        try:
            reference = run_side(ctx, ctx.model, args, kwargs)
        except Exception:
            return Probe("discard", "eager rejected the drawn shape")
        for label in PROGRAMS:
            program = ctx.programs.get(label)
            if program is None or label in ctx.same_as:
                continue  # not built, or proven the same program as one probed already
            try:
                actual = run_side(ctx, program, args, kwargs, backward=label != "decomposed")
            except Exception as exc:
                if is_guard_error(exc, runtime_asserts=is_shapes_spec(ctx.dynamic_shapes)):
                    if "accept" not in ctx.checks:
                        return Probe("discard", "guard rejected (accept check off)")
                    first = str(exc).strip().splitlines()[0]
                    names = symbol_names(ctx.ep, ctx.spec, ctx.args, ctx.kwargs)
                    return Probe(
                        "fail",
                        f"in-spec shape rejected by {label} program ({first}); the export specialized or "
                        f"narrowed a dimension declared dynamic: {ranges_text(ctx.outcome.declared, ctx.ranges, names)}",
                        stage="guards",
                    )
                failure = classify(exc, "run")
                return Probe("fail", f"{label} program raised {failure.exc_type}: {failure.message}", stage="run")
            if "numerics" in ctx.checks:
                failure = compare_runs(
                    ctx, label, reference, actual, grads=label != "decomposed", inputs=(args, kwargs)
                )
                if failure is not None:
                    return Probe("fail", failure.message + "\n" + failure.detail, stage=failure.stage)
        return Probe("ok")

    with ctx.clock.stage("run"):
        result = explore(
            ctx.spec, ctx.args, ctx.kwargs, probe, examples=ctx.examples, seed=ctx.seed,
            inputs=ctx.inputs, settings=ctx.hypothesis_settings,
        )
    prepare(ctx)
    ctx.outcome.examples = result.stats
    ctx.outcome.notes.extend(result.notes)
    if result.failure is not None and result.failure.stage == "input":
        _factory_failed(ctx, result)
    if result.failure is not None:
        ctx.outcome.counterexample = result.counterexample
        stage = result.failure.stage
        shapes = result.counterexample.shapes if result.counterexample else {}
        message = result.failure.message.splitlines()[0]
        ctx.fail(
            Failure(
                stage=stage,
                category="guards" if stage == "guards" else ("numerics" if stage in ("numerics", "training") else "internal"),
                exc_type="GuardRejected" if stage == "guards" else "NumericsMismatch" if stage != "run" else "RuntimeError",
                message=f"{message} (minimal failing shapes: {shapes})",
                detail=result.failure.message,
                hint=(
                    "declare the dimension with a range the model really supports, or remove the code that "
                    "specializes it (see range_constraints)"
                    if stage == "guards"
                    else "reproduce with the counterexample shapes; the exported program diverges from eager there"
                ),
                exportdb_case=nearest_case("GuardRejected", message, "guards", "guards") if stage == "guards" else None,
            )
        )


def _factory_failed(ctx: Run, result: ExploreResult) -> None:
    """The user's ``inputs=`` factory raised or built other shapes than drawn: the case's input is broken."""
    ctx.outcome.counterexample = result.counterexample
    strategy = result.failure.message.startswith("inputs strategy")
    ctx.fail(
        Failure(
            stage="input", category="input", exc_type="InputFactoryError", message=result.failure.message,
            hint="an inputs= strategy must draw (args, kwargs) inside the declared dynamic_shapes" if strategy else
            "inputs=(shapes, rng) -> (args, kwargs) must return tensors of exactly the shapes it is given, "
            "keyed like the example inputs",
        ),
        status="error",
    )
