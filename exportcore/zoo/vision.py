"""``torchvision:GLOB``: every family torchvision lists, built with ``weights=None`` (and ``weights_backbone=None``).

Inputs come from the weights' own metadata: the crop size of their transforms, ``min_size``; the batch is
dynamic for every family that takes a batched tensor. A detection model takes a list of images (its
length cannot be a dynamic dim) and needs targets to train, so it runs the inference modes only.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
from typing import Any

from exportcore.zoo.building import EXAMPLE_BATCH, batch_dim, check_budget, require, seeded
from exportcore.zoo.common import ZooCase, ZooEntry, ZooSkip

__all__ = ["GROUPS", "build", "list_entries"]

GROUPS = ("classification", "quantization", "segmentation", "detection", "video", "optical_flow")
#: Fully convolutional segmentation models accept any size (min_size 1x1); their weights' 520 px would
#: make each drawn shape cost seconds, so the example is smaller.
SEGMENTATION_SIZE = 224


def list_entries(pattern: str) -> list[ZooEntry]:
    """Return torchvision's models whose name (or ``group/name``: ``classification/*``) matches ``pattern``."""
    models = require("torchvision.models")
    out = []
    for group in GROUPS:
        module = models if group == "classification" else importlib.import_module(f"torchvision.models.{group}")
        for name in sorted(models.list_models(module=module)):
            if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(f"{group}/{name}", pattern):
                out.append(ZooEntry("torchvision", name, "torchvision", group))
    return out


def build(entry: ZooEntry, max_params: int | None) -> ZooCase:
    """Build a torchvision model with random weights and the inputs its weights' metadata describe."""
    import torch

    models = require("torchvision.models")
    builder = models.get_model_builder(entry.name)
    meta = _weights_meta(models, entry.name)
    kwargs: dict[str, Any] = {"weights": None}
    if "weights_backbone" in inspect.signature(builder).parameters:
        kwargs["weights_backbone"] = None  # else detection/segmentation builders download ImageNet weights
    params = check_budget(entry, meta.get("num_params"), max_params, lambda: builder(**kwargs))
    with seeded(entry):
        model = builder(**kwargs)
        size, why = _size(entry, meta, model)
        batch = batch_dim()
        unsupported: dict[str, str] = {}
        if entry.group == "detection":
            args: tuple = ([torch.rand(3, *size)],)
            dynamic: Any = None
            note = (f"torchvision {entry.group}: one {size[0]}x{size[1]} image ({why}); static: a list of images, "
                    "whose length torch.export cannot make dynamic")
            unsupported["training"] = "a torchvision detection model needs targets in training mode"
        elif entry.group == "optical_flow":
            args = (torch.rand(EXAMPLE_BATCH, 3, *size), torch.rand(EXAMPLE_BATCH, 3, *size))
            dynamic = ({0: batch}, {0: batch})
            note = f"torchvision optical flow: two frames 3x{size[0]}x{size[1]} ({why}); batch dynamic 2..8"
        elif entry.group == "video":
            args = (torch.rand(EXAMPLE_BATCH, 3, 16, *size),)
            dynamic = ({0: batch},)
            note = f"torchvision video: 16 frames of 3x{size[0]}x{size[1]} ({why}); batch dynamic 2..8"
        else:
            args = (torch.rand(EXAMPLE_BATCH, 3, *size),)
            dynamic = ({0: batch},)
            note = (f"torchvision {entry.group}: 3x{size[0]}x{size[1]} ({why}); batch dynamic 2..8; H/W static "
                    "(torchvision declares no input-size range)")
    return ZooCase(entry, model, args, None, dynamic, note, unsupported, params or 0)


def _weights_meta(models: Any, name: str) -> dict[str, Any]:
    try:
        weights = list(models.get_model_weights(name))
    except (ValueError, KeyError):
        return {}
    if not weights:
        return {}
    first = weights[0]
    meta = dict(first.meta)
    keywords = getattr(first.transforms, "keywords", {}) or {}
    meta["crop_size"] = keywords.get("crop_size")
    return meta


def _size(entry: ZooEntry, meta: dict[str, Any], model: Any) -> tuple[tuple[int, int], str]:
    if entry.group == "segmentation":
        return (SEGMENTATION_SIZE, SEGMENTATION_SIZE), f"any size from min_size {meta.get('min_size')}"
    if entry.group == "optical_flow":
        return (128, 128), "min_size 128x128, a multiple of 8"
    if entry.group == "detection":
        return (320, 320), "the model resizes it itself"
    image_size = getattr(model, "image_size", None)  # ViTs are built for one size
    if isinstance(image_size, int):
        return (image_size, image_size), "the model's image_size"
    crop = meta.get("crop_size")
    if isinstance(crop, int):
        return (crop, crop), "the weights' crop size"
    if isinstance(crop, (tuple, list)) and len(crop) == 2:
        return (int(crop[0]), int(crop[1])), "the weights' crop size"
    if crop is None and not meta:
        raise ZooSkip(f"{entry.zoo_id}: torchvision lists no weights for it, so no input size is known")
    return (224, 224), "ImageNet default"
