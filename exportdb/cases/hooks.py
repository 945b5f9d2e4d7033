"""Module hooks: forward hooks and pre-hooks on submodules and on the exported module."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="forward_hook_on_submodule",
    tags=("hooks",),
    description="""
    A forward hook registered on a submodule runs during tracing like any other Python
    code called by forward, so its effect (here scaling the output) is in the graph.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)
            self.fc.register_forward_hook(lambda mod, args, out: out * 2)

        def forward(self, x):
            return self.fc(x).relu()

    return M(), (torch.randn(2, 3),)


@case(
    name="forward_pre_hook_on_submodule",
    tags=("hooks",),
    description="""
    A forward pre-hook that rewrites a submodule's inputs is traced along with the call.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)
            self.fc.register_forward_pre_hook(lambda mod, args: (args[0].clamp(-1, 1),))

        def forward(self, x):
            return self.fc(x)

    return M(), (torch.randn(2, 3),)


@case(
    name="forward_hook_on_root",
    tags=("hooks",),
    description="""
    A forward hook on the module being exported itself: export calls the module, so the
    hook runs during tracing and its effect is captured, matching eager's module call.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return x.sin()

    m = M()
    m.register_forward_hook(lambda mod, args, out: out + 1)
    return m, (torch.randn(3),)


@case(
    name="hook_collects_activations",
    tags=("hooks", "torch.mutation", "python.data-structure"),
    description="""
    A hook that appends activations to a Python list (a side effect outside the graph):
    the list fills during tracing, but the exported program does not append anything.
    Return the activations as outputs instead if the caller needs them.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)
            self.seen = []
            self.fc.register_forward_hook(lambda mod, args, out: self.seen.append(out.shape[0]))

        def forward(self, x):
            return self.fc(x)

    return M(), (torch.randn(2, 3),)


@case(
    name="activations_returned_not_hooked",
    tags=("hooks", "pytree"),
    description="""
    The export-friendly alternative to collecting activations with hooks: return them as
    extra outputs (a dict), so the exported program produces them too.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 3)
            self.b = torch.nn.Linear(3, 2)

        def forward(self, x):
            hidden = self.a(x).relu()
            return {"out": self.b(hidden), "hidden": hidden}

    return M(), (torch.randn(2, 3),)


@case(
    name="backward_hook_on_submodule",
    tags=("hooks", "training"),
    description="""
    A module backward (pre-)hook that rescales gradients. Strict export refuses it (module
    backward hooks need compiled autograd); non-strict inference export ignores it, which
    is harmless there; the training export drops it, so the exported module's gradients
    differ from eager. Put the gradient change into the forward computation instead.
    """,
    expect={"strict": Fails("internal"), "training": Fails("numerics", stage="training")},
    rewrite="grad_scale_without_hooks",
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)
            self.fc.register_full_backward_pre_hook(lambda mod, grad_out: (grad_out[0] * 0.5,))

        def forward(self, x):
            return self.fc(x).sum(-1)

    return M(), (torch.randn(2, 3),)


@case(
    name="tensor_grad_hook",
    tags=("hooks", "training"),
    description="""
    `y.register_hook(fn)` on an intermediate tensor inside forward: the eval exports do not
    need gradients and pass; the training export does not keep the hook, so gradients of
    the exported module differ from eager.
    """,
    expect={"training": Fails("numerics", stage="training")},
    rewrite="grad_scale_without_hooks",
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            if y.requires_grad:
                y.register_hook(lambda grad: grad * 0.5)
            return y.sum(-1)

    return M(), (torch.randn(2, 3),)


@case(
    name="grad_scale_without_hooks",
    tags=("hooks", "training"),
    description="""
    Scale a gradient without hooks: `y * 0.5 + (y * 0.5).detach()` has the value of y in
    the forward pass and half its gradient in the backward pass. Plain autograd, so every
    export mode keeps it.
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
            y = y * 0.5 + (y * 0.5).detach()
            return y.sum(-1)

    return M(), (torch.randn(2, 3),)
