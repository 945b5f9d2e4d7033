"""Escapes from tracing: .data, id(), numpy, print, and the hints that help the tracer.

PYTEST_DONT_REWRITE: a forward here uses ``assert``; keep it the plain statement torch sees.
"""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="data_attribute_assignment",
    tags=("torch.mutation", "torch.escape-hatch"),
    description="""
    Assigning through `.data` (`self.state.data = x * 2`) swaps a buffer's storage behind
    autograd and functionalization. Results differ by mode in torch 2.14: strict captures
    a set_ that run_decompositions() then rejects; training and non-strict export drop the
    update, so the buffer no longer matches eager after the call (the outputs alone agree:
    only comparing buffers shows it). Update the buffer with copy_() (under
    torch.no_grad() if it needs no gradient) instead.
    """,
    expect={"strict": Fails("decomposition", stage="decompose"), "non_strict": Fails("numerics", stage="numerics"),
            "training": Fails("numerics", stage="training")},
    rewrite="buffer_copy_state",
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("state", torch.zeros(3))

        def forward(self, x):
            self.state.data = x * 2
            return x + 1

    return M(), (torch.randn(3),)


@case(
    name="id_builtin",
    tags=("python.builtin",),
    description="""
    id() of a tensor, used as a dict key within forward: torch 2.14's dynamo models object
    identity for the tensors it tracks, and non-strict runs the Python as is, so this
    exports in every mode. Identity checks that reach the storage (data_ptr) still fail.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            cache = {id(x): x * 2}
            return cache[id(x)] + y

    return M(), (torch.randn(3), torch.randn(3))


@case(
    name="tensor_identity_via_data_ptr",
    tags=("python.builtin", "torch.escape-hatch"),
    description="""
    Testing whether two inputs share memory with data_ptr() (an id()-style identity check)
    has no meaning for traced tensors: strict reports an unsupported data pointer
    comparison, non-strict cannot read the pointer of a fake tensor. Pass an explicit flag,
    or keep the value you need in a local variable.
    """,
    # Non-strict's "Cannot access data pointer" is worded like an opaque custom kernel's: torch.operator.
    expect={"strict": Fails("python.builtin"), "non_strict": Fails("torch.operator"),
            "training": Fails("torch.operator")},
    rewrite="explicit_flag_instead_of_id",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            if x.data_ptr() == y.data_ptr():
                return x * 2
            return x + y

    return M(), (torch.randn(3), torch.randn(3))


@case(
    name="hash_of_tensor",
    tags=("python.builtin",),
    description="""
    hash() of a tensor (its identity hash) used as a number: strict cannot turn it into a
    graph value and fails; non-strict evaluates it once at trace time and bakes it in.
    """,
    expect={"strict": Fails("internal")},  # as classified today; python.builtin would be better
    rewrite="explicit_flag_instead_of_id",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            bucket = hash(x) % 1  # always 0: keeps eager deterministic
            return x * (bucket + 1) + y

    return M(), (torch.randn(3), torch.randn(3))


@case(
    name="explicit_flag_instead_of_id",
    tags=("python.builtin", "scalar-args"),
    description="""
    Instead of identity tricks with id(), keep intermediate results in local variables or
    pass an explicit flag: plain data flow that every mode traces.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, y):
            doubled = x * 2
            return doubled + y

    return M(), (torch.randn(3), torch.randn(3))


@case(
    name="numpy_roundtrip",
    tags=("torch.escape-hatch", "python.standard-library"),
    description="""
    Converting to numpy and back in forward (`torch.from_numpy(x.numpy() ...)`) leaves the
    tensor world: non-strict tracing calls .numpy() on a fake tensor and fails; strict
    (dynamo) traces numpy calls as torch ops. Write the computation with torch ops.
    """,
    expect={"non_strict": Fails("torch.escape-hatch"), "training": Fails("torch.escape-hatch")},
    rewrite="torch_ops_instead_of_numpy",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            import numpy as np

            return torch.from_numpy(np.tanh(x.numpy()) * 2)

    return M(), (torch.randn(3),)


@case(
    name="torch_ops_instead_of_numpy",
    tags=("torch.escape-hatch",),
    description="""
    The torch version of a numpy computation: same math, traceable in every mode.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.tanh(x) * 2

    return M(), (torch.randn(3),)


@case(
    name="print_in_forward",
    tags=("python.builtin",),
    description="""
    print() in forward runs at trace time (non-strict) or is dropped as a side effect
    (strict); it never reaches the exported program. Export succeeds.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            print("shape", x.shape)
            return x * 2

    return M(), (torch.randn(3),)


@case(
    name="is_exporting_branch",
    tags=("torch.escape-hatch", "python.control-flow"),
    description="""
    torch.compiler.is_exporting() lets a model take an export-friendly path (skip a debug
    check, a Python-side cache) while tracing, and its eager path otherwise.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            if not torch.compiler.is_exporting():
                assert torch.isfinite(x).all(), "non-finite input"
            return x.exp()

    return M(), (torch.randn(3),)


@case(
    name="check_is_size_hint",
    tags=("torch.escape-hatch", "data-dependent"),
    description="""
    torch._check_is_size(k) marks an item() value as a size (k >= 0) before it is used to
    build a tensor; the check becomes a runtime assert in the exported program. It still
    exports in torch 2.14 but warns that it will be removed (FutureWarning): write
    torch._check(k >= 0) instead, as item_with_torch_check does.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            k = n.item()
            torch._check_is_size(k)
            torch._check(k <= 16)
            return torch.zeros(k) + x.sum()

    return M(), (torch.randn(3), torch.tensor(4))


@case(
    name="dynamo_disable_in_strict",
    tags=("torch.escape-hatch",),
    description="""
    A function decorated with torch._dynamo.disable opts out of dynamo, so strict export
    cannot capture it and fails. Non-strict ignores the decorator and traces the code.
    Remove the decorator on code that must export.
    """,
    expect={"strict": Fails("torch.escape-hatch")},
    rewrite="torch_ops_instead_of_numpy",
)
def _():
    import torch

    @torch._dynamo.disable
    def helper(x):
        return torch.tanh(x) * 2

    class M(torch.nn.Module):
        def forward(self, x):
            return helper(x)

    return M(), (torch.randn(3),)
