"""Undo the global module hooks a failed ``torch.export.export`` leaves registered (torch 2.6).

Non-strict export registers a global buffer-registration hook whose closure holds the model
and removes it only on success in torch 2.6: every failing case would keep its model alive
(and every later ``register_buffer`` would call the stale hook). Detected by the registry
attribute, not the version; on releases that clean up after themselves this removes nothing.
Upstream: pytorch/pytorch#172213 (the hook left behind by a failed export), fixed by
pytorch/pytorch#184956 (removal in a ``finally``).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

__all__ = ["no_leaked_hooks"]

_REGISTRIES = ("_global_buffer_registration_hooks", "_global_module_registration_hooks",
               "_global_parameter_registration_hooks")


@contextmanager
def no_leaked_hooks() -> Iterator[None]:
    """Remove, on exit, global nn.Module registration hooks added inside the block."""
    from torch.nn.modules import module

    registries = [r for r in (getattr(module, name, None) for name in _REGISTRIES) if isinstance(r, dict)]
    before = [set(r) for r in registries]
    try:
        yield
    finally:
        for registry, keys in zip(registries, before):
            for key in [k for k in registry if k not in keys]:
                registry.pop(key, None)
