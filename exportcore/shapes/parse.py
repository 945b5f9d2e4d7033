# Over 300 lines: one mirror of torch's dynamic_shapes matching, every container form beside the others.
"""Turn a torch.export ``dynamic_shapes`` argument into roots and tensor slots.

Mirrors torch's own matching (``torch.export.dynamic_shapes._check_dynamic_shapes``):
a top-level dict is keyed by the forward's argument names, a tuple/list follows the
bound arguments in order, and nested containers match the inputs' pytree structure.
Input paths use torch's ``keystr`` spelling under ``args`` / ``kwargs``. ``read_form`` reads how
the spec is spelled (exportcore.shapes.form): nothing else in the engine walks a ``dynamic_shapes``.
"""

from __future__ import annotations

import inspect
from typing import Any

from exportcore.shapes.shapes_spec import SpecAxis, is_shapes_spec, to_dict_spec
from exportcore.shapes.solve import coefficients, solve_root, symbol
from exportcore.shapes.dims import Axis, Root, Slot
from exportcore.shapes.form import Derived, Hint, Named, Node, Plain, SpecForm
from exportcore.shapes.torch_dims import collection_types, hint_parts, is_dim, is_hint

__all__ = ["parse", "read_form", "input_paths", "resolve_identity_keys"]


def parse(dynamic_shapes: Any, args: tuple, kwargs: dict | None, model: Any) -> tuple[dict[str, Root], list[Slot]]:
    """Return (roots, slots) for ``dynamic_shapes`` over ``args``/``kwargs``; ValueError naming the field."""
    import torch.export.dynamic_shapes as tds

    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs must be a dict or None, got {type(kwargs).__name__}")
    kwargs = kwargs or {}
    entries = _bind(args, kwargs, model)
    if is_shapes_spec(dynamic_shapes):
        named = to_dict_spec(dynamic_shapes, model)  # anything it does not name is static
        dynamic_shapes = {name: named.get(name) for name, _, _ in entries}
    if isinstance(dynamic_shapes, collection_types(tds)):
        fn = model if model is not None else _stand_in(args, kwargs)
        try:
            dynamic_shapes = dynamic_shapes.dynamic_shapes(fn, args, kwargs)
        except (ValueError, AssertionError) as exc:
            raise ValueError(f"dynamic_shapes: {exc}") from None
        if model is None:
            dynamic_shapes = tuple(dynamic_shapes.values())
    builder = _Builder(tds)
    specs = _top_level(dynamic_shapes, entries)
    for (name, value, path), (spec, where) in zip(entries, specs):
        builder.walk(value, spec, path, where)
    return builder.roots, builder.slots


def read_form(dynamic_shapes: Any) -> SpecForm:
    """Return how ``dynamic_shapes`` is spelled: its containers as written, its Dims, hints and derived dims.

    Read as written, not matched to the inputs (``parse`` does that): what is shown back to the user
    is their spec, and a spec ``parse`` resolves whole (a ShapesSpec, AdditionalInputs) stays one leaf.
    """
    import torch.export.dynamic_shapes as tds

    dims: dict[str, tuple[int, int | None]] = {}

    def node(value: Any) -> Any:
        if isinstance(value, dict):
            return Node("dict", tuple((k, node(v)) for k, v in value.items()))
        if isinstance(value, (list, tuple)):
            return Node("list" if isinstance(value, list) else "tuple", tuple(enumerate(node(v) for v in value)))
        if is_hint(value, tds):
            kind, lo, hi = hint_parts(value)
            return Hint(kind, _bound(lo), _bound(hi))
        if isinstance(value, tds._StaticDim):
            return Plain(int(value.value))
        derived = isinstance(value, tds._DerivedDim) and is_dim(value.root, tds)
        dim = value.root if derived else value
        if not is_dim(dim, tds) or isinstance(dim, tds._DerivedDim):
            return Plain(value)
        if derived:
            try:
                scale, offset = coefficients(value.fn(symbol(dim.__name__)), dim.__name__)
            except Exception:  # noqa: BLE001 - not of the form A*root + B: shown and handed back as it is
                return Plain(value)
        dims.setdefault(dim.__name__, (_bound(dim.min) or 0, _bound(dim.max)))
        return Derived(dim.__name__, scale, offset) if derived else Named(dim.__name__)

    return SpecForm(node(dynamic_shapes), dims)


