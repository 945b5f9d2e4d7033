"""The contract every target implements: probe, lower, load, and a runner over flat tensors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

__all__ = ["Target", "Runner", "Lowered", "flat_inputs", "flat_tensors"]

#: A loaded artifact: (args, kwargs) -> the program's output tensors, flattened, on the CPU.
Runner = Callable[[tuple, dict], list]


@dataclass
class Lowered:
    """What ``lower`` produced: the artifact's path and facts worth reporting."""

    path: str
    notes: list[str] = field(default_factory=list)


class Target(Protocol):
    """A runtime an exported program is shipped to."""

    name: str
    #: Default (rtol, atol) floor for float outputs: the runtime's kernels differ from eager's.
    tolerance: tuple[float, float]

    def missing(self) -> str | None:
        """Return why the target cannot run here (a package, a compiler), or None."""

    def unsupported_device(self, device: str) -> str | None:
        """Return why the runtime cannot run on ``device`` here (e.g. no CUDA provider), or None."""

    def lower(self, ep: Any, args: tuple, kwargs: dict, workdir: str, options: Mapping[str, Any]) -> Lowered:
        """Lower/compile the exported program into an artifact under ``workdir``."""

    def load(self, lowered: Lowered, ep: Any, options: Mapping[str, Any], device: str) -> Runner:
        """Load the artifact in the target's runtime and return a runner."""

    def rejection(self, exc: BaseException) -> bool:
        """Return True if ``exc`` is the runtime refusing the inputs by its own input check."""


def flat_inputs(ep: Any, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """Return (placeholder name, value) of the user inputs in the exported program's order."""
    import torch.fx._pytree as fx_pytree
    from torch.export._tree_utils import reorder_kwargs

    in_spec = ep.call_spec.in_spec
    if in_spec is not None and kwargs:
        kwargs = reorder_kwargs(kwargs, in_spec)
    flat = fx_pytree.tree_flatten_spec((args, kwargs or {}), in_spec) if in_spec is not None else list(args)
    names = list(ep.graph_signature.user_inputs)
    return list(zip(names, flat))


def flat_tensors(outputs: Any) -> list:
    """Return the tensor leaves of a pytree of outputs, detached and on the CPU."""
    import torch
    from torch.utils._pytree import tree_leaves

    return [t.detach().cpu() for t in tree_leaves(outputs) if isinstance(t, torch.Tensor)]
