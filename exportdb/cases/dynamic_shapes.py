"""Declaring dynamic dimensions: Dim ranges, derived dims, AUTO and 0/1 specialization."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="dynamic_batch_dim",
    tags=("torch.dynamic-shape",),
    description="""
    The common case: `Dim("batch", min=2, max=64)` on dimension 0 of the input. One
    exported program serves every batch size in the range.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x).relu()

    return M(), (torch.randn(8, 4),), {"x": {0: Dim("batch", min=2, max=64)}}


@case(
    name="shared_dim_two_inputs",
    tags=("torch.dynamic-shape",),
    description="""
    Two inputs that must agree on a dimension (they are added) use the same Dim object, so
    export knows they are equal.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    n = Dim("n", min=2, max=32)
    return M(), (torch.randn(4, 3), torch.randn(4, 3)), {"x": {0: n}, "y": {0: n}}


@case(
    name="derived_dim_plus_one",
    tags=("torch.dynamic-shape", "derived-dim"),
    description="""
    When one input is always one longer than another, declare it as a derived dim `n + 1`;
    export then knows the slice `x[1:]` matches `y`.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, y):
            return x[1:] + y

    n = Dim("n", min=2, max=32)
    return M(), (torch.randn(5), torch.randn(4)), {"x": {0: n + 1}, "y": {0: n}}


@case(
    name="derived_dim_times_two",
    tags=("torch.dynamic-shape", "derived-dim"),
    description="""
    A dimension that is always even is declared as `2 * half`; code that splits it in two
    halves then traces without guards.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            a, b = x.chunk(2, dim=0)
            return a * b

    # half from 2: torch narrows a root that only drives derived sizes to >= 2, and every program rejects
    # the size 2 (half=1) eager runs (torch 2.15.0): min=1 would promise what it does not deliver
    half = Dim("half", min=2, max=16)
    return M(), (torch.randn(6, 3),), {"x": {0: 2 * half}}


@case(
    name="dim_auto_specializes_silently",
    tags=("torch.dynamic-shape", "specialization"),
    description="""
    Dim.AUTO lets export decide: a dimension the code fixes (here via reshape to 2x4) is
    specialized to its example value without an error. The exported program then only
    accepts that size; use a named Dim when you need the dimension to stay dynamic.
    pytest-export reports it as a "specialized" finding (an error with
    --export-findings=error).
    """,
    findings=("specialized",),
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x.reshape(2, 4) * 2

    return M(), (torch.randn(8),), {"x": {0: Dim.AUTO}}


@case(
    name="dim_auto_stays_dynamic",
    tags=("torch.dynamic-shape",),
    description="""
    With Dim.AUTO and code that works for any size, the dimension stays dynamic: AUTO only
    specializes what the code forces.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x.softmax(dim=-1) * x.shape[0]

    return M(), (torch.randn(4, 5),), {"x": {0: Dim.AUTO}}


@case(
    name="example_size_one_specializes",
    tags=("torch.dynamic-shape", "specialization", "constraint-violation"),
    description="""
    0/1 specialization: an example input with size 1 on a dimension declared dynamic makes
    export treat the size as the constant 1 (sizes 0 and 1 are special-cased in tracing),
    and it reports that the dynamic dim was specialized. Use an example size of at least 2.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="dynamic_batch_dim",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x * 2

    return M(), (torch.randn(1, 4),), {"x": {0: Dim("batch", min=1, max=64)}}


@case(
    name="tuple_form_dynamic_shapes",
    tags=("torch.dynamic-shape",),
    description="""
    dynamic_shapes may be given positionally as a tuple matching the inputs instead of a
    dict keyed by argument name; None marks an input with only static dims.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, w):
            return x @ w

    return M(), (torch.randn(5, 3), torch.randn(3, 2)), ({0: Dim("rows", min=2, max=32)}, None)


@case(
    name="dim_dynamic_hint",
    tags=("torch.dynamic-shape",),
    description="""
    Dim.DYNAMIC asks for a dynamic dimension without naming it: like a named Dim it is an
    error if the code specializes it; unlike AUTO it never silently becomes static.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x.cumsum(dim=1)

    return M(), (torch.randn(3, 6),), {"x": {1: Dim.DYNAMIC}}


@case(
    name="dynamic_seq_len_attention",
    tags=("torch.dynamic-shape", "torch.operator"),
    description="""
    A dynamic sequence length through scaled_dot_product_attention: batch and sequence
    dimensions both declared dynamic.
    """,
)
def _():
    import torch
    import torch.nn.functional as F
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, q):
            return F.scaled_dot_product_attention(q, q, q, is_causal=True)

    seq = Dim("seq", min=2, max=64)
    return M(), (torch.randn(2, 2, 6, 4),), {"q": {2: seq}}
