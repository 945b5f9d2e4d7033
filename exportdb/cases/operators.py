"""Operators: indexing, scatter/gather, sorting, einsum, FFT, attention, interpolation."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="gather_scatter",
    tags=("torch.operator",),
    description="""
    gather and scatter_add with index tensors are ordinary ATen ops with shape rules export
    understands.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, idx):
            picked = x.gather(1, idx)
            return torch.zeros_like(x).scatter_add(1, idx, picked)

    return M(), (torch.randn(3, 5), torch.tensor([[0, 1], [2, 3], [4, 0]]))


@case(
    name="topk_and_sort",
    tags=("torch.operator",),
    description="""
    topk and sort return values and int64 indices; both outputs compare exactly for
    distinct inputs.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            values, idx = x.topk(2, dim=-1)
            return values, idx, x.sort(dim=-1).values

    return M(), (torch.randn(3, 6),)


@case(
    name="einsum_contraction",
    tags=("torch.operator",),
    description="""
    torch.einsum is decomposed into matmuls and permutes during export.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, a, b):
            return torch.einsum("bij,bjk->bik", a, b)

    return M(), (torch.randn(2, 3, 4), torch.randn(2, 4, 5))


@case(
    name="advanced_indexing_assignment",
    tags=("torch.operator", "torch.mutation"),
    description="""
    Advanced indexing with a tensor of indices and index_put-style assignment on an
    intermediate.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, idx):
            y = x.clone()
            y[idx] = 0.0
            return y, x[idx]

    return M(), (torch.randn(5, 2), torch.tensor([0, 3]))


@case(
    name="interpolate_resize",
    tags=("torch.operator", "torch.dynamic-shape"),
    description="""
    F.interpolate with a scale factor on dynamic spatial dims: the output size is
    a symbolic expression of the input size.
    """,
)
def _():
    import torch
    import torch.nn.functional as F
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=2.0, mode="nearest")

    return M(), (torch.randn(1, 2, 4, 4),), {"x": {2: Dim("h", min=2, max=32)}}


@case(
    name="fft_real",
    tags=("torch.operator",),
    description="""
    torch.fft.rfft produces complex outputs; taking .abs() returns a real spectrum that
    exports and compares like any float tensor.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x, dim=-1).abs()

    return M(), (torch.randn(2, 8),)


@case(
    name="conv_pool_block",
    tags=("torch.operator", "torch.dynamic-shape"),
    description="""
    Conv2d + max-pool with a dynamic batch: the everyday vision block.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 4, 3, padding=1)

        def forward(self, x):
            return torch.nn.functional.max_pool2d(self.conv(x).relu(), 2)

    return M(), (torch.randn(2, 2, 8, 8),), {"x": {0: Dim("batch", min=2, max=16)}}


@case(
    name="embedding_lookup",
    tags=("torch.operator", "dtype"),
    description="""
    Embedding lookups with int64 token ids; input synthesis for other shapes keeps the
    ids inside the vocabulary.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)

        def forward(self, ids):
            return self.emb(ids).mean(1)

    return M(), (torch.randint(0, 10, (2, 5)),), {"ids": {1: Dim("seq", min=2, max=32)}}


@case(
    name="where_and_masked_fill",
    tags=("torch.operator",),
    description="""
    torch.where and masked_fill replace Python branches on values with elementwise
    selection: the export-friendly way to express per-element conditions.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.where(x > 0, x, x * 0.1)
            return y.masked_fill(x.abs() < 0.05, 0.0)

    return M(), (torch.randn(3, 4),)


@case(
    name="unique_values",
    tags=("torch.operator", "data-dependent"),
    description="""
    torch.unique returns a data-dependent number of values (an unbacked size); export
    handles it like nonzero.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, ids):
            return torch.unique(ids)

    return M(), (torch.tensor([3, 1, 3, 2, 1]),)


@case(
    name="lstm_dynamic_seq_len",
    tags=("torch.operator", "torch.dynamic-shape", "specialization"),
    description="""
    nn.LSTM with a sequence length declared dynamic: the LSTM's decomposition loops over
    time steps in Python, so the length is specialized to the example and export reports
    it in every mode. Export with a fixed (padded) length, or write the recurrence with a
    cell and scan.
    """,
    expect=Fails("torch.dynamic-shape", stage="constraints"),
    rewrite="lstm_fixed_seq_len",
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.LSTM(3, 4, batch_first=True)

        def forward(self, x):
            return self.rnn(x)[0]

    return M(), (torch.randn(2, 5, 3),), {"x": {1: Dim("t", min=2, max=16)}}


@case(
    name="lstm_fixed_seq_len",
    tags=("torch.operator",),
    description="""
    nn.LSTM exported for one (padded) sequence length exports in every mode; the batch
    dimension could still be dynamic.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.LSTM(3, 4, batch_first=True)

        def forward(self, x):
            return self.rnn(x)[0]

    return M(), (torch.randn(2, 5, 3),)


@case(
    name="multihead_attention_dynamic_seq",
    tags=("torch.operator", "torch.dynamic-shape"),
    description="""
    nn.MultiheadAttention with a dynamic sequence length exports in every mode (unlike
    nn.LSTM): attention has no Python loop over time.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    return M(), (torch.randn(2, 5, 8),), {"x": {1: Dim("t", min=2, max=16)}}
