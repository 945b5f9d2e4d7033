"""Closures: functions and values captured from enclosing scopes."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="closure_over_tensor",
    tags=("python.closure",),
    description="""
    A forward that uses a tensor captured from the enclosing function (not an attribute):
    the tensor is lifted as a constant of the exported program.
    """,
)
def _():
    import torch

    offset = torch.tensor([1.0, 2.0, 3.0])

    class M(torch.nn.Module):
        def forward(self, x):
            return x + offset

    return M(), (torch.randn(2, 3),)


@case(
    name="closure_over_python_value",
    tags=("python.closure",),
    description="""
    Python values captured by closure (a power, a flag) are read at trace time and baked in.
    """,
)
def _():
    import torch

    power = 3

    class M(torch.nn.Module):
        def forward(self, x):
            return x**power

    return M(), (torch.randn(4),)


@case(
    name="nested_function_in_forward",
    tags=("python.closure",),
    description="""
    Helper functions defined inside forward that close over locals are inlined by the
    tracer.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            def combine(a):
                return a * y + x

            return combine(x.sin()) + combine(x.cos())

    return M(), (torch.randn(3), torch.randn(3))


@case(
    name="lambda_attribute",
    tags=("python.closure", "python.object-model"),
    description="""
    A lambda stored on the module (a configurable activation) is an ordinary call for the
    tracer.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)
            self.act = lambda t: t * torch.sigmoid(1.702 * t)

        def forward(self, x):
            return self.act(self.fc(x))

    return M(), (torch.randn(2, 3),)


@case(
    name="closure_over_submodule",
    tags=("python.closure",),
    description="""
    A function closing over a submodule that is also registered on the model: its
    parameters are found through the module and lifted normally.
    """,
)
def _():
    import torch

    fc = torch.nn.Linear(3, 3)

    def apply_twice(x):
        return fc(fc(x))

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = fc

        def forward(self, x):
            return apply_twice(x)

    return M(), (torch.randn(2, 3),)


@case(
    name="closure_over_mutable_list",
    tags=("python.closure", "python.data-structure", "torch.mutation"),
    description="""
    A closure that appends to a captured Python list: a side effect that happens once at
    trace time and never in the exported program; outputs are unaffected here, so export
    succeeds. Return such values instead of collecting them.
    """,
)
def _():
    import torch

    log = []

    class M(torch.nn.Module):
        def forward(self, x):
            log.append(1)
            return x * 2

    return M(), (torch.randn(3),)
