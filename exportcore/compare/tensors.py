"""Compare two tensor leaves: shape, dtype, device, then values (exact, non-finite, within tolerance)."""

from __future__ import annotations

import math
from typing import Any, Callable

from exportcore.compare.measure import LeafError, Meter
from exportcore.compare.measure import finite as bounded
from exportcore.compare.tolerances import Mismatch, default_tolerances

__all__ = ["compare_tensors", "dense"]


def compare_tensors(
    expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str, meter: Meter | None = None,
    tie: Callable[[str, Any, Any], float | None] | None = None,
) -> Mismatch | None:
    """The difference between two tensor leaves, or None; ``meter`` measures their error (compare.measure).
    ``tie`` judges integer leaves that differ (compare.tree.TieJudge): a tie is no difference, measured as its gap."""
    import torch

    if expected.shape != actual.shape:
        return Mismatch(path, "shape", f"{path}: expected shape {list(expected.shape)}, got {list(actual.shape)}")
    if expected.dtype != actual.dtype:
        return Mismatch(path, "dtype", f"{path}: expected dtype {expected.dtype}, got {actual.dtype}")
    if expected.device.type != actual.device.type:
        return Mismatch(path, "device", f"{path}: expected device {expected.device}, got {actual.device}")
    exp, act = dense(expected), dense(actual)
    if exp.numel() == 0 or torch.equal(exp, act):
        if meter is not None:
            meter.add(LeafError(path, 0.0))
        return None  # the common case: identical outputs need no float64 copies
    if exp.dtype == torch.bool or not (exp.is_floating_point() or exp.is_complex()):
        found = _compare_exact(exp, act, path)
        fraction = tie(path, exp, act) if found is not None and tie is not None and exp.dtype != torch.bool else None
        if fraction is None:
            return found
        if meter is not None:
            meter.add(LeafError(path, fraction))
        return None
    d_rtol, d_atol = default_tolerances(exp.dtype)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    wide = torch.complex128 if exp.is_complex() else torch.float64
    e, a = exp.to(wide), act.to(wide)
    found = _compare_nonfinite(e, a, path)
    if found is not None:
        return found
    finite = torch.isfinite(e) & torch.isfinite(a)
    zero = torch.zeros((), dtype=torch.float64, device=e.device)
    diff = torch.where(finite, (e - a).abs(), zero)
    tol = atol + rtol * e.abs()
    if meter is not None:
        meter.add(_measured(exp, act, diff, tol, e.abs(), finite, path))
    bad = diff > tol
    count = int(bad.sum())
    if count == 0:
        return None
    mag = e.abs()
    rel = torch.where(mag > 0, diff / torch.where(mag > 0, mag, 1.0), torch.where(diff > 0, math.inf, 0.0))
    worst = torch.where(bad, diff, torch.full_like(diff, -1.0))
    index = _unravel(int(worst.flatten().argmax()), exp.shape)
    # Relative error only where the tolerance is exceeded: an exact-zero eager value next to
    # 1e-9 noise would otherwise make every report say "max rel error inf".
    max_abs, max_rel = float(diff.max()), float(rel[bad].max())
    total = exp.numel()
    return Mismatch(
        path, "value",
        f"{path}: {count} / {total} elements ({100.0 * count / total:.2f}%) differ beyond"
        f" atol={atol:g}, rtol={rtol:g} ({exp.dtype}); max abs error {max_abs:.3g}, max rel error"
        f" {max_rel:.3g}; worst at index {index}: expected {_item(exp, index)}, got {_item(act, index)}",
        max_abs=max_abs, max_rel=max_rel, fraction=count / total, worst_index=index,
    )


