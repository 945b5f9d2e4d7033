"""torch.cond: both branches of a data-dependent `if` captured in one graph."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="cond_on_tensor_value",
    tags=("torch.cond", "python.control-flow", "data-dependent"),
    description="""
    torch.cond(pred, true_fn, false_fn, operands) traces both branches and picks one at
    run time, so a branch on a tensor value exports. Both branches must take the same
    operands and return tensors of the same shape and dtype.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    return M(), (torch.randn(3, 4),)


@case(
    name="cond_on_dynamic_shape",
    tags=("torch.cond", "torch.dynamic-shape"),
    description="""
    A predicate on a dynamic size (`x.shape[0] > 4`) passed to torch.cond keeps both
    branches, so the dimension stays dynamic across the whole declared range.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.shape[0] > 4, lambda t: t.sin(), lambda t: t.cos(), (x,))

    return M(), (torch.randn(8, 3),), {"x": {0: Dim("batch", min=2, max=64)}}


@case(
    name="cond_branches_use_parameters",
    tags=("torch.cond", "python.closure"),
    description="""
    Branch functions may close over submodules and parameters of the module; the
    parameters are lifted into the exported program's state.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.b = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.cond(x.mean() > 0, lambda t: self.a(t), lambda t: self.b(t), (x,))

    return M(), (torch.randn(2, 4),)


@case(
    name="cond_nested",
    tags=("torch.cond",),
    description="""
    torch.cond calls nest: a branch may itself contain a torch.cond.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            def inner(t):
                return torch.cond(t.max() > 1, lambda u: u * 2, lambda u: u * 3, (t,))

            return torch.cond(x.sum() > 0, inner, lambda t: t - 1, (x,))

    return M(), (torch.randn(3),)


@case(
    name="cond_multiple_operands_and_outputs",
    tags=("torch.cond", "pytree"),
    description="""
    Operands are a tuple of tensors; branches may return a tuple of tensors as long as
    both branches return the same structure.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            def t(a, b):
                return a + b, a - b

            def f(a, b):
                return a * b, a / (b.abs() + 1)

            return torch.cond(x.sum() > y.sum(), t, f, (x, y))

    return M(), (torch.randn(3), torch.randn(3))


@case(
    name="cond_branch_mutates_operand",
    tags=("torch.cond", "torch.mutation"),
    description="""
    A torch.cond branch that mutates one of its operands in place is rejected: branches
    must be functional. Return the new value instead and assign it outside the cond.
    Not run in training mode: with gradients enabled even eager torch.cond traces its
    branches and rejects the mutation, so the model itself is broken there.
    """,
    expect={"strict": Fails("torch.cond"), "non_strict": Fails("torch.cond")},
    modes=("strict", "non_strict"),
    rewrite="cond_on_tensor_value",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            def t(a):
                a.add_(1)
                return a.sin()

            return torch.cond(x.sum() > 0, t, lambda a: a.cos(), (x.clone(),))

    return M(), (torch.randn(3),)


@case(
    name="cond_branches_different_shapes",
    tags=("torch.cond", "torch.dynamic-shape"),
    description="""
    Branches that return tensors of different sizes: torch.cond gives the output an
    unbacked size, so the result can still be used, with a size only known at run time.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t[:2].sin(), lambda t: t.cos(), (x,))

    return M(), (torch.randn(4, 3),)