def _bound(value: Any) -> int | None:
    """Return a declared bound as an int; None for torch's int_oo (unbounded) or a missing one."""
    if value is None or "oo" in str(value):  # torch's int_oo does not convert to int
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
    return number if abs(number) < 2**62 else None


def resolve_identity_keys(dynamic_shapes: Any, args: tuple, kwargs: dict | None, model: Any) -> Any:
    """Return a ShapesCollection as the plain spec torch derives from it for these very inputs; anything else as is.

    A ShapesCollection is keyed by ``id(tensor)``: resolved after the inputs were copied (every
    side runs on copies, capture included), it matches none of them. Call before any copy.
    """
    import torch.export.dynamic_shapes as tds

    collection = getattr(tds, "ShapesCollection", None)
    if not isinstance(collection, type) or not isinstance(dynamic_shapes, collection):
        return dynamic_shapes
    try:
        return dynamic_shapes.dynamic_shapes(model, tuple(args), dict(kwargs or {}))
    except (ValueError, AssertionError, TypeError) as exc:
        raise ValueError(f"dynamic_shapes: ShapesCollection: {exc}") from None


def input_paths(args: tuple, kwargs: dict | None) -> list[tuple[str, Any]]:
    """Return (path, leaf) for every pytree leaf of the inputs, paths as ShapeSpec spells them."""
    from torch.utils._pytree import keystr, tree_flatten_with_path

    leaves, _ = tree_flatten_with_path((tuple(args), dict(kwargs or {})))
    out = []
    for keypath, leaf in leaves:
        head = "args" if keypath[0].idx == 0 else "kwargs"  # type: ignore[attr-defined]
        out.append((head + keystr(keypath[1:]), leaf))
    return out


def _bind(args: tuple, kwargs: dict, model: Any) -> list[tuple[str, Any, str]]:
    """Return (argument name, value, input path) in the order torch matches a spec tuple."""
    positional = [(f"args[{i}]", v, f"args[{i}]") for i, v in enumerate(args)]
    named = [(k, v, f"kwargs[{k!r}]") for k, v in kwargs.items()]
    if model is None:
        return positional + named
    fn = model.forward if hasattr(model, "forward") else model
    try:
        sig = inspect.signature(fn)
        bound = sig.bind(*args, **kwargs).arguments
    except (TypeError, ValueError) as exc:
        raise ValueError(f"args/kwargs do not match the model's forward signature: {exc}") from None
    out: list[tuple[str, Any, str]] = []
    pos = 0
    for name, value in bound.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            out.append((name, _VarPos(value, pos), f"args[{pos}]"))
            pos += len(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            out.append((name, _VarKw(value), "kwargs"))
        elif name in kwargs:
            out.append((name, value, f"kwargs[{name!r}]"))
        else:
            out.append((name, value, f"args[{pos}]"))
            pos += 1
    return out


class _VarPos(tuple):
    """A *args tuple whose elements live at args[start + i]."""

    def __new__(cls, items: tuple, start: int) -> _VarPos:
        obj = super().__new__(cls, items)
        obj.start = start  # type: ignore[attr-defined]
        return obj


class _VarKw(dict):
    """A **kwargs dict whose entries live at kwargs['key']."""


def _stand_in(args: tuple, kwargs: dict) -> Any:
    # ShapesCollection / AdditionalInputs bind inputs to a signature; without a model we
    # give them one whose names are the paths, so the result maps back onto entries.
    params = [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD) for i in range(len(args))]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY) for k in kwargs]

    def stand_in(*a: Any, **k: Any) -> None:
        return None

    stand_in.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return stand_in


