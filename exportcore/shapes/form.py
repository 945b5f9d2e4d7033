"""How the user spelled ``dynamic_shapes``: their nesting and containers, their Dims and hints, as parsed.

The parser (exportcore.shapes.parse.read_form) reads it next to the shape model, so that whatever
is shown back to the user (a corrected spec, exportcore.diagnosis.explain) and whatever is handed
to torch again (``build()``) is made from the parsed spelling, never by walking their pytree again:
a dict stays a dict keyed as they keyed it, a tuple a tuple, ``Dim.AUTO`` a hint, ``2*w + 1`` a
derived dim of ``w``. A spec the parser does not take apart (a ShapesSpec, AdditionalInputs) is one
``Plain`` leaf, handed back and shown as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Union

__all__ = ["Named", "Derived", "Hint", "Plain", "Node", "Leaf", "SpecForm", "zip_forms"]


@dataclass(frozen=True)
class Named:
    """A root ``Dim`` by its name; its bounds are the form's ``dims[name]``."""

    name: str

    @property
    def root(self) -> str:
        return self.name


@dataclass(frozen=True)
class Derived:
    """A derived dim ``scale * root + offset`` (torch builds only linear ones)."""

    root: str
    scale: int
    offset: int


@dataclass(frozen=True)
class Hint:
    """``Dim.AUTO`` / ``Dim.DYNAMIC`` / ``Dim.STATIC`` (kind in lower case), with the bounds written."""

    kind: str
    min: int | None = None
    max: int | None = None


@dataclass(frozen=True)
class Plain:
    """Anything else, as written: a static size, None, or a spec kept whole (ShapesSpec, AdditionalInputs)."""

    value: Any

    @property
    def static(self) -> bool:
        return isinstance(self.value, int) and not isinstance(self.value, bool)


Leaf = Union[Named, Derived, Hint, Plain]


@dataclass(frozen=True)
class Node:
    """A container as written: ``kind`` "dict", "tuple" or "list"; entries keyed by key or index."""

    kind: str
    entries: tuple[tuple[Any, Any], ...]

    @property
    def sequence(self) -> bool:
        return self.kind != "dict"

    def get(self, key: Any) -> Any:
        return next((v for k, v in self.entries if k == key), None)

    def has(self, key: Any) -> bool:
        return any(k == key for k, _ in self.entries)


@dataclass(frozen=True)
class SpecForm:
    """The spelling of one ``dynamic_shapes``: its tree and the root Dims' (min, max) as declared."""

    tree: Any  # Node | Leaf
    dims: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # max None: unbounded

    def used(self) -> list[str]:
        """Return the root Dims the tree names, in the order it first names them."""
        names: dict[str, None] = {}
        for leaf in _leaves(self.tree):
            if isinstance(leaf, (Named, Derived)):
                names.setdefault(leaf.root)
        return list(names)

    def bounds(self) -> dict[str, tuple[int, int | None]]:
        """Return ``{name: (min, max)}`` of every root Dim the tree names (max None when unbounded)."""
        return {name: self.dims[name] for name in self.used()}

    def map(self, fn: Callable[[Any], Any], dims: dict[str, tuple[int, int | None]] | None = None) -> SpecForm:
        """Return the form with every leaf replaced by ``fn(leaf)`` (and, given, new root bounds)."""
        return SpecForm(_map(self.tree, fn), dict(self.dims if dims is None else dims))

    def only_axes(self, keep: set[int]) -> SpecForm:
        """Return the form where each ``{axis: dim}`` dict keeps only the axes in ``keep``."""

        def walk(node: Any) -> Any:
            if not isinstance(node, Node):
                return node
            if node.kind == "dict" and all(isinstance(k, int) for k, _ in node.entries):
                return Node("dict", tuple((k, v) for k, v in node.entries if k in keep))
            return Node(node.kind, tuple((k, walk(v)) for k, v in node.entries))

        return SpecForm(walk(self.tree), dict(self.dims))

    # -- what it becomes -------------------------------------------------------------------

    def build(self) -> Any:
        """Return the ``dynamic_shapes`` torch takes for this form (new Dim objects, the user's containers)."""
        from torch.export import Dim

        roots: dict[str, Any] = {}
        for name in self.used():
            lo, hi = self.dims[name]
            roots[name] = Dim(name, min=lo, max=hi) if hi is not None else Dim(name, min=lo)
        return _map(self.tree, lambda leaf: _torch_leaf(leaf, roots, Dim), containers=_CONTAINERS)

    def source(self, leaf: Any = None) -> str:
        """Return the tree (or one leaf or subtree) as Python a user can paste."""
        return _source(self.tree if leaf is None else leaf)

    def dim_call(self, name: str) -> str:
        """Return ``Dim('name', min=.., max=..)`` for a root Dim, leaving out what torch defaults."""
        lo, hi = self.dims[name]
        parts = [repr(name)] + ([f"min={lo}"] if lo else []) + ([f"max={hi}"] if hi is not None else [])
        return f"Dim({', '.join(parts)})"

    def leaf_text(self, leaf: Any) -> str:
        """Return one leaf for a list of changes: a dim with its root's range, ``static N``, or its source."""
        if isinstance(leaf, (Named, Derived)):
            lo, hi = self.dims[leaf.root]
            return f"{_source(leaf)} [{lo}, {'int_oo' if hi is None else hi}]"
        if isinstance(leaf, Plain) and isinstance(leaf.value, int):
            return f"static {leaf.value}"
        return _source(leaf)


