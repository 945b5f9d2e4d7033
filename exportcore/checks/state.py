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