def _top_level(spec: Any, entries: list[tuple[str, Any, str]]) -> list[tuple[Any, str]]:
    """Return the spec for each bound argument and the field name to blame."""
    if spec is None or (isinstance(spec, (dict, tuple, list)) and len(spec) == 0):
        return [(None, "dynamic_shapes") for _ in entries]
    if isinstance(spec, (tuple, list)):
        if len(spec) != len(entries):
            raise ValueError(
                f"dynamic_shapes: has {len(spec)} entries but the inputs have {len(entries)} "
                f"({', '.join(name for name, _, _ in entries)})"
            )
        return [(s, f"dynamic_shapes[{i}]") for i, s in enumerate(spec)]
    if not isinstance(spec, dict):
        raise ValueError(
            f"dynamic_shapes: expected a dict, tuple, list, ShapesCollection or AdditionalInputs, "
            f"got {type(spec).__name__}"
        )
    spec = _group_var_keywords(spec, entries)
    names = [name for name, _, _ in entries]
    keys = list(spec)
    if set(keys) != set(names):
        # Without the model we only know kwargs by name: the remaining keys, in order,
        # name the positional args (the usual {"x": ..., "y": ...} for forward(x, y)).
        unnamed = [n for n in names if n.startswith("args[")]
        free = [k for k in keys if k not in names]
        if len(free) == len(unnamed) and all(n not in spec for n in unnamed):
            mapping = dict(zip(unnamed, free))
            return [(spec[mapping.get(n, n)], f"dynamic_shapes[{mapping.get(n, n)!r}]") for n in names]
        raise ValueError(
            f"dynamic_shapes: top-level keys {keys} must be the forward's argument names {names}"
        )
    return [(spec[n], f"dynamic_shapes[{n!r}]") for n in names]


def _group_var_keywords(spec: dict, entries: list[tuple[str, Any, str]]) -> dict:
    """Accept ``{"x": ..., "extra": ...}`` for ``forward(self, x, **kw)``, as torch does."""
    for name, value, _ in entries:
        if isinstance(value, _VarKw) and name not in spec:
            inner = {k: spec[k] for k in value if k in spec}
            if inner:
                spec = {k: v for k, v in spec.items() if k not in inner}
                spec[name] = inner  # torch wants every **kwargs entry named; so do we
    return spec