def zip_forms(before: Any, after: Any, where: str = "dynamic_shapes") -> Iterator[tuple[str, Any, Any]]:
    """Yield (field, before, after) for the leaves two trees hold at the same place.

    Where the two differ in structure the subtrees come as a pair; a dict key ``after`` lacks is left out.
    """
    if isinstance(before, Node) and isinstance(after, Node):
        if before.kind == "dict" and after.kind == "dict":
            for key, value in before.entries:
                if after.has(key):
                    yield from zip_forms(value, after.get(key), f"{where}[{key!r}]")
            return
        if before.sequence and after.sequence and len(before.entries) == len(after.entries):
            for (i, b), (_, a) in zip(before.entries, after.entries):
                yield from zip_forms(b, a, f"{where}[{i}]")
            return
    yield where, before, after


_CONTAINERS: dict[str, Callable[[list], Any]] = {"dict": dict, "tuple": tuple, "list": list}


def _map(tree: Any, fn: Callable[[Any], Any], containers: dict[str, Callable[[list], Any]] | None = None) -> Any:
    if isinstance(tree, Node):
        entries = [(k, _map(v, fn, containers)) for k, v in tree.entries]
        if containers is None:
            return Node(tree.kind, tuple(entries))
        return containers[tree.kind](entries if tree.kind == "dict" else [v for _, v in entries])
    return fn(tree)


def _leaves(tree: Any) -> Iterator[Any]:
    if isinstance(tree, Node):
        for _, value in tree.entries:
            yield from _leaves(value)
    else:
        yield tree


def _torch_leaf(leaf: Any, roots: dict[str, Any], dim: Any) -> Any:
    if isinstance(leaf, Named):
        return roots[leaf.name]
    if isinstance(leaf, Derived):
        made = roots[leaf.root] if leaf.scale == 1 else leaf.scale * roots[leaf.root]
        return made + leaf.offset if leaf.offset else made
    if isinstance(leaf, Hint):
        hint = getattr(dim, leaf.kind.upper())
        bounds = {k: v for k, v in (("min", leaf.min), ("max", leaf.max)) if v is not None}
        return hint(**bounds) if bounds else hint
    return leaf.value


def _source(value: Any) -> str:
    if isinstance(value, Node):
        inner = ", ".join(_source(v) if value.sequence else f"{k!r}: {_source(v)}" for k, v in value.entries)
        if value.kind == "dict":
            return "{" + inner + "}"
        if value.kind == "list":
            return f"[{inner}]"
        return f"({inner},)" if len(value.entries) == 1 else f"({inner})"
    if isinstance(value, Named):
        return value.name
    if isinstance(value, Derived):
        text = value.root if value.scale == 1 else f"{value.scale} * {value.root}"
        return text + (f" + {value.offset}" if value.offset > 0 else f" - {-value.offset}" if value.offset < 0 else "")
    if isinstance(value, Hint):
        args = ", ".join(f"{k}={v}" for k, v in (("min", value.min), ("max", value.max)) if v is not None)
        return f"Dim.{value.kind.upper()}" + (f"({args})" if args else "")
    return repr(value.value)