def _measured(exp: Any, act: Any, diff: Any, tol: Any, mag: Any, both_finite: Any, path: str) -> LeafError:
    """The leaf's error: ``diff`` (0 where either side is not finite) against ``tol``, both per element, in float64."""
    import torch

    budget = torch.where(tol > 0, diff / torch.where(tol > 0, tol, 1.0), torch.where(diff > 0, math.inf, 0.0))
    rel = torch.where(mag > 0, diff / torch.where(mag > 0, mag, 1.0), 0.0)
    return LeafError(path, bounded(float(budget.max())), bounded(float(diff.max())), bounded(float(rel.max())),
                     _ulps(exp, act, both_finite))


#: The integer of each floating dtype's width: its bits, read as an integer, order its values.
_BITS = {"float16": "int16", "bfloat16": "int16", "float32": "int32", "float64": "int64"}


def _ulps(exp: Any, act: Any, both_finite: Any) -> float:
    """The largest distance between the two, in representable values of their dtype (0 for complex, fp8)."""
    import torch

    bits = _BITS.get(str(exp.dtype).removeprefix("torch."))
    if bits is None:
        return 0.0
    kind = getattr(torch, bits)
    lowest = torch.iinfo(kind).min

    def ordered(t: Any) -> Any:
        # sign and magnitude to one line of integers: -0.0 and 0.0 meet at 0, negatives count down
        i = t.contiguous().view(kind).to(torch.int64)
        return torch.where(i < 0, lowest - i, i).to(torch.float64)

    distance = torch.where(both_finite, (ordered(exp) - ordered(act)).abs(), 0.0)
    return float(distance.max())


def _compare_exact(exp: Any, act: Any, path: str) -> Mismatch | None:
    import torch

    bad = exp != act
    count = int(bad.sum())
    if count == 0:
        return None
    if exp.dtype == torch.bool:
        diff = bad.to(torch.float64)
    else:
        # float64 avoids int overflow of the difference (exact for |values| < 2**53).
        diff = (exp.to(torch.float64) - act.to(torch.float64)).abs()
    index = _unravel(int(diff.flatten().argmax()), exp.shape)
    total = exp.numel()
    max_abs = float(diff.max())
    return Mismatch(
        path, "value",
        f"{path}: {count} / {total} elements ({100.0 * count / total:.2f}%) differ ({exp.dtype}, compared"
        f" exactly); max abs error {max_abs:.6g}; worst at index {index}: expected {_item(exp, index)},"
        f" got {_item(act, index)}",
        max_abs=max_abs, fraction=count / total, worst_index=index,
    )


def _compare_nonfinite(e: Any, a: Any, path: str) -> Mismatch | None:
    import torch

    parts = [(e.real, a.real), (e.imag, a.imag)] if e.is_complex() else [(e, a)]
    bad = torch.zeros(e.shape, dtype=torch.bool, device=e.device)
    for x, y in parts:
        bad |= torch.isnan(x) != torch.isnan(y)
        bad |= torch.isposinf(x) != torch.isposinf(y)
        bad |= torch.isneginf(x) != torch.isneginf(y)
    count = int(bad.sum())
    if count == 0:
        return None
    index = _unravel(int(bad.flatten().to(torch.uint8).argmax()), e.shape)
    total = e.numel()
    return Mismatch(
        path, "nonfinite",
        f"{path}: NaN/inf positions differ at {count} / {total} elements ({100.0 * count / total:.2f}%);"
        f" first at index {index}: expected {_item(e, index)}, got {_item(a, index)}",
        max_abs=math.inf, fraction=count / total, worst_index=index,
    )


def dense(t: Any) -> Any:
    if t.layout != _strided():
        t = t.to_dense()
    return t.detach()


def _strided() -> Any:
    import torch

    return torch.strided


def _unravel(flat: int, shape: Any) -> list[int]:
    index = []
    for size in reversed(list(shape)):
        index.append(flat % size)
        flat //= size
    return index[::-1]


def _item(t: Any, index: list[int]) -> Any:
    value = t[tuple(index)].item() if index else t.item()
    return f"{value:.8g}" if isinstance(value, float) else value
