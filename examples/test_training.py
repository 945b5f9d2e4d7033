"""Conv + BatchNorm + Dropout checked in ``training`` mode.

In training mode pytest-export exports the training IR and checks what a training
step relies on: outputs, the BatchNorm running statistics the forward updates (buffer
mutations) and the parameter gradients after ``backward()`` all match eager.
Dropout is random: the engine seeds both sides identically, so outputs still compare.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim


class ConvBlock(nn.Module):
    """Conv -> BatchNorm -> ReLU -> Dropout -> pool -> linear head."""

    def __init__(self, classes: int = 5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.Dropout(p=0.25),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.head = nn.Linear(8, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


# BatchNorm in train() needs more than one value per channel: batch >= 2.
@pytest.mark.exportable(modes=["training"], dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
def test_conv_bn_dropout_training():
    """Only training mode: that is where BatchNorm and Dropout behave differently."""
    torch.manual_seed(0)
    return ConvBlock(), (torch.randn(4, 3, 16, 16),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim("batch", max=16)}})
def test_conv_bn_dropout_inference():
    """The same model in eval(): BatchNorm uses running stats and Dropout is the identity."""
    torch.manual_seed(0)
    return ConvBlock(), (torch.randn(4, 3, 16, 16),)
