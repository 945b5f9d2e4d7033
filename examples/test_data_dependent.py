"""A value read from a tensor (``.item()``) and used in Python: tell the tracer facts with ``torch._check``.

``k = valid.item()`` is an unbacked symbol at trace time: export knows nothing about it.
Using it as a slice bound is fine; *branching* on it (``if k == 0``) is not, unless a
``torch._check`` has already settled the question. The checks become run-time asserts
in the exported program, so an input that breaks them fails loudly instead of silently.
"""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn
from torch.export import Dim
from torch.fx.experimental import symbolic_shapes

# torch 2.6 and 2.7 decide `frames[:k]` size-obliviously, which needs k declared a size; from 2.8
# (where `guard_or_false` replaced that machinery) `torch._check(k >= 1)` is enough, and newer
# releases deprecate `_check_is_size`.
_SIZE_OBLIVIOUS = not hasattr(symbolic_shapes, "guard_or_false")


class ValidFrameMean(nn.Module):
    """Mean of the first ``valid`` frames; zeros when there are none (the eager guard)."""

    def __init__(self, checked: bool) -> None:
        super().__init__()
        self.checked = checked

    def forward(self, frames: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        k = valid.item()
        if self.checked:
            if _SIZE_OBLIVIOUS:
                torch._check_is_size(k)
            torch._check(k >= 1)  # settles `k == 0` below: export keeps only the second branch
            torch._check(k <= frames.shape[0])
        if k == 0:
            return frames.new_zeros(frames.shape[1])
        return frames[:k].mean(dim=0)


def frames_and_count(shapes: dict[str, tuple[int, ...]], rng: random.Random) -> tuple[tuple, dict]:
    """Input factory: for each drawn shape, a valid count that respects the torch._check facts."""
    n, width = shapes["args[0]"]
    return (torch.randn(n, width), torch.tensor(rng.randint(1, n))), {}


@pytest.mark.exportable(dynamic_shapes=({0: Dim("frames", min=1, max=32)}, None), inputs=frames_and_count)
def test_item_with_torch_check():
    """With the two torch._check calls the model exports in every mode."""
    return ValidFrameMean(checked=True), (torch.randn(8, 4), torch.tensor(5))


@pytest.mark.exportable(
    modes=["strict", "non_strict"],
    expect={
        m: {"reason": "branches on k = valid.item(); add torch._check(k >= 1)", "category": "data-dependent"}
        for m in ("strict", "non_strict")
    },
)
def test_item_without_torch_check():
    """Without the checks: a data-dependent guard failure at capture."""
    return ValidFrameMean(checked=False), (torch.randn(8, 4), torch.tensor(5))
