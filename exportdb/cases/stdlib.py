"""The standard library in forward: math, functools, itertools, operator, collections, enum."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="math_on_dynamic_size",
    tags=("python.standard-library", "torch.dynamic-shape", "specialization"),
    description="""
    math.sqrt of a dynamic size (attention scaling by sqrt(d)). Strict export turns it into
    a symbolic float. Non-strict runs the real math.sqrt, which needs a concrete int, so the
    dimension is specialized and export reports it. Use `d ** -0.5` (or torch.sym_sqrt),
    which stays symbolic in every mode.
    """,
    expect={"non_strict": Fails("torch.dynamic-shape", stage="constraints"),
            "training": Fails("torch.dynamic-shape", stage="constraints")},
    rewrite="power_on_dynamic_size",
)
def _():
    import math

    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, q, k):
            return (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])

    d = Dim("d", min=2, max=64)
    return M(), (torch.randn(3, 8), torch.randn(4, 8)), {"q": {1: d}, "k": {1: d}}


@case(
    name="power_on_dynamic_size",
    tags=("torch.dynamic-shape",),
    description="""
    `q.shape[-1] ** -0.5` on a dynamic size is a symbolic expression in strict and
    non-strict tracing alike: the rewrite of math.sqrt on sizes.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, q, k):
            return (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5

    d = Dim("d", min=2, max=64)
    return M(), (torch.randn(3, 8), torch.randn(4, 8)), {"q": {1: d}, "k": {1: d}}


@case(
    name="functools_reduce_and_partial",
    tags=("python.standard-library", "python.closure"),
    description="""
    functools.reduce over a list of tensors and functools.partial-bound helpers are
    traced like the loops and calls they stand for.
    """,
)
def _():
    import functools

    import torch

    class M(torch.nn.Module):
        def forward(self, xs):
            clip = functools.partial(torch.clamp, min=-1.0, max=1.0)
            return clip(functools.reduce(torch.add, xs))

    return M(), ([torch.randn(3), torch.randn(3), torch.randn(3)],)


@case(
    name="itertools_pairwise_product",
    tags=("python.standard-library", "python.control-flow"),
    description="""
    itertools.combinations over a Python list of feature tensors unrolls into one product
    per pair (a feature-crossing layer).
    """,
)
def _():
    import itertools

    import torch

    class M(torch.nn.Module):
        def forward(self, a, b, c):
            return torch.stack([x * y for x, y in itertools.combinations([a, b, c], 2)])

    return M(), (torch.randn(3), torch.randn(3), torch.randn(3))


@case(
    name="operator_module",
    tags=("python.standard-library",),
    description="""
    operator.mul / operator.getitem used as first-class functions are ordinary calls.
    """,
)
def _():
    import operator

    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            ops = [operator.mul, operator.add]
            y = ops[0](x, 2)
            return operator.getitem(ops[1](y, 1), slice(0, 2))

    return M(), (torch.randn(4),)


@case(
    name="ordered_dict_output",
    tags=("python.standard-library", "pytree"),
    description="""
    collections.OrderedDict outputs keep their type and key order in the exported module.
    """,
)
def _():
    import collections

    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return collections.OrderedDict([("b", x * 2), ("a", x + 1)])

    return M(), (torch.randn(3),)


@case(
    name="enum_config_attribute",
    tags=("python.standard-library", "python.object-model"),
    description="""
    An enum.Enum member stored as configuration selects a branch at trace time.
    """,
)
def _():
    import enum

    import torch

    class Pool(enum.Enum):
        MEAN = "mean"
        MAX = "max"

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = Pool.MAX

        def forward(self, x):
            if self.pool is Pool.MEAN:
                return x.mean(1)
            return x.amax(1)

    return M(), (torch.randn(2, 5),)


@case(
    name="dataclass_config_attribute",
    tags=("python.standard-library", "python.object-model"),
    description="""
    A frozen dataclass holding hyperparameters (not an input) is read as constants.
    """,
)
def _():
    import dataclasses

    import torch

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        heads: int = 2
        scale: float = 0.5

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cfg = Cfg()

        def forward(self, x):
            b, d = x.shape
            return x.view(b, self.cfg.heads, d // self.cfg.heads).sum(1) * self.cfg.scale

    return M(), (torch.randn(3, 4),)
