"""Checks accept (and numerics) on drawn shapes: every in-spec shape eager accepts, each program accepts.

One hypothesis loop serves both checks and every program under test (exportcore.programs.under_test: a
mode's exported, decomposed and reloaded programs, or a target's runtime): for each drawn in-spec
shape each must accept it (accept) and match eager on it (numerics). A failure shrinks to a
minimal counterexample, which the failing side writes up.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from exportcore.checks.nonfinite import (NOT_COUNTED, blame_factory, eager_on_resized_examples, factory_name,
                                         nothing_to_compare)
from exportcore.programs.table import add_row, quiet_cell
from exportcore.diagnosis.failures import input_factory_error
from exportcore.outcome import Failure
from exportcore.programs.under_test import Side, sides
from exportcore.programs.sides import prepare, recording, run_side
from exportcore.targets.base import flat_tensors

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.shapes.explore import ExploreResult

__all__ = ["run", "judge", "recorded_factory"]

_WHERE = "a drawn in-range shape"


def run(ctx: Run) -> None:
    """Explore ``ctx.examples`` drawn shapes; stop at the first (shrunk) rejection or mismatch."""
    from exportcore.shapes.explore import Probe, explore

    if ctx.examples <= 0:
        return
    under_test = sides(ctx, distinct=True)
    # A side that carries state the next call sees (a runtime that keeps mutated buffers): only its
    # first call, the examples', is comparable with eager, so drawn shapes check acceptance only.
    values = "numerics" in ctx.checks
    comparable = not any(side.stateful for side in under_test)
    found: dict[str, tuple[Side, Failure | None]] = {}  # a probe's message -> the side and Failure it stands for
    not_counted = [0]  # shapes whose eager outputs are all NaN/inf: discarded, yet eager took them

    def probe(args: tuple, kwargs: dict) -> Any:
        if ctx.device != "cpu":  # a user's inputs= factory builds CPU tensors
            from exportcore.devices import move_inputs

            args, kwargs = move_inputs(args, kwargs, ctx.device)
        try:
            reference = run_side(ctx, ctx.model, args, kwargs)
        except Exception as exc:
            blame = _blame_user_inputs(ctx, args, kwargs, exc)
            if blame:
                return Probe("fail", blame, stage="input")
            text = str(exc).strip().splitlines()
            return Probe("discard", f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__)
        vacuous = values and comparable and nothing_to_compare(reference.outputs)
        if vacuous:
            blame = blame_factory(ctx, args, kwargs)
            if blame:
                return Probe("fail", blame, stage="input")
        cells: dict[str, str] = {}
        try:
            verdict = judge(ctx, under_test, args, kwargs, reference, cells, found, values, comparable)
        finally:
            add_row(ctx, args, kwargs, "in range", cells)
        # still run: a program that refuses or crashes on the shape is wrong whatever eager answered
        if vacuous and verdict.status == "ok":
            not_counted[0] += 1
            return Probe("discard", NOT_COUNTED)
        return verdict

    with ctx.clock.stage("run"):
        result = explore(
            ctx.spec, ctx.args, ctx.kwargs, probe, examples=ctx.examples, seed=ctx.seed,
            inputs=recorded_factory(ctx), settings=ctx.hypothesis_settings,
        )
    prepare(ctx)
    ctx.outcome.examples = result.stats
    ctx.outcome.notes.extend(result.notes)
    if not_counted[0]:
        _not_counted(ctx, result, not_counted[0])
    if result.failure is None and result.stats.accepted == 0 and (ctx.spec.roots or ctx.inputs is not None):
        _nothing_checked(ctx, result, not_counted[0])
    if result.failure is not None and result.failure.stage == "input":
        _factory_failed(ctx, result)
    if result.failure is not None:
        ctx.outcome.counterexample = result.counterexample
        shapes = result.counterexample.shapes if result.counterexample else {}
        side, kept = found.get(result.failure.message, (under_test[-1], None))
        ctx.fail(side.drawn_failure(ctx, kept, result.failure.message, result.failure.stage, shapes))


def judge(ctx: Run, under_test: list[Side], args: tuple, kwargs: dict, reference: Any, cells: dict[str, str],
          found: dict[str, tuple[Side, Failure | None]], values: bool, comparable: bool, *, where: str = _WHERE) -> Any:
    """Run every side on one input (``where``: what it is): the probe's verdict (the first failing side's), filling ``cells``."""
    from exportcore.shapes.explore import Probe

    for side in under_test:
        if not side.judged:
            cells[side.column] = quiet_cell(ctx, side, args, kwargs, flat_tensors(reference.outputs), comparable)
            continue
        try:
            actual = side.call(ctx, args, kwargs)
        except Exception as exc:
            rejected = side.rejects(ctx, exc)
            cells[side.column] = "rejected" if rejected else "error"
            if rejected and "accept" not in ctx.checks:
                return Probe("discard", f"{side.name} rejected it (accept check off)")
            message, kept = side.in_spec_rejected(ctx, exc) if rejected else side.in_spec_raised(ctx, exc)
            found[message] = (side, kept)
            return Probe("fail", message, stage="guards" if rejected else "run")
        failure = side.compare(ctx, reference, actual, where, (args, kwargs), values=values) if comparable else None
        cells[side.column] = "accepted" if failure is None else "wrong result"
        if failure is not None and (values or failure.exc_type == "OutputMetadataMismatch"):
            message = side.in_spec_differs(failure)
            found[message] = (side, failure)
            return Probe("fail", message, stage=failure.stage)
    return Probe("ok")


def recorded_factory(ctx: Run) -> Any:
    """The user's ``inputs=``; a factory function's calls recorded as eager's are (exportcore.programs.sides.recording).

    With a result cache, what the factory runs at the drawn shapes and not at the examples' is
    named in the entry as eager's own code is (exportcore.reuse.code_witnesses): a helper it calls only
    past some size, edited, is never served the old results.
    """
    factory = ctx.inputs
    if not isinstance(factory, types.FunctionType) or ctx.code_records is None:
        return factory

    def recorded(shapes: dict, rng: Any) -> Any:
        return recording(ctx, lambda: factory(shapes, rng))

    return recorded


def _blame_user_inputs(ctx: Run, args: tuple, kwargs: dict, error: BaseException) -> str:
    """Return why the user's inputs, not the range, are at fault when eager rejects them ("" if they are not)."""
    from exportcore.shapes.blame import differences, rejected_message
    from exportcore.shapes.synth import input_shapes

    if ctx.inputs is None:
        return ""
    try:  # the examples resized to the same shapes: does eager take those?
        eager_on_resized_examples(ctx, args, kwargs)
    except Exception:  # noqa: BLE001 - eager refuses the shape itself: the range's matter, not the factory's
        return ""
    return rejected_message(factory_name(ctx), input_shapes(args, kwargs), error,
                            differences(args, kwargs, ctx.args, ctx.kwargs))


def _not_counted(ctx: Run, result: ExploreResult, count: int) -> None:
    """Say how many drawn shapes eager answered with NaN/inf only; explore counted them as eager's rejections."""
    stats = result.stats
    if stats.note and (stats.discarded - count) * 2 <= stats.tried:
        stats.note = ""  # "rejected by the eager model": it was not
    ctx.outcome.notes.append(f"{count} drawn shape{'s' if count > 1 else ''} not counted as checked: {NOT_COUNTED}")


def _nothing_checked(ctx: Run, result: ExploreResult, not_counted: int = 0) -> None:
    """A pass that ran no drawn shape at all must not read as a plain pass: say why, as a finding."""
    stats = result.stats
    total = stats.tried + stats.skipped
    why = []
    rejected = stats.discarded - not_counted
    if rejected:
        first = f" (first: {result.first_discard})" if result.first_discard and result.first_discard != NOT_COUNTED \
            else ""
        why.append(f"eager rejected {rejected}{first}")
    if not_counted:
        why.append(f"eager's outputs were entirely NaN/inf at {not_counted}")
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
