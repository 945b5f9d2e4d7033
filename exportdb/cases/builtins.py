"""Python builtins in forward: len, isinstance, getattr, zip/enumerate, min/max, open."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="len_of_input_list",
    tags=("python.builtin", "pytree"),
    description="""
    len() of a list input is a Python int known at trace time (the pytree structure is
    fixed), so it can drive loops and arithmetic.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, xs):
            return torch.stack(xs).sum(0) / len(xs)

    return M(), ([torch.randn(3), torch.randn(3), torch.randn(3)],)


@case(
    name="isinstance_dispatch",
    tags=("python.builtin", "python.control-flow"),
    description="""
    isinstance() checks on inputs (tensor vs tuple) are resolved at trace time; the
    exported program keeps the branch for the example's type.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            if isinstance(x, (tuple, list)):
                x = torch.cat(list(x), dim=-1)
            return x * 2

    return M(), ((torch.randn(2, 3), torch.randn(2, 2)),)


@case(
    name="getattr_hasattr",
    tags=("python.builtin", "python.object-model"),
    description="""
    getattr with a default and hasattr on the module (optional submodules) run at trace
    time.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(3, 3)

        def forward(self, x):
            if hasattr(self, "norm"):
                x = self.norm(x)
            return getattr(self, "proj", torch.nn.Identity())(x)

    return M(), (torch.randn(2, 3),)


@case(
    name="zip_enumerate_over_layers",
    tags=("python.builtin", "python.control-flow"),
    description="""
    zip() and enumerate() over submodules and Python lists unroll like plain for loops.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(2))
            self.gains = [0.5, 2.0]

        def forward(self, x):
            for i, (layer, gain) in enumerate(zip(self.layers, self.gains)):
                x = layer(x) * gain + i
            return x

    return M(), (torch.randn(2, 3),)


@case(
    name="min_max_of_sizes",
    tags=("python.builtin", "torch.dynamic-shape"),
    description="""
    Python min()/max() over dynamic sizes produce symbolic expressions (Min/Max) instead
    of guards, so the dimensions stay dynamic.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, y):
            n = min(x.shape[0], y.shape[0])
            return x[:n] + y[:n]

    return M(), (torch.randn(5, 2), torch.randn(4, 2)), {
        "x": {0: Dim("nx", min=2, max=16)},
        "y": {0: Dim("ny", min=2, max=16)},
    }


@case(
    name="open_file_in_forward",
    tags=("python.builtin",),
    description="""
    Reading a file in forward (`open(...)`): strict cannot trace the builtin and fails;
    non-strict reads it once at trace time and bakes the content in. Load such data in
    __init__ and keep it as a buffer or constant.
    """,
    expect={"strict": Fails("python.builtin")},
    rewrite="python_constant_attribute",
)
def _():
    import os

    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            with open(os.devnull) as fh:
                extra = len(fh.read())
            return x + extra

    return M(), (torch.randn(3),)


@case(
    name="sorted_and_sum_builtins",
    tags=("python.builtin", "python.data-structure"),
    description="""
    sorted() over dict keys and sum() over a generator of tensors are evaluated by the
    tracer; the order is fixed at trace time.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, feats):
            return sum(feats[k] * (i + 1) for i, k in enumerate(sorted(feats)))

    return M(), ({"b": torch.randn(3), "a": torch.randn(3)},)
