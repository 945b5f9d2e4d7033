"""Guards of an exported program: recognise guard errors, read ranges, spot specialization."""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "is_guard_error",
    "range_strings",
    "format_range",
    "exported_input_shapes",
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


def format_range(lo: Any, hi: Any) -> str:
    """Return ``[lo, hi]``, unbounded spelled ``int_oo`` as torch prints it."""

    def one(v: Any) -> str:
        s = str(v)
        return {"oo": "int_oo", "-oo": "-int_oo"}.get(s, s)

    return f"[{one(lo)}, {one(hi)}]"


def range_strings(ep: Any) -> dict[str, str]:
    """Return the exported program's range_constraints as ``{symbol: "[lo, hi]"}``."""
    out: dict[str, str] = {}
    for sym, vr in ep.range_constraints.items():
        out[str(sym)] = format_range(vr.lower, vr.upper)
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
