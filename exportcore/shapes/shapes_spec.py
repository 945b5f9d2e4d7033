"""Read a ``ShapesSpec`` / ``ParamsSpec`` (torch >= 2.14, ``torch.fx.experimental.dynamic_spec``).

The spec is translated into the dict form the parser already walks: parameter name ->
nested dicts/lists ending in one :class:`SpecAxis` per tensor axis. Each ``ShapeVar`` is a
root (named after the variable); an expression such as ``B * 2 + 1`` is a derived axis of
one root. ShapesSpec dims are unbacked, so torch does not specialize 0/1 for them: roots
keep size 1 drawable (``Root.keep01``).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

import sympy

from exportcore.shapes.solve import coefficients, symbol

__all__ = ["SpecAxis", "is_shapes_spec", "to_dict_spec", "unavailable_hint"]


@dataclass(frozen=True)
class SpecAxis:
    """One tensor axis of a ShapesSpec: ``expr`` over root ``root`` declared in [min, max]."""

    root: str
    min: int
    max: int | None
    expr: sympy.Expr
    label: str


def is_shapes_spec(value: Any) -> bool:
    """Return True for a ShapesSpec or ParamsSpec, checked by class so torch need not have them."""
    return any(c.__module__ == "torch.fx.experimental.dynamic_spec" and c.__name__ in ("ShapesSpec", "ParamsSpec")
               for c in type(value).__mro__)


def export_accepts_shapes_spec() -> bool:
    """Whether this torch's ``torch.export.export`` takes a ShapesSpec/ParamsSpec as ``dynamic_shapes``.

    Asked of export itself, not of the version: torch 2.13 ships ``dynamic_spec`` but its export
    does not take the spec yet ("object of type 'ShapesSpec' has no len()"); 2.14's does.
    """
    import importlib

    try:
        trace = importlib.import_module("torch.export._trace")
    except ImportError:  # pragma: no cover - every supported torch has it
        return False
    return getattr(trace, "ShapesSpec", None) is not None


def unsupported_message() -> str:
    """Say that this torch has ShapesSpec but its export does not take it, naming the installed torch."""
    import torch

    return (f"dynamic_shapes: a ShapesSpec/ParamsSpec needs a torch whose export accepts it (2.14 and later); "
            f"torch {torch.__version__} has torch.fx.experimental.dynamic_spec but its torch.export does not take "
            "the spec: use Dim-style dynamic_shapes (Dim, Dim.AUTO, dicts/tuples) on this torch")


def unavailable_hint(message: str) -> str:
    """Return what to tell a user whose test failed importing ShapesSpec ("" for other errors)."""
    if "torch.fx.experimental.dynamic_spec" not in message:
        return ""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("torch")
    except PackageNotFoundError:
        installed = "unknown"
    return (f"ShapesSpec/ParamsSpec (torch.fx.experimental.dynamic_spec) need torch >= 2.14; the installed "
            f"torch is {installed}: use Dim-style dynamic_shapes (Dim, Dim.AUTO, dicts/tuples) on this torch")


def to_dict_spec(spec: Any, model: Any) -> dict[str, Any]:
    """Return ``{forward parameter name: nested spec}`` with :class:`SpecAxis` leaves; ValueError naming the field."""
    from torch.fx.experimental.dynamic_spec import ParamsSpec, ShapesSpec

    if isinstance(spec, ShapesSpec):
        if spec.assumptions:
            shown = ", ".join(str(a) for a in spec.assumptions)
            raise ValueError(f"dynamic_shapes: ShapesSpec assumptions ({shown}) are not supported: pytest-export "
                             "cannot draw shapes that satisfy them; state the relation as a derived dim instead")
        params = spec._params or ParamsSpec()
    else:
        params = spec
    if model is None:
        raise ValueError("dynamic_shapes: a ShapesSpec names forward parameters, so the model is needed")
    sig = inspect.signature(model.forward if hasattr(model, "forward") else model)
    var_pos = next((n for n, p in sig.parameters.items() if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    var_kw = next((n for n, p in sig.parameters.items() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    named = dict(params._named_args)
    unknown = [k for k in named if k not in sig.parameters or k in (var_pos, var_kw)]
    if unknown:
        raise ValueError(f"dynamic_shapes: ParamsSpec names {unknown} are not parameters of forward "
                         f"{[n for n in sig.parameters]}")
    reader = _Reader()
    out: dict[str, Any] = {name: reader.node(v, f"dynamic_shapes[{name!r}]") for name, v in named.items()}
    if params._varargs is not None:
        if var_pos is None:
            raise ValueError("dynamic_shapes: ParamsSpec has '*args' but forward takes no *args")
        out[var_pos] = [reader.node(v, f"dynamic_shapes['*args'][{i}]") for i, v in enumerate(params._varargs)]
    if params._varkw is not None:
        if var_kw is None:
            raise ValueError("dynamic_shapes: ParamsSpec has '**kwargs' but forward takes no **kwargs")
        out[var_kw] = {k: reader.node(v, f"dynamic_shapes['**kwargs'][{k!r}]") for k, v in params._varkw.items()}
    return out


class _Reader:
    def __init__(self) -> None:
        self.names: dict[sympy.Symbol, str] = {}

    def node(self, value: Any, where: str) -> Any:
        from torch import SymInt
        from torch.fx.experimental import dynamic_spec as ds

        if value is None:
            return None
        if isinstance(value, ds.TensorSpec):
            return [self.leaf(d, f"{where}[{i}]") for i, d in enumerate(value)]
        if isinstance(value, ds.DictSpec):
            return {k: self.node(v, f"{where}[{k!r}]") for k, v in value.items()}
        if isinstance(value, ds.SeqSpec):
            return [self.node(v, f"{where}[{i}]") for i, v in enumerate(value._entries)]
        if isinstance(value, (int, SymInt)):
            return value  # a scalar argument's spec: int inputs are not varied
        raise ValueError(f"{where}: {type(value).__name__} is not supported by pytest-export yet "
                         "(use TensorSpec, DictSpec, SeqSpec or None)")

    def leaf(self, d: Any, where: str) -> Any:
        from torch import SymInt

        if d is None or (isinstance(d, int) and not isinstance(d, bool)):
            return d
        if not isinstance(d, SymInt):
            raise ValueError(f"{where}: expected a ShapeVar, an expression of one, an int or STATIC, got {d!r}")
        expr = sympy.sympify(d.node.expr)
        free = list(expr.free_symbols)
        if len(free) != 1:
            raise ValueError(f"{where}: {d!r} uses {len(free)} variables; pytest-export supports one per axis")
        sym = free[0]
        name = self.root_name(sym)
        lo, hi = self.bounds(sym)
        ours = expr.subs(sym, symbol(name))
        try:
            coefficients(ours, name)
        except ValueError:
            raise ValueError(f"{where}: {d!r} is not of the form A*{name} + B") from None
        label = name if ours == symbol(name) else str(ours)
        return SpecAxis(name, lo, hi, ours, label)

    def root_name(self, sym: sympy.Symbol) -> str:
        if sym not in self.names:
            base = re.sub(r"#\d+$", "", str(sym))
            taken = set(self.names.values())
            self.names[sym] = base if base not in taken else str(sym).replace("#", "_")
        return self.names[sym]

    @staticmethod
    def bounds(sym: sympy.Symbol) -> tuple[int, int | None]:
        from torch.fx.experimental.dynamic_spec import _get_spec_shape_env

        vr = _get_spec_shape_env().var_to_range.get(sym)
        lo = _finite(vr.lower) if vr is not None else None
        hi = _finite(vr.upper) if vr is not None else None
        return max(lo or 0, 0), hi


def _finite(bound: Any) -> int | None:
    # torch spells an open end int_oo / -int_oo, which int() refuses
    try:
        return int(bound)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
