"""Check state: ep.module() holds every parameter/buffer of the model, with the same values (findings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Report parameters/buffers of the model missing from, or different in, ep.module()."""
    import torch

    if not isinstance(ctx.model, torch.nn.Module):
        return
    exported = ctx.programs["exported"]
    with ctx.clock.stage("state"):
        mine = dict(ctx.model.named_parameters())
        mine.update({k: v for k, v in ctx.model.named_buffers() if v is not None})
        theirs = dict(exported.named_parameters())
        theirs.update({k: v for k, v in exported.named_buffers() if v is not None})
        missing = sorted(set(mine) - set(theirs))
        counters = [] if ctx.mode.training else _batchnorm_counters(ctx.model, missing)
        if counters:
            # torchvision's resnet18 alone has 20: a finding for each export of every CNN would read
            # as a broken setup, yet an eval-mode BatchNorm never reads or writes the counter (only
            # train() increments it), so no program can behave differently without it.
            missing = [name for name in missing if name not in counters]
            ctx.outcome.notes.append(
                f"ep.module() holds no num_batches_tracked counter of {len(counters)} BatchNorm layer"
                f"{'s' if len(counters) != 1 else ''}: an eval-mode BatchNorm never reads it (only train() "
                "counts batches), so torch.export drops it; harmless for inference, load weights into the "
                "eager model rather than from ep.state_dict() if you need the counters")
        if missing:
            ctx.finding(
                "state_missing",
                f"ep.module() lacks {len(missing)} of the model's parameters/buffers: {', '.join(missing[:8])}"
                + (" ..." if len(missing) > 8 else "")
                + " (torch.export drops state the traced forward never reads)",
            )
        differing = []
        for name in sorted(set(mine) & set(theirs)):
            a, b = mine[name], theirs[name]
            if a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a.detach().cpu(), b.detach().cpu()):
                differing.append(name)
        if differing:
            ctx.finding("state_differs", f"ep.module() state differs from the model's: {', '.join(differing[:8])}")


def _batchnorm_counters(model: object, missing: list[str]) -> list[str]:
    """The missing names that are a BatchNorm layer's ``num_batches_tracked`` counter."""
    import torch

    layers = {name for name, part in model.named_modules()  # type: ignore[attr-defined]
              if isinstance(part, torch.nn.modules.batchnorm._BatchNorm)}
    return [name for name in missing
            if name.rpartition(".")[2] == "num_batches_tracked" and name.rpartition(".")[0] in layers]
