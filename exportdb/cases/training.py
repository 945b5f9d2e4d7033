"""train() behaviour: BatchNorm statistics, Dropout, gradients and the training flag."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="batchnorm_running_stats",
    tags=("training", "torch.mutation"),
    description="""
    BatchNorm in train() normalizes with batch statistics and updates running_mean /
    running_var buffers; in eval() it uses the stored statistics. The training export
    captures the buffer updates, the eval exports do not mutate anything.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)
            self.bn = torch.nn.BatchNorm1d(3)

        def forward(self, x):
            return self.bn(self.fc(x))

    return M(), (torch.randn(6, 4),)


@case(
    name="batchnorm_dynamic_batch",
    tags=("training", "torch.dynamic-shape"),
    description="""
    BatchNorm with a dynamic batch size: the statistics reduce over the symbolic batch
    dimension; the unbiased variance uses n / (n - 1), so batch 1 is excluded (min=2).
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = torch.nn.BatchNorm1d(3)

        def forward(self, x):
            return self.bn(x).relu()

    return M(), (torch.randn(6, 3),), {"x": {0: Dim("batch", min=2, max=32)}}


@case(
    name="dropout_train_and_eval",
    tags=("training",),
    description="""
    Dropout(p=0.5): in eval() it is the identity and vanishes from the graph; in train() the
    training export keeps a random-mask op. pytest-export runs eager and the exported
    module from the same RNG state, so the masks, outputs and gradients agree.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.drop = torch.nn.Dropout(p=0.5)

        def forward(self, x):
            return self.drop(self.fc(x))

    return M(), (torch.randn(3, 4),)


@case(
    name="training_flag_branch",
    tags=("training", "python.control-flow"),
    description="""
    `if self.training:` is a Python bool read at trace time: the eval exports take one
    branch and the training export the other. Each exported program is fixed to its mode.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            if self.training:
                return x * 0.5
            return x

    return M(), (torch.randn(3),)


@case(
    name="no_grad_region",
    tags=("training", "python.context-manager"),
    description="""
    A torch.no_grad() block inside forward: in the training export it becomes a
    grad-disabled region, so gradients do not flow through it, as in eager.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 3)
            self.b = torch.nn.Linear(3, 3)

        def forward(self, x):
            with torch.no_grad():
                frozen = self.a(x)
            return self.b(x) + frozen

    return M(), (torch.randn(2, 3),)


@case(
    name="ema_buffer_update",
    tags=("training", "torch.mutation"),
    description="""
    An exponential moving average kept in a buffer and updated only in training
    (`if self.training: self.ema.mul_(0.9).add_(...)`), as feature normalizers do.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("ema", torch.zeros(3))

        def forward(self, x):
            if self.training:
                with torch.no_grad():
                    self.ema.mul_(0.9).add_(0.1 * x.mean(0))
            return x - self.ema

    return M(), (torch.randn(4, 3),)


@case(
    name="frozen_submodule",
    tags=("training",),
    description="""
    A submodule whose parameters have requires_grad=False (a frozen backbone) next to a
    trainable head: the training export keeps which parameters need gradients.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = torch.nn.Linear(4, 4).requires_grad_(False)
            self.head = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.backbone(x).relu())

    return M(), (torch.randn(3, 4),)
