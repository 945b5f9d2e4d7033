"""Rewrite a ``dynamic_shapes`` pytree with new Dim bounds, and print it as Python a user can paste.

It reads the user's Dim objects with the parser's own readers: which object is a Dim or a hint
in this torch (exportcore.shapes.torch_dims) and a derived dim's ``A*root + B`` (exportcore.shapes.solve).
"""

from __future__ import annotations

from typing import Any

__all__ = ["replace_bounds", "render_spec", "dim_bounds", "spec_changes", "unpinned"]


def _tds() -> Any:
    import torch.export.dynamic_shapes as tds

    return tds


def _is_dim(value: Any) -> bool:
    """A root Dim (named or static), not a derived one: what carries a name and bounds."""
    from exportcore.shapes.torch_dims import is_dim

    return is_dim(value, _tds()) and not _is_derived(value) and hasattr(value, "__name__")


def _is_derived(value: Any) -> bool:
    return hasattr(value, "root") and hasattr(value, "fn") and _is_dim(value.root)


def _is_hint(value: Any) -> bool:
    from exportcore.shapes.torch_dims import is_hint

    return is_hint(value, _tds())


def _bound(value: Any) -> int | None:
    """Return an int bound, or None for torch's int_oo / unbounded."""
    if value is None or "oo" in str(value):  # torch's int_oo does not convert to int
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
    return number if abs(number) < 2**62 else None


def dim_bounds(dynamic_shapes: Any) -> dict[str, tuple[int, int | None]]:
    """Return ``{name: (min, max)}`` of every root Dim in the spec (max None when unbounded)."""
    out: dict[str, tuple[int, int | None]] = {}

    def visit(value: Any) -> Any:
        dim = value.root if _is_derived(value) else value
        if _is_dim(dim):
            out.setdefault(dim.__name__, (_bound(dim.min) or 0, _bound(dim.max)))
        return value

    _map(dynamic_shapes, visit)
    return out


def replace_bounds(dynamic_shapes: Any, bounds: dict[str, tuple[int, int | None]],
                   steps: dict[str, int] | None = None) -> Any:
    """Return a copy of the spec whose root Dims named in ``bounds`` get those (min, max).

    A dim in ``steps`` takes only every step-th value from its min: it becomes ``step * _name + offset``.
    """
    from torch.export import Dim

    made: dict[str, Any] = {}
    steps = steps or {}

    def new_root(dim: Any) -> Any:
        name = dim.__name__
        if name not in bounds:
            return dim
        if name not in made and steps.get(name, 1) > 1:
            lo, hi = bounds[name]
            step, offset = steps[name], lo % steps[name]
            inner = Dim(f"_{name}", min=lo // step, max=None if hi is None else (hi - offset) // step)
            made[name] = step * inner + offset if offset else step * inner
        if name not in made:
            lo, hi = bounds[name]
            # One value left: the dim is static (a Dim cannot have min == max).
            made[name] = lo if lo == hi else Dim(name, min=lo, max=hi) if hi is not None else Dim(name, min=lo)
        return made[name]

    def visit(value: Any) -> Any:
        if _is_derived(value):
            root = new_root(value.root)
            if isinstance(root, int):
                return int(value.fn(root))
            if root is value.root:
                return value
            if isinstance(value, type):  # torch 2.6/2.7: a derived dim is a class made by its metaclass
                return type(value)(value.__name__, (int,), {"root": root, "fn": value.fn})
            return type(value)(value.__name__, root, value.fn)
        if _is_dim(value):
            return new_root(value)
        return value

    return _map(dynamic_shapes, visit)


def unpinned(declared: Any, fixed: Any) -> Any | None:
    """Return ``fixed`` with every dim it pins to a size where ``declared`` had a Dim given back its declared
    range as ``Dim.DYNAMIC(min=, max=)``, or None when it pins none (or this torch has no bounded hints).

    torch's solver pins a dim when it cannot prove a guard over the declared range (``(3*b - 1) // b == 2``
    holds for every b >= 2): a hint makes export keep the guard instead of proving it, and raise if the
    dim really specializes. One Dim shared by several inputs becomes one hint each: their equality is no
    longer declared (export still guards it where the model needs it).
    """
    from torch.export import Dim

    found = [False]

    def hint(lo: int, hi: int | None) -> Any:
        try:
            return Dim.DYNAMIC(min=lo, max=hi) if hi is not None else Dim.DYNAMIC(min=lo)
        except TypeError:  # torch 2.6: hints take no bounds, and an unbounded one is not the declared range
            raise _NoBoundedHints from None

    def walk(before: Any, after: Any) -> Any:
        if isinstance(before, dict) and isinstance(after, dict):
            return {k: walk(before.get(k), v) for k, v in after.items()}
        if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)) and len(before) == len(after) \
                and not hasattr(after, "_fields"):
            return type(after)(walk(b, a) for b, a in zip(before, after))
        if not isinstance(after, int) or isinstance(after, bool):
            return after
        root = before.root if _is_derived(before) else before
        if not _is_dim(root):
            return after
        lo, hi = _bound(root.min) or 0, _bound(root.max)
        if _is_derived(before):
            if hi is None:
                return after
            lo, hi = sorted((int(before.fn(lo)), int(before.fn(hi))))
        found[0] = True
        return hint(lo, hi)

    try:
        relaxed = walk(declared, fixed)
    except _NoBoundedHints:
        return None
    return relaxed if found[0] else None


