"""Higher-order ops: torch map, while_loop and scan, the traceable loops."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="map_over_leading_dim",
    tags=("torch.map", "higher-order"),
    description="""
    torch's map higher-order op applies a function to every slice along the first
    dimension. The body is traced once, so the number of slices can stay dynamic.
    """,
)
def _():
    import torch
    from torch._higher_order_ops.map import map as torch_map
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, xs):
            return torch_map(lambda row: row.sin() + row.sum(), xs)

    return M(), (torch.randn(5, 3),), {"xs": {0: Dim("n", min=2, max=16)}}


@case(
    name="map_with_extra_operand",
    tags=("torch.map", "higher-order"),
    description="""
    Extra positional operands to map are passed unchanged to every call of the body,
    here a bias added to each slice.
    """,
)
def _():
    import torch
    from torch._higher_order_ops.map import map as torch_map

    class M(torch.nn.Module):
        def forward(self, xs, bias):
            return torch_map(lambda row, b: row * 2 + b, xs, bias)

    return M(), (torch.randn(4, 3), torch.randn(3))


@case(
    name="while_loop_counter",
    tags=("higher-order", "python.control-flow", "data-dependent"),
    description="""
    while_loop(cond_fn, body_fn, carried) is the traceable `while`: the condition may read
    tensor values, and the loop runs a data-dependent number of times. Carried values must
    keep their shapes and dtypes across iterations.
    """,
)
def _():
    import torch
    from torch._higher_order_ops.while_loop import while_loop

    class M(torch.nn.Module):
        def forward(self, x):
            def cond_fn(i, t):
                return t.abs().sum() < 100

            def body_fn(i, t):
                return i + 1, t * 2

            return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))

    return M(), (torch.randn(3) + 1,)


@case(
    name="scan_cumulative",
    tags=("higher-order", "python.control-flow"),
    description="""
    scan(combine_fn, init, xs) carries a state through the leading dimension of xs and
    stacks the per-step outputs: a recurrent loop in one traced body.
    """,
)
def _():
    import torch
    from torch._higher_order_ops.scan import scan

    class M(torch.nn.Module):
        def forward(self, xs):
            def step(carry, x):
                new = carry * 0.5 + x
                return new, new.clone()

            return scan(step, torch.zeros_like(xs[0]), xs)

    return M(), (torch.randn(6, 3),)


@case(
    name="rnn_cell_python_loop",
    tags=("python.control-flow", "higher-order"),
    description="""
    A recurrent cell applied in a Python loop over a fixed sequence length is unrolled:
    exportable, but the graph grows with the sequence and the length is fixed.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.GRUCell(3, 4)

        def forward(self, xs):
            h = torch.zeros(xs.shape[1], 4)
            for t in range(xs.shape[0]):
                h = self.cell(xs[t], h)
            return h

    return M(), (torch.randn(3, 2, 3),)
