"""Checking many variants from one ordinary test with the ``export_check`` fixture.

Use the marker for one case per test; use ``export_check`` when cases come from a loop,
a registry or a config file. Each call exports one case in one mode and returns an
``exportcore.Outcome`` (it never raises because export failed: assert on the outcome).
Every call is recorded like a marker test, so it shows up in the reports and the gate.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.export import Dim

# In a real project this might come from a model registry or a YAML file.
VARIANTS = {"tiny": (8, 1), "small": (16, 2), "wide": (32, 1)}


class Stem(nn.Module):
    """A conv stem whose width and depth come from a config."""

    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(3, width, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU()]
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def test_every_variant_exports(export_check):
    """One outcome per variant; the assertion message carries the classified failure."""
    failures = []
    for name, (width, depth) in VARIANTS.items():
        outcome = export_check(
            Stem(width, depth),
            (torch.randn(2, 3, 16, 16),),
            mode="non_strict",
            dynamic_shapes={"x": {0: Dim("batch", max=8)}},
            examples=2,
            case_id=f"stem-{name}",  # the key in reports and in the baseline gate
        )
        if outcome.status != "passed":
            failures.append(f"{name}: {outcome.failure.headline()}")
    assert not failures, "\n".join(failures)
