"""A timm model over the parameter budget, built again with fewer blocks where its constructor allows it.

timm's entry points pass keyword arguments through to the model class, over their own defaults
(``timm.create_model("vit_large_patch16_224", depth=2)``), so the same architecture code runs with fewer
blocks per stage: ``depth`` (ViT, EVA, DeiT, BEiT, ...), ``depths`` (ConvNeXt, Swin, ...: one block a
stage) or ``layers`` (ResNet: one block a stage). Widths are kept: they fix head counts and divisibility
the code relies on. Every count is taken on the meta device (no memory); a model whose constructor takes
none of these, or that is still over the budget shrunk, is skipped with both counts in the reason.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from exportcore.zoo.building import amount, count_params
from exportcore.zoo.common import ZooEntry, ZooSkip

__all__ = ["fit_budget", "meta_count", "shrink_kwargs"]

#: Blocks a ViT-like model keeps: two, so a block still feeds another.
DEPTH = 2


def meta_count(make: Callable[[], Any]) -> tuple[Any, int] | None:
    """Build on the meta device (no memory, no initialization); return (model, parameters), or None if it cannot."""
    import torch

    try:
        with torch.device("meta"):
            model = make()
    except Exception:  # noqa: BLE001 - a builder that cannot run on meta is counted once built
        return None
    return model, count_params(model)


def fit_budget(entry: ZooEntry, create: Callable[..., Any],
               max_params: int | None) -> tuple[dict[str, Any], int | None, str]:
    """Return (kwargs that fit the budget, the parameter count, a note) for a timm model; ZooSkip if none do.

    ``create(**kwargs)`` builds the model. Within the budget: no kwargs and no note.
    """
    if max_params is None:
        return {}, None, ""
    counted = meta_count(create)
    if counted is None or counted[1] <= max_params:
        return {}, counted[1] if counted else None, ""
    model, params = counted
    over = (f"{entry.zoo_id}: {amount(params)} parameters, over the budget of {amount(max_params)} "
            "(--export-model-max-params)")
    kwargs, what = shrink_kwargs(model)
    if not kwargs:
        raise ZooSkip(f"{over}; {what}")
    shrunk = meta_count(lambda: create(**kwargs))
    if shrunk is None:
        raise ZooSkip(f"{over}; it does not build with {what}")
    if shrunk[1] > max_params:
        raise ZooSkip(f"{over}, and {amount(shrunk[1])} still with {what}")
    return kwargs, shrunk[1], (f"shrunk to fit the parameter budget of {amount(max_params)}: {what}, "
                               f"{amount(params)} -> {amount(shrunk[1])} parameters (widths kept)")


def shrink_kwargs(model: Any) -> tuple[dict[str, Any], str]:
    """Return the constructor kwargs that give ``model`` fewer blocks and what they are, or ({}, why not)."""
    accepted = inspect.signature(type(model).__init__).parameters
    blocks = getattr(model, "blocks", None)
    if "depth" in accepted and hasattr(blocks, "__len__") and len(blocks) > DEPTH:
        return {"depth": DEPTH}, f"depth={DEPTH} (from {len(blocks)} blocks)"
    stages = next((s for s in (getattr(model, "stages", None), getattr(model, "layers", None))
                   if hasattr(s, "__len__") and len(s) > 0), None)
    if "depths" in accepted and stages is not None:
        depths = (1,) * len(stages)
        return {"depths": depths}, f"depths={depths} (one block a stage)"
    layers = [name for name in ("layer1", "layer2", "layer3", "layer4") if hasattr(model, name)]
    if "layers" in accepted and layers:
        return {"layers": [1] * len(layers)}, f"layers={[1] * len(layers)} (one block a stage)"
    return {}, (f"timm's {type(model).__name__} takes no depth, depths or layers to shrink it with, so it is "
                "not checked")

