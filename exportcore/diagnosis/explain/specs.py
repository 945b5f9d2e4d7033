"""A corrected spec in the user's own spelling: new Dim bounds on the parsed form, printed as Python to paste.

Everything here works on the parsed spelling (exportcore.shapes.form, read by exportcore.shapes.parse):
their nesting, containers, hints and derived dims stay as they wrote them; only bounds change.
"""

from __future__ import annotations

from typing import Any

from exportcore.shapes.form import Derived, Hint, Named, Node, Plain, SpecForm, zip_forms

__all__ = ["replace_bounds", "render_spec", "spec_changes", "unpinned"]


def replace_bounds(form: SpecForm, bounds: dict[str, tuple[int, int | None]],
                   steps: dict[str, int] | None = None) -> SpecForm:
    """Return the form whose root Dims named in ``bounds`` get those (min, max).

    A dim in ``steps`` takes only every step-th value from its min: it becomes ``step * _name + offset``.
    One value left (min == max) makes the dim static: a Dim cannot have min == max.
    """
    steps = steps or {}
    dims = dict(form.dims)
    # root name -> what it becomes: an int (static) or (new root, step, offset)
    made: dict[str, int | tuple[str, int, int]] = {}
    for name in form.used():
        if name not in bounds:
            continue
        lo, hi = bounds[name]
        if steps.get(name, 1) > 1:
            step, offset = steps[name], lo % steps[name]
            dims[f"_{name}"] = (lo // step, None if hi is None else (hi - offset) // step)
            made[name] = (f"_{name}", step, offset)
        elif lo == hi:
            made[name] = lo
        else:
            dims[name] = (lo, hi)

    def leaf(value: Any) -> Any:
        if not isinstance(value, (Named, Derived)) or value.root not in made:
            return value
        scale, offset = (value.scale, value.offset) if isinstance(value, Derived) else (1, 0)
        new = made[value.root]
        if isinstance(new, int):
            return Plain(scale * new + offset)
        root, step, shift = new
        return Derived(root, scale * step, scale * shift + offset)

    return form.map(leaf, dims)


def unpinned(declared: SpecForm, fixed: SpecForm) -> SpecForm | None:
    """Return ``fixed`` with every dim it pins to a size where ``declared`` had a Dim given back its declared
    range as ``Dim.DYNAMIC(min=, max=)``, or None when it pins none (or this torch has no bounded hints).

    torch's solver pins a dim when it cannot prove a guard over the declared range (``(3*b - 1) // b == 2``
    holds for every b >= 2): a hint makes export keep the guard instead of proving it, and raise if the
    dim really specializes. One Dim shared by several inputs becomes one hint each: their equality is no
    longer declared (export still guards it where the model needs it).
    """
    from exportcore.shapes.torch_dims import hints_take_bounds

    found = [False]

    def walk(before: Any, after: Any) -> Any:
        if isinstance(before, Node) and isinstance(after, Node):
            if before.kind == "dict" and after.kind == "dict":
                return Node(after.kind, tuple((k, walk(before.get(k), v)) for k, v in after.entries))
            if before.sequence and after.sequence and len(before.entries) == len(after.entries):
                return Node(after.kind, tuple((i, walk(b, a)) for (i, a), (_, b) in zip(after.entries, before.entries)))
        if not (isinstance(after, Plain) and after.static) or not isinstance(before, (Named, Derived)):
            return after
        lo, hi = declared.dims[before.root]
        if isinstance(before, Derived):
            if hi is None:
                return after
            lo, hi = sorted((before.scale * lo + before.offset, before.scale * hi + before.offset))
        found[0] = True
        return Hint("dynamic", lo, hi)

    relaxed = SpecForm(walk(declared.tree, fixed.tree), dict(fixed.dims))
    # torch 2.6: hints take no bounds, and an unbounded one is not the declared range
    return relaxed if found[0] and hints_take_bounds() else None


def render_spec(form: SpecForm) -> str:
    """Return paste-able Python: one line per root Dim, then ``dynamic_shapes=...``."""
    lines = [f"{name} = {form.dim_call(name)}" for name in form.used()]
    lines.append(f"dynamic_shapes={form.source()}")
    return "\n".join(lines)


def spec_changes(before: SpecForm, after: SpecForm) -> list[str]:
    """Return one line per differing leaf, e.g. ``dynamic_shapes['x'][2]: h [32, 128] -> h [33, 128]``."""
    out = []
    for where, old, new in zip_forms(before.tree, after.tree):
        old_text, new_text = before.leaf_text(old), after.leaf_text(new)
        if old_text != new_text:
            out.append(f"{where}: {old_text} -> {new_text}")
    return out
