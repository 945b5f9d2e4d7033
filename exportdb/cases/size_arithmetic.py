"""Sizes computed with round(), math.floor(), // and conv/pool output formulas: the guards they make.

Each failing case here is what a failure links to when torch's violated guard has that shape,
so the rewrite shown next to the failure is about the user's own kind of code.
"""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="round_on_size",
    tags=("torch.dynamic-shape", "constraint-violation", "python.builtin"),
    description="""
    `round(x.shape[0] / 2)` splits the input in halves. torch turns the size into a guard
    on `round(n / 2)` that it cannot prove for the declared range (no plain Dim range
    helps), so export fails. When the halves are equal by construction, declare the size
    as `2 * half` and reshape: the size arithmetic disappears.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="halves_by_reshape",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            h = round(x.shape[0] / 2)
            return x[:h] + x[h:]

    return M(), (torch.randn(16),), {"x": {0: Dim("n", min=2, max=64)}}


@case(
    name="floor_on_size",
    tags=("torch.dynamic-shape", "constraint-violation", "python.standard-library"),
    description="""
    `math.floor(x.shape[0] / 2)` (or math.ceil, int()) makes the same unprovable guard as
    round(): export fails whatever the Dim range. Declare the size as `2 * half` and reshape.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="halves_by_reshape",
)
def _():
    import math

    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            h = math.floor(x.shape[0] / 2)
            return x[:h] + x[h:]

    return M(), (torch.randn(16),), {"x": {0: Dim("n", min=2, max=64)}}


@case(
    name="floordiv_on_size",
    tags=("torch.dynamic-shape", "constraint-violation", "derived-dim"),
    description="""
    `x.shape[0] // 2` used as a slice bound: torch cannot prove the guards on `n // 2` for an
    independent Dim and fails. Declare the size as `2 * half` and reshape instead of slicing.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="halves_by_reshape",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            h = x.shape[0] // 2
            return x[:h] + x[h:]

    return M(), (torch.randn(16),), {"x": {0: Dim("n", min=2, max=64)}}


@case(
    name="halves_by_reshape",
    tags=("torch.dynamic-shape", "derived-dim"),
    description="""
    The size is declared as `2 * half`, and `reshape(2, -1).sum(0)` adds the two halves:
    no size is computed in Python, so export needs no guard beyond the declared relation.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x.reshape(2, -1).sum(0)

    # half from 2: torch narrows a root that only drives derived sizes to >= 2, and non_strict's program
    # rejects the size 2 (half=1) eager runs (torch 2.15.0): min=1 would promise what it does not deliver
    return M(), (torch.randn(16),), {"x": {0: 2 * Dim("half", min=2, max=32)}}


def _strided_stack():
    import torch

    # A resnet-like stem: stride-2 conv, stride-2 max pool, stride-2 conv.
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, stride=2, padding=1),
        torch.nn.MaxPool2d(3, stride=2, padding=1),
        torch.nn.Conv2d(4, 4, 3, stride=2, padding=1),
        torch.nn.AdaptiveAvgPool2d(1),
    )


@case(
    name="conv_output_size_guard",
    tags=("torch.dynamic-shape", "constraint-violation"),
    description="""
    Strided convolutions and pooling compute their output size as `1 + (n + 2p - k) // s`;
    torch guards that an output is not 1 wide (or empty), which small inputs break. A Dim
    whose min is below what the stack needs fails with a guard like
    `(1 + ((-1 + h) // 4)) != 1`: raise min to the smallest size that passes it. Strict
    mode exports anyway, and the program rejects the small sizes the Dim promised.
    """,
    expect={
        "strict": Fails("guards", stage="guards", why="strict exports, but its guards reject in-spec sizes"),
        "non_strict": Fails("torch.dynamic-shape", stage="constraints"),
        "training": Fails("torch.dynamic-shape", stage="constraints"),
    },
    rewrite="conv_output_size_min_raised",
)
def _():
    import torch
    from torch.export import Dim

    return _strided_stack(), (torch.randn(1, 3, 32, 32),), {"input": {2: Dim("h", min=4, max=64)}}


@case(
    name="conv_output_size_min_raised",
    tags=("torch.dynamic-shape",),
    description="""
    The same strided stack with the Dim's min raised to the smallest size its output-size
    guards accept: export succeeds and rejects smaller inputs.
    """,
)
def _():
    import torch
    from torch.export import Dim

    return _strided_stack(), (torch.randn(1, 3, 32, 32),), {"input": {2: Dim("h", min=9, max=64)}}
