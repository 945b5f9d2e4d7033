"""Dynamic shape declarations the code contradicts, and the fixes export suggests."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="reshape_specializes_dim",
    tags=("torch.dynamic-shape", "constraint-violation", "specialization"),
    description="""
    `x.reshape(2, 8)` only works when the dimension is 16, so a dynamic dim becomes a
    constant and export fails, suggesting to make it static. Use -1 in reshape to keep
    the size symbolic.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="reshape_with_minus_one",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x.reshape(2, 8).sum(0)

    return M(), (torch.randn(16),), {"x": {0: Dim("n", min=2, max=64)}}


@case(
    name="reshape_with_minus_one",
    tags=("torch.dynamic-shape", "derived-dim"),
    description="""
    reshape(2, -1) keeps the second size symbolic (n // 2); declare the dim as `2 * half`
    so export can prove the reshape is valid for every size.
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


@case(
    name="unrelated_dims_must_be_equal",
    tags=("torch.dynamic-shape", "constraint-violation"),
    description="""
    Two inputs declared with independent Dims are added, which requires them to be equal.
    Export fails and suggests `ny = nx`: use the same Dim for both.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="shared_dim_two_inputs",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    return M(), (torch.randn(4, 3), torch.randn(4, 3)), {
        "x": {0: Dim("nx", min=2, max=32)},
        "y": {0: Dim("ny", min=2, max=32)},
    }


@case(
    name="undeclared_derived_relation",
    tags=("torch.dynamic-shape", "constraint-violation", "derived-dim"),
    description="""
    `y` must be one element shorter than `x`, but both were declared independent. Export
    fails and suggests the derived relation; declare `y` as `n` and `x` as `n + 1`.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="derived_dim_plus_one",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, y):
            return x[1:] + y

    return M(), (torch.randn(5), torch.randn(4)), {
        "x": {0: Dim("nx", min=3, max=32)},
        "y": {0: Dim("ny", min=2, max=31)},
    }


@case(
    name="range_narrowed_by_check",
    tags=("torch.dynamic-shape", "constraint-violation", "torch.escape-hatch"),
    description="""
    The code asserts `x.shape[0] <= 16` with torch._check while the Dim allows up to 64.
    Export fails and suggests narrowing the range; declare max=16.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="range_matches_check",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            torch._check(x.shape[0] <= 16)
            return x * 2

    return M(), (torch.randn(8),), {"x": {0: Dim("n", min=2, max=64)}}


@case(
    name="range_matches_check",
    tags=("torch.dynamic-shape", "torch.escape-hatch"),
    description="""
    The declared range agrees with what the code checks, so export succeeds and the
    exported program rejects sizes above 16.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            torch._check(x.shape[0] <= 16)
            return x * 2

    return M(), (torch.randn(8),), {"x": {0: Dim("n", min=2, max=16)}}


@case(
    name="dynamic_dim_used_as_static_weight_size",
    tags=("torch.dynamic-shape", "constraint-violation", "specialization"),
    description="""
    Declaring the feature dimension of a Linear layer's input dynamic cannot work: the
    weight fixes it. Export reports the dimension was specialized to 4; keep it static.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="dynamic_batch_dim",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)

    return M(), (torch.randn(3, 4),), {"x": {0: Dim("batch", min=2, max=8), 1: Dim("feat", min=2, max=8)}}
