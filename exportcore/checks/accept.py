"""Checks accept (and numerics) on drawn shapes: every in-spec shape eager accepts, each program accepts.

One hypothesis loop serves both checks: for each drawn in-spec shape every built program
must accept it (accept) and match eager on it (numerics). A failure shrinks to a minimal
counterexample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.checks.numerics import PROGRAMS
from exportcore.checks.output_meta import contradiction
from exportcore.classify import classify
from exportcore.failures import drawn_shape_failure, input_factory_error, output_metadata_mismatch
from exportcore.guards import is_guard_error, ranges_text
from exportcore.links import nearest_case
from exportcore.outcome import Failure
from exportcore.parity import PROGRAM_NAMES, compare_runs
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

    metadata: dict[str, Failure] = {}  # a probe's message -> the output-metadata failure it stands for

    def probe(args: tuple, kwargs: dict) -> Any:
        try:
            reference = run_side(ctx, ctx.model, args, kwargs)
        except Exception as exc:
            blame = _blame_user_inputs(ctx, args, kwargs, exc)
            if blame:
                return Probe("fail", blame, stage="input")
            text = str(exc).strip().splitlines()
            return Probe("discard", f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__)
        for label in PROGRAMS:
            program = ctx.programs.get(label)
            if program is None or label in ctx.same_as:
                continue  # not built, or proven the same program as one probed already
            try:
                actual = run_side(ctx, program, args, kwargs, backward=label != "decomposed")
            except Exception as exc:
                if is_guard_error(exc, runtime_asserts=ctx.spec.runtime_asserts):
                    if "accept" not in ctx.checks:
                        return Probe("discard", "guard rejected (accept check off)")
                    first = str(exc).strip().splitlines()[0]
                    return Probe(
                        "fail",
                        f"in-spec shape rejected by {label} program ({first}); the export specialized or "
                        f"narrowed a dimension declared dynamic: {ranges_text(ctx.outcome.declared, ctx.ranges, ctx.symbols)}",
                        stage="guards",
                    )
                failure = classify(exc, "run")
                return Probe("fail", f"{label} program raised {failure.exc_type}: {failure.message}", stage="run")
            wrong = contradiction(program, args, kwargs, actual.outputs)  # a fake kernel right at the example only
            if wrong is not None:
                found = output_metadata_mismatch(PROGRAM_NAMES.get(label, label), wrong)
                metadata[found.message] = found
                return Probe("fail", found.message, stage="run")
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
    if result.failure is None and result.stats.accepted == 0 and (ctx.spec.roots or ctx.inputs is not None):
        _nothing_checked(ctx, result)
    if result.failure is not None and result.failure.stage == "input":
        _factory_failed(ctx, result)
    if result.failure is not None:
        ctx.outcome.counterexample = result.counterexample
        stage = result.failure.stage
        shapes = result.counterexample.shapes if result.counterexample else {}
        message = result.failure.message.splitlines()[0]
        known = metadata.get(result.failure.message)
        if known is not None:
            known.message = f"{known.message} (minimal failing shapes: {shapes})"
            ctx.fail(known)
        case = nearest_case("GuardRejected", message, "guards", "guards") if stage == "guards" else None
        ctx.fail(drawn_shape_failure(stage, message, result.failure.message, shapes, case))


def _blame_user_inputs(ctx: Run, args: tuple, kwargs: dict, error: BaseException) -> str:
    """Return why the user's inputs, not the range, are at fault when eager rejects them ("" if they are not)."""
    import torch
    from hypothesis.strategies import SearchStrategy

    from exportcore.shapes.blame import differences, rejected_message
    from exportcore.shapes.parse import input_paths
    from exportcore.shapes.synth import input_shapes, synthesize

    if ctx.inputs is None:
        return ""
    examples = dict(input_paths(ctx.args, ctx.kwargs))
    drawn = input_shapes(args, kwargs)
    shapes = {p: s for p, s in drawn.items()
              if isinstance(examples.get(p), torch.Tensor) and len(s) == examples[p].dim()}
    try:  # the examples resized to the same shapes: does eager take those?
        resized = synthesize(ctx.args, ctx.kwargs, shapes, seed=ctx.seed)
        run_side(ctx, ctx.model, *resized)
    except Exception:  # noqa: BLE001 - eager refuses the shape itself: the range's matter, not the factory's
        return ""
    finally:
        prepare(ctx)
    who = "inputs strategy" if isinstance(ctx.inputs, SearchStrategy) else "inputs factory"
    return rejected_message(who, drawn, error, differences(args, kwargs, ctx.args, ctx.kwargs))


def _nothing_checked(ctx: Run, result: ExploreResult) -> None:
    """A pass that ran no drawn shape at all must not read as a plain pass: say why, as a finding."""
    stats = result.stats
    total = stats.tried + stats.skipped
    why = []
    if stats.discarded:
        first = f" (first: {result.first_discard})" if result.first_discard else ""
        why.append(f"eager rejected {stats.discarded}{first}")
    if stats.skipped:
        why.append(f"{stats.skipped} could not be built at their shapes (see notes)")
    if not why:
        why.append("none could be drawn within the input budget" if not total else "none ran")
    ctx.finding(
        "no_shape_checked",
        f"0 of {total} drawn shapes checked: {', '.join(why)}; the verdict covers the example inputs only, "
        "not the declared dynamic range",
    )


def _factory_failed(ctx: Run, result: ExploreResult) -> None:
    """The user's ``inputs=`` factory raised or built other shapes than drawn: the case's input is broken."""
    ctx.outcome.counterexample = result.counterexample
    strategy = result.failure.message.startswith("inputs strategy")
    ctx.fail(input_factory_error(result.failure.message, strategy=strategy), status="error")
