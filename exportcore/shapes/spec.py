"""The shape model: which input axes are dynamic, over which roots, in which ranges.

Every dynamic axis is ``A*root + B`` of one *root* dim (torch composes derived dims onto
their root). A root is a named ``Dim`` or, for ``Dim.AUTO`` / ``Dim.DYNAMIC``, an anonymous
root named after its axis (``"args[0].shape[1]"``). An *assignment* maps root names to
values and may also pin single axes by their key (``"args[1].shape[0]": 7``), which is
how out-of-spec draws express a changed static size or a broken relation.

Size rules (measured on torch 2.14.1):
- export specializes sizes 0 and 1, and guards derived sizes to be >= 2 (``d - 1`` with
  ``d`` in [2, 10] is guarded ``d - 1 >= 2``), so valid draws start at size 2. The floor is
  on sizes: a root that only drives derived sizes (``16*p``) is drawn from its declared
  minimum (``p=1``, size 16) although torch narrows such a root to 2, because a program
  that then rejects the promised size 16 fails the accept check (torch 2.15.0). A ShapesSpec
  dim is unbacked, so export keeps 1 in range and it may be drawn (``Root.keep01``);
  0 is never drawn (``Dim("b")`` defaults to min=0, so 0 is indistinguishable from
  "no min given").
- a root with no max draws at most ``max(lo, example) + DEFAULT_SPAN`` so inputs stay
  cheap; torch's ``int_oo`` never reaches a strategy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator

import sympy

from exportcore.shapes.dims import Axis, DimRange, Root, Slot
from exportcore.shapes.form import SpecForm
from exportcore.shapes.parse import parse, read_form
from exportcore.shapes.solve import coefficients, evaluate, root_bounds

__all__ = ["DEFAULT_SPAN", "SIZE_FLOOR", "DimRange", "Root", "Axis", "Slot", "ShapeSpec"]

#: Unbounded roots draw up to max(lowest valid value, example) + DEFAULT_SPAN.
DEFAULT_SPAN = 16
#: torch.export specializes 0/1, so dynamic sizes start here.
SIZE_FLOOR = 2


@dataclass(frozen=True)
class ShapeSpec:
    roots: dict[str, Root]
    tensors: list[Slot]
    _ranges: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False, compare=False)
    #: Bytes one drawn input set may take (see exportcore.input_budget); None: unbounded.
    budget: int | None = None
    _capped: dict[str, int] = field(default_factory=dict, repr=False, compare=False)  # root -> top before the cap
    #: Declared with torch's ShapesSpec: its dims are unbacked, so a program refuses an out-of-spec
    #: shape by a runtime assert where a Dim's program has a guard.
    runtime_asserts: bool = False
    #: How the user spelled the spec (exportcore.shapes.form): what a corrected spec is shown and re-run in.
    form: SpecForm | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._ranges:  # solved once: with_budget() hands its copy the solved ranges
            problems = []
            for name in self.roots:
                lo, hi, why = self._solve(name)
                if lo > hi:
                    problems.append(why)
                self._ranges[name] = (lo, hi)
            if problems:
                raise ValueError("dynamic_shapes: unsatisfiable: " + "; ".join(problems))
            self._check_examples()
        if self.budget is not None:
            self._apply_budget()

    @classmethod
    def from_export_spec(
        cls, dynamic_shapes: Any, args: tuple, kwargs: dict | None = None, *, model: Any = None
    ) -> ShapeSpec:
        """Parse anything torch.export accepts as ``dynamic_shapes`` for these inputs."""
        from exportcore.shapes.shapes_spec import is_shapes_spec

        roots, slots = parse(dynamic_shapes, args, kwargs, model)
        return cls(roots, slots, runtime_asserts=is_shapes_spec(dynamic_shapes), form=read_form(dynamic_shapes))

    # -- views ---------------------------------------------------------------------------

    @property
    def dims(self) -> dict[str, DimRange]:
        """Root name -> declared (min, max-or-cap, kind)."""
        return {
            n: DimRange(r.min, r.max if r.max is not None else self._ranges[n][1], r.kind)
            for n, r in self.roots.items()
        }

    @property
    def derived(self) -> dict[str, tuple[str, sympy.Expr]]:
        """Derived dim label -> (root name, sympy expression of the root)."""
        return {a.label: (a.root, a.expr) for a in self.axes() if a.derived}  # type: ignore[misc]

    def axes(self) -> Iterator[Axis]:
        """Yield every axis of every tensor input."""
        for slot in self.tensors:
            yield from slot.axes

    def axes_of(self, root: str) -> list[Axis]:
        """Return the axes whose size depends on ``root``."""
        return [a for a in self.axes() if a.root == root]

    def root_range(self, name: str) -> tuple[int, int]:
        """Return the (lo, hi) a root may take so every size it drives is valid."""
        if name not in self._ranges:
            raise KeyError(f"no dynamic dim named {name!r}; known: {sorted(self.roots)}")
        return self._ranges[name]

    def declared_ranges(self) -> dict[str, str]:
        """Root name -> the declared range as ``"[lo, hi]"`` (``int_oo`` when unbounded)."""
        return {
            n: f"[{r.min}, {'int_oo' if r.max is None else r.max}]" for n, r in self.roots.items()
        }

    def example_assignment(self) -> dict[str, int]:
        """Return the assignment the example inputs realize (roots with a known example)."""
        return {n: r.example for n, r in self.roots.items() if r.example is not None}

    def shapes_for(self, assignment: dict[str, int]) -> dict[str, tuple[int, ...]]:
        """Return input path -> concrete shape for an assignment of roots (and pinned axes)."""
        unknown = set(assignment) - set(self.roots) - {a.key for a in self.axes()}
        if unknown:
            raise ValueError(f"assignment: unknown dim(s) {sorted(unknown)}")
        out = {}
        for slot in self.tensors:
            out[slot.path] = tuple(self._size(a, assignment) for a in slot.axes)
        return out

    def violations(self, assignment: dict[str, int]) -> list[str]:
        """Return labels of every declared rule the assignment breaks (empty: in spec)."""
        found = []
        for name, root in self.roots.items():
            value = assignment.get(name, root.example)
            if value is None:
                continue
            if value < root.min:
                found.append(f"below_min:{name}")
            if root.max is not None and value > root.max:
                found.append(f"above_max:{name}")
        for axis in self.axes():
            if axis.key not in assignment or axis.key in self.roots:
                continue
            value = assignment[axis.key]
            if axis.static:
                if value != axis.size:
                    found.append(f"static_changed:{axis.key}")
            elif value != evaluate(axis.expr, axis.root, assignment.get(axis.root, 0)):
                found.append(f"relation_broken:{axis.key}")
        return found

    # -- the input budget ------------------------------------------------------------------

    def with_budget(self, budget: int | None) -> ShapeSpec:
        """Return a copy whose drawn inputs never take more than ``budget`` bytes together."""
        # the roots' solved ranges come along: solving is the expensive part, and the cap works on a copy
        return ShapeSpec(self.roots, list(self.tensors), _ranges=dict(self._ranges), budget=budget,
                         runtime_asserts=self.runtime_asserts, form=self.form)

    def example_bytes(self) -> int:
        """Return the bytes of the example tensor inputs."""
        return sum(math.prod(slot.shape) * slot.itemsize for slot in self.tensors)

    def input_bytes(self, assignment: dict[str, int]) -> int:
        """Return the bytes the tensor inputs of an assignment take."""
        shapes = self.shapes_for(assignment)
        return sum(math.prod(shapes[slot.path]) * slot.itemsize for slot in self.tensors)

    def fits(self, assignment: dict[str, int]) -> bool:
        """Return whether the inputs of ``assignment`` stay within the budget."""
        return self.budget is None or self.input_bytes(assignment) <= self.budget

    def low_assignment(self) -> dict[str, int]:
        """Return every root at the lowest value it may be drawn with."""
        return {n: self._ranges[n][0] for n in self.roots}

    def capped(self) -> dict[str, tuple[int, int]]:
        """Return root -> (highest drawn value, top of its range) for roots the budget cut short."""
        return {n: (self._ranges[n][1], top) for n, top in self._capped.items()}

    def above_max(self, name: str) -> list[int]:
        """Return the out-of-spec sizes just above ``name``'s declared max whose inputs fit the budget."""
        root = self.roots[name]
        if root.max is None:
            return []
        low = self.low_assignment()
        return [v for v in (root.max + 1, root.max + 2, root.max + 3) if self.fits({**low, name: v})]

    def _apply_budget(self) -> None:
        # Each root alone, the others at their lowest: the largest value that still fits.
        # Assignments where several roots are high at once are filtered where they are drawn.
        low = self.low_assignment()
        for name in self.roots:
            lo, hi = self._ranges[name]
            if self.fits({**low, name: hi}):
                continue
            top = hi
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.fits({**low, name: mid}):
                    lo = mid
                else:
                    hi = mid - 1
            self._ranges[name] = (self._ranges[name][0], lo)
            self._capped[name] = top

    # -- internals -----------------------------------------------------------------------

    def _check_examples(self) -> None:
        # torch refuses an example outside a named dim's range ("2 not in range [10, 20]")
        # or two axes disagreeing on one dim; that is the user's input, not an export failure.
        # Dim.AUTO/DYNAMIC ranges are not checked: torch exports such examples as they are.
        seen: dict[str, tuple[int, Axis]] = {}
        for axis in self.axes():
            root = self.roots.get(axis.root) if axis.root is not None else None
            if root is None or root.kind != "named":
                continue
            a, b = coefficients(axis.expr, root.name)
            value = (axis.size - b) // a  # parse checked that the size is of the derived form
            gives = f"example size {axis.size} gives {root.name} = {value}" if axis.derived else ""
            if value < root.min or (root.max is not None and value > root.max):
                declared = f"[{root.min}, {'int_oo' if root.max is None else root.max}]"
                if gives:
                    raise ValueError(f"{axis.field}: {gives}, outside {root.name}'s declared range {declared}")
                raise ValueError(
                    f"{axis.field}: example size {axis.size} is outside the declared range of {root.name} {declared}"
                )
            first = seen.setdefault(root.name, (value, axis))
            if first[0] != value:
                raise ValueError(
                    f"{axis.field}: {gives or f'example size {axis.size} gives {root.name} = {value}'}, "
                    f"but {first[1].key} gives {root.name} = {first[0]}"
                )

    def _size(self, axis: Axis, assignment: dict[str, int]) -> int:
        if axis.key in assignment:
            return int(assignment[axis.key])
        if axis.static:
            return axis.size
        if axis.root not in assignment:
            raise ValueError(f"assignment: no value for dim {axis.root!r} (needed by {axis.key})")
        a, b = _linear(axis.expr, axis.root)
        return a * int(assignment[axis.root]) + b

    def _solve(self, name: str) -> tuple[int, int, str]:
        root = self.roots[name]
        floor = 1 if root.keep01 else SIZE_FLOOR
        axes = self.axes_of(name)
        # The floor keeps sizes 0/1 out: it bounds the tensors' sizes, not the root. A root that only
        # drives derived sizes (H = 16*p) is never a size itself, so its declared minimum is drawn
        # (p=1, a 16-pixel image): torch may narrow it to 2 and reject that promised size, a guards
        # failure, and a floor on the root hid it. Its value 0 stays out, like a size's: Dim's
        # min=0 is torch's default, indistinguishable from "no min given".
        lo = max(root.min, floor if not axes or any(not a.derived for a in axes) else 1)
        needs = []
        for axis in axes:
            # torch guards every derived size >= 2 as well (measured: ``d - 1 >= 2``)
            axis_floor = SIZE_FLOOR if axis.derived else floor
            rlo, _ = root_bounds(axis.expr, name, axis_floor, None)
            if rlo is not None and rlo > lo:
                lo = rlo
                needs.append(f"{axis.label} >= {axis_floor} needs {name} >= {rlo}")
        if root.max is not None:
            hi = root.max
        else:
            hi = max(lo, root.example or 0) + DEFAULT_SPAN
        declared = f"[{root.min}, {'int_oo' if root.max is None else root.max}]"
        why = f"dim {name!r} declared {declared} has no valid size"
        if needs:
            why += " (" + ", ".join(needs) + ")"
        elif lo > hi:
            why += f" (torch.export specializes sizes below {floor})"
        return lo, hi, why


@lru_cache(maxsize=4096)
def _linear(expr: sympy.Expr, root: str) -> tuple[int, int]:
    # sizes are computed per draw and per budget probe: do the sympy work once per axis
    return coefficients(expr, root)
