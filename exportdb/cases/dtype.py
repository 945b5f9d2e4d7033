"""dtypes: promotion, casts, integer math and reduced precision."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="int_float_promotion",
    tags=("dtype",),
    description="""
    Adding an int64 tensor to a float32 tensor promotes to float32; the exported graph
    records the same promotion as eager.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, ids):
            return x + ids

    return M(), (torch.randn(4), torch.arange(4))


@case(
    name="explicit_cast_float64",
    tags=("dtype",),
    description="""
    Computing in float64 for accuracy and casting back (`.double()` ... `.to(x.dtype)`)
    is kept as explicit conversions in the graph.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return x.double().exp().log1p().to(x.dtype)

    return M(), (torch.randn(5),)


@case(
    name="bfloat16_compute",
    tags=("dtype",),
    description="""
    A bfloat16 model exports like a float32 one; numerics are compared with bfloat16
    tolerances.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4).to(torch.bfloat16)

        def forward(self, x):
            return torch.nn.functional.gelu(self.fc(x))

    return M(), (torch.randn(2, 4, dtype=torch.bfloat16),)


@case(
    name="integer_floor_division",
    tags=("dtype",),
    description="""
    Integer tensors and `//` (floor division) keep integer semantics; outputs compare
    exactly.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, ids):
            return ids // 3, ids % 3, (ids * 2).clamp(max=10)

    return M(), (torch.arange(10),)


@case(
    name="bool_mask_arithmetic",
    tags=("dtype",),
    description="""
    Bool masks used in arithmetic (`mask * x`, `mask.sum()`) promote to the other operand's
    dtype or to int64 for sums, as in eager.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            mask = x > 0
            return mask * x, mask.sum(), mask.float().mean()

    return M(), (torch.randn(6),)


@case(
    name="dtype_from_input",
    tags=("dtype",),
    description="""
    Factory calls that take their dtype from an input (`torch.zeros(..., dtype=x.dtype)`)
    are traced with the example input's dtype: the exported program is fixed to it.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return x + torch.ones(x.shape[-1], dtype=x.dtype)

    return M(), (torch.randn(2, 3, dtype=torch.float64),)


@case(
    name="type_as_and_scalar_promotion",
    tags=("dtype", "scalar-args"),
    description="""
    Python scalars do not promote tensors (`x * 2.5` on float16 stays float16); type_as
    casts to another tensor's dtype.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, ref):
            return (x * 2.5).type_as(ref)

    return M(), (torch.randn(3).half(), torch.randn(3))
