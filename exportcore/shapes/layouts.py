"""Rebuild a tensor of another shape in the example's layout: sparse, quantized, strided in the example's order.

A probe is only worth its verdict if its input has the shape asked for: an example handed back
unchanged (a sparse tensor "that cannot be regrown") turns an out-of-spec probe into an in-spec
one and blames a correct program. What cannot be rebuilt raises :class:`SynthesisError`, and the
caller skips that probe with a note.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["SynthesisError", "in_layout_of"]

#: values(reference, shape, generator) -> a dense tensor of ``shape`` in the reference's value domain
Values = Callable[[Any, tuple, Any], Any]


class SynthesisError(ValueError):
    """An input that cannot be built at a drawn shape in its example's layout: that probe is skipped."""


def in_layout_of(leaf: Any, shape: tuple[int, ...], gen: Any, values: Values) -> Any:
    """Return a new tensor of ``shape`` on the CPU, laid out like ``leaf`` (dense values from ``values``)."""
    import torch

    if leaf.is_quantized:
        return _quantized(leaf, shape, gen, values)
    if leaf.layout in _SPARSE_LAYOUTS():
        return _sparse(leaf, shape, gen, values)
    if leaf.layout != torch.strided:
        raise SynthesisError(f"a {leaf.layout} input cannot be rebuilt at another shape")
    return _strided_like(leaf, values(leaf.detach().cpu(), shape, gen))


def _SPARSE_LAYOUTS() -> tuple[Any, ...]:  # noqa: N802 - a constant that needs torch
    import torch

    return (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc)


def _strided_like(leaf: Any, new: Any) -> Any:
    """Lay ``new`` out in ``leaf``'s stride order (channels_last, a transposed input), not row-major."""
    if leaf.dim() < 2 or leaf.is_contiguous() or any(s == 0 for s in leaf.stride()):
        return new
    order = sorted(range(leaf.dim()), key=lambda d: (-leaf.stride(d), d))
    inverse = sorted(range(leaf.dim()), key=lambda d: order[d])
    return new.permute(order).contiguous().permute(inverse)


def _sparse(leaf: Any, shape: tuple[int, ...], gen: Any, values: Values) -> Any:
    import torch

    ref = leaf.detach().cpu()
    stored = (ref.coalesce() if ref.layout == torch.sparse_coo else ref).values()
    density = stored.numel() / ref.numel() if ref.numel() else 0.0
    dense = values(stored.reshape(-1), shape, gen)
    dense = dense * (torch.rand(shape, generator=gen) < density).to(dense.dtype)
    blocksize = None
    if ref.layout in (torch.sparse_bsr, torch.sparse_bsc):
        batch = ref.dim() - 2 - ref.dense_dim()
        blocksize = tuple(stored.shape[batch + 1:batch + 3])
    try:
        return dense.to_sparse(layout=ref.layout, blocksize=blocksize, dense_dim=ref.dense_dim() or None)
    except (RuntimeError, ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SynthesisError(f"a {ref.layout} input cannot take this shape ({first})") from None


def _quantized(leaf: Any, shape: tuple[int, ...], gen: Any, values: Values) -> Any:
    import torch

    ref = leaf.detach().cpu()
    new = values(ref.dequantize(), shape, gen)
    scheme = ref.qscheme()
    if scheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return torch.quantize_per_tensor(new, ref.q_scale(), ref.q_zero_point(), ref.dtype)
    if scheme in (torch.per_channel_affine, torch.per_channel_symmetric):
        axis = ref.q_per_channel_axis()
        if shape[axis] != ref.shape[axis]:
            raise SynthesisError(f"a per-channel quantized input cannot change the size of its channel axis {axis}")
        return torch.quantize_per_channel(new, ref.q_per_channel_scales(), ref.q_per_channel_zero_points(), axis,
                                          ref.dtype)
    raise SynthesisError(f"a quantized input with qscheme {scheme} cannot be rebuilt at another shape")
