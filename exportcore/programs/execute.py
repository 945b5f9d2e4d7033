"""Run a model (eager or exported) the same way on both sides, for inference or training."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["RunResult", "clone_tree", "detach_tree", "tensor_leaves", "seed_rng", "run_inference", "run_training"]


@dataclass
class RunResult:
    outputs: Any
    grads: dict[str, Any] | None = None  # parameter name (every alias) -> grad of its storage (training)
    buffers: dict[str, Any] | None = None  # buffer name -> value after the run (program outputs too)
    tied: dict[str, tuple[str, ...]] | None = None  # parameter name -> all names sharing its storage
    float64: Any = None  # eager's run in float64 (a RunResult), False when impossible; made on demand
    full32: Any = None  # eager's run with float32 at full precision (TF32 off), likewise; made on demand


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
    """Return ``obj`` with every tensor replaced by a copy (requires_grad kept), aliasing kept among the copies.

    ``export(model, (t, t))`` bakes the aliasing of its inputs into the program (an in-place write
    to one is seen through the other): copies that no longer alias would export, and run, another
    program. The same tensor twice gets one copy; views of one storage become views of one copy.
    """
    import torch

    from exportcore.sandbox.nesting import room_to_walk

    with room_to_walk(obj):  # a walk of a few frames a level: never what fails where torch still runs
        return _clone(torch, obj)


def _clone(torch: Any, obj: Any) -> Any:
    shared = _shared_storages(tensor_leaves(obj))
    memo: dict[int, Any] = {}

    def copy(t: Any) -> Any:
        if id(t) not in memo:
            storage = shared.get(_storage_ptr(t))
            if storage is None:
                new = t.detach().clone()
            else:
                new = torch.empty(0, dtype=t.dtype, device=t.device).set_(
                    storage, t.storage_offset(), t.size(), t.stride())
            memo[id(t)] = new.requires_grad_(t.requires_grad)
        return memo[id(t)]

    return _map(obj, copy)


def _storage_ptr(t: Any) -> int | None:
    try:
        storage = t.untyped_storage()
        return storage.data_ptr() if storage.nbytes() else None
    except Exception:  # noqa: BLE001 - sparse, quantized, subclasses: no plain storage to share
        return None


def _shared_storages(tensors: list[Any]) -> dict[int, Any]:
    """Return storage pointer -> one fresh copy of that storage, for storages two distinct tensors view."""
    viewers: dict[int, set[int]] = {}
    first: dict[int, Any] = {}
    for t in tensors:
        ptr = _storage_ptr(t)
        if ptr is not None and (t.layout == _strided() and not t.is_quantized):
            viewers.setdefault(ptr, set()).add(id(t))
            first.setdefault(ptr, t)
    return {ptr: first[ptr].untyped_storage().clone() for ptr, ids in viewers.items() if len(ids) > 1}


def _strided() -> Any:
    import torch

    return torch.strided


def detach_tree(obj: Any) -> Any:
    """Return ``obj`` with every tensor detached and copied, safe to keep as a reference."""
    return _map(obj, lambda t: t.detach().clone())


def tensor_leaves(obj: Any) -> list[Any]:
    """Return the tensors inside ``obj`` in a stable order."""
    leaves: list[Any] = []
    _map(obj, lambda t: leaves.append(t) or t)
    return leaves


def seed_rng(seed: int) -> None:
    """Seed torch's random numbers for one run, as ``torch.manual_seed`` does."""
    import torch

    backend = torch._C._get_privateuse1_backend_name()
    if _cpu_only(backend, hasattr(torch, backend)):
        torch.random.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


