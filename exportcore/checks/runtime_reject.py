"""Check a target's runtime on out-of-range shapes: each must be refused by the runtime's own input checks.

A runtime that runs one instead gets the finding ``reject_unguarded`` with the shapes (it is a
finding, not a failure: several runtimes compile without input checks by design). Besides the
spec's reject inputs, each named dim declared ``min >= 2`` is tried at ``min - 1`` (torch's own
probes skip 0 and 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.checks.runtime_table import MODULE_COLUMN, add_row, eager_outputs, module_verdict, shapes_text
from exportcore.compare import compare
from exportcore.execute import clone_tree
from exportcore.sides import prepare

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Call the runtime on out-of-range inputs; record the ones it runs as ``reject_unguarded``."""
    from exportcore.shapes import reject_inputs

    side = ctx.runtime
    name = side.name
    tol = None if side.stateful else side.tolerance
    accepted: list[str] = []
    inside: list[str] = []
    with ctx.clock.stage("guards"):
        cases = reject_inputs(ctx.spec, ctx.args, ctx.kwargs, count=max(4, min(ctx.examples, 12)), seed=ctx.seed)
        seen: set[str] = set()
        for label, args, kwargs in [*_just_below_min(ctx), *cases]:
            shapes = shapes_text(args, kwargs)
            if shapes in seen:
                continue
            seen.add(shapes)
            expected = eager_outputs(ctx, args, kwargs)
            row = {"shapes": shapes, "kind": f"out of range ({label})",
                   MODULE_COLUMN: module_verdict(ctx, args, kwargs, expected, tol is not None)}
            try:
                actual = side.call(*clone_tree((args, kwargs)))
            except Exception as exc:
                if side.target.rejection(exc):
                    row[name] = "rejected"
                    ctx.outcome.examples.rejected += 1
                else:
                    row[name] = "error"
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
                    inside.append(f"{shapes} ({label}): {type(exc).__name__}: {first}")
                add_row(ctx, row)
                continue
            wrong = expected is not None and tol is not None and compare(
                expected, actual, rtol=tol[0], atol=tol[1]) is not None
            row[name] = "wrong result" if wrong else "accepted"
            accepted.append(f"{shapes} ({label}{', wrong result' if wrong else ''})")
            add_row(ctx, row)
    prepare(ctx)
    declared = ", ".join(f"{k}: {v}" for k, v in ctx.outcome.declared.items()) or "none"
    hint = getattr(side.target, "unguarded_hint", "")
    if accepted:
        ctx.finding("reject_unguarded",
                    f"{name} ran {len(accepted)} out-of-range input(s) instead of rejecting them (declared "
                    f"{declared}): {'; '.join(accepted)}" + (f". {hint}" if hint else ""))
    if inside:
        ctx.finding("reject_unguarded",
                    f"{name}: {len(inside)} out-of-range input(s) passed the runtime's input checks and failed "
                    f"inside the program: {'; '.join(inside)}")


def _just_below_min(ctx: Run) -> list[tuple[str, tuple, dict]]:
    """Return one input per named dim declared ``min >= 2`` at ``min - 1`` (torch's own probes skip 0/1)."""
    from exportcore.shapes import synthesize

    out = []
    for name, root in ctx.spec.roots.items():
        if root.kind != "named" or root.min is None or root.min < 2:
            continue
        try:
            shapes = ctx.spec.shapes_for(ctx.spec.example_assignment() | {name: root.min - 1})
            args, kwargs = synthesize(ctx.args, ctx.kwargs, shapes, seed=ctx.seed)
        except Exception:  # noqa: BLE001 - a spec whose relations cannot take that size: no such probe
            continue
        out.append((f"below_min:{name}", args, kwargs))
    return out
