"""Lists, dicts, tuples and sets built and used inside forward."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="list_comprehension",
    tags=("python.data-structure",),
    description="""
    List comprehensions over a constant range or a list of submodules unroll into graph
    ops.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            parts = [x[:, i] * (i + 1) for i in range(x.shape[1])]
            return torch.stack(parts, dim=1)

    return M(), (torch.randn(2, 3),)


@case(
    name="dict_built_in_forward",
    tags=("python.data-structure",),
    description="""
    A dict of intermediate tensors built and read inside forward is just Python bookkeeping
    for the tracer.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            feats = {"sin": x.sin(), "cos": x.cos()}
            feats["sum"] = feats["sin"] + feats["cos"]
            return feats["sum"] * 2

    return M(), (torch.randn(3),)


@case(
    name="tuple_unpacking_and_star",
    tags=("python.data-structure",),
    description="""
    Tuple unpacking with a starred target (`first, *rest = x.unbind(0)`) on a static dim.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            first, *rest = x.unbind(0)
            return first + torch.stack(rest).sum(0)

    return M(), (torch.randn(4, 3),)


@case(
    name="set_of_python_ints",
    tags=("python.data-structure",),
    description="""
    Sets of Python ints (unique layer indices) work: they never hold tensors.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            keep = {0, 2, 2}
            return sum(x[i] for i in sorted(keep))

    return M(), (torch.randn(3, 2),)


@case(
    name="list_append_pop",
    tags=("python.data-structure", "python.control-flow"),
    description="""
    A Python list used as a stack (append / pop) inside forward, as U-Net skip connections
    are often written.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.down = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))

        def forward(self, x):
            skips = []
            for layer in self.down:
                skips.append(x)
                x = layer(x).relu()
            while skips:
                x = x + skips.pop()
            return x

    return M(), (torch.randn(2, 4),)


@case(
    name="tensor_as_dict_key",
    tags=("python.data-structure", "python.builtin"),
    description="""
    Using tensors as dict keys (hashing by identity) within forward is tracked by dynamo in
    torch 2.14 and plain Python in non-strict; it exports in every mode.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            weights = {x: 2.0, y: 3.0}
            return sum(t * w for t, w in weights.items())

    return M(), (torch.randn(3), torch.randn(3))