@functools.cache
def _cpu_only(backend: str, backend_module: bool) -> bool:
    # torch.manual_seed also queues the seed for each accelerator not started yet, and formats the
    # caller's stack for each queued call (torch.cuda._lazy_call): about 1 ms under pytest's and
    # hypothesis's hundred frames, once per eager or program run of a check. A process with no
    # accelerator, no MPS build and no custom device backend never starts one: the CPU generator is
    # the only one a run can draw from, so seeding it alone is the same seeding. Keyed by the
    # custom backend's name and whether torch has its module, so a backend registered later (by a
    # plugin a later fixture imports) is seeded from then on. Anything unexpected: torch's way.
    import torch

    if backend != "privateuseone" or backend_module or getattr(torch._C, "_has_mps", False):
        return False
    try:
        if torch.cuda.is_available():  # first: it honours PYTORCH_NVML_BASED_CUDA_CHECK
            return False
        accelerator = getattr(torch, "accelerator", None)
        return accelerator is not None and not accelerator.is_available()
    except Exception:  # noqa: BLE001 - a backend half set up: leave the seeding to torch.manual_seed
        return False


def run_inference(fn: Callable[..., Any], args: tuple, kwargs: dict, *, seed: int) -> RunResult:
    """Call ``fn`` on copies of the inputs under no_grad with a fixed RNG seed; buffers after the call too."""
    import torch

    args, kwargs = clone_tree((args, kwargs))
    seed_rng(seed)
    with torch.no_grad():
        out = fn(*args, **kwargs)
    return RunResult(outputs=detach_tree(out), buffers=_buffers(fn))


def _buffers(fn: Any) -> dict[str, Any] | None:
    # A buffer written in forward (a KV cache, a step counter) is an output of the program too.
    import torch

    if not isinstance(fn, torch.nn.Module):
        return None
    return {n: b.detach().clone() for n, b in fn.named_buffers() if b is not None}


def _storage_key(t: Any) -> tuple:
    try:
        ptr = t.untyped_storage().data_ptr()
    except Exception:  # a tensor without storage (meta, some subclasses): its own identity
        return (id(t),)
    return (ptr, t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)


def _grads_per_storage(module: Any) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """Return name -> grad summed over every Parameter object viewing that storage, and the alias groups.

    A tied weight (GPT-2's wte/lm_head) is one Parameter in eager but may be two Parameter
    objects sharing one storage after torch.export.load: the gradient lands on either; the
    storage's gradient is the sum over its objects, and that is what an optimizer step sees.
    """
    groups: dict[tuple, list[tuple[str, Any]]] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        groups.setdefault(_storage_key(p), []).append((name, p))
    grads: dict[str, Any] = {}
    tied: dict[str, tuple[str, ...]] = {}
    for members in groups.values():
        seen: set[int] = set()
        total = None
        for _, p in members:
            if id(p) in seen or p.grad is None:
                continue
            seen.add(id(p))
            g = p.grad.detach()
            # A lone grad is kept as is: the next run sets .grad to None first, so autograd gives it a
            # new tensor and this one is never written again (a clone of resnet18's grads is 45 MB a run).
            total = g if total is None else total + g
        names = tuple(sorted(n for n, _ in members))
        for name, _ in members:
            grads[name] = total
            tied[name] = names
    return grads, tied


def run_training(module: Any, args: tuple, kwargs: dict, *, seed: int, backward: bool = True) -> RunResult:
    """Forward, then backward of a seeded weighted sum of the float outputs; grads and buffers after."""
    import torch

    args, kwargs = clone_tree((args, kwargs))
    for p in module.parameters():
        p.grad = None
    seed_rng(seed)
    with torch.enable_grad():
        out = module(*args, **kwargs)
        # A weighted sum (not a plain sum) so gradients also catch permuted or misrouted outputs.
        gen = torch.Generator().manual_seed(seed)
        terms = []
        for t in tensor_leaves(out):
            if t.requires_grad and (t.is_floating_point() or t.is_complex()):
                w = torch.rand(t.shape, generator=gen, dtype=torch.float32).to(device=t.device)
                x = t.real if t.is_complex() else t
                # float64 stays float64 (the float64 reference run); everything else sums in float32.
                x = x if x.dtype == torch.float64 else x.float()
                terms.append(x.mul(w.to(x.dtype)).sum())
        if terms and backward:
            sum(terms[1:], terms[0]).backward()
    grads, tied = _grads_per_storage(module) if backward else (None, None)
    return RunResult(outputs=detach_tree(out), grads=grads, buffers=_buffers(module), tied=tied)
