"""Walk two output trees side by side (containers, namedtuples, dataclasses, pytree classes) to the first leaf that differs."""

from __future__ import annotations

import dataclasses
import math
import sys
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Callable

from exportcore.compare.measure import LeafError, Meter
from exportcore.compare.measure import finite as bounded
from exportcore.compare.tensors import compare_tensors
from exportcore.compare.tolerances import PY_FLOAT, Mismatch, tolerance_problem

__all__ = ["compare", "leaves_with_paths", "is_tensor", "compare_trees", "TieJudge"]

#: Asked about an integer tensor leaf that differs (path, eager's, the program's): the worst gap's share of its
#: tolerance where every flip is a tie of eager's scores (exportcore.compare.ties), else None (a mismatch).
TieJudge = Callable[[str, Any, Any], "float | None"]


_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def compare(
    expected: Any,
    actual: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    path: str = "output",
    meter: Meter | None = None,
    tie: TieJudge | None = None,
) -> Mismatch | None:
    """Return the first difference between ``expected`` (eager) and ``actual`` (exported), or None.

    ``meter``: each leaf compared (up to the first that differs) is measured into it (exportcore.compare.measure).
    ``tie``: judges an integer leaf that differs (a flipped argmax): one it calls a tie is no difference.
    """
    for name, value in (("rtol", rtol), ("atol", atol)):
        problem = tolerance_problem(value)
        if problem:
            raise ValueError(f"{name} {problem}")
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, got {type(path).__name__}")
    return compare_trees(expected, actual, rtol, atol, path, meter, tie)


def leaves_with_paths(obj: Any, path: str = "output") -> list[tuple[str, Any]]:
    """Return ``(pytree path, leaf)`` pairs of a nested output, in traversal order."""
    children = _children(obj)
    if children is None:
        return [(path, obj)]
    leaves: list[tuple[str, Any]] = []
    for suffix, child in children:
        leaves.extend(leaves_with_paths(child, path + suffix))
    return leaves


def is_tensor(obj: Any) -> bool:
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
    if is_tensor(obj) or isinstance(obj, _SCALARS):
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


def compare_trees(
    expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str, meter: Meter | None = None,
    tie: TieJudge | None = None,
) -> Mismatch | None:
    found = _walk(expected, actual, rtol, atol, path, meter, tie)
    if found is not None and meter is not None:
        meter.differs(found.path, found.max_abs)  # a leaf with no finite budget (a float leaf is measured already)
    return found


def _walk(
    expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str, meter: Meter | None,
    tie: TieJudge | None,
) -> Mismatch | None:
    if is_tensor(expected):
        if not is_tensor(actual):
            return _type_mismatch(path, expected, actual)
        return compare_tensors(expected, actual, rtol, atol, path, meter, tie)
    if isinstance(expected, _SCALARS):
        return _compare_scalars(expected, actual, rtol, atol, path, meter)
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
            found = compare_trees(value, actual[key], rtol, atol, path + _key_suffix(expected, key), meter, tie)
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
        found = compare_trees(exp_child, act_child, rtol, atol, path + suffix, meter, tie)
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
    expected: Any, actual: Any, rtol: float | None, atol: float | None, path: str, meter: Meter | None = None,
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
    rtol = PY_FLOAT[0] if rtol is None else rtol
    atol = PY_FLOAT[1] if atol is None else atol
    diff = abs(exp_c - act_c)
    if meter is not None:
        budget = atol + rtol * abs(exp_c)
        fraction = diff / budget if budget > 0 else (math.inf if diff > 0 else 0.0)
        rel = diff / abs(exp_c) if exp_c else 0.0
        meter.add(LeafError(path, bounded(fraction), bounded(diff), bounded(rel)))
    if diff <= atol + rtol * abs(exp_c):
        return None
    rel = diff / abs(exp_c) if exp_c else math.inf
    return Mismatch(
        path, "value",
        f"{path}: expected {expected!r}, got {actual!r} (abs error {diff:.3g}, rel error {rel:.3g},"
        f" atol={atol:g}, rtol={rtol:g})",
        max_abs=diff, max_rel=rel, fraction=1.0, worst_index=[],
    )
