"""In-spec assignments as a hypothesis strategy; labelled out-of-spec ones, one per violation, for the reject probes.

Out-of-spec draws only use sizes torch.export 2.14 actually guards: the exported module
does not check lower bounds <= 2 (a dim declared ``min=2`` still runs at size 0 or 1,
measured), so ``below_min`` is only drawn for roots declared ``min >= 3`` and never goes
below 2. Size 0/1 acceptance is a separate question (the engine's ``size01`` finding).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from hypothesis import strategies as st

from exportcore.shapes.solve import coefficients, evaluate
from exportcore.shapes.spec import SIZE_FLOOR, Axis, ShapeSpec

__all__ = ["valid_assignments", "concrete_invalid", "Violation", "violation_kinds"]


def root_values(lo: int, hi: int, example: int | None = None) -> st.SearchStrategy[int]:
    """Integers in [lo, hi], most of them cheap, that hit the low edges often and shrink to lo.

    A drawn size is paid for in every run of every program (a batch of 16 costs about 8x a
    batch of 2), and the range's top is probed once anyway (``explore``'s boundary probes):
    two draws in three come from the lowest eighth of the range, the rest spread over all of it.
    """
    edges = sorted({v for v in (lo, lo + 1, example) if v is not None and lo <= v <= hi})
    span = hi - lo + 1
    cheap = min(hi, lo + max(1, (hi - lo) // 8)) - lo + 1
    # One integer choice, its range extended past hi by slots that stand for cheap sizes and
    # for the edges: shrinking (towards lo) leaves those slots for plain values, so a failure
    # at hi - 1 still shrinks to the smallest failing size. A one_of(integers, sampled_from(edges))
    # gets stuck on the edge it drew.
    cheap_slots = 2 * span
    edge_slots = max(len(edges), span // 2)

    def pick(u: int) -> int:
        if u <= hi:
            return u
        u -= hi + 1
        if u < cheap_slots:
            return lo + u % cheap
        return edges[(u - cheap_slots) % len(edges)]

    return st.integers(lo, hi + cheap_slots + edge_slots).map(pick)


def valid_assignments(spec: ShapeSpec) -> st.SearchStrategy[dict[str, int]]:
    """Draw root assignments inside every declared range with every relation satisfied."""
    parts = {}
    for name, root in spec.roots.items():
        lo, hi = spec.root_range(name)
        parts[name] = root_values(lo, hi, root.example)
    drawn = st.fixed_dictionaries(parts)
    # each root alone fits the input budget (root_range is capped); several high at once may not
    return drawn if spec.budget is None else drawn.filter(spec.fits)


@dataclass(frozen=True)
class Violation:
    """One way to leave the spec: ``make(valid_assignment, pick)`` breaks exactly ``label``."""

    label: str
    make: Callable[[dict[str, int], int], dict[str, int]]

    @property
    def kind(self) -> str:
        return self.label.split(":", 1)[0]


def violation_kinds(spec: ShapeSpec) -> list[Violation]:
    """Return every applicable violation of the spec, one per root bound / static axis / relation."""
    out: list[Violation] = []
    for name, root in spec.roots.items():
        exprs = [a.expr for a in spec.axes_of(name)]
        below = [v for v in range(max(SIZE_FLOOR, root.min - 3), root.min) if _sizes_ok(exprs, name, v)]
        if below:
            out.append(Violation(f"below_min:{name}", _set_root(name, below)))
        above = spec.above_max(name)  # only sizes whose inputs fit the budget: max + 1 of 10**18 is not built
        if above:
            out.append(Violation(f"above_max:{name}", _set_root(name, above)))
    for axis in spec.axes():
        if axis.static:
            out.append(Violation(f"static_changed:{axis.key}", _change_static(axis)))
    for axis in spec.axes():
        if not axis.static and _breakable(spec, axis):
            out.append(Violation(f"relation_broken:{axis.key}", _break_relation(spec, axis)))
    return out


def concrete_invalid(spec: ShapeSpec, rng: random.Random) -> list[tuple[str, dict[str, int]]]:
    """Return one concrete (label, assignment) per applicable violation, drawn with ``rng``.

    A violation whose inputs would exceed the input budget is built on the lowest sizes of
    the other roots instead, and left out if even that does not fit.
    """
    base = {}
    for name in spec.roots:
        lo, hi = spec.root_range(name)
        base[name] = rng.randint(lo, hi)
    out = []
    for v in violation_kinds(spec):
        pick = rng.randint(0, 2)
        assignment = v.make(dict(base), pick)
        if not spec.fits(assignment):
            assignment = v.make(spec.low_assignment(), pick)
        if spec.fits(assignment):
            out.append((v.label, assignment))
    return out


# -- builders ------------------------------------------------------------------------------


def _sizes_ok(exprs: list, root: str, value: int) -> bool:
    return all(evaluate(e, root, value) >= 0 for e in exprs)


def _set_root(name: str, values: list[int]) -> Callable[[dict[str, int], int], dict[str, int]]:
    def make(base: dict[str, int], pick: int) -> dict[str, int]:
        return {**base, name: values[pick % len(values)]}

    return make


def _change_static(axis: Axis) -> Callable[[dict[str, int], int], dict[str, int]]:
    options = [s for s in (axis.size + 1, axis.size + 2, axis.size - 1) if s >= SIZE_FLOOR and s != axis.size]

    def make(base: dict[str, int], pick: int) -> dict[str, int]:
        return {**base, axis.key: options[pick % len(options)]}

    return make


def _breakable(spec: ShapeSpec, axis: Axis) -> bool:
    """A relation exists to break: the root drives another axis, or the axis is a multiple."""
    lo, hi = spec.root_range(axis.root)  # type: ignore[arg-type]
    a, _ = coefficients(axis.expr, axis.root)  # type: ignore[arg-type]
    shared = len(spec.axes_of(axis.root)) > 1  # type: ignore[arg-type]
    return hi > lo and (shared or a > 1)


def _break_relation(spec: ShapeSpec, axis: Axis) -> Callable[[dict[str, int], int], dict[str, int]]:
    root = axis.root
    lo, hi = spec.root_range(root)  # type: ignore[arg-type]
    a, _ = coefficients(axis.expr, root)  # type: ignore[arg-type]
    top = evaluate(axis.expr, root, hi)  # type: ignore[arg-type]

    def make(base: dict[str, int], pick: int) -> dict[str, int]:
        # stay inside the axis's own range so only the relation is broken, not a bound
        value = evaluate(axis.expr, root, base[root])  # type: ignore[arg-type, index]
        step = 1 + pick % max(1, a - 1) if a > 1 else 1
        size = value + step if value + step <= top else value - step
        return {**base, axis.key: size}

    return make
