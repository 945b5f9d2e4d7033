"""A small transformer encoder over token ids, with dynamic batch *and* sequence length.

Token ids go through ``nn.Embedding``: pytest-export keeps drawn ids inside the range
seen in the example (below the vocabulary size), so resized inputs stay valid.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim

VOCAB, MAX_LEN = 100, 64


class TinyEncoder(nn.Module):
    """Embedding + learned positions + 2 encoder layers + mean-pool classifier."""

    def __init__(self, d_model: int = 32, heads: int = 4, layers: int = 2, classes: int = 3) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.pos = nn.Parameter(torch.randn(MAX_LEN, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=64, dropout=0.0, batch_first=True)
        # The nested-tensor fast path is an eager-only optimisation; export traces the plain path.
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        seq = input_ids.shape[1]
        h = self.embed(input_ids) + self.pos[:seq]  # slicing by a symbolic length is fine
        return self.head(self.encoder(h).mean(dim=1))


BATCH = Dim("batch", min=1, max=16)
# max=MAX_LEN: the positional table has MAX_LEN rows, and export proves seq <= MAX_LEN.
SEQ = Dim("seq", min=2, max=MAX_LEN)


@pytest.mark.exportable(dynamic_shapes={"input_ids": {0: BATCH, 1: SEQ}}, examples=3)
def test_tiny_encoder():
    """Exports in strict, non_strict and training on torch 2.14."""
    torch.manual_seed(0)
    return TinyEncoder(), (torch.randint(0, VOCAB, (2, 10)),)
