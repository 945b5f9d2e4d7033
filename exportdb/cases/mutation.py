"""In-place updates: of buffers, inputs, attributes and views."""

from __future__ import annotations

from exportdb.registry import case


@case(
    name="buffer_counter_mutation",
    tags=("torch.mutation",),
    description="""
    Updating a registered buffer in place (a call counter) is captured: the exported
    program returns the new buffer value and .module() writes it back.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

        def forward(self, x):
            self.calls.add_(1)
            return x * 2

    return M(), (torch.randn(3),)


@case(
    name="input_mutation",
    tags=("torch.mutation",),
    description="""
    Mutating a user input in place (`x.add_(1)`) is captured as an input mutation: the
    exported module updates the caller's tensor just like eager does.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            x.add_(1)
            return x * 2

    return M(), (torch.randn(3),)


@case(
    name="python_attribute_mutation",
    tags=("torch.mutation", "python.object-model"),
    description="""
    Incrementing a plain Python int attribute (`self.steps += 1`) is a side effect outside
    the graph. torch 2.14 exports it with a side-effect warning: the value seen during
    tracing (1) is baked into the program as a constant and the attribute is restored
    afterwards, so the program answers every call as the first. pytest-export reports it as a
    "python_state" finding (eager's second call differs from the program's). Keep state that
    must evolve in a registered buffer instead.
    """,
    findings=("python_state",),
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def forward(self, x):
            self.steps += 1
            return x * self.steps

    return M(), (torch.randn(3),)


@case(
    name="tensor_attribute_assignment",
    tags=("torch.mutation", "python.object-model"),
    description="""
    Assigning a new tensor to a plain attribute in forward (`self.last = x * 2`) is not
    part of the exported program: export warns that such attributes must be registered
    buffers, and the assignment is dropped. Register a buffer and copy_() into it.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.last = torch.zeros(3)

        def forward(self, x):
            self.last = x * 2
            return x + 1

    return M(), (torch.randn(3),)


@case(
    name="buffer_copy_state",
    tags=("torch.mutation",),
    description="""
    Keeping the last input as state: a registered buffer updated with copy_() is a buffer
    mutation export captures and replays.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("last", torch.zeros(3))

        def forward(self, x):
            self.last.copy_(x * 2)
            return x + 1

    return M(), (torch.randn(3),)


@case(
    name="inplace_on_view_of_input",
    tags=("torch.mutation", "aliasing"),
    description="""
    Zeroing a slice of an input through a view (`x[0].zero_()`) mutates the input; export
    functionalizes it and writes the whole input back.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            x[0].zero_()
            return x.sum(0)

    return M(), (torch.randn(3, 4),)


@case(
    name="inplace_on_intermediate",
    tags=("torch.mutation",),
    description="""
    In-place ops on intermediates (`y.relu_()`) are functionalized away; nothing the
    caller sees is mutated.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            y.relu_()
            y[:, 0] = 1.0
            return y

    return M(), (torch.randn(3, 4),)


@case(
    name="output_aliases_input",
    tags=("aliasing",),
    description="""
    Returning an input unchanged, or a view of it, alongside a computed output: the
    exported program returns outputs with the same values (aliasing is not preserved).
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return x, x.view(-1), x.t() * 2

    return M(), (torch.randn(3, 4),)


@case(
    name="outputs_alias_each_other",
    tags=("aliasing",),
    description="""
    Two outputs that are views of the same intermediate export fine; the exported module
    returns equal values.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            y = x + 1
            return y[0], y[1:], y

    return M(), (torch.randn(3, 4),)


@case(
    name="buffer_slice_assignment",
    tags=("torch.mutation",),
    description="""
    Writing into part of a buffer (`self.cache[:2] = x`), as KV caches do, is a buffer
    mutation: captured and replayed by the exported module.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(4, 3))

        def forward(self, x):
            self.cache[:2] = x
            return self.cache.sum(0)

    return M(), (torch.randn(2, 3),)
