"""Classes and attributes: constants, properties, containers of submodules, helper objects."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="python_constant_attribute",
    tags=("module-attribute", "python.object-model"),
    description="""
    Python numbers stored on the module (a scale, an epsilon) are read at trace time and
    become constants in the graph.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 0.125
            self.eps = 1e-6

        def forward(self, x):
            return x * self.scale / (x.abs().sum() + self.eps)

    return M(), (torch.randn(4),)


@case(
    name="tensor_constant_attribute",
    tags=("module-attribute", "python.object-model"),
    description="""
    A tensor stored as a plain attribute (not a parameter or buffer) is lifted into the
    exported program as a constant; register it as a buffer (persistent=False) to make
    the intent explicit and keep it in the state dict tooling.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.arange(4.0)

        def forward(self, x):
            return x + self.table

    return M(), (torch.randn(3, 4),)


@case(
    name="property_on_module",
    tags=("python.object-model",),
    description="""
    @property accessors on the module run at trace time like any Python code.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 2)

        @property
        def out_features(self):
            return self.fc.out_features

        def forward(self, x):
            return self.fc(x).reshape(-1, self.out_features)

    return M(), (torch.randn(3, 4),)


@case(
    name="module_list_loop",
    tags=("python.object-model", "python.control-flow"),
    description="""
    Iterating an nn.ModuleList is unrolled: every layer becomes part of the graph.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).tanh()
            return x

    return M(), (torch.randn(2, 4),)


@case(
    name="module_dict_by_name",
    tags=("python.object-model", "python.data-structure"),
    description="""
    Selecting a submodule from an nn.ModuleDict with a constant key is resolved at trace
    time.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 3), "reg": torch.nn.Linear(4, 1)})
            self.task = "cls"

        def forward(self, x):
            return self.heads[self.task](x)

    return M(), (torch.randn(2, 4),)


@case(
    name="helper_object_method",
    tags=("python.object-model",),
    description="""
    A plain Python helper object (not a Module) held by the model, whose methods do
    tensor math: its code is traced; its non-tensor state is read as constants.
    """,
)
def _():
    import torch

    class Normalizer:
        def __init__(self, mean, std):
            self.mean, self.std = mean, std

        def __call__(self, x):
            return (x - self.mean) / self.std

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = Normalizer(0.5, 2.0)

        def forward(self, x):
            return self.norm(x).relu()

    return M(), (torch.randn(3),)


@case(
    name="inherited_forward_super",
    tags=("python.object-model",),
    description="""
    A subclass that extends its parent's forward with super().forward(...) exports like a
    single forward.
    """,
)
def _():
    import torch

    class Base(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x)

    class M(Base):
        def forward(self, x):
            return super().forward(x).sigmoid()

    return M(), (torch.randn(2, 3),)


@case(
    name="staticmethod_and_classmethod",
    tags=("python.object-model",),
    description="""
    Static and class methods called from forward are ordinary Python calls for the tracer.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        factor = 3

        @staticmethod
        def act(x):
            return x * torch.sigmoid(x)

        @classmethod
        def scale(cls, x):
            return x * cls.factor

        def forward(self, x):
            return self.scale(self.act(x))

    return M(), (torch.randn(4),)
