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


def run(run: Run) -> None:
    """Explore ``run.examples`` drawn shapes; stop at the first (shrunk) rejection or mismatch."""
    from exportcore.shapes.explore import Probe, explore

    if run.examples <= 0:
        return

    def probe(args: tuple, kwargs: dict) -> Any:
        try:
            reference = run_side(run, run.model, args, kwargs)
        except Exception:
            return Probe("discard", "eager rejected the drawn shape")
        for label in PROGRAMS:
            program = run.programs.get(label)
            if program is None:
                continue
            try:
                actual = run_side(run, program, args, kwargs, backward=label != "decomposed")
            except Exception as exc:
                if is_guard_error(exc, runtime_asserts=is_shapes_spec(run.dynamic_shapes)):
                    if "accept" not in run.checks:
                        return Probe("discard", "guard rejected (accept check off)")
                    first = str(exc).strip().splitlines()[0]
                    names = symbol_names(run.ep, run.spec, run.args, run.kwargs)
                    return Probe(
                        "fail",
                        f"in-spec shape rejected by {label} program ({first}); the export specialized or "
                        f"narrowed a dimension declared dynamic: {ranges_text(run.outcome.declared, run.ranges, names)}",
                        stage="guards",
                    )
                failure = classify(exc, "run")
                return Probe("fail", f"{label} program raised {failure.exc_type}: {failure.message}", stage="run")
            if "numerics" in run.checks:
                failure = compare_runs(
                    run, label, reference, actual, grads=label != "decomposed", inputs=(args, kwargs)
                )
                if failure is not None:
                    return Probe("fail", failure.message + "\n" + failure.detail, stage=failure.stage)
        return Probe("ok")

    with run.clock.stage("run"):
        result = explore(
            run.spec, run.args, run.kwargs, probe, examples=run.examples, seed=run.seed,
            inputs=run.inputs, settings=run.hypothesis_settings,
        )
    prepare(run)
    run.outcome.examples = result.stats
    if result.failure is not None and result.failure.stage == "input":
        _factory_failed(run, result)
    if result.failure is not None:
        run.outcome.counterexample = result.counterexample
        stage = result.failure.stage
        shapes = result.counterexample.shapes if result.counterexample else {}
        message = result.failure.message.splitlines()[0]
        run.fail(
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


def _factory_failed(run: Run, result: ExploreResult) -> None:
    """The user's ``inputs=`` factory raised or built other shapes than drawn: the case's input is broken."""
    run.outcome.counterexample = result.counterexample
    strategy = result.failure.message.startswith("inputs strategy")
    run.fail(
        Failure(
            stage="input", category="input", exc_type="InputFactoryError", message=result.failure.message,
            hint="an inputs= strategy must draw (args, kwargs) inside the declared dynamic_shapes" if strategy else
            "inputs=(shapes, rng) -> (args, kwargs) must return tensors of exactly the shapes it is given, "
            "keyed like the example inputs",
        ),
        status="error",
    )
