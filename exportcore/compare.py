# Over 300 lines: one comparison walk (pytree leaves, tensors, scalars, non-finite values, float64 arbitration) read top to bottom.
"""Compare eager outputs with exported-program outputs, leaf by leaf.

Walks nested tuples, lists, dicts (HF ``ModelOutput`` included), namedtuples,
torch struct sequences (``torch.return_types.max``), dataclasses and
torch-pytree-registered classes, and reports the first leaf that differs, by its
pytree path (``output[0]['logits']``, ``output.hidden[1]``).

Default tolerances per dtype (``rtol``, ``atol``), a little looser than
``torch.testing`` for float32 because decompositions and the exported graph
reorder floating point math (fused vs. unfused ops, different reductions):

=================  ========  ========
dtype              rtol      atol
=================  ========  ========
float64/complex128 1e-7      1e-7
float32/complex64  1e-4      1e-5
float16            1e-3      1e-5
bfloat16           1.6e-2    1e-5
other floats (fp8) 1.25e-1   1e-3
Python float       1e-4      1e-5   (usually a ``.item()`` of a float32 value)
=================  ========  ========

Integers, bools and strings compare exactly. NaN equals NaN when the positions
agree; +inf/-inf must agree exactly. A tolerance the caller passes replaces the
default for every floating leaf; passing only one of them keeps the default for
the other.

Importing this module does not import torch.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Mismatch", "MISMATCH_KINDS", "Rounding", "compare", "compare_with_reference", "default_tolerances",
    "tolerance_problem",
]

MISMATCH_KINDS = ("structure", "type", "shape", "dtype", "device", "value", "nonfinite")

# dtype name -> (rtol, atol); see the module docstring for why float32 is looser than torch.testing.
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "float16": (1e-3, 1e-5),
    "complex32": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}
_OTHER_FLOAT = (1.25e-1, 1e-3)
_PY_FLOAT = _TOLERANCES["float32"]
_SCALARS = (bool, int, float, complex, str, bytes, type(None))


@dataclass
class Mismatch:
    """The first leaf where two output trees differ."""

    path: str
    kind: str  # one of MISMATCH_KINDS
    message: str
    max_abs: float | None = None
    max_rel: float | None = None  # over the mismatched elements only
    fraction: float | None = None  # mismatched elements / all elements
    worst_index: list[int] | None = None

    def __str__(self) -> str:
        return self.message


def default_tolerances(dtype: Any) -> tuple[float, float]:
    """Return the default ``(rtol, atol)`` for a torch dtype (or a dtype name)."""
    name = str(dtype).removeprefix("torch.")
    if name in _TOLERANCES:
        return _TOLERANCES[name]
    return _OTHER_FLOAT


def tolerance_problem(value: Any) -> str | None:
    """Return why ``value`` is no rtol/atol ("must be ..., got ..."), or None if it is one (None included)."""
    # NaN compares false with everything and inf forgives everything: either would pass any mismatch.
    if value is None or (not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < math.inf):
        return None
    return f"must be a finite non-negative number, got {value!r}"


def compare(
    expected: Any,
    actual: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    path: str = "output",
) -> Mismatch | None:
    """Return the first difference between ``expected`` (eager) and ``actual`` (exported), or None."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        problem = tolerance_problem(value)
        if problem:
            raise ValueError(f"{name} {problem}")
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, got {type(path).__name__}")
    return _compare(expected, actual, rtol, atol, path)


def _leaves_with_paths(obj: Any, path: str = "output") -> list[tuple[str, Any]]:
    """Return ``(pytree path, leaf)`` pairs of a nested output, in traversal order."""
    children = _children(obj)
    if children is None:
        return [(path, obj)]
    leaves: list[tuple[str, Any]] = []
    for suffix, child in children:
        leaves.extend(_leaves_with_paths(child, path + suffix))
    return leaves


