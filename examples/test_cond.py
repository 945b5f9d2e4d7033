"""Data-dependent branching with ``torch.cond``.

``if x.sum() > 0:`` cannot be exported: the tracer does not know which branch to take.
``torch.cond`` records both branches in the graph and picks one at run time; the
drawn examples exercise both, and each must match eager.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim


class SignGate(nn.Module):
    """Apply one of two transforms depending on the sign of the input's sum."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def positive(x: torch.Tensor) -> torch.Tensor:
            return self.lin(x).relu()

        def negative(x: torch.Tensor) -> torch.Tensor:
            return -self.lin(-x)

        # Both branches take the same operands and return the same shapes and dtypes.
        return torch.cond(x.sum() > 0, positive, negative, (x,))


class PythonIf(SignGate):
    """The same model written with a Python ``if``: export cannot choose a branch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return self.lin(x).relu()
        return -self.lin(-x)


@pytest.mark.exportable(dynamic_shapes={"x": {0: Dim("rows", max=16)}})
def test_cond():
    """torch.cond exports in every mode, with a dynamic number of rows."""
    return SignGate(), (torch.randn(4, 8),)


@pytest.mark.exportable(
    modes=["strict", "non_strict"],
    expect={
        "strict": {"reason": "Python if on a tensor value; use torch.cond", "category": "data-dependent"},
        "non_strict": {"reason": "Python if on a tensor value; use torch.cond", "category": "data-dependent"},
    },
)
def test_python_if_is_not_exportable():
    """expect= documents a known failure and pins its category (like xfail(strict=True))."""
    return PythonIf(), (torch.randn(4, 8),)
