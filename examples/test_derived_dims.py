"""Related dimensions: ``y`` always has one more row than ``x`` (derived dims).

``Dim("b")`` names a dimension; ``b + 1`` (or ``2 * b``) derives another from it.
pytest-export draws only shapes that satisfy the relation for the numerics checks,
and checks that shapes *breaking* it (``len(y) != len(x) + 1``) are rejected by the
exported program instead of being computed on.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim


class Increments(nn.Module):
    """Score each row of ``x`` and add the step between consecutive boundaries in ``y``."""

    def __init__(self) -> None:
        super().__init__()
        self.score = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.score(x).squeeze(-1) + (y[1:] - y[:-1])


B = Dim("b", min=2, max=32)


@pytest.mark.exportable(dynamic_shapes={"x": {0: B}, "y": {0: B + 1}})
def test_boundaries():
    """x: [b, 16], y: [b + 1]."""
    return Increments(), (torch.randn(4, 16), torch.randn(5))


@pytest.mark.exportable(dynamic_shapes={"x": {0: B}, "y": {0: 2 * B}}, modes=["non_strict"])
def test_pairs():
    """x: [b, 16], y: [2b]: one pair of values per row."""
    return PairSum(), (torch.randn(4, 16), torch.randn(8))


class PairSum(Increments):
    """Add the sum of each consecutive pair in ``y`` to the row score."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.score(x).squeeze(-1) + y.view(-1, 2).sum(dim=-1)
