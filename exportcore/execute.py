"""Run a model (eager or exported) the same way on both sides, for inference or training."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["RunResult", "clone_tree", "detach_tree", "tensor_leaves", "run_inference", "run_training"]


@dataclass
class RunResult:
    outputs: Any
    grads: dict[str, Any] | None = None  # parameter name -> grad after backward (training)
    buffers: dict[str, Any] | None = None  # buffer name -> value after the run (training)


def _map(obj: Any, fn: Callable[[Any], Any]) -> Any:
    import torch

    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_map(v, fn) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_map(v, fn) for v in obj)
    if isinstance(obj, dict):
        try:
            out = type(obj)()
        except TypeError:
            out = {}
        for k, v in obj.items():
            out[k] = _map(v, fn)
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: _map(getattr(obj, f.name), fn) for f in dataclasses.fields(obj) if f.init}
        try:
            return dataclasses.replace(obj, **changes)
        except (TypeError, ValueError):
            return obj
    return obj


def clone_tree(obj: Any) -> Any:
    """Return ``obj`` with every tensor replaced by an independent copy (requires_grad kept)."""
    return _map(obj, lambda t: t.detach().clone().requires_grad_(t.requires_grad))


def detach_tree(obj: Any) -> Any:
    """Return ``obj`` with every tensor detached and copied, safe to keep as a reference."""
    return _map(obj, lambda t: t.detach().clone())


def tensor_leaves(obj: Any) -> list[Any]:
    """Return the tensors inside ``obj`` in a stable order."""
    leaves: list[Any] = []
    _map(obj, lambda t: leaves.append(t) or t)
    return leaves


def run_inference(fn: Callable[..., Any], args: tuple, kwargs: dict, *, seed: int) -> RunResult:
    """Call ``fn`` on copies of the inputs under no_grad with a fixed RNG seed."""
    import torch

    args, kwargs = clone_tree((args, kwargs))
    torch.manual_seed(seed)
    with torch.no_grad():
        out = fn(*args, **kwargs)
    return RunResult(outputs=detach_tree(out))


def run_training(module: Any, args: tuple, kwargs: dict, *, seed: int, backward: bool = True) -> RunResult:
    """Forward, then backward of a seeded weighted sum of the float outputs; grads and buffers after."""
    import torch

    args, kwargs = clone_tree((args, kwargs))
    params = dict(module.named_parameters())
    for p in params.values():
        p.grad = None
    torch.manual_seed(seed)
    with torch.enable_grad():
        out = module(*args, **kwargs)
        # A weighted sum (not a plain sum) so gradients also catch permuted or misrouted outputs.
        gen = torch.Generator().manual_seed(seed)
        terms = []
        for t in tensor_leaves(out):
            if t.requires_grad and (t.is_floating_point() or t.is_complex()):
                w = torch.rand(t.shape, generator=gen, dtype=torch.float32).to(device=t.device)
                terms.append((t.real if t.is_complex() else t).float().mul(w).sum())
        if terms and backward:
            torch.stack(terms).sum().backward()
    grads = {n: (None if p.grad is None else p.grad.detach().clone()) for n, p in params.items()} if backward else None
    buffers = {n: b.detach().clone() for n, b in module.named_buffers() if b is not None}
    return RunResult(outputs=detach_tree(out), grads=grads, buffers=buffers)
