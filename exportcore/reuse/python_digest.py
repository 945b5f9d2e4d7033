"""The Python state a model's code reads besides its tensors, as a digest for the result cache's identity.

The reader (exportcore.sandbox.python_state) describes each value the same way in every process or
not at all; this is the part of the proof it gives: every module's own attributes, by value.
"""

from __future__ import annotations

import hashlib
from typing import Any

from exportcore.sandbox.python_state import Reader

__all__ = ["state_digest"]


def state_digest(model: Any) -> str | None:
    """Return a digest of every module's own attributes (not its parameters, buffers or submodules), or None."""
    import torch

    h = hashlib.blake2b(digest_size=20)
    try:
        read = Reader(torch)
        if isinstance(model, torch.nn.Module):
            modules = list(model.named_modules(remove_duplicate=False))
            for name, module in reversed(modules):  # the first name of a shared module is the one kept
                # A module of the tree that a closure or a hook holds (``self`` in a hook made in
                # __init__) is named by its path: its attributes and tensors are read here once.
                read.done[id(module)] = f"module of the model at {name!r}"
                read.keep.append(module)
            for name, module in modules:
                h.update(f"{name}:{read.module_attributes(module)};".encode("utf-8", "surrogatepass"))
        else:
            h.update(read(model).encode("utf-8", "surrogatepass"))
    except Exception:  # noqa: BLE001 - Unreadable, a nesting too deep, a descriptor that raises: never a failure
        return None
    return h.hexdigest()