class _Builder:
    def __init__(self, tds: Any) -> None:
        self.tds = tds
        self.roots: dict[str, Root] = {}
        self.slots: list[Slot] = []

    def walk(self, value: Any, spec: Any, path: str, where: str) -> None:
        import torch
        from torch.utils._pytree import SUPPORTED_NODES, _get_node_type, keystr

        if isinstance(value, torch.Tensor):
            self.slots.append(self.tensor(value, spec, path, where))
            return
        if isinstance(value, _VarPos):
            children = [(f"args[{value.start + i}]", v) for i, v in enumerate(value)]  # type: ignore[attr-defined]
            return self._children(children, spec, where)
        if isinstance(value, _VarKw):
            return self._keyed([(k, f"kwargs[{k!r}]", v) for k, v in value.items()], spec, where)
        if isinstance(value, dict):
            return self._keyed([(k, f"{path}[{k!r}]", v) for k, v in value.items()], spec, where)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            children = [(f"{path}.{f}", getattr(value, f)) for f in value._fields]
            return self._children(children, spec, where)
        if isinstance(value, (list, tuple)):
            return self._children([(f"{path}[{i}]", v) for i, v in enumerate(value)], spec, where)
        node = SUPPORTED_NODES.get(_get_node_type(value))
        if node is not None and node.flatten_with_keys_fn is not None:
            pairs, _ = node.flatten_with_keys_fn(value)
            return self._children([(path + keystr((k,)), v) for k, v in pairs], spec, where)
        if spec is None or (isinstance(value, int) and (isinstance(spec, (int, torch.SymInt)) or is_hint(spec, self.tds))):
            return  # non-tensor leaves are copied as they are; int inputs are not varied
        raise ValueError(f"{where}: cannot give a shape ({spec!r}) to non-tensor input {path} of type {type(value).__name__}")

    def _keyed(self, children: list[tuple[Any, str, Any]], spec: Any, where: str) -> None:
        if spec is None:
            for _, path, v in children:
                self.walk(v, None, path, where)
            return
        if not isinstance(spec, dict):
            raise ValueError(f"{where}: expected a dict matching the input, got {type(spec).__name__}")
        keys = [k for k, _, _ in children]
        if set(keys) != set(spec):
            raise ValueError(f"{where}: keys {list(spec)} do not match the input's keys {keys}")
        for k, path, v in children:
            self.walk(v, spec[k], path, f"{where}[{k!r}]")

    def _children(self, children: list[tuple[str, Any]], spec: Any, where: str) -> None:
        if spec is None:
            for path, v in children:
                self.walk(v, None, path, where)
            return
        if not isinstance(spec, (tuple, list)) or len(spec) != len(children):
            got = f"{len(spec)} entries" if isinstance(spec, (tuple, list)) else type(spec).__name__
            raise ValueError(f"{where}: expected a tuple/list of {len(children)} entries matching the input, got {got}")
        for i, ((path, v), s) in enumerate(zip(children, spec)):
            self.walk(v, s, path, f"{where}[{i}]")

    def tensor(self, t: Any, spec: Any, path: str, where: str) -> Slot:
        shape = tuple(int(s) for s in t.shape)
        per_axis: list[Any] = [None] * len(shape)
        if isinstance(spec, dict):
            for k, d in spec.items():
                if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(shape):
                    raise ValueError(f"{where}: axis {k!r} is not an axis of {path} (rank {len(shape)})")
                per_axis[k] = d
        elif isinstance(spec, (tuple, list)):
            if len(spec) != len(shape):
                raise ValueError(f"{where}: has {len(spec)} entries but {path} has rank {len(shape)} (shape {list(shape)})")
            per_axis = list(spec)
        elif spec is not None:
            raise ValueError(
                f"{where}: expected None, a dict {{axis: dim}} or a tuple/list of dims for tensor {path}, got {spec!r}"
            )
        axes = tuple(self.axis(d, size, f"{path}.shape[{i}]", f"{where}[{i}]") for i, (d, size) in enumerate(zip(per_axis, shape)))
        return Slot(path, shape, axes, itemsize=t.element_size())

    def axis(self, d: Any, size: int, key: str, where: str) -> Axis:
        tds = self.tds
        if d is None:
            return Axis(key, where, size)
        if isinstance(d, int) and not isinstance(d, bool):
            if d != size:
                raise ValueError(f"{where}: static size {d} does not match the example's size {size}")
            return Axis(key, where, size)
        if is_hint(d, tds):
            kind, lo, hi = hint_parts(d)
            if kind == "static":
                return Axis(key, where, size)
            lo = lo if lo is not None else 0  # like Dim: no declared lower bound
            self._root(Root(key, kind, lo, hi, size), where)
            return Axis(key, where, size, key, symbol(key), f"Dim.{kind.upper()}")
        if isinstance(d, SpecAxis):
            return self._spec_axis(d, size, key, where)
        if isinstance(d, tds._StaticDim):
            return self.axis(int(d.value), size, key, where)
        if isinstance(d, tds._DerivedDim):
            base = d.root
            self._root(_named(base), where)
            expr = d.fn(symbol(base.__name__))
            example = solve_root(expr, base.__name__, size)
            if example is None:
                raise ValueError(f"{where}: example size {size} is not of the form {d.__name__} for an integer {base.__name__}")
            self._example(base.__name__, example)
            return Axis(key, where, size, base.__name__, expr, d.__name__)
        if is_dim(d, tds):
            self._root(_named(d), where)
            self._example(d.__name__, size)
            return Axis(key, where, size, d.__name__, symbol(d.__name__), d.__name__)
        raise ValueError(
            f"{where}: expected None, an int, a Dim, Dim.AUTO, Dim.STATIC or Dim.DYNAMIC, got {d!r}"
        )

    def _spec_axis(self, d: SpecAxis, size: int, key: str, where: str) -> Axis:
        # ShapesSpec dims are unbacked: torch keeps 0/1 in range, so size 1 may be drawn.
        self._root(Root(d.root, "named", d.min, d.max, None, keep01=True), where)
        example = solve_root(d.expr, d.root, size)
        if example is None:
            raise ValueError(f"{where}: example size {size} is not of the form {d.label} for an integer {d.root}")
        self._example(d.root, example)
        return Axis(key, where, size, d.root, d.expr, d.label)

    def _root(self, root: Root, where: str) -> None:
        old = self.roots.get(root.name)
        if old is None:
            self.roots[root.name] = root
        elif (old.min, old.max) != (root.min, root.max):
            raise ValueError(
                f"{where}: dim {root.name!r} is defined twice with different ranges "
                f"[{old.min}, {old.max}] and [{root.min}, {root.max}]"
            )

    def _example(self, name: str, value: int) -> None:
        root = self.roots[name]
        if root.example is None:
            from dataclasses import replace

            self.roots[name] = replace(root, example=value)


def _named(d: Any) -> Root:
    hi = d.max
    return Root(d.__name__, "named", int(d.min), None if str(hi) == "int_oo" else int(hi), None)
