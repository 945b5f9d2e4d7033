"""Values only known at run time: item(), tolist(), nonzero() and unbacked sizes."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="item_as_size",
    tags=("data-dependent", "torch.dynamic-value"),
    description="""
    `k = n.item()` then `x[:k]` and `torch.ones(k)`: sizes read from a tensor become
    unbacked symbols. torch 2.14 traces slicing and factory calls with them without a
    guard it cannot decide (facts it needs become runtime asserts), so this exports.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            k = n.item()
            return x[:k] * 2 + torch.ones(k).sum()

    return M(), (torch.randn(8), torch.tensor(5))


@case(
    name="item_dependent_split_count",
    tags=("data-dependent", "torch.dynamic-value"),
    description="""
    `x.split(k)` with `k = n.item()` returns a number of chunks that depends on the value
    of k, and a graph cannot have a data-dependent number of outputs. Every mode fails
    with a data-dependent error. Keep the number of pieces fixed and let only their sizes
    depend on data (`x[:k], x[k:]`).
    """,
    # strict wraps the data-dependent guard in a UserError(CONSTRAINT_VIOLATION); it is still data-dependent.
    expect=Fails("data-dependent", stage="capture"),
    rewrite="split_at_item_index",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            return x.split(n.item())[0] * 2

    return M(), (torch.randn(8), torch.tensor(3))


@case(
    name="split_at_item_index",
    tags=("data-dependent", "torch.dynamic-value"),
    description="""
    A fixed number of outputs whose sizes depend on data: split at an item() index with
    two slices. The pieces get unbacked sizes; the graph shape stays fixed.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            k = n.item()
            torch._check(k >= 0)
            torch._check(k <= x.shape[0])
            return x[:k] * 2, x[k:] + 1

    return M(), (torch.randn(8), torch.tensor(3))


@case(
    name="python_loop_over_item_count",
    tags=("data-dependent", "python.control-flow"),
    description="""
    `for i in range(n.item())` needs a concrete iteration count to unroll, which only the
    run-time value of n provides: a data-dependent failure in every mode. Replace the loop
    by a masked, vectorized computation (or while_loop).
    """,
    expect=Fails("data-dependent", stage="capture"),
    rewrite="masked_sum_instead_of_loop",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            total = torch.zeros(())
            for i in range(n.item()):
                total = total + x[i]
            return total

    return M(), (torch.randn(8), torch.tensor(3))


@case(
    name="masked_sum_instead_of_loop",
    tags=("data-dependent", "python.control-flow"),
    description="""
    The vectorized form of a loop over the first n elements: build a mask from arange < n
    and reduce. n stays a tensor; nothing is read during tracing.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            mask = torch.arange(x.shape[0]) < n
            return (x * mask).sum()

    return M(), (torch.randn(8), torch.tensor(3))


@case(
    name="item_with_torch_check",
    tags=("data-dependent", "torch.escape-hatch", "torch.dynamic-value"),
    description="""
    torch._check(k >= 0) and torch._check(k <= x.shape[0]) state facts about an item()
    value used as a size; export records them as runtime asserts, and the tracer can use
    them where it would otherwise need a guard.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, n):
            k = n.item()
            torch._check(k >= 0)
            torch._check(k <= x.shape[0])
            return x[:k] * 2 + torch.ones(k).sum()

    return M(), (torch.randn(8), torch.tensor(5))


@case(
    name="item_float_in_arithmetic",
    tags=("data-dependent", "torch.dynamic-value"),
    description="""
    A float read with item() and used only in arithmetic (not as a size or in a branch)
    becomes a symbolic float in the graph; no guard is needed.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            scale = x.abs().max().item()
            return x / (scale + 1.0)

    return M(), (torch.randn(4, 3),)


@case(
    name="tolist_as_index",
    tags=("data-dependent", "torch.dynamic-value", "python.data-structure"),
    description="""
    tolist() turns a tensor into Python ints whose values are unknown at trace time.
    Slicing with them exports in torch 2.14 (slicing handles unbacked bounds without a
    guard); branching on them would not. Tensor indices (index_select) avoid the question.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, idx):
            i, j = idx.tolist()
            return x[i:j].sum(0)

    return M(), (torch.randn(6, 3), torch.tensor([1, 4]))


@case(
    name="index_select_with_tensor",
    tags=("data-dependent", "torch.operator"),
    description="""
    Keep indices as a tensor: index_select / gather take tensor indices directly, so no
    Python int has to be read from a tensor during tracing.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, idx):
            return x.index_select(0, idx).sum(0)

    return M(), (torch.randn(6, 3), torch.tensor([1, 2, 3]))


@case(
    name="nonzero_output",
    tags=("data-dependent", "torch.dynamic-shape"),
    description="""
    nonzero() returns as many rows as there are non-zero elements: an unbacked output size.
    Returning it (or computing on it elementwise) exports fine.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x > 0)

    return M(), (torch.randn(4, 3),)


@case(
    name="nonzero_count_branch",
    tags=("data-dependent", "python.control-flow"),
    description="""
    Branching in Python on the number of rows nonzero() returned is data-dependent: the
    tracer cannot decide the branch. Use torch.cond on a tensor predicate.
    """,
    expect=Fails("data-dependent", stage="capture"),
    rewrite="cond_on_tensor_value",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            nz = torch.nonzero(x > 0)
            if nz.shape[0] > 3:
                return x * 2
            return x

    return M(), (torch.randn(4, 3),)


@case(
    name="boolean_mask_select",
    tags=("data-dependent", "torch.dynamic-shape"),
    description="""
    Boolean-mask indexing `x[x > 0]` has a data-dependent length; like nonzero it is fine
    as long as later code does not branch on that length.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return x[x > 0] * 2

    return M(), (torch.randn(5, 2),)


@case(
    name="unbacked_reshape",
    tags=("data-dependent", "torch.dynamic-value"),
    description="""
    Reshaping with a size read from a tensor (`x.view(k, -1)`): torch 2.14 defers the
    divisibility question to a runtime assert instead of failing, so this exports. A wrong
    k then fails when the exported program runs, not at export time.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, rows):
            k = rows.item()
            return x.view(k, -1)

    return M(), (torch.randn(12), torch.tensor(3))


@case(
    name="unbacked_reshape_checked",
    tags=("data-dependent", "torch.escape-hatch"),
    description="""
    The rewrite of a reshape with an item() size: state the facts (positive, divides the
    element count) with torch._check, and the reshape exports.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, rows):
            k = rows.item()
            torch._check(k > 0)
            torch._check(x.shape[0] % k == 0)
            return x.view(k, x.shape[0] // k)

    return M(), (torch.randn(12), torch.tensor(3))


@case(
    name="repeat_interleave_tensor_repeats",
    tags=("data-dependent", "torch.operator"),
    description="""
    repeat_interleave with a tensor of repeats produces an output whose length is the sum
    of the repeats: an unbacked size that export handles like nonzero.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, repeats):
            return x.repeat_interleave(repeats, dim=0)

    return M(), (torch.randn(3, 2), torch.tensor([1, 2, 3]))
