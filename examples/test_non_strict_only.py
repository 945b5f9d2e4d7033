"""A model that exports only non-strict: Python that TorchDynamo cannot trace.

Strict mode captures forward with TorchDynamo, which refuses C functions it does not
know, such as ``time.perf_counter``. Non-strict mode runs forward as ordinary Python
with fake tensors, so the timing code just runs and leaves no trace in the graph.
``expect=`` records the strict failure with its reason and category: if a torch
upgrade makes strict export work, the test reports XPASS and fails, so you notice.
"""

from __future__ import annotations

import time

import pytest
import torch
from torch import nn
from torch.export import Dim


class TimedBlock(nn.Module):
    """A block that records how long its forward took (instrumentation many codebases have)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.last_latency_s = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        start = time.perf_counter()
        y = self.lin(x).tanh()
        self.last_latency_s = time.perf_counter() - start
        return y


@pytest.mark.exportable(
    dynamic_shapes={"x": {0: Dim("batch", max=32)}},
    expect={
        "strict": {
            "reason": "TorchDynamo cannot trace time.perf_counter (a C builtin)",
            "category": "python.standard-library",
        }
    },
)
def test_timed_block():
    """Passes non_strict and training; fails strict as expected."""
    return TimedBlock(), (torch.randn(4, 8),)
