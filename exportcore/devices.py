"""Devices: run a case with its model and inputs moved to ``cpu`` (default) or ``cuda``.

The model is moved in place for the check and moved back afterwards, so the user's
object ends on the device it started on.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEVICES", "device_facts", "device_unavailable", "model_device", "move_inputs", "move_model"]

DEVICES = ("cpu", "cuda")


def device_unavailable(device: str) -> str | None:
    """Return why ``device`` cannot be used in this process, or None."""
    if device == "cpu":
        return None
    import torch

    if device == "cuda":
        if not torch.cuda.is_available():
            return "device cuda: not available (torch.cuda.is_available() is False: no GPU or no CUDA build)"
        return None
    return f"device {device!r}: unknown (expected one of {', '.join(DEVICES)})"


def device_facts(device: str) -> str:
    """Return what decides results on ``device`` beyond torch's version: for ``cuda``, the GPU and its toolkit.

    A result cache restored on another GPU (a CI pool of mixed cards) must not serve an entry
    whose kernels, numerics or supported dtypes were another card's. The CPU's own facts are
    process-wide (exportcore.reuse.result_cache.environment).
    """
    if device == "cpu":
        return ""
    import torch

    index = torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(index)
    return (f"{torch.cuda.get_device_name(index)} sm_{major}{minor} cuda {torch.version.cuda} "
            f"hip {getattr(torch.version, 'hip', None)}")


def model_device(model: Any) -> Any:
    """Return the device of the model's first parameter or buffer (None for a stateless model)."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return None
    for t in (*model.parameters(), *model.buffers()):
        return t.device
    return None


def move_model(model: Any, device: Any) -> None:
    """Move ``model`` to ``device`` in place (nothing for a stateless or plain callable)."""
    import torch

    if device is not None and isinstance(model, torch.nn.Module):
        model.to(device)


def move_inputs(args: tuple, kwargs: dict, device: str) -> tuple[tuple, dict]:
    """Return (args, kwargs) with every tensor moved to ``device`` (values unchanged)."""
    import torch
    from torch.utils._pytree import tree_map

    def move(x: Any) -> Any:
        return x.to(device) if isinstance(x, torch.Tensor) else x

    return tree_map(move, (tuple(args), dict(kwargs)))
