"""``timm:GLOB``: ``timm.list_models(GLOB)``, built with ``pretrained=False``; inputs from ``pretrained_cfg``.

A model over the parameter budget is built with fewer blocks where its constructor allows it
(exportcore.zoo.timm_shrink), and the row says so.

Image H/W are dynamic only where timm says the size is not fixed: ``fixed_input_size`` false (from
``min_input_size``, or half the default size where none is declared, up to the default size), or a
ViT built with ``dynamic_img_size`` (multiples of its patch size). Never below two reductions (two
patches; twice the stride of the last feature map, from ``feature_info``): torch 2.15 narrows a ViT's
one-patch minimum to two (the one-patch image is then refused, a guards failure of the zoo's own making),
and a last feature map of one pixel is the size 1 torch specializes. Where that leaves no range (a
default size under two reductions) only the batch is dynamic, and the note says why.

Plain ranges for the strided networks, not multiples of the reduction (``32*k``): torch.export exports
the multiples (checked with bare ``torch.export`` for timm's ``test_resnet``, ``test_byobnet``,
``test_nfnet``, ``dla34``), but its ``ep.module()`` does not refuse a non-multiple (torch 2.15's input
check truncates the solved ``k``: a 97-pixel image runs as k=3), so every such model would fail the
reject check on an image one pixel off a multiple, a red cell even for the models whose plain range
exports. A plain range torch cannot prove fails at ``constraints``; the zoo's plugin then re-checks the
row with only the batch dynamic, then static, and the row names the first that passes
(pytest_export.zoo.relax).
"""

from __future__ import annotations

from typing import Any

from exportcore.zoo.building import EXAMPLE_BATCH, batch_dim, check_budget, count_params, require, seeded
from exportcore.zoo.common import ZooCase, ZooEntry

__all__ = ["build", "image_spec", "list_entries"]


def list_entries(pattern: str) -> list[ZooEntry]:
    """Return timm's architectures matching ``pattern``."""
    timm = require("timm")
    return [ZooEntry("timm", name, "timm") for name in sorted(timm.list_models(pattern))]


def build(entry: ZooEntry, max_params: int | None) -> ZooCase:
    """Build a timm model with random weights and the inputs its pretrained_cfg declares."""
    import torch

    timm = require("timm")
    from exportcore.zoo.timm_shrink import fit_budget

    def create(**kwargs: Any) -> Any:
        return timm.create_model(entry.name, pretrained=False, **kwargs)

    shrink, params, shrunk = fit_budget(entry, create, max_params)
    with seeded(entry):
        model = create(**shrink)
        params = check_budget(entry, params if params is not None else count_params(model), max_params)
        (channels, height, width), dims, note = image_spec(model)
        args = (torch.rand(EXAMPLE_BATCH, channels, height, width),)
    note = f"timm: {shrunk}; {note}" if shrunk else f"timm: {note}"
    return ZooCase(entry, model, args, None, ({0: batch_dim(), **dims},), note, {}, params or 0)


def image_spec(model: Any) -> tuple[tuple[int, int, int], dict[int, Any], str]:
    """Return the example image size (C, H, W), the H/W dims and why, from a timm model's metadata."""
    import torch

    cfg = dict(getattr(model, "pretrained_cfg", None) or {})
    channels, height, width = (int(v) for v in cfg.get("input_size", (3, 224, 224)))
    size = f"{channels}x{height}x{width} from pretrained_cfg input_size; batch dynamic 2..8"
    patch = getattr(getattr(model, "patch_embed", None), "patch_size", None)
    if getattr(model, "dynamic_img_size", False) and patch:
        ph, pw = (patch, patch) if isinstance(patch, int) else (int(patch[0]), int(patch[1]))
        if height // ph < 2 or width // pw < 2:
            return ((channels, height, width), {}, f"{size}; only the batch is dynamic: the default size holds "
                    f"fewer than two {ph}x{pw} patches (dynamic_img_size)")
        # From two patches: torch narrows a one-patch minimum to two (the image is not one it keeps).
        h = torch.export.Dim("patches_h", min=2, max=height // ph)
        w = torch.export.Dim("patches_w", min=2, max=width // pw)
        return ((channels, height - height % ph, width - width % pw), {2: ph * h, 3: pw * w},
                f"{size}; H/W dynamic in multiples of the patch size {ph}x{pw} from two patches "
                f"({2 * ph}..{height - height % ph} x {2 * pw}..{width - width % pw}, dynamic_img_size)")
    if cfg.get("fixed_input_size", False):
        return (channels, height, width), {}, f"{size}; H/W static (fixed_input_size)"
    least = cfg.get("min_input_size")
    if least:
        low_h, low_w, why = int(least[1]), int(least[2]), "min_input_size"
    else:
        low_h, low_w, why = max(2, height // 2), max(2, width // 2), "half the default size: timm declares no minimum"
    reduction = total_reduction(model)
    if reduction and (low_h < 2 * reduction or low_w < 2 * reduction):
        low_h, low_w = max(low_h, 2 * reduction), max(low_w, 2 * reduction)
        why += f", at least two reductions of {reduction} (feature_info)"
    if low_h >= height or low_w >= width:
        return ((channels, height, width), {}, f"{size}; only the batch is dynamic: H/W from {low_h}x{low_w} ({why}) "
                f"leaves no range up to the default size")
    dims: dict[int, Any] = {}
    if low_h < height:
        dims[2] = torch.export.Dim("height", min=low_h, max=height)
    if low_w < width:
        dims[3] = torch.export.Dim("width", min=low_w, max=width)
    return (channels, height, width), dims, f"{size}; H/W dynamic {low_h}..{height} x {low_w}..{width} ({why}, " \
        "fixed_input_size false)"


def total_reduction(model: Any) -> int | None:
    """Return the stride of a timm model's last feature map (``feature_info``), or None where it says none."""
    info = getattr(model, "feature_info", None)
    try:
        reductions = [int(f["reduction"]) for f in info] if isinstance(info, list) else list(info.reduction())
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return max(reductions) if reductions else None
