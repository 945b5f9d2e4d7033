"""Sizes 0 and 1 inside the exported range: each program is held to eager there, as on a drawn shape.

torch traces a program assuming every dynamic size is at least 2 (0/1 specialization), yet exports
a range from 0 or 1 where the declared ``Dim`` says so (``Dim("b", max=8)`` exports [0, 8]): there,
broadcasting, contiguity and reductions over an empty or a one-element dim follow other rules than
the ones traced, and a program may crash or compute something else (an InstanceNorm model's
decomposed program raises at batch 0). The drawn shapes start at 2 (exportcore.shapes.SIZE_FLOOR),
so these sizes are run here, the rest of the dims at the examples' sizes: eager first (a size the
model itself refuses is noted, not held against the program), then every program under test.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from exportcore.checks.accept import judge, recorded_factory
from exportcore.checks.nonfinite import NOT_COUNTED, nothing_to_compare
from exportcore.programs.table import add_row
from exportcore.programs.sides import prepare, run_side

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.guards import ExportedRange

__all__ = ["check", "failed_size"]

#: The hint's head, read back by failed_size() (exportcore.diagnosis.explain.fix verifies the min it suggests).
_HINT = re.compile(r"^(?P<name>\w+)=(?P<size>[01]) is inside the exported range \[[^]]*\], but torch traced the program"
                   r" assuming sizes >= 2 \(0/1 specialization\)\. Declare (?P=name) with min=")


def check(ctx: Run, path: str, axis: int, name: str, rng: ExportedRange) -> None:
    """Run sizes 0 and 1 of dim ``name`` where its exported range holds them; fail on the first program that errs."""
    from hypothesis.strategies import SearchStrategy

    from exportcore.programs.under_test import sides
    from exportcore.shapes.synth import drawn_for

    root = ctx.spec.roots.get(name)
    if root is None or isinstance(ctx.inputs, SearchStrategy):  # a user strategy draws its own shapes
        return
    under_test = sides(ctx, distinct=True)
    values = "numerics" in ctx.checks
    comparable = not any(side.stateful for side in under_test)
    for size in (0, 1):
        if size < rng.floor or (size == 1 and root.keep01):  # keep01: size 1 is drawn with the rest
            continue
        assignment = ctx.spec.example_assignment() | {name: size}
        try:
            drawn = drawn_for(ctx.spec, ctx.args, ctx.kwargs, assignment, recorded_factory(ctx), seed=ctx.seed)
        except Exception:  # noqa: BLE001 - a derived dim that has no size there: nothing to run
            continue
        where = f"size {size} of {name} ({path} dim {axis})"
        if drawn.skip or drawn.problem:
            _note(ctx, f"{where} is in the exported range {rng.text()} but its inputs could not be built"
                       f" ({drawn.skip or drawn.problem}): not checked there")
            continue
        args, kwargs = drawn.args, drawn.kwargs
        try:
            reference = run_side(ctx, ctx.model, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - the model's own limit, not the program's
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            _note(ctx, f"{where} is in the exported range {rng.text()} but eager rejects it"
                       f" ({type(exc).__name__}: {first}): not checked there")
            continue
        cells: dict[str, str] = {}
        found: dict[str, Any] = {}
        try:
            probe = judge(ctx, under_test, args, kwargs, reference, cells, found, values, comparable,
                          where=f"{where}, inside the exported range")
        finally:
            add_row(ctx, args, kwargs, "in range", cells)
            prepare(ctx)
        if probe.status == "fail":
            _fail(ctx, drawn, probe, found, size, name, rng)
        elif values and comparable and nothing_to_compare(reference.outputs):
            _note(ctx, f"{where}: {NOT_COUNTED}; only that each program runs there was checked")


def _fail(ctx: Run, drawn: Any, probe: Any, found: dict[str, Any], size: int, name: str, rng: ExportedRange) -> None:
    from exportcore.shapes.explore import counterexample

    ctx.outcome.counterexample = counterexample(ctx.spec, drawn, probe, ctx.inputs)
    side, kept = found[probe.message]
    failure = side.drawn_failure(ctx, kept, probe.message, probe.stage, ctx.outcome.counterexample.shapes)
    failure.hint = (f"{name}={size} is inside the exported range {rng.text()}, but torch traced the program assuming"
                    f" sizes >= 2 (0/1 specialization). Declare {name} with min={size + 1} where the model"
                    f" need not support {size}; where it must, export a separate program with an example of that"
                    " size and that dim static")
    ctx.fail(failure)


def failed_size(failure: Any) -> tuple[str, int] | None:
    """Return (dim name, size) of a failure this check reported at size 0 or 1, else None."""
    match = _HINT.match(getattr(failure, "hint", "") or "")
    return None if match is None else (match["name"], int(match["size"]))


def _note(ctx: Run, note: str) -> None:
    if note not in ctx.outcome.notes:
        ctx.outcome.notes.append(note)
