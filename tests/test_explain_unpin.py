"""A verified fix is the least restrictive one that passes: torch's pin is kept only where the model needs it (issue 50, item 16).

torchvision's raft_small runs both images through its encoder as one batch and splits it back; torch's
solver cannot prove the chunk count ``(3*b - 1) // b == 2`` over a declared batch range (it holds for
every b >= 2) and suggests pinning the batch. That pin passes, so it was shown as the verified fix,
while a dynamic batch over the declared range exports and matches eager. CatChunk reproduces that
solver situation at a fraction of RAFT's cost. The truth, in each test: bare torch.export.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore

A, B = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
BATCH = Dim("batch", min=2, max=8)
DECLARED = {"image1": {0: BATCH}, "image2": {0: BATCH}}


class CatChunk(torch.nn.Module):
    """Both images as one batch through a conv, then split back into two (RAFT's feature encoder)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, image1, image2):
        f1, f2 = self.conv(torch.cat([image1, image2], dim=0)).chunk(2, dim=0)
        return (f1 * f2).sum(1)


def _hint(lo: int, hi: int):
    try:
        return Dim.DYNAMIC(min=lo, max=hi)
    except TypeError:
        pytest.skip("this torch's Dim.DYNAMIC takes no bounds")


def test_a_pin_torchs_solver_asks_for_gives_way_to_the_declared_range_when_that_passes():
    torch.manual_seed(0)
    model = CatChunk()
    with pytest.raises(torch._dynamo.exc.UserError, match="Suggested fixes") as bare:  # the truth: torch pins
        torch.export.export(model, (A, B), dynamic_shapes=DECLARED)
    assert "batch = 4" in str(bare.value)
    hinted = {"image1": {0: _hint(2, 8)}, "image2": {0: _hint(2, 8)}}
    ep = torch.export.export(model, (A, B), dynamic_shapes=hinted)  # and yet the range exports
    x, y = torch.randn(6, 3, 8, 8), torch.randn(6, 3, 8, 8)
    assert torch.allclose(ep.module()(x, y), model(x, y), atol=1e-6)  # and matches eager inside it
    out = exportcore.check(model, (A, B), dynamic_shapes=DECLARED, mode="non_strict")
    assert (out.status, out.failure.stage) == ("failed", "constraints")
    fix = out.explanation.fix
    assert fix.status == "verified", fix
    assert "static" not in " ".join(fix.changes), fix.changes
    assert fix.changes == ["dynamic_shapes['image1'][0]: batch [2, 8] -> Dim.DYNAMIC(min=2, max=8)",
                           "dynamic_shapes['image2'][0]: batch [2, 8] -> Dim.DYNAMIC(min=2, max=8)"]
    assert "torch's solver could not prove a guard there" in fix.origin
    again = exportcore.check(model, (A, B), dynamic_shapes=hinted, mode="non_strict")  # the fix, checked in full
    assert again.status == "passed", again.failure and again.failure.headline()


class NeedsEight(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], 2, 4) * 2  # the second dim really must be 8


def test_a_pin_the_model_really_needs_stays_the_fix():
    spec = {"x": {0: Dim("batch", min=2, max=8), 1: Dim("seq", min=2, max=64)}}
    _hint(2, 64)
    with pytest.raises(Exception):  # the truth: a dynamic seq cannot export
        torch.export.export(NeedsEight(), (torch.randn(4, 8),),
                            dynamic_shapes={"x": {0: Dim("batch", min=2, max=8), 1: _hint(2, 64)}})
    out = exportcore.check(NeedsEight(), (torch.randn(4, 8),), dynamic_shapes=spec, mode="non_strict")
    fix = out.explanation.fix
    assert fix.status == "verified" and fix.changes == ["dynamic_shapes['x'][1]: seq [2, 64] -> static 8"], fix
    assert fix.exports == 2  # the pin, then the range given back, which failed
