"""Check the user's recorded input sets (``recorded_inputs=``): each is run and compared like an example.

Drawn shapes are synthetic: random values at sizes the spec allows. A deployment engineer often
holds the inputs the model really sees (profiling data, a logged request, torch's own
``AdditionalInputs`` or ``torch.onnx.InputObserver``); each recorded set is run on every program
under test and must match eager, and the guards must accept it.

A set outside the declared spec (a dim past its range, a static dim at another size, a relation
broken, another structure) is an input error naming the set and the dim, not a failure of the
model: the user says the model will see these inputs, and the spec they wrote excludes one, so the
case itself contradicts itself. Nothing here infers a range from the sets' spread (a case without
dynamic_shapes stays static; the error for a set that varies a static dim says to declare it): the
user asks for one with ``exportcore.spec_from_recorded`` (exportcore.shapes.recorded_spec).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.case import RECORDED_INPUTS as FIELD
from exportcore.case import recorded_sets
from exportcore.outcome import Failure
from exportcore.programs.table import add_row

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run", "recorded_sets"]


def run(ctx: Run) -> None:
    """Run every recorded set on eager and every program under test; fail on the first that differs or is refused."""
    from exportcore.checks.accept import judge
    from exportcore.diagnosis.failures import case_not_checked
    from exportcore.programs.sides import prepare, run_side
    from exportcore.programs.under_test import sides

    value = ctx.recorded_inputs
    if value is None:
        return
    try:
        recorded = recorded_sets(value)
    except (TypeError, ValueError) as exc:
        ctx.fail(case_not_checked(type(exc).__name__, str(exc)), status="error")
    under_test = sides(ctx, distinct=True)
    values = "numerics" in ctx.checks
    comparable = not any(side.stateful for side in under_test)
    with ctx.clock.stage("run"):
        for index, (args, kwargs) in enumerate(recorded):
            where = f"{FIELD}[{index}]"
            outside = _outside_spec(ctx, args, kwargs)
            if outside:
                ctx.fail(case_not_checked("ValueError", f"{where} is outside the declared spec: {outside}; "
                                                        "widen dynamic_shapes or drop the set"), status="error")
            if ctx.device != "cpu":
                from exportcore.devices import move_inputs

                args, kwargs = move_inputs(args, kwargs, ctx.device)
            try:
                reference = run_side(ctx, ctx.model, args, kwargs)
            except Exception as exc:  # noqa: BLE001 - eager refusing the user's own input: the case is broken
                ctx.fail(case_not_checked(type(exc).__name__, f"{where}: eager raised {type(exc).__name__}: {exc}"),
                         status="error")
            cells: dict[str, str] = {}
            found: dict[str, Any] = {}
            try:
                verdict = judge(ctx, under_test, args, kwargs, reference, cells, found, values, comparable, where=where)
            finally:
                add_row(ctx, args, kwargs, "recorded", cells)
            if verdict.status == "fail":
                ctx.fail(_failure(where, verdict.message, verdict.stage, found, args, kwargs))
            if verdict.status == "discard":  # a program refused it with the accept check off: say so, never a pass
                ctx.outcome.notes.append(f"{where} not checked: {verdict.message}")
    prepare(ctx)


def _outside_spec(ctx: Run, args: tuple, kwargs: dict) -> str:
    """What puts the set outside the declared spec ("" when inside): the first dim, named by path and size."""
    from exportcore.shapes.synth import input_shapes

    shapes, example = input_shapes(args, kwargs), input_shapes(ctx.args, ctx.kwargs)
    if set(shapes) != set(example):
        return f"its tensors are {sorted(shapes)}, the example's {sorted(example)}"
    constant = _constant_changed(ctx, args, kwargs)
    if constant:
        return constant
    for path, shape in shapes.items():
        if len(shape) != len(example[path]):
            return f"{path} has {len(shape)} dims, the example's {len(example[path])}"
    if ctx.spec is None:
        for path, shape in shapes.items():
            for dim, (size, seen) in enumerate(zip(shape, example[path])):
                if size != seen:
                    return (f"{path}.shape[{dim}] is {size}, the example's {seen}, and no dynamic_shapes is given "
                            "(declare the dim dynamic)")
        return ""
    return _violation(ctx, shapes)


def _violation(ctx: Run, shapes: dict[str, tuple[int, ...]]) -> str:
    from exportcore.shapes.solve import symbol

    spec = ctx.spec
    declare = "; declare it dynamic in dynamic_shapes" if ctx.dynamic_shapes is None else ""
    assignment: dict[str, int] = {}
    where: dict[str, str] = {}
    for slot in spec.tensors:
        for dim, axis in enumerate(slot.axes):
            size = shapes[slot.path][dim]
            assignment[axis.key] = size
            where[axis.key] = f"{slot.path}.shape[{dim}] is {size}"
            if axis.root is not None and axis.expr == symbol(axis.root):
                assignment.setdefault(axis.root, size)
                where.setdefault(axis.root, f"{slot.path}.shape[{dim}] is {size}")
    for rule in spec.violations(assignment):
        kind, _, name = rule.partition(":")
        if kind in ("below_min", "above_max"):
            return f"{where[name]}, outside {name!r} {spec.declared_ranges()[name]}"
        if kind == "static_changed":
            return f"{where[name]}, a static dim (the example's size{declare})"
        return f"{where[name]}, which breaks its declared relation"
    return ""


def _constant_changed(ctx: Run, args: tuple, kwargs: dict) -> str:
    """A non-tensor input (an int, a flag) that differs from the example's: export made it a constant."""
    import torch

    from exportcore.shapes.parse import input_paths

    example = dict(input_paths(ctx.args, ctx.kwargs))
    for path, value in input_paths(args, kwargs):
        seen = example.get(path)
        if not isinstance(value, torch.Tensor) and not isinstance(seen, torch.Tensor) and value != seen:
            return f"{path} is {value!r}, the example's {seen!r}, and export keeps a non-tensor input constant"
    return ""


def _failure(where: str, message: str, stage: str, found: dict[str, Any], args: tuple, kwargs: dict) -> Failure:
    from exportcore.programs.table import shapes_text

    _, kept = found.get(message, (None, None))
    if kept is not None:  # a mismatch with eager, written up by the program's side: name the set it was on
        kept.message = f"{where} ({shapes_text(args, kwargs)}): {kept.message}"
        return kept
    first = message.splitlines()[0]
    guards = stage == "guards"
    return Failure(
        stage=stage, category="guards" if guards else "internal",
        exc_type="GuardRejected" if guards else "RuntimeError",
        message=f"{where} ({shapes_text(args, kwargs)}): {first}", detail=message,
        hint=("the set is inside the declared spec: the export specialized or narrowed a dim it varies "
              "(see range_constraints)" if guards else "reproduce with this recorded set"),
    )
