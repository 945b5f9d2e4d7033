"""The fixed set of small models that benchmarks/overhead.py exports (imports torch)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.export import Dim

CASES = ("mlp", "cnn", "attention", "embedding", "residual", "conv1d")
MIN_BATCH, MAX_BATCH = 2, 16


class SelfAttention(nn.Module):
    """Self-attention with nn.MultiheadAttention."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attn(x, x, x, need_weights=False)[0]


class EmbeddingMean(nn.Module):
    """Token ids -> mean embedding -> linear."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.head = nn.Embedding(50, 16), nn.Linear(16, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids).mean(dim=1))


class Residual(nn.Module):
    """A pre-norm residual block."""

    def __init__(self) -> None:
        super().__init__()
        self.norm, self.lin = nn.LayerNorm(16), nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.lin(self.norm(x)).relu()


def build(name: str) -> tuple[Any, tuple]:
    """Return (model, example args) for one of CASES, with fixed weights."""
    torch.manual_seed(0)
    if name == "mlp":
        return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)), (torch.randn(4, 16),)
    if name == "cnn":
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
        return model, (torch.randn(4, 3, 16, 16),)
    if name == "attention":
        return SelfAttention(), (torch.randn(4, 10, 16),)
    if name == "embedding":
        return EmbeddingMean(), (torch.randint(0, 50, (4, 6)),)
    if name == "residual":
        return Residual(), (torch.randn(4, 16),)
    if name == "conv1d":
        return nn.Sequential(nn.Conv1d(8, 8, 3, padding=1), nn.GELU(), nn.Conv1d(8, 4, 1)), (torch.randn(4, 8, 20),)
    raise ValueError(f"unknown case {name!r}")


def dynamic_shapes() -> tuple:
    """Return the spec every case uses: a dynamic batch on the single input."""
    return ({0: Dim("batch", min=MIN_BATCH, max=MAX_BATCH)},)
