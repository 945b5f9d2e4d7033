"""The input memory budget: how many bytes one drawn input set may take.

A declared range says what the model must support, not what a CI runner can allocate:
``Dim("tokens", max=4_000_000)`` on a ``(tokens, 256)`` float input is 4 GB per draw, and
``max=10**18`` cannot be allocated at all. Draws (and reject probes) whose tensor inputs
together would exceed the budget are never built; the part of a range they would cover
is named in the outcome's notes instead.

The default is ``max(64 MiB, 16 x the example inputs' bytes)``:
- 64 MiB: a check keeps a few copies of one input set alive at once (the drawn inputs,
  a clone per program run, their grads in training), so even four copies stay far below
  a small CI runner's memory (GitHub's hosted Linux runners have 7-16 GB), while small
  examples can still be drawn large (a float32 ``(n, 256)`` input up to n = 65536).
- 16 x the examples: eager already ran on the examples on this machine, so a model whose
  examples are big gets room for 4x batch by 4x sequence of them, not a fixed cap that
  would stop it at its own example size.
The budget bounds inputs only; activations grow with them, which is why it is an option
(``--export-input-budget``, ini ``export_input_budget``, ``check(input_budget=...)``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MIN_DEFAULT_BUDGET", "EXAMPLE_FACTOR", "default_budget", "parse_bytes", "format_bytes", "budget_notes"]

#: The default budget is never below this many bytes.
MIN_DEFAULT_BUDGET = 64 * 2**20
#: ... and at least this many times the example inputs' bytes.
EXAMPLE_FACTOR = 16

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6, "mib": 2**20,
          "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def default_budget(example_bytes: int) -> int:
    """Return the budget used when none is given: max(64 MiB, 16 x the example inputs' bytes)."""
    return max(MIN_DEFAULT_BUDGET, EXAMPLE_FACTOR * int(example_bytes))


def parse_bytes(text: str | int) -> int:
    """Return the byte count of ``"512MiB"``, ``"2GB"``, ``"1048576"`` (an int passes); ValueError otherwise."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE.match(str(text))
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise ValueError(f"expected a size in bytes such as 268435456, 256MiB or 2GB, got {text!r}")
        value = int(float(match.group(1)) * _UNITS[unit])
    if value <= 0:
        raise ValueError(f"must be a positive size in bytes, got {text!r}")
    return value


def format_bytes(n: int) -> str:
    """Return ``n`` bytes as a short human figure (``64 MiB``)."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def budget_notes(spec: Any) -> list[str]:
    """Return one note per range part the budget kept from being drawn or probed (a budgeted ShapeSpec)."""
    if spec.budget is None:
        return []
    budget = format_bytes(spec.budget)
    notes = []
    for name, (top, declared_top) in spec.capped().items():
        root = spec.roots[name]
        declared = f"[{root.min}, {'int_oo' if root.max is None else root.max}]"
        notes.append(
            f"range upper part not exercised above {top}: dim {name!r} (declared {declared}) was drawn up to {top} "
            f"only, not up to {declared_top}; larger inputs would exceed the input budget of {budget} "
            "(--export-input-budget)"
        )
    for name, root in spec.roots.items():
        if root.max is not None and not spec.above_max(name):
            notes.append(
                f"reject probe above the max of dim {name!r} ({root.max + 1}) not run: its inputs would exceed "
                f"the input budget of {budget}"
            )
    return notes
