"""Tensors and input trees as digests, by value and layout: what the proof (exportcore.reuse) and the
Python-state reader (exportcore.sandbox.python_state) name a tensor by.

A digest is the same in every process for equal values in the same memory layout, and there is none
for a tensor that cannot be read that way (a subclass, a sparse, meta or quantized tensor): whoever
asks then treats the value as not known to be the same, never as equal.
"""

from __future__ import annotations

import ctypes
import hashlib
from typing import Any

__all__ = ["plain_tensor", "feed_tensor", "values_digest"]


def plain_tensor(value: Any, torch: Any) -> bool:
    """Whether ``value`` is a tensor its bytes describe: a strided, non-meta, non-quantized Tensor or Parameter."""
    return (
        isinstance(value, torch.Tensor)
        and type(value) in (torch.Tensor, torch.nn.Parameter)
        and value.layout == torch.strided
        and not value.is_meta
        and not value.is_quantized
    )


def values_digest(tree: Any) -> str | None:
    """Return a digest of an input tree (tensors by value, plain values by repr), or None if it has others."""
    import torch
    from torch.utils._pytree import tree_flatten

    leaves, spec = tree_flatten(tree)
    h = hashlib.blake2b(repr(spec).encode("utf-8", "surrogatepass"), digest_size=20)
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, torch.Tensor):
            if not plain_tensor(leaf, torch):
                return None
            feed_tensor(h, str(i), leaf)
        elif leaf is None or isinstance(leaf, (bool, int, float, str)):
            h.update(f"{i}={leaf!r};".encode("utf-8", "surrogatepass"))
        else:
            return None
    return h.hexdigest()


def feed_tensor(h: Any, name: str, tensor: Any) -> None:
    """Add a plain tensor (plain_tensor) to the hash ``h`` under ``name``: dtype, shape, strides, device, values."""
    t = tensor.detach().contiguous().cpu()
    # The strides too: equal values in another memory layout (channels_last, a transposed view) are
    # not the same input, since drawn shapes are built in the example's stride order.
    h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|{tuple(tensor.stride())}|{tensor.device}|{tensor.requires_grad};"
             .encode("utf-8", "surrogatepass"))
    if t.numel():
        # The raw bytes in place (no copy, no numpy), through SHA-256: with the CPU's SHA instructions
        # (x86 SHA-NI, ARMv8 crypto) it reads about twice as fast as blake2b, and a model's weights
        # are hashed once per (case, mode) and again in every warm session's key.
        h.update(hashlib.sha256((ctypes.c_char * (t.numel() * t.element_size())).from_address(t.data_ptr())).digest())
