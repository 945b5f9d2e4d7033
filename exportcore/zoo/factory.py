"""``package.module:factory``: a user's function returning a model, ``(model, args[, kwargs])`` or a Case.

A bare model gets no inferred inputs (nothing describes them), so the factory must return its inputs
unless the model carries timm metadata (``pretrained_cfg``), which is read as for ``timm:``.
"""

from __future__ import annotations

import importlib
from typing import Any

from exportcore.zoo.building import batch_dim, count_params, check_budget, seeded
from exportcore.zoo.common import ZooCase, ZooEntry, ZooSpecError

__all__ = ["build", "list_entries"]


def list_entries(pattern: str) -> list[ZooEntry]:
    """Return the one entry a factory spec names, after checking the function exists."""
    module_name, _, attr = pattern.partition(":")
    _factory(module_name, attr)
    return [ZooEntry(module_name, attr, "factory")]


def build(entry: ZooEntry, max_params: int | None) -> ZooCase:
    """Call the factory (seeded, offline) and turn what it returns into a ZooCase."""
    import torch

    from exportcore.case import Case

    factory = _factory(entry.family, entry.name)
    with seeded(entry):
        result = factory()
        if isinstance(result, Case):
            model, args, kwargs, dynamic, note = (result.model, result.args, result.kwargs, result.dynamic_shapes,
                                                  "factory returned a Case: its inputs and dynamic_shapes as given")
        elif isinstance(result, tuple) and len(result) in (2, 3, 4):
            model, args, kwargs, dynamic = (*result, None, None)[:4]
            note = "factory returned its inputs" + (" and dynamic_shapes" if dynamic is not None else
                                                     "; no dynamic_shapes: static")
        elif hasattr(result, "pretrained_cfg"):
            from exportcore.zoo.timm_zoo import image_spec

            model = result
            (c, h, w), dims, why = image_spec(model)
            args, kwargs, dynamic = (torch.rand(2, c, h, w),), None, ({0: batch_dim(), **dims},)
            note = f"factory returned a timm-style model: {why}"
        else:
            raise ZooSpecError(f"{entry.family}:{entry.name} returned {type(result).__name__}; a zoo factory returns "
                               "(model, args), (model, args, kwargs), (model, args, kwargs, dynamic_shapes), an "
                               "exportcore.Case, or a model with timm's pretrained_cfg")
    params = check_budget(entry, count_params(model) if hasattr(model, "parameters") else None, max_params)
    return ZooCase(entry, model, tuple(args), kwargs, dynamic, note, {}, params or 0)


def _factory(module_name: str, attr: str) -> Any:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ZooSpecError(f"zoo spec {module_name}:{attr}: cannot import {module_name!r} ({exc})") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ZooSpecError(f"zoo spec {module_name}:{attr}: {module_name} has no function {attr!r}")
    return factory
