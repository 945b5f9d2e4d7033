"""Guards of an exported program: recognise guard errors, read ranges, spot specialization."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exportcore.shapes.spec import ShapeSpec

__all__ = [
    "is_guard_error",
    "ExportedRange",
    "exported_ranges",
    "root_axes",
    "ranges_text",
    "exported_input_shapes",
    "symbol_names",
    "named_ranges",
]

# Guard failures come in two forms: the input pre-hook raises RuntimeError("Expected input
# at *args[0].shape[0] to be equal to 4, but got 5") -- the only form on torch 2.6, which
# also says "Unexpected number of dimensions in input at ..." for another rank -- and newer
# releases' generated guards function asserts first ("Guard failed: x.size()[0] <= 64").
_GUARD_MESSAGES = (
    re.compile(r"Guard failed"),
    re.compile(r"Expected input at "),
    re.compile(r"Unexpected number of dimensions in input at "),  # torch 2.6-2.8: another rank
    re.compile(r"Trying to flatten user inputs with exported input tree spec"),
)
# A ShapesSpec (torch >= 2.14) declares unbacked dims: the program enforces the declared
# ranges and relations with runtime assertions in the graph, not with guards.
_RUNTIME_ASSERT = re.compile(r"Runtime assertion failed for expression")


def is_guard_error(exc: BaseException, *, runtime_asserts: bool = False) -> bool:
    """Return True if ``exc`` is the exported module refusing its inputs (not a crash inside it).

    ``runtime_asserts``: the spec was a ShapesSpec, whose in-graph assertions are its guards.
    """
    if not isinstance(exc, (AssertionError, RuntimeError, ValueError)):
        return False
    text = str(exc)
    if runtime_asserts and _RUNTIME_ASSERT.search(text):
        return True
    return any(p.search(text) for p in _GUARD_MESSAGES)


@dataclass(frozen=True)
class ExportedRange:
    """One symbol's exported value range; None: unbounded on that side (torch's ``-int_oo``/``int_oo``)."""

    lo: int | float | None  # float only for an unbacked float symbol (x.item() of a float tensor)
    hi: int | float | None

    @property
    def floor(self) -> int | float:
        """The lowest size the range allows (an unbounded lower end counts as 0, as sizes do)."""
        return 0 if self.lo is None else self.lo

    @property
    def ceiling(self) -> float:
        """The highest size the range allows (``inf`` when unbounded)."""
        return math.inf if self.hi is None else self.hi

    def text(self) -> str:
        """Return ``[lo, hi]`` as torch prints it (``int_oo`` for unbounded): the outcome's form."""
        lo = "-int_oo" if self.lo is None else str(self.lo)
        return f"[{lo}, {'int_oo' if self.hi is None else self.hi}]"


def exported_ranges(ep: Any) -> dict[str, ExportedRange]:
    """Return the exported program's range_constraints as ``{symbol: ExportedRange}``, sorted by symbol."""

    def bound(v: Any) -> int | float | None:
        # torch's unbounded ends print as int_oo/oo (sympy), -int_oo/-oo below; an unbacked float
        # symbol (from .item() on a float tensor) may have a finite non-integer bound.
        if str(v).lstrip("-") in ("int_oo", "oo"):
            return None
        return int(v) if v == int(v) else float(v)

    out = {str(sym): ExportedRange(bound(vr.lower), bound(vr.upper)) for sym, vr in ep.range_constraints.items()}
    return dict(sorted(out.items()))


def exported_input_shapes(ep: Any, args: tuple, kwargs: dict) -> dict[str, list[Any]]:
    """Return, per tensor input path, the exported shape: ints where static, symbol names where dynamic."""
    import torch

    from exportcore.shapes.parse import input_paths

    user_inputs = list(ep.graph_signature.user_inputs)
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    flat = input_paths(args, kwargs)
    shapes: dict[str, list[Any]] = {}
    if len(flat) != len(user_inputs):
        return shapes  # e.g. None leaves dropped; do not guess a misaligned mapping
    for (path, value), name in zip(flat, user_inputs):
        node = placeholders.get(name)
        val = None if node is None else node.meta.get("val")
        if isinstance(value, torch.Tensor) and val is not None and hasattr(val, "shape"):
            shapes[path] = [_dim_value(s) for s in val.shape]
    return shapes


