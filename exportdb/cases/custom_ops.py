"""Custom operators defined with torch.library and their fake (meta) kernels."""

from __future__ import annotations

from exportdb.registry import Fails, case


def _op(qualname: str, fake: object = None, mutates: tuple = ()) -> object:
    """Define (once per process) a custom op exportdb::<name> that doubles its input."""
    import torch

    if qualname in _DEFINED:  # defining an op twice in one process is an error
        return _DEFINED[qualname]

    # An explicit schema: string annotations (from __future__) defeat schema inference.
    @torch.library.custom_op(qualname, mutates_args=mutates, schema="(Tensor x) -> Tensor")
    def op(x):
        return x * 2

    if fake is not None:
        op.register_fake(fake)
    _DEFINED[qualname] = op
    return op


#: Ops (and Library objects) defined in this process, by qualified name.
_DEFINED: dict[str, object] = {}


@case(
    name="custom_op_with_fake",
    tags=("custom-op", "torch.operator"),
    description="""
    A custom op defined with torch.library.custom_op plus a fake kernel (register_fake)
    that computes the output's shape and dtype without running it. Export sees the op as a
    single node and the fake kernel drives shape propagation.
    """,
)
def _():
    import torch

    from exportdb.cases.custom_ops import _op

    double = _op("exportdb::double_with_fake", fake=lambda x: torch.empty_like(x))

    class M(torch.nn.Module):
        def forward(self, x):
            return double(x) + 1

    return M(), (torch.randn(3, 4),)


@case(
    name="custom_op_missing_fake",
    tags=("custom-op", "torch.operator"),
    description="""
    A custom op without a fake kernel cannot be traced: export runs ops on fake tensors to
    learn output shapes and there is nothing to run. Every mode fails naming the op.
    Register one with @op.register_fake (or torch.library.register_fake).
    """,
    expect=Fails("torch.operator"),
    rewrite="custom_op_with_fake",
)
def _():
    import torch

    from exportdb.cases.custom_ops import _op

    double = _op("exportdb::double_no_fake")

    class M(torch.nn.Module):
        def forward(self, x):
            return double(x) + 1

    return M(), (torch.randn(3, 4),)


@case(
    name="custom_op_wrong_fake_shape",
    tags=("custom-op", "torch.operator"),
    description="""
    A fake kernel that returns the wrong shape (one row too few) is trusted during
    tracing: export succeeds, the graph's output metadata (what AOTInductor and ExecuTorch
    plan buffers from) says 2 rows where the kernel returns 3, and every size derived from
    the op's output is baked in from the lie. pytest-export compares each program's outputs
    with its graph's output metadata and fails the run, naming the node. Make the fake
    kernel compute exactly the real output's shape.
    """,
    expect=Fails("torch.operator", stage="run"),
    rewrite="custom_op_with_fake",
)
def _():
    import torch

    from exportdb.cases.custom_ops import _op

    bad = _op("exportdb::double_bad_fake", fake=lambda x: x.new_empty(x.shape[0] - 1, x.shape[1]))

    class M(torch.nn.Module):
        def forward(self, x):
            y = bad(x)
            return y + 1, torch.ones(y.shape[0])

    return M(), (torch.randn(3, 4),)


@case(
    name="custom_op_mutating_buffer",
    tags=("custom-op", "torch.operator", "torch.mutation"),
    description="""
    A custom op that mutates an argument declares it with mutates_args; export then
    records the buffer mutation like a built-in in-place op.
    """,
)
def _():
    import torch

    qualname = "exportdb::accumulate"
    if qualname not in _DEFINED:

        schema = "(Tensor(a!) acc, Tensor x) -> ()"

        @torch.library.custom_op(qualname, mutates_args=("acc",), schema=schema)
        def accumulate(acc, x):
            acc.add_(x.sum(0))

        @accumulate.register_fake
        def _(acc, x):
            return None

        _DEFINED[qualname] = accumulate
    accumulate = _DEFINED[qualname]

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("acc", torch.zeros(4))

        def forward(self, x):
            accumulate(self.acc, x)
            return x * 2

    return M(), (torch.randn(3, 4),)



@case(
    name="custom_op_data_dependent_output",
    tags=("custom-op", "torch.operator", "data-dependent"),
    description="""
    A custom op whose output size depends on input values (keep the positive entries).
    Its fake kernel asks for a fresh unbacked size with ctx.new_dynamic_size().
    """,
)
def _():
    import torch

    qualname = "exportdb::keep_positive"
    if qualname not in _DEFINED:

        @torch.library.custom_op(qualname, mutates_args=(), schema="(Tensor x) -> Tensor")
        def keep_positive(x):
            return x[x > 0]

        @keep_positive.register_fake
        def _(x):
            n = torch.library.get_ctx().new_dynamic_size()
            return x.new_empty(n)

        _DEFINED[qualname] = keep_positive
    keep_positive = _DEFINED[qualname]

    class M(torch.nn.Module):
        def forward(self, x):
            return keep_positive(x) * 2

    return M(), (torch.randn(6),)


@case(
    name="library_define_without_fake",
    tags=("custom-op", "torch.operator"),
    description="""
    The lower-level torch.library.Library("ns", "FRAGMENT") define + impl route has the
    same requirement: without an impl for the Meta key or register_fake, tracing fails.
    """,
    expect=Fails("torch.operator"),
    rewrite="custom_op_with_fake",
)
def _():
    import torch

    if "lib" not in _DEFINED:
        lib = torch.library.Library("exportdb_lowlevel", "FRAGMENT")
        lib.define("triple(Tensor x) -> Tensor")
        lib.impl("triple", lambda x: x * 3, "CPU")
        _DEFINED["lib"] = lib  # keep a reference: dropping the Library unregisters the op

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.exportdb_lowlevel.triple(x) + 1

    return M(), (torch.randn(3),)