def _is_tensor(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _field_names(obj: Any) -> tuple[str, ...] | None:
    """Return the field names of a namedtuple or a struct sequence (torch.return_types.max), else None."""
    if not isinstance(obj, tuple):
        return None
    cls = type(obj)
    if hasattr(cls, "_fields"):
        return tuple(cls._fields)
    if hasattr(cls, "n_fields") and len(getattr(cls, "__match_args__", ())) == len(obj):
        return tuple(cls.__match_args__)
    return None


def _is_torch_size(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Size)


def _key_suffix(obj: Mapping, key: Any) -> str:
    # HF ModelOutput is a dict subclass whose keys are also attributes: users write out.logits.
    if type(obj) not in (dict, OrderedDict) and isinstance(key, str) and key.isidentifier():
        if getattr(obj, key, _MISSING) is obj[key]:
            return f".{key}"
    return f"[{key!r}]"


_MISSING = object()


def _children(obj: Any) -> list[tuple[str, Any]] | None:
    """Return the ``(path suffix, child)`` pairs of a container, or None for a leaf."""
    if _is_tensor(obj) or isinstance(obj, _SCALARS):
        return None
    names = _field_names(obj)
    if names is not None:
        return [(f".{name}", getattr(obj, name)) for name in names]
    if isinstance(obj, (tuple, list)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if isinstance(obj, Mapping):
        return [(_key_suffix(obj, k), v) for k, v in obj.items()]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f".{f.name}", getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return _pytree_children(obj)


def _pytree_children(obj: Any) -> list[tuple[str, Any]] | None:
    if "torch" not in sys.modules:
        return None  # no torch loaded, so no torch-registered pytree classes exist
    import torch.utils._pytree as pytree

    node = pytree.SUPPORTED_NODES.get(type(obj))
    if node is None:
        return None
    if node.flatten_with_keys_fn is not None:
        pairs, _ = node.flatten_with_keys_fn(obj)
        return [(pytree.keystr((key,)), child) for key, child in pairs]
    values, _ = node.flatten_fn(obj)
    return [(f"[{i}]", child) for i, child in enumerate(values)]


def _type_name(obj: Any) -> str:
    return type(obj).__qualname__


def _compare(expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str) -> Mismatch | None:
    if _is_tensor(expected):
        if not _is_tensor(actual):
            return _type_mismatch(path, expected, actual)
        return _compare_tensors(expected, actual, rtol, atol, path)
    if isinstance(expected, _SCALARS):
        return _compare_scalars(expected, actual, rtol, atol, path)
    exp_children = _children(expected)
    if exp_children is None:
        return _compare_opaque(expected, actual, path)
    if not _same_container_type(expected, actual):
        return _type_mismatch(path, expected, actual)
    act_children = _children(actual) or []
    if isinstance(expected, Mapping):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            said = [f"missing {missing}"] * bool(missing) + [f"unexpected {extra}"] * bool(extra)
            message = f"{path}: keys differ: {', '.join(said)} (expected keys {list(expected)})"
            return Mismatch(path, "structure", message)
        for key, value in expected.items():
            found = _compare(value, actual[key], rtol, atol, path + _key_suffix(expected, key))
            if found is not None:
                return found
        return None
    if len(exp_children) != len(act_children):
        return Mismatch(
            path, "structure",
            f"{path}: expected {len(exp_children)} elements in {_type_name(expected)}, got {len(act_children)}",
        )
    for (suffix, exp_child), (act_suffix, act_child) in zip(exp_children, act_children):
        if suffix != act_suffix:
            return Mismatch(path, "structure", f"{path}: expected field {suffix!r}, got {act_suffix!r}")
        found = _compare(exp_child, act_child, rtol, atol, path + suffix)
        if found is not None:
            return found
    return None


def _same_container_type(expected: Any, actual: Any) -> bool:
    if type(expected) is type(actual):
        return True
    # torch.Size and a plain tuple of ints mean the same thing to a caller.
    plain = (tuple,)
    return (_is_torch_size(expected) or type(expected) in plain) and (
        _is_torch_size(actual) or type(actual) in plain
    )


def _type_mismatch(path: str, expected: Any, actual: Any) -> Mismatch:
    return Mismatch(path, "type", f"{path}: expected {_type_name(expected)}, got {_type_name(actual)}")


def _compare_opaque(expected: Any, actual: Any, path: str) -> Mismatch | None:
    if type(expected) is not type(actual):
        return _type_mismatch(path, expected, actual)
    try:
        equal = bool(expected == actual)
    except Exception as exc:  # an object whose == raises cannot be compared; say so
        return Mismatch(path, "value", f"{path}: cannot compare {_type_name(expected)} values: {exc}")
    if equal:
        return None
    return Mismatch(path, "value", f"{path}: expected {expected!r}, got {actual!r}")


def _compare_scalars(
    expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str
) -> Mismatch | None:
    # bool is an int subclass; True vs 1 is a type change, so compare exact types.
    if type(expected) is not type(actual):
        return _type_mismatch(path, expected, actual)
    if not isinstance(expected, (float, complex)):
        if expected == actual:
            return None
        kw = {}
        if isinstance(expected, int):
            kw = {"max_abs": float(abs(expected - actual)), "fraction": 1.0}
        return Mismatch(path, "value", f"{path}: expected {expected!r}, got {actual!r}", **kw)
    exp_c, act_c = complex(expected), complex(actual)
    parts = [(exp_c.real, act_c.real), (exp_c.imag, act_c.imag)]
    for e, a in parts:
        if math.isnan(e) != math.isnan(a) or (math.isinf(e) or math.isinf(a)) and e != a:
            return Mismatch(path, "nonfinite", f"{path}: expected {expected!r}, got {actual!r}", fraction=1.0)
    if any(math.isnan(e) or math.isinf(e) for e, _ in parts):
        return None
    rtol = _PY_FLOAT[0] if rtol is None else rtol
    atol = _PY_FLOAT[1] if atol is None else atol
    diff = abs(exp_c - act_c)
    if diff <= atol + rtol * abs(exp_c):
        return None
    rel = diff / abs(exp_c) if exp_c else math.inf
    return Mismatch(
        path, "value",
        f"{path}: expected {expected!r}, got {actual!r} (abs error {diff:.3g}, rel error {rel:.3g},"
        f" atol={atol:g}, rtol={rtol:g})",
        max_abs=diff, max_rel=rel, fraction=1.0, worst_index=[],
    )


def _compare_tensors(expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str) -> Mismatch | None:
    import torch

    if expected.shape != actual.shape:
        return Mismatch(path, "shape", f"{path}: expected shape {list(expected.shape)}, got {list(actual.shape)}")
    if expected.dtype != actual.dtype:
        return Mismatch(path, "dtype", f"{path}: expected dtype {expected.dtype}, got {actual.dtype}")
    if expected.device.type != actual.device.type:
        return Mismatch(path, "device", f"{path}: expected device {expected.device}, got {actual.device}")
    exp, act = _dense(expected), _dense(actual)
    if exp.numel() == 0 or torch.equal(exp, act):
        return None  # the common case: identical outputs need no float64 copies
    if exp.dtype == torch.bool or not (exp.is_floating_point() or exp.is_complex()):
        return _compare_exact(exp, act, path)
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


def _dense(t: Any) -> Any:
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
    path: str = "output", forgiven: list[Rounding] | None = None,
) -> Mismatch | None:
    """Return the first real difference, forgiving float leaves that differ only by rounding.

    ``reference`` is the same computation in float64. A floating tensor that fails the plain
    tolerances still passes when, element by element, the program's distance to the float64
    reference is at most ``ROUNDING_FACTOR`` times eager float32's own largest distance to it
    plus ``atol``: then the program is as exact as eager, only rounded differently (another
    reduction order, a decomposition). Where eager is much closer to the reference than float32
    needs to be (its kernel accumulates in double, as CPU batch norm does), that rule would blame
    rounding: the leaf also passes when the program is within the tolerances of the reference
    norm-wise (RMS error <= rtol * RMS(reference) + atol) and no element is more than
    ``ROUNDING_FACTOR`` times its tolerance from it; such leaves are appended to ``forgiven``.
    The reference is trusted only where eager float32 agrees with it within the plain tolerances
    (a model drawing random numbers or reading a global would not); otherwise, and for every
    non-float leaf, the plain comparison stands.
    """
    found = compare(expected, actual, rtol=rtol, atol=atol, path=path)
    if found is None or found.kind != "value":
        return found
    exp_leaves = _leaves_with_paths(expected, path)
    act_leaves = _leaves_with_paths(actual, path)
    ref_leaves = dict(_leaves_with_paths(reference, path))
    if [p for p, _ in exp_leaves] != [p for p, _ in act_leaves]:
        return found
    for (leaf_path, e), (_, a) in zip(exp_leaves, act_leaves):
        mismatch = _compare(e, a, rtol, atol, leaf_path)
        if mismatch is None:
            continue
        r = ref_leaves.get(leaf_path)
        if mismatch.kind != "value" or not _is_tensor(e) or not _is_tensor(r):
            return mismatch
        judged = _rounding_only(e, a, r, rtol, atol, leaf_path)
        if judged is False:
            return mismatch
        if isinstance(judged, Rounding) and forgiven is not None:
            judged.beyond = round((mismatch.fraction or 0.0) * e.numel())
            forgiven.append(judged)
    return None


def _rounding_only(e: Any, a: Any, r: Any, rtol: float | None, atol: float | None, path: str) -> bool | Rounding:
    """True: as exact as eager; a Rounding: less exact than eager, within the tolerances norm-wise; else False."""
    import torch

    if not e.is_floating_point() or r.shape != e.shape or not (r.is_floating_point() or r.is_complex()):
        return False
    if _compare(e, r.to(e.dtype), None, None, "reference") is not None:
        return False  # the float64 run is not the same computation: no basis to forgive anything
    e64, a64, r64 = (_dense(t).to(torch.float64) for t in (e, a, r))
    finite = torch.isfinite(r64) & torch.isfinite(e64) & torch.isfinite(a64)
    zero = torch.zeros((), dtype=torch.float64)
    eager_err = float(torch.where(finite, (e64 - r64).abs(), zero).max())
    program_err = torch.where(finite, (a64 - r64).abs(), zero)
    d_rtol, d_atol = default_tolerances(e.dtype)
    rtol, atol = (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol)
    if bool((program_err <= ROUNDING_FACTOR * eager_err + atol).all()):
        return True
    magnitude = torch.where(finite, r64.abs(), zero)
    tol = atol + rtol * magnitude
    worst = torch.where(tol > 0, program_err / torch.where(tol > 0, tol, 1.0), torch.where(program_err > 0, math.inf, 0.0))
    rms_err, rms_ref = float(program_err.pow(2).mean().sqrt()), float(magnitude.pow(2).mean().sqrt())
    if float(worst.max()) > ROUNDING_FACTOR or rms_err > rtol * rms_ref + atol:
        return False
    return Rounding(path, float(program_err.max()), eager_err, rms_err / rms_ref if rms_ref else math.inf, 0)
