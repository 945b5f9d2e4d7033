"""Python control flow in forward: what export unrolls, specializes or rejects."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="if_on_static_shape",
    tags=("python.control-flow",),
    description="""
    A Python `if` on a size that is not declared dynamic is evaluated once during tracing:
    the exported graph contains only the branch taken for the example shape. This is fine
    as long as the size really is fixed for every caller.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            if x.shape[1] > 3:
                return x.sin()
            return x.cos()

    return M(), (torch.randn(2, 4),)


@case(
    name="if_on_dynamic_shape",
    tags=("python.control-flow", "torch.dynamic-shape", "constraint-violation"),
    description="""
    A Python `if` on a dimension declared dynamic makes the tracer pick a branch and guard
    on it (`batch > 4`), which contradicts the declared range 2..64. Export reports a
    constraint violation. Either narrow the range to one side of the test, or capture both
    branches with torch.cond on the shape predicate.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="cond_on_dynamic_shape",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            if x.shape[0] > 4:
                return x.sin()
            return x.cos()

    return M(), (torch.randn(8, 3),), {"x": {0: Dim("batch", min=2, max=64)}}


@case(
    name="if_on_tensor_value",
    tags=("python.control-flow", "data-dependent"),
    description="""
    `if x.sum() > 0:` needs the value of a tensor to decide which code to trace, and the
    tracer only has shapes. Every mode fails with a data-dependent error. Capture both
    branches with torch.cond(pred, true_fn, false_fn, operands).
    """,
    expect=Fails("data-dependent", stage="capture"),
    rewrite="cond_on_tensor_value",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x.sin()
            return x.cos()

    return M(), (torch.randn(3, 4),)


@case(
    name="for_loop_static_range",
    tags=("python.control-flow",),
    description="""
    A `for` loop over a Python range with a constant bound is unrolled into the graph.
    The loop disappears; three multiplications remain. Works in every mode.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            for _ in range(3):
                x = x * 2 + 1
            return x

    return M(), (torch.randn(4),)


@case(
    name="for_loop_over_dynamic_dim",
    tags=("python.control-flow", "torch.dynamic-shape", "specialization"),
    description="""
    Looping `for i in range(x.shape[0])` over a dynamic dimension forces the tracer to know
    how many iterations to unroll, so it specializes the dimension to the example size and
    export reports that the declared dynamic dim became a constant. Vectorize the loop
    body over the dimension instead (or use torch.map / scan).
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="loop_vectorized",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            rows = []
            for i in range(x.shape[0]):
                rows.append(x[i] * i)
            return torch.stack(rows)

    return M(), (torch.randn(4, 3),), {"x": {0: Dim("n", min=2, max=32)}}


@case(
    name="loop_vectorized",
    tags=("python.control-flow", "torch.dynamic-shape"),
    description="""
    The rewrite of a Python loop over rows: compute the per-row factor with torch.arange
    and broadcast. One graph, any number of rows.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            idx = torch.arange(x.shape[0], dtype=x.dtype, device=x.device)
            return x * idx.unsqueeze(1)

    return M(), (torch.randn(4, 3),), {"x": {0: Dim("n", min=2, max=32)}}


@case(
    name="while_on_tensor_value",
    tags=("python.control-flow", "data-dependent"),
    description="""
    A Python `while` whose condition reads a tensor value cannot be traced: the number of
    iterations is only known at run time. Use torch's while_loop higher-order op, whose
    condition and body are traced once each.
    """,
    expect=Fails("data-dependent", stage="capture"),
    rewrite="while_loop_counter",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            while x.abs().sum() < 100:
                x = x * 2
            return x

    return M(), (torch.randn(3) + 1,)


@case(
    name="early_return_on_flag_attribute",
    tags=("python.control-flow", "python.object-model"),
    description="""
    Branching on a Python attribute of the module (a config flag) is resolved at trace
    time: the exported program contains the branch the flag selects.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.use_residual = True

        def forward(self, x):
            y = x.relu()
            if self.use_residual:
                return y + x
            return y

    return M(), (torch.randn(2, 5),)
