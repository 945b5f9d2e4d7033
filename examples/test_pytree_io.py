"""Dict inputs and a dataclass output: nested inputs and outputs are pytrees.

torch.export flattens dicts, lists and tuples by itself; a dataclass must be registered
with ``torch.export.register_dataclass`` (with a stable ``serialized_type_name`` so the
save/load round trip can rebuild it). ``dynamic_shapes`` mirrors the input's structure.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from torch import nn
from torch.export import Dim


@dataclass
class Prediction:
    """What the model returns: per-class logits and one score per row."""

    logits: torch.Tensor
    score: torch.Tensor


torch.export.register_dataclass(Prediction, serialized_type_name="examples.test_pytree_io.Prediction")


class TwoTower(nn.Module):
    """Combine a dense and a sparse-feature tower, both keyed by name in one dict."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Linear(4, 3)
        self.sparse = nn.EmbeddingBag(50, 3, mode="mean")

    def forward(self, features: dict[str, torch.Tensor]) -> Prediction:
        logits = self.dense(features["dense"]) + self.sparse(features["ids"])
        return Prediction(logits=logits, score=logits.sigmoid().sum(dim=-1))


BATCH = Dim("batch", max=32)


@pytest.mark.exportable(
    # One spec per dict entry; both entries share the batch dim, so export ties them.
    dynamic_shapes={"features": {"dense": {0: BATCH}, "ids": {0: BATCH}}},
)
def test_dict_in_dataclass_out():
    """Numerics compare the dataclass field by field."""
    torch.manual_seed(0)
    features = {"dense": torch.randn(4, 4), "ids": torch.randint(0, 50, (4, 6))}
    return TwoTower(), (features,)
