"""torch.autograd.Function subclasses and gradient plumbing inside forward."""

from __future__ import annotations

from exportdb.registry import Fails, case


def _round_ste() -> type:
    import torch

    class RoundSTE(torch.autograd.Function):
        """Round in forward, pass gradients straight through in backward."""

        @staticmethod
        def forward(ctx, x):
            return x.round()

        @staticmethod
        def backward(ctx, grad):
            return grad

    return RoundSTE


@case(
    name="autograd_function_custom_backward",
    tags=("autograd-function", "training"),
    description="""
    A custom autograd.Function whose backward is not the derivative of its forward (round
    with a straight-through gradient). The eval exports only need the forward and pass.
    The training export traces through the Function into aten ops, so the custom backward
    is lost: gradients of the exported module are the true (zero) gradients of round and
    differ from eager. Express the trick with detach so that plain autograd computes it.
    """,
    expect={"training": Fails("numerics", stage="training")},
    rewrite="straight_through_detach_trick",
)
def _():
    import torch

    RoundSTE = _round_ste()

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            return RoundSTE.apply(self.fc(x) * 4) / 4

    return M(), (torch.randn(2, 3),)


@case(
    name="straight_through_detach_trick",
    tags=("training",),
    description="""
    The straight-through estimator without a custom Function: `y + (y.round() - y).detach()`
    rounds in the forward pass while autograd sees the identity, in eager and in every
    exported program alike.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x) * 4
            return (y + (y.round() - y).detach()) / 4

    return M(), (torch.randn(2, 3),)


@case(
    name="autograd_function_saves_for_backward",
    tags=("autograd-function",),
    description="""
    An autograd.Function whose backward uses tensors saved with ctx.save_for_backward and
    whose gradient is the true gradient (a hand-written SiLU): every mode agrees with eager,
    gradients included.
    """,
)
def _():
    import torch

    class SiLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.sigmoid(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            s = torch.sigmoid(x)
            return grad * (s + x * s * (1 - s))

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            return SiLU.apply(self.fc(x))

    return M(), (torch.randn(2, 3),)


@case(
    name="detach_stops_gradient",
    tags=("training",),
    description="""
    .detach() inside forward (a stop-gradient target) is kept in the training graph:
    gradients stop there in the exported module as in eager.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            return y - y.detach().mean()

    return M(), (torch.randn(4, 3),)


@case(
    name="checkpointed_block",
    tags=("training", "higher-order"),
    description="""
    torch.utils.checkpoint around a block (recompute activations in backward) exports in
    non-strict and training mode. Strict capture fails inside torch (an internal error in
    the checkpoint context), so skip checkpointing while exporting.
    """,
    expect={"strict": Fails("internal")},
    rewrite="checkpoint_skipped_when_exporting",
)
def _():
    import torch
    from torch.utils.checkpoint import checkpoint

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.GELU())

        def forward(self, x):
            return checkpoint(self.block, x, use_reentrant=False).sum(-1)

    return M(), (torch.randn(2, 3),)


@case(
    name="checkpoint_skipped_when_exporting",
    tags=("training", "torch.escape-hatch"),
    description="""
    torch.compiler.is_exporting() is True while export traces, so a model can drop
    activation checkpointing (a memory optimization of eager training) from the exported
    program without changing its outputs.
    """,
)
def _():
    import torch
    from torch.utils.checkpoint import checkpoint

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.GELU())

        def forward(self, x):
            if torch.compiler.is_exporting():
                return self.block(x).sum(-1)
            return checkpoint(self.block, x, use_reentrant=False).sum(-1)

    return M(), (torch.randn(2, 3),)
