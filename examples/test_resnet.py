"""A torchvision CNN with a dynamic batch: the shape of a real vision export check.

Random weights (``weights=None``) keep the test offline; the export behaviour does not
depend on the values. A small image and few drawn examples keep it fast on a CPU.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

torchvision = pytest.importorskip("torchvision", reason="pip install -e '.[examples]'")


@pytest.mark.exportable(dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}}, examples=2)
def test_resnet18():
    """resnet18 at 64x64: every mode, including training (BatchNorm running stats and gradients)."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10)
    return model, (torch.randn(2, 3, 64, 64),)
