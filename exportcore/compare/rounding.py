"""Forgive a leaf that differs from eager only by rounding, judged against a float64 run."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from exportcore.compare.measure import Meter
from exportcore.compare.tensors import dense
from exportcore.compare.tolerances import Mismatch, default_tolerances
from exportcore.compare.tree import TieJudge, compare, compare_trees, is_tensor, leaves_with_paths

__all__ = ["FLIP_SHARE", "ROUNDING_FACTOR", "Rounding", "compare_with_reference"]


#: A program may be this many times further from the float64 reference than eager float32 is, and no
#: element this many times its tolerance away from it.
ROUNDING_FACTOR = 4.0


@dataclass
class Rounding:
    """A float leaf forgiven by the norm-wise rule: the program is less precise than eager, within tolerance."""

    path: str
    program_error: float  # the program's largest distance to the float64 reference
    eager_error: float  # eager float32's largest distance to it
    relative_rms: float  # the program's RMS distance to the reference / the reference's RMS
    beyond: int  # elements beyond the plain tolerances of eager


def compare_with_reference(
    expected: Any, actual: Any, reference: Any, *, rtol: float | None = None, atol: float | None = None,
    path: str = "output", forgiven: list[Rounding] | None = None, meter: Meter | None = None,
    tie: TieJudge | None = None,
) -> Mismatch | None:
    """Return the first real difference, forgiving leaves that differ only by rounding.

    ``reference`` is the same computation in float64. A floating tensor that fails the plain
    tolerances still passes when, element by element, the program's distance to the float64
    reference is at most ``ROUNDING_FACTOR`` times eager float32's own largest distance to it
    plus ``atol``: then the program is as exact as eager, only rounded differently (another
    reduction order, a decomposition). Where eager is much closer to the reference than float32
    needs to be (its kernel accumulates in double, as CPU batch norm does), that rule would blame
    rounding: the leaf also passes when the program is within the tolerances of the reference
    norm-wise (RMS error <= rtol * RMS(reference) + atol) and no element is more than
    ``ROUNDING_FACTOR`` times its tolerance from it; such leaves are appended to ``forgiven``.
    The reference is trusted only where eager float32 is within rounding of it by the same norm-wise
    rule (a model drawing random numbers or reading a global would not be); otherwise the plain
    comparison stands. An integer or bool output computed from floats (an argmax, a mask) passes
    when it differs from the reference at no more than ``ROUNDING_FACTOR`` times as many elements
    as eager does (plus one beside floats below float32: _flips_only); any other leaf is compared as is.
    ``meter`` measures every leaf against eager as compare() does, a forgiven leaf marked so; ``tie``: as compare().
    """
    found = compare(expected, actual, rtol=rtol, atol=atol, path=path, meter=meter, tie=tie)
    if found is None or found.kind != "value":
        return found
    exp_leaves = leaves_with_paths(expected, path)
    act_leaves = leaves_with_paths(actual, path)
    ref_leaves = dict(leaves_with_paths(reference, path))
    if [p for p, _ in exp_leaves] != [p for p, _ in act_leaves]:
        return found
    # rounding below float32 reaches an integer output (a bfloat16 model's argmax) at near-ties eager may miss
    reduced = any(is_tensor(x) and x.is_floating_point() and x.element_size() < 4 for _, x in exp_leaves)
    for (leaf_path, e), (_, a) in zip(exp_leaves, act_leaves):
        mismatch = compare_trees(e, a, rtol, atol, leaf_path, meter, tie)
        if mismatch is None:
            continue
        r = ref_leaves.get(leaf_path)
        if mismatch.kind != "value" or not is_tensor(e) or not is_tensor(r):
            return mismatch
        judged = _rounding_only(e, a, r, rtol, atol, leaf_path, reduced)
        if judged is False:
            return mismatch
        if meter is not None:
            meter.forgive(leaf_path)
        if isinstance(judged, Rounding) and forgiven is not None:
            judged.beyond = round((mismatch.fraction or 0.0) * e.numel())
            forgiven.append(judged)
    return None


def _rounding_only(
    e: Any, a: Any, r: Any, rtol: float | None, atol: float | None, path: str, reduced: bool = False,
) -> bool | Rounding:
    """True: as exact as eager; a Rounding: less exact than eager, within the tolerances norm-wise; else False."""
    import torch

    if r.shape != e.shape or a.shape != e.shape:
        return False
    if not e.is_floating_point() and not e.is_complex():
        return _flips_only(e, a, r, path, reduced)
    if not e.is_floating_point() or not (r.is_floating_point() or r.is_complex()):
        return False
    e64, a64, r64 = (dense(t).to(torch.float64) for t in (e, a, r))
    finite = torch.isfinite(r64) & torch.isfinite(e64) & torch.isfinite(a64)
    zero = torch.zeros((), dtype=torch.float64)
    d_rtol, d_atol = default_tolerances(e.dtype)
    rtol, atol = (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol)
    magnitude = torch.where(finite, r64.abs(), zero)
    rms_ref = float(magnitude.pow(2).mean().sqrt())

    def error(x64: Any, rtol: float, atol: float, scale: Any = magnitude) -> tuple[Any, bool]:
        """Distance to the reference per element, and whether it is rounding: norm-wise within (rtol, atol),
        no element beyond ROUNDING_FACTOR times its own tolerance (rtol of ``scale``, plus atol)."""
        err = torch.where(finite, (x64 - r64).abs(), zero)
        tol = atol + rtol * scale
        worst = torch.where(tol > 0, err / torch.where(tol > 0, tol, 1.0), torch.where(err > 0, math.inf, 0.0))
        return err, float(worst.max()) <= ROUNDING_FACTOR and float(err.pow(2).mean().sqrt()) <= rtol * rms_ref + atol

    # The float64 run is trusted where eager float32 is within rounding of it, by the dtype's own
    # tolerances (the user's may be tighter than float32 can be). Elementwise agreement is too strict
    # for long float32 reductions (a conv's weight grad over a batch on CUDA: 1.5% of elements just
    # past rtol=1e-4, none past 1.3x); a different computation (a random draw the float64 copy does
    # not repeat, a global) is off norm-wise as well. A reduction rounds in proportion to its
    # summands, not to its result: an element that sums to near zero (a bfloat16 logit) is as far
    # from float64 as its neighbours, so here each element's tolerance is relative to at least the
    # reference's RMS.
    eager_err, eager_rounds = error(e64, d_rtol, d_atol, torch.clamp(magnitude, min=rms_ref))
    if not eager_rounds or not torch.equal(torch.isfinite(e64), torch.isfinite(r64)):
        return False  # the float64 run is not the same computation: no basis to forgive anything
    program_err, program_rounds = error(a64, rtol, atol)
    if bool((program_err <= ROUNDING_FACTOR * float(eager_err.max()) + atol).all()):
        return True
    if not program_rounds:
        return False
    rms_err = float(program_err.pow(2).mean().sqrt())
    return Rounding(path, float(program_err.max()), float(eager_err.max()), rms_err / rms_ref if rms_ref else math.inf, 0)


#: An integer leaf's float64 run is trusted where eager's differs from it at no more than this share of
#: elements: rounding flips only near-ties (an argmax between two close logits, a threshold), while a
#: different computation (a random draw the float64 copy does not repeat) differs almost everywhere.
FLIP_SHARE = 0.1


def _flips_only(e: Any, a: Any, r: Any, path: str, reduced: bool) -> bool:
    """Whether an integer or bool output (an argmax, a mask) differs from eager only where rounding flips it.

    As exact as eager, counted in flips: the program differs from the float64 run at no more than
    ROUNDING_FACTOR times as many elements as eager does, and eager at no more than FLIP_SHARE of
    them. Where the output holds floats below float32 (``reduced``), one flip more: a bfloat16
    argmax over a short sequence flips a token where eager happened not to (1 draw in 30 of a tiny
    bfloat16 language model). Only outputs: a buffer or a gradient of integers is a counter or an
    index, never rounded.
    """
    if not path.startswith("output") or r.dtype != e.dtype or a.dtype != e.dtype or e.numel() == 0:
        return False
    e, a, r = dense(e), dense(a), dense(r)
    eager_flips = int((e != r).sum())
    program_flips = int((a != r).sum())
    return eager_flips <= FLIP_SHARE * e.numel() and program_flips <= ROUNDING_FACTOR * eager_flips + int(reduced)