def _dim_value(size: Any) -> int | str:
    # A specialized dim can still be a SymInt wrapping a constant: report it as the int it is.
    if isinstance(size, int):
        return size
    text = str(size)
    return int(text) if text.lstrip("-").isdigit() else text


_SYMBOL = re.compile(r"\b[a-z]\d+\b")  # torch's size symbols: s0, s6, u0


def symbol_names(spec: Any, shapes: dict[str, list[Any]]) -> dict[str, str]:
    """Return torch symbol -> the user's dim name(s) it stands for (``"s6" -> "batch"``).

    ``shapes`` is the program's exported_input_shapes(). A root read directly off an axis names
    its symbol; a root seen only through derived axes (``2*b``) names the one symbol of that
    expression. Roots torch merged into one symbol (an equality it guarded) are listed together: ``"a=b"``.
    """
    if spec is None:
        return {}
    found: dict[str, list[str]] = {}
    derived: list[tuple[str, str]] = []
    for slot in spec.tensors:
        shape = shapes.get(slot.path)
        for i, axis in enumerate(slot.axes):
            if axis.root is None or shape is None or i >= len(shape) or not isinstance(shape[i], str):
                continue
            if axis.derived:
                derived.append((shape[i], axis.root))
            elif _SYMBOL.fullmatch(shape[i]) and axis.root not in found.setdefault(shape[i], []):
                found[shape[i]].append(axis.root)
    named = {n for names in found.values() for n in names}
    for expr, root in derived:
        symbols = set(_SYMBOL.findall(expr))
        if root not in named and len(symbols) == 1:
            found.setdefault(symbols.pop(), []).append(root)
            named.add(root)
    return {sym: "=".join(names) for sym, names in found.items()}


def named_ranges(ranges: dict[str, str], names: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Return (ranges keyed by the user's dim names, dim name -> torch symbol) for ``{symbol: range}``.

    Symbols no declared dim stands for (e.g. an unbacked ``u0``) keep their symbol as the key;
    derived sizes read in dim names (``"batch + 1"``).
    """
    keyed: dict[str, str] = {}
    symbols: dict[str, str] = {}
    for sym, rng in ranges.items():
        if sym in names:
            keyed[names[sym]] = rng
            symbols[names[sym]] = sym
        else:  # a derived size torch keeps a range for ("s6 + 1") reads "batch + 1"
            keyed[_SYMBOL.sub(lambda m: names.get(m.group(0), m.group(0)), sym)] = rng
    return dict(sorted(keyed.items())), dict(sorted(symbols.items()))


def root_axes(spec: ShapeSpec) -> list[tuple[str, int, str]]:
    """Return (input path, axis, root dim name) for every axis that is a root dim itself."""
    out = []
    for slot in spec.tensors:
        for i, axis in enumerate(slot.axes):
            if axis.root is not None and not axis.derived:
                out.append((slot.path, i, axis.root))
    return out


def ranges_text(declared: dict[str, str], ranges: dict[str, ExportedRange], names: dict[str, str]) -> str:
    """Return "declared ...; exported range_constraints ..." for a guard failure's message.

    ``names`` maps torch symbols to the user's dim names (symbol_names()).
    """
    shown = ", ".join(f"{k}: {v}" for k, v in declared.items()) or "none"
    exported = ", ".join(
        f"{names[k]} ({k}): {v.text()}" if k in names else f"{k}: {v.text()}" for k, v in ranges.items()
    ) or "none (all static)"
    return f"declared {shown}; exported range_constraints {exported}"
