"""``timm:GLOB``: ``timm.list_models(GLOB)``, built with ``pretrained=False``; inputs from ``pretrained_cfg``.

Image H/W are dynamic only where timm says the size is not fixed (``fixed_input_size`` false), in the form
the network accepts: a ViT built with ``dynamic_img_size`` in multiples of its patch size, a strided network
in multiples of its total reduction (the stride of its last feature map, ``feature_info``), from two
reductions (or ``min_input_size``) up to the default size. A plain range (``Dim("height", min=80, max=160)``)
makes torch prove each stage's floored size for every height in it, which it cannot: timm's
``test_resnet``, ``test_byobnet`` and ``test_nfnet`` failed at ``constraints`` in every mode that way.
Never below two reductions: torch 2.15 narrows a ViT's one-patch minimum to two, and a last feature map
of one pixel is the size 1 torch specializes. Where that leaves no range (a default size under two
reductions) only the batch is dynamic, and the note says why. A model with no ``feature_info`` keeps a
plain range (from ``min_input_size``, else half the default size).

torch.export exports the multiples (checked with bare ``torch.export`` for those three), but the program's
input check does not test divisibility (torch 2.15 solves ``k`` by truncating: a 97-pixel image runs as
k=3), so the reject check fails such a row at ``guards``, true for that spec. The zoo's plugin then
re-checks it with only the batch dynamic, then static, and the row says which passed (pytest_export.zoo.relax).
"""

from __future__ import annotations

from typing import Any

from exportcore.zoo.building import EXAMPLE_BATCH, batch_dim, check_budget, require, seeded
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
    params = check_budget(entry, None, max_params, lambda: timm.create_model(entry.name, pretrained=False))
    with seeded(entry):
        model = timm.create_model(entry.name, pretrained=False)
        (channels, height, width), dims, note = image_spec(model)
        args = (torch.rand(EXAMPLE_BATCH, channels, height, width),)
    return ZooCase(entry, model, args, None, ({0: batch_dim(), **dims},), f"timm: {note}", {}, params or 0)


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
    reduction = total_reduction(model)
    if reduction:
        return _strided(cfg, (channels, height, width), reduction, size)
    return _plain_range(cfg, (channels, height, width), size)


def _strided(cfg: dict[str, Any], shape: tuple[int, int, int], reduction: int,
             size: str) -> tuple[tuple[int, int, int], dict[int, Any], str]:
    """H/W as multiples of the network's total reduction, from two reductions (or min_input_size) up.

    A strided stem floors each stage's size; a plain range makes torch prove a guard for every size in
    it, which it cannot (``constraints``). In multiples of the reduction each stage's size is exact.
    """
    import torch

    channels, height, width = shape
    least = cfg.get("min_input_size")
    low_h, low_w = (int(least[1]), int(least[2])) if least else (0, 0)
    # ceil: the smallest multiple at or above the declared minimum, and never under two reductions
    k_h, k_w = max(2, -(-low_h // reduction)), max(2, -(-low_w // reduction))
    top_h, top_w = height // reduction, width // reduction
    why = f"feature_info reduction {reduction}" + (", min_input_size" if least else "")
    if top_h < k_h or top_w < k_w:
        return (shape, {}, f"{size}; only the batch is dynamic: the default size holds fewer than "
                f"{max(k_h, k_w)} reductions of {reduction} ({why}), so no H/W multiple of it fits under it")
    dims = {2: reduction * torch.export.Dim("blocks_h", min=k_h, max=top_h),
            3: reduction * torch.export.Dim("blocks_w", min=k_w, max=top_w)}
    example = (channels, top_h * reduction, top_w * reduction)
    moved = "" if example == shape else f", example {example[1]}x{example[2]} (the largest multiple)"
    return example, dims, (f"{size}; H/W dynamic in multiples of the total reduction {reduction} from "
                           f"{k_h * reduction}x{k_w * reduction} to {top_h * reduction}x{top_w * reduction} "
                           f"({why}{moved}, fixed_input_size false)")


def _plain_range(cfg: dict[str, Any], shape: tuple[int, int, int],
                 size: str) -> tuple[tuple[int, int, int], dict[int, Any], str]:
    """H/W as a plain range, for a model that names no reduction (no feature_info)."""
    import torch

    channels, height, width = shape
    least = cfg.get("min_input_size")
    if least:
        low_h, low_w, why = int(least[1]), int(least[2]), "min_input_size"
    else:
        low_h, low_w, why = max(2, height // 2), max(2, width // 2), "half the default size: timm declares no minimum"
    if low_h >= height or low_w >= width:
        return (shape, {}, f"{size}; only the batch is dynamic: H/W from {low_h}x{low_w} ({why}) "
                f"leaves no range up to the default size")
    dims = {2: torch.export.Dim("height", min=low_h, max=height), 3: torch.export.Dim("width", min=low_w, max=width)}
    return shape, dims, f"{size}; H/W dynamic {low_h}..{height} x {low_w}..{width} ({why}, no feature_info " \
        "reduction, fixed_input_size false)"


def total_reduction(model: Any) -> int | None:
    """Return the stride of a timm model's last feature map (``feature_info``), or None where it says none."""
    info = getattr(model, "feature_info", None)
    try:
        reductions = [int(f["reduction"]) for f in info] if isinstance(info, list) else list(info.reduction())
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return max(reductions) if reductions else None
