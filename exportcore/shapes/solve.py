"""Sympy arithmetic on torch.export's derived dims: sizes of the form ``A*root + B``, ``A > 0``.

torch only allows increasing linear derivations with integer coefficients (``d + k``,
``k * d``, ``k * d + c`` and chains of them, which it composes onto one root), so every
dynamic axis is one such expression of exactly one root symbol.
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy

__all__ = ["symbol", "coefficients", "evaluate", "solve_root", "root_bounds"]


@lru_cache(maxsize=None)
def symbol(name: str) -> sympy.Symbol:
    """Return the integer sympy symbol standing for root dim ``name``."""
    return sympy.Symbol(name, integer=True)


def coefficients(expr: sympy.Expr, root: str) -> tuple[int, int]:
    """Return ``(A, B)`` with ``expr == A*root + B``; ValueError if it is not of that form."""
    sym = symbol(root)
    poly = sympy.Poly(sympy.expand(expr), sym)
    if poly.degree() > 1:
        raise ValueError(f"{expr} is not linear in {root}")
    a, b = (int(c) for c in poly.all_coeffs()) if poly.degree() == 1 else (0, int(poly.all_coeffs()[0]))
    if a <= 0:
        raise ValueError(f"{expr} is not an increasing function of {root}")
    return a, b


def evaluate(expr: sympy.Expr, root: str, value: int) -> int:
    """Return the size ``expr`` takes when ``root == value``."""
    a, b = coefficients(expr, root)
    return a * value + b


def solve_root(expr: sympy.Expr, root: str, size: int) -> int | None:
    """Return the root value for which ``expr == size``, or None when no integer solves it."""
    solutions = sympy.solve(sympy.Eq(expr, size), symbol(root))
    for sol in solutions:
        if sol.is_integer:
            return int(sol)
    return None


def root_bounds(expr: sympy.Expr, root: str, lo: int | None, hi: int | None) -> tuple[int | None, int | None]:
    """Return the root interval on which ``lo <= expr <= hi`` (None: unbounded on that side)."""
    a, b = coefficients(expr, root)
    rlo = None if lo is None else math.ceil(sympy.Rational(lo - b, a))
    rhi = None if hi is None else math.floor(sympy.Rational(hi - b, a))
    return rlo, rhi
