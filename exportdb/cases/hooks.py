"""Module hooks: forward hooks and pre-hooks on submodules and on the exported module."""

from __future__ import annotations

from exportdb.registry import case


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
