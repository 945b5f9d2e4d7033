"""Tie-aware discrete outputs: an index output (argmax, max/min over a dim, topk) that flips where eager had a tie.

An argmax of two logits within rounding of each other is a coin toss: the program, summing in another
order, may pick the other one, and comparing the indices exactly would fail a program that is as
right as eager. A flip is a *tie* when eager's own scores at its index and at the program's index are
within the tolerance of each other (``|s[e] - s[p]| <= atol + rtol * |s[e]|``, the float comparison's
rule, on the scores' dtype's defaults unless the case sets them). The scores are eager's (the input of
the very call that produced the output, caught by exportcore.programs.discrete), never the program's:
a program whose scores collapsed to equal values would otherwise make every flip look like a tie.

Pure: a function of tensors. Importing this module does not import torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from exportcore.compare.tolerances import default_tolerances

__all__ = ["DISCRETE_OPS", "DiscreteCall", "Tie", "tie_of"]

#: The ops whose integer output picks among scores: by name, as torch and Tensor methods alike call them.
DISCRETE_OPS = ("argmax", "argmin", "max", "min", "topk")


@dataclass
class DiscreteCall:
    """One eager call of a DISCRETE_OPS op: its scores (input), the dim it picked along, and the indices it returned."""

    op: str
    scores: Any
    dim: int | None  # None: over the flattened input (argmax without a dim)
    keepdim: bool  # topk: always True (its indices keep the dim, k wide)
    indices: Any


@dataclass
class Tie:
    """A flipped index output forgiven as a tie: the positions flipped, the worst gap's share of its tolerance."""

    op: str
    flipped: int
    total: int
    fraction: float


def tie_of(call: DiscreteCall, expected: Any, actual: Any, rtol: float | None, atol: float | None) -> Tie | None:
    """Return the Tie where every position at which ``actual`` differs from ``expected`` (eager's indices, the
    ``call``'s own) picks a score within tolerance of eager's pick; None where any flip is a real one."""
    import torch

    scores = call.scores
    if scores.dtype == torch.bool or scores.is_complex() or scores.dim() == 0 or expected.shape != actual.shape:
        return None
    if scores.is_floating_point():
        d_rtol, d_atol = default_tolerances(scores.dtype)
        rtol, atol = d_rtol if rtol is None else rtol, d_atol if atol is None else atol
    else:
        rtol, atol = 0.0, 0.0  # integer scores: only an exact tie is one
    lines = _lines(call, scores, expected, actual)
    if lines is None:
        return None
    s, e, a = lines
    n = s.shape[-1]
    if bool(((a < 0) | (a >= n)).any()):
        return None  # an index out of the scores' range is no pick at all
    flipped = e != a
    if not bool(flipped.any()):
        return None
    wide = s.to(torch.float64)
    picked, chosen = wide.gather(-1, e), wide.gather(-1, a)
    gap, tol = (picked - chosen).abs()[flipped], (atol + rtol * picked.abs())[flipped]
    if not bool(torch.isfinite(picked[flipped]).all() and torch.isfinite(chosen[flipped]).all()):
        return None
    if not bool((gap <= tol).all()):
        return None
    fractions = torch.where(tol > 0, gap / torch.where(tol > 0, tol, 1.0), torch.where(gap > 0, math.inf, 0.0))
    return Tie(call.op, int(flipped.sum()), expected.numel(), float(fractions.max()))


def _lines(call: DiscreteCall, scores: Any, expected: Any, actual: Any) -> tuple[Any, Any, Any] | None:
    """The scores as rows of candidates (``[rows, n]``) and both index outputs as ``[rows, k]`` picks in them."""
    if call.dim is None:
        if expected.numel() != 1:
            return None
        return scores.reshape(1, -1), expected.reshape(1, 1).long(), actual.reshape(1, 1).long()
    dim = call.dim % scores.dim()
    s = scores.movedim(dim, -1)
    if call.op == "topk" or call.keepdim:
        if expected.dim() != scores.dim():
            return None
        e, a = expected.movedim(dim, -1), actual.movedim(dim, -1)
    else:
        e, a = expected.unsqueeze(-1), actual.unsqueeze(-1)
    if e.shape[:-1] != s.shape[:-1]:
        return None
    rows = s.shape[:-1].numel()
    return s.reshape(rows, s.shape[-1]), e.reshape(rows, -1).long(), a.reshape(rows, -1).long()
