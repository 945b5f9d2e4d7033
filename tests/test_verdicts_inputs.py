"""Verdicts about a case's inputs and the state every program starts from (issue 20).

Each truth is established with bare torch.export in the same test where it matters.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def test_shapes_collection_is_resolved_against_the_users_tensors_before_any_copy():
    # ShapesCollection keys its specs by id(tensor): the copies the engine works on match none of them.
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    batch = Dim("batch", min=2, max=8)
    collection = torch.export.ShapesCollection()
    collection[x] = {0: batch}
    collection[y] = {0: batch}
    bare = torch.export.export(Add(), (x, y), dynamic_shapes=collection)
    assert [str(r) for r in bare.range_constraints.values()] == ["VR[2, 8]"]
    out = exportcore.check(Add(), (x, y), dynamic_shapes=collection, examples=4)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.declared and out.examples.accepted >= 2
    assert list(out.range_constraints.values()) == ["[2, 8]"]
