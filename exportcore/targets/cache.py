"""A small per-process cache of inference exports, so a target does not repeat its mode's export.

The key is the case's identity (case id, export mode, device) plus a fingerprint of
everything the program depends on: the model's structure and plain attributes, the
values of its parameters and buffers, the example inputs and the dynamic-shape spec.
A fresh model built with other weights, another flag or other inputs misses. On a hit
the program's own graph code and tensors are fingerprinted again, so an entry that a
run or a lowering changed since it was stored is dropped rather than served.

Entries are kept only while a session asked for targets (``enable()``), at most
``_MAX_ENTRIES`` of them: an exported program holds its model's weights.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

__all__ = ["enable", "enabled", "fingerprint", "lookup", "store", "clear"]

_MAX_ENTRIES = 4
_ENTRIES: OrderedDict[tuple, tuple[Any, str]] = OrderedDict()
_ENABLED = [False]
#: Lookups answered and missed in this process (for tests and benchmarks).
stats = {"hits": 0, "misses": 0}


def enable(on: bool = True) -> None:
    """Keep (or stop keeping) inference exports for targets in this process."""
    _ENABLED[0] = on
    if not on:
        _ENTRIES.clear()


def enabled() -> bool:
    """Return whether exports are kept for targets."""
    return _ENABLED[0]


def clear() -> None:
    """Drop every kept export."""
    _ENTRIES.clear()


def fingerprint(model: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> str:
    """Return a digest of what an export of ``model`` on these inputs depends on."""
    import torch

    h = hashlib.blake2b(digest_size=20)
    h.update(f"{type(model).__module__}.{type(model).__qualname__}".encode("utf-8", "surrogatepass"))
    if isinstance(model, torch.nn.Module):
        h.update(repr(model).encode("utf-8", "surrogatepass"))
        for name, sub in model.named_modules():
            h.update(name.encode("utf-8", "surrogatepass") + repr(_plain_attributes(sub)).encode("utf-8", "surrogatepass"))
        _tensors(h, _state(model))
    h.update(repr(dynamic_shapes).encode("utf-8", "surrogatepass"))
    _tree(h, (args, kwargs))
    return h.hexdigest()


def lookup(key: tuple) -> Any:
    """Return the kept export for ``key`` if its state is unchanged since it was stored, else None."""
    entry = _ENTRIES.get(key)
    if entry is not None and _program_state_digest(entry[0]) != entry[1]:
        del _ENTRIES[key]
        entry = None
    if entry is None:
        stats["misses"] += 1
        return None
    stats["hits"] += 1
    _ENTRIES.move_to_end(key)
    return entry[0]


def store(key: tuple, ep: Any) -> None:
    """Keep ``ep`` under ``key`` (when enabled), evicting the oldest entry past the limit."""
    if not _ENABLED[0]:
        return
    _ENTRIES[key] = (ep, _program_state_digest(ep))
    _ENTRIES.move_to_end(key)
    while len(_ENTRIES) > _MAX_ENTRIES:
        _ENTRIES.popitem(last=False)


def _program_state_digest(ep: Any) -> str:
    h = hashlib.blake2b(digest_size=20)
    h.update(ep.graph_module.code.encode("utf-8", "surrogatepass"))  # a lowering that rewrote the graph in place
    _tensors(h, dict(ep.state_dict))
    _tensors(h, {k: v for k, v in ep.constants.items() if hasattr(v, "shape")})
    return h.hexdigest()


def _state(model: Any) -> dict[str, Any]:
    state = dict(model.named_parameters(remove_duplicate=False))
    state.update((k, v) for k, v in model.named_buffers(remove_duplicate=False) if v is not None)
    return state


def _plain_attributes(module: Any) -> list[tuple[str, Any]]:
    # Flags such as `self.use_gelu = True` change the traced program without changing any tensor.
    plain = (bool, int, float, str, type(None))
    out = []
    for name, value in sorted(vars(module).items()):
        if name.startswith("_"):
            continue
        if isinstance(value, plain) or (isinstance(value, (tuple, list)) and all(isinstance(v, plain) for v in value)):
            out.append((name, value))
    return out


def _tensors(h: Any, tensors: dict[str, Any]) -> None:
    for name in sorted(tensors):
        h.update(name.encode("utf-8", "surrogatepass"))
        _tensor(h, tensors[name])


def _tensor(h: Any, t: Any) -> None:
    import torch

    h.update(f"{tuple(t.shape)}{t.dtype}{t.device}{t.requires_grad}".encode("utf-8", "surrogatepass"))
    if t.is_sparse or t.is_meta or not hasattr(t, "untyped_storage"):
        return
    try:
        flat = t.detach().cpu().contiguous().reshape(-1)
        if flat.numel():
            h.update(flat.view(torch.uint8).numpy().tobytes() if flat.dtype != torch.bool else flat.numpy().tobytes())
    except (RuntimeError, TypeError, ValueError):
        # A tensor whose bytes cannot be read here (quantized, a subclass): only this very tensor matches.
        h.update(f"opaque:{id(t)}".encode("utf-8", "surrogatepass"))


def _tree(h: Any, obj: Any) -> None:
    import torch
    from torch.utils._pytree import tree_flatten

    leaves, spec = tree_flatten(obj)
    h.update(str(spec).encode("utf-8", "surrogatepass"))
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            _tensor(h, leaf)
        else:
            h.update(repr(leaf).encode("utf-8", "surrogatepass"))
