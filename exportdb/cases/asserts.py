"""assert statements and runtime checks in forward.

PYTEST_DONT_REWRITE: pytest rewrites every module of a plugin's distribution, and a
rewritten ``assert`` is no longer the plain statement dynamo turns into a runtime check.
"""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="assert_on_static_shape",
    tags=("python.assert",),
    description="""
    An assert on a static shape is checked once while tracing and disappears.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            assert x.shape[-1] == 4, "expected 4 features"
            return x * 2

    return M(), (torch.randn(2, 4),)


@case(
    name="size_two_diff_broadcast_guard",
    tags=("torch.dynamic-shape", "specialization", "constraint-violation"),
    description="""
    `x[1:] - x[:-1]` on a dynamic dim t with min=2: at t=2 both slices have size 1, where
    broadcasting rules differ, so the tracer guards `t - 1 != 1` and export reports that
    not every value in the range satisfies it. 0/1 specialization reaches derived sizes
    too. Start the range at 3 (and say so with an assert).
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="assert_on_dynamic_shape",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return x[1:] - x[:-1]

    return M(), (torch.randn(5, 3),), {"x": {0: Dim("t", min=2, max=32)}}


@case(
    name="assert_on_dynamic_shape",
    tags=("python.assert", "torch.dynamic-shape"),
    description="""
    An assert on a dynamic size that the declared range already implies (`>= 3` with
    min=3) adds no constraint; export succeeds and the assert documents the assumption.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            assert x.shape[0] >= 3
            return x[1:] - x[:-1]

    return M(), (torch.randn(5, 3),), {"x": {0: Dim("t", min=3, max=32)}}


@case(
    name="assert_narrows_dynamic_shape",
    tags=("python.assert", "torch.dynamic-shape", "constraint-violation"),
    description="""
    An assert that contradicts part of the declared range (`x.shape[0] <= 8` while the Dim
    allows 32) is a constraint violation; export suggests the narrower range.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="range_matches_check",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            assert x.shape[0] <= 8
            return x * 2

    return M(), (torch.randn(5, 3),), {"x": {0: Dim("t", min=2, max=32)}}


@case(
    name="assert_on_tensor_value",
    tags=("python.assert", "data-dependent"),
    description="""
    `assert (x > 0).all()` reads a tensor value. Strict (dynamo) rewrites the assert into a
    runtime assertion op and exports. Non-strict runs the Python assert, which needs the
    value during tracing: a data-dependent failure. Use torch._check(...) or
    torch._assert_async, which every mode keeps as a runtime check.
    """,
    expect={"non_strict": Fails("data-dependent", stage="capture"),
            "training": Fails("data-dependent", stage="capture")},
    rewrite="torch_assert_async",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            assert (x > 0).all(), "inputs must be positive"
            return x.log()

    return M(), (torch.rand(4) + 0.1,)


@case(
    name="torch_check_on_value",
    tags=("python.assert", "torch.escape-hatch", "data-dependent"),
    description="""
    torch._check on an item() value becomes a runtime assertion in the exported program
    instead of a trace-time branch.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            torch._check(x.min().item() > 0)
            return x.log()

    return M(), (torch.rand(4) + 0.1,)


@case(
    name="torch_assert_async",
    tags=("python.assert", "torch.escape-hatch"),
    description="""
    torch._assert_async(tensor_condition) keeps a value check inside the graph as an op,
    without reading the value during tracing.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            torch._assert_async((x >= 0).all())
            return x.sqrt()

    return M(), (torch.rand(4),)
