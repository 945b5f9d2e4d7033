"""Forward signatures: keyword-only tensors, defaults, *args, and int/float/bool/str arguments."""

from __future__ import annotations

from exportcore.case import Case
from exportdb.registry import case


@case(
    name="kwargs_only_forward",
    tags=("kwargs", "pytree"),
    description="""
    A forward with keyword-only tensor parameters (`def forward(self, *, x, y)`) exports
    when the inputs are passed as kwargs; dynamic_shapes is keyed by the parameter names.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, *, x, y):
            return x @ y

    n = Dim("n", min=2, max=16)
    kwargs = {"x": torch.randn(4, 3), "y": torch.randn(3, 2)}
    return Case(M(), (), kwargs, dynamic_shapes={"x": {0: n}, "y": None})


@case(
    name="mixed_args_and_kwargs",
    tags=("kwargs",),
    description="""
    Positional inputs plus an optional keyword tensor: passing the keyword argument makes it
    part of the exported signature; the exported module must be called the same way.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, bias=None, *, scale=1.0):
            y = x * scale
            return y if bias is None else y + bias

    return Case(M(), (torch.randn(2, 3),), {"bias": torch.randn(3), "scale": 2.0})


@case(
    name="var_positional_args",
    tags=("kwargs", "pytree"),
    description="""
    `def forward(self, *xs)` with several tensors: each becomes its own input.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, *xs):
            return sum(xs) / len(xs)

    return M(), (torch.randn(3), torch.randn(3), torch.randn(3))


@case(
    name="int_argument_specialized",
    tags=("scalar-args",),
    description="""
    A Python int argument is specialized to its example value: it becomes a constant in the
    graph and the exported program only accepts that value. Pass a 0-d tensor if the value
    must vary, or mark it dynamic with Dim.DYNAMIC in dynamic_shapes.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, k: int):
            return x.roll(k, dims=0) * k

    return M(), (torch.randn(5, 2), 2)


@case(
    name="int_argument_dynamic",
    tags=("scalar-args", "torch.dynamic-value"),
    description="""
    An int argument marked Dim.DYNAMIC in dynamic_shapes stays symbolic: the exported
    program takes any int there.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x, k: int):
            return x * k + 1

    return M(), (torch.randn(3), 3), {"x": None, "k": Dim.DYNAMIC}


@case(
    name="float_argument",
    tags=("scalar-args",),
    description="""
    A float argument (a temperature) is specialized like an int: the exported program
    bakes in the example value.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, logits, temperature: float):
            return (logits / temperature).softmax(-1)

    return M(), (torch.randn(2, 5), 0.7)


@case(
    name="bool_flag_argument",
    tags=("scalar-args", "python.control-flow"),
    description="""
    A bool argument that selects a branch is resolved at trace time; export one program
    per flag value if callers need both.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, normalize: bool):
            if normalize:
                return x / x.norm(dim=-1, keepdim=True)
            return x

    return M(), (torch.randn(3, 4), True)


@case(
    name="str_mode_argument",
    tags=("scalar-args", "python.control-flow"),
    description="""
    A str argument (`reduction="mean"`) is a constant for export: the branch it picks is
    traced, the others vanish.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, reduction: str):
            if reduction == "mean":
                return x.mean()
            if reduction == "sum":
                return x.sum()
            return x

    return M(), (torch.randn(4), "mean")
