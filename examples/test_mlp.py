"""The smallest useful pattern: a model, example inputs, a dynamic batch.

The test builds the model and its example inputs and *returns* them; pytest-export
runs it once per export mode (strict, non_strict, training) and checks that the
exported program exports, survives decomposition and save/load, and matches eager
for the examples and for hypothesis-drawn batch sizes inside the declared range.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim

import exportcore


class MLP(nn.Module):
    """A two-layer perceptron with an optional feature scale passed as a keyword."""

    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
        if scale is not None:
            x = x * scale
        return self.net(x)


# Dim("batch", max=64) covers 0..64; torch.export treats 0 and 1 specially (see docs/faq.md).
BATCH = Dim("batch", max=64)


@pytest.mark.exportable(dynamic_shapes={"x": {0: BATCH}})
def test_mlp():
    """Return (model, args): the batch dimension of ``x`` is dynamic."""
    return MLP(), (torch.randn(8, 16),)


@pytest.mark.exportable(dynamic_shapes={"x": {0: BATCH}, "scale": {}}, modes=["strict", "non_strict"])
def test_mlp_with_kwargs():
    """Return (model, args, kwargs): a keyword input gets its own (here static) spec."""
    return MLP(), (torch.randn(8, 16),), {"scale": torch.rand(16)}


@pytest.mark.parametrize("hidden", [8, 64])
@pytest.mark.exportable(modes=["non_strict"], examples=3)
def test_mlp_sizes(hidden):
    """Return an exportcore.Case: name it, and keep the shape spec next to the inputs."""
    return exportcore.Case(
        model=MLP(hidden=hidden),
        args=(torch.randn(4, 16),),
        dynamic_shapes=({0: Dim("batch", max=32)},),  # tuple form: one entry per positional input
        name=f"mlp_hidden{hidden}",
    )