class _NoBoundedHints(Exception):
    pass


def render_spec(dynamic_shapes: Any) -> str:
    """Return paste-able Python: one line per root Dim, then ``dynamic_shapes=...``."""
    roots: dict[str, Any] = {}

    def collect(value: Any) -> Any:
        dim = value.root if _is_derived(value) else value
        if _is_dim(dim):
            roots.setdefault(dim.__name__, dim)
        return value

    _map(dynamic_shapes, collect)
    lines = [f"{name} = {_dim_call(dim)}" for name, dim in roots.items()]
    lines.append(f"dynamic_shapes={_source(dynamic_shapes)}")
    return "\n".join(lines)


def _dim_call(dim: Any) -> str:
    parts = [repr(dim.__name__)]
    lo, hi = _bound(dim.min), _bound(dim.max)
    if lo:
        parts.append(f"min={lo}")
    if hi is not None:
        parts.append(f"max={hi}")
    return f"Dim({', '.join(parts)})"


def _source(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(_source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    if _is_derived(value):
        return _derived_source(value)
    if _is_dim(value):
        return value.__name__
    if _is_hint(value):
        from exportcore.shapes.torch_dims import hint_parts

        kind, lo, hi = hint_parts(value)
        lo, hi = _bound(lo), _bound(hi)
        args = ", ".join(f"{k}={v}" for k, v in (("min", lo), ("max", hi)) if v is not None)
        return f"Dim.{kind.upper()}" + (f"({args})" if args else "")
    return repr(value)


def _derived_source(value: Any) -> str:
    from exportcore.shapes.solve import coefficients, symbol

    root = value.root.__name__
    try:
        scale, offset = coefficients(value.fn(symbol(root)), root)
    except Exception:  # noqa: BLE001 - an unusual fn: fall back to torch's own name
        return str(value.__name__)
    text = value.root.__name__ if scale == 1 else f"{scale} * {value.root.__name__}"
    return text + (f" + {offset}" if offset > 0 else f" - {-offset}" if offset < 0 else "")


def _map(value: Any, fn: Any) -> Any:
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_map(v, fn) for v in value)
    return fn(value)


def spec_changes(before: Any, after: Any, where: str = "dynamic_shapes") -> list[str]:
    """Return one line per differing leaf, e.g. ``dynamic_shapes['x'][2]: h [32, 128] -> h [33, 128]``."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [line for k in before if k in after for line in spec_changes(before[k], after[k], f"{where}[{k!r}]")]
    if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)) and len(before) == len(after):
        return [line for i, (b, a) in enumerate(zip(before, after)) for line in spec_changes(b, a, f"{where}[{i}]")]
    old, new = _leaf(before), _leaf(after)
    return [] if old == new else [f"{where}: {old} -> {new}"]


def _leaf(value: Any) -> str:
    dim = value.root if _is_derived(value) else value
    if _is_dim(dim):
        lo, hi = _bound(dim.min) or 0, _bound(dim.max)
        return f"{_source(value)} [{lo}, {'int_oo' if hi is None else hi}]"
    if isinstance(value, int):
        return f"static {value}"
    return _source(value)
