"""The spellings of dynamic-shape objects across torch versions, detected by feature.

torch 2.6 and 2.7 build ``Dim("b")`` as a class (metaclass ``_Dim``) and ``Dim.AUTO`` as a
member of the ``_DimHint`` enum; from 2.8 ``Dim`` is a class with instances and ``Dim.AUTO`` a
``_DimHint`` dataclass that may carry ``min``/``max`` (``Dim.AUTO(max=8)``).
``AdditionalInputs`` arrived in 2.8; ``ShapesSpec``/``ParamsSpec``
(``torch.fx.experimental.dynamic_spec``) in 2.14. Callers ask these helpers instead of
checking version strings.
"""

from __future__ import annotations

from typing import Any

__all__ = ["collection_types", "is_dim", "is_hint", "hint_parts", "hints_take_bounds", "torch_version"]


def collection_types(tds: Any) -> tuple[type, ...]:
    """Return the signature-binding spec classes this torch has (ShapesCollection, AdditionalInputs)."""
    names = ("ShapesCollection", "AdditionalInputs")
    return tuple(getattr(tds, n) for n in names if isinstance(getattr(tds, n, None), type))


def is_dim(d: Any, tds: Any) -> bool:
    """Return True for a named ``Dim`` (or a derived/static one) in either spelling."""
    dim = tds.Dim
    if isinstance(dim, type) and isinstance(d, dim):
        return True
    meta = getattr(tds, "_Dim", None)  # torch 2.6: Dim() returns a class whose metaclass is _Dim
    return isinstance(meta, type) and isinstance(d, meta)


def is_hint(d: Any, tds: Any) -> bool:
    """Return True for ``Dim.AUTO`` / ``Dim.DYNAMIC`` / ``Dim.STATIC`` (with or without bounds)."""
    return isinstance(d, tds._DimHint)


def hint_parts(d: Any) -> tuple[str, int | None, int | None]:
    """Return (kind, min, max) of a Dim hint: kind is "auto", "dynamic" or "static"."""
    kind = getattr(d, "type", d)  # the dataclass form wraps the enum member in .type
    return kind.name.lower(), getattr(d, "min", None), getattr(d, "max", None)


def hints_take_bounds() -> bool:
    """Return whether this torch's hints take bounds (``Dim.DYNAMIC(min=2, max=8)``; torch 2.6/2.7 do not)."""
    from torch.export import Dim

    try:
        Dim.DYNAMIC(min=2, max=3)
    except TypeError:
        return False
    return True


def torch_version() -> str:
    """Return the installed torch's version without the local build tag ("2.6.0")."""
    import torch

    return str(torch.__version__).split("+")[0]
