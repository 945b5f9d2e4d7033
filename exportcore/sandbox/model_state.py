"""The user's model as a case found it: training flags, parameter/buffer values, grads, plain attributes, generators.

Every side of every comparison starts from this snapshot (a counter or a KV cache written by
one run must not feed the next), and the model is handed back in it after the case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from exportcore.sandbox.held_generators import held_generators

__all__ = ["ModelState"]

_UNSET = object()
_CONTAINERS = (list, dict, set)


def _contents(value: Any) -> Any:
    """A shallow copy of a list, dict or set a module attribute holds (what a forward may append to)."""
    return list(value) if type(value) is list else dict(value) if type(value) is dict else set(value)


def _unchanged(value: Any, saved: Any) -> bool:
    """Whether a container still holds the very objects it held when saved (a set: equal members)."""
    if type(value) is list:
        return len(value) == len(saved) and all(a is b for a, b in zip(value, saved))
    if type(value) is dict:
        return len(value) == len(saved) and all(saved.get(k, _UNSET) is v for k, v in value.items())
    return value == saved


def _refill(value: Any, saved: Any) -> None:
    if type(value) is list:
        value[:] = saved
    else:
        value.clear()
        value.update(saved)


@dataclass
class ModelState:
    """Training flags, parameter/buffer values, requires_grad and grads of an nn.Module."""

    training: dict[str, bool] = field(default_factory=dict)
    tensors: dict[str, Any] = field(default_factory=dict)  # name -> (tensor object, saved clone)
    grads: dict[str, Any] = field(default_factory=dict)
    requires_grad: dict[str, bool] = field(default_factory=dict)
    #: module name -> its instance attributes (``vars(module)``), by identity: a forward that rebinds
    #: ``self.calls`` or ``self.cache`` (None -> a tensor), or adds an attribute, is undone
    attrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: module name -> attribute -> the contents of a list, dict or set it held (``self.seen.append(...)``)
    contents: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: parameter name -> (version counter, data pointer) when it last held its saved value
    written: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: a forward wrote a parameter behind autograd's version counter (``p.data.add_``): copy every time
    untracked_writes: bool = False
    #: torch.Generator objects the model reaches (``self.gen``, in a list, on a helper object) -> (generator, saved state)
    generators: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @classmethod
    def capture(cls, model: Any, shared_with: ModelState | None = None) -> ModelState:
        """Return a snapshot of ``model`` (a no-op snapshot for plain callables).

        With ``shared_with`` (the user's model snapshot), ``model`` is an exported program: tensors
        it shares with the user's model are left to that snapshot, and a copy whose values equal
        the model's (a reloaded program's weights) reuses its saved clone instead of a new one.
        """
        import torch

        state = cls()
        if not isinstance(model, torch.nn.Module):
            return state
        _refuse_lazy(model)
        for name, mod in model.named_modules(remove_duplicate=False):
            state.training[name] = mod.training
            held = vars(mod)
            state.attrs[name] = dict(held)
            state.contents[name] = {k: _contents(v) for k, v in held.items() if type(v) in _CONTAINERS}
        owned = {id(t) for t, _ in shared_with.tensors.values()} if shared_with is not None else set()
        # A generator the model draws from (``torch.randn(..., generator=self.gen)``) is state as much
        # as a buffer: eager advances it, and a program run after eager must start where eager did.
        # A program keeps its own copy (a lifted constant): snapshot while it still equals the model's.
        mine = {id(g) for g, _ in shared_with.generators.values()} if shared_with is not None else set()
        for name, gen in held_generators(model):
            if id(gen) not in mine:
                state.generators.setdefault(name, (gen, gen.get_state()))
        known = shared_with.tensors if shared_with is not None else {}

        def saved_copy(name: str, t: Any) -> Any:
            mine = known.get(name)
            if mine is not None and mine[1].shape == t.shape and mine[1].dtype == t.dtype and torch.equal(mine[1], t):
                return mine[1]  # read-only from here on: restore copies from it, never into it
            return t.detach().clone()

        with torch.no_grad():
            for name, p in model.named_parameters(remove_duplicate=False):
                if id(p) in owned:
                    continue
                state.tensors[name] = (p, saved_copy(name, p))
                state.written[name] = _mark(p)
                state.requires_grad[name] = p.requires_grad
                state.grads[name] = None if p.grad is None else p.grad.detach().clone()
            for name, b in model.named_buffers(remove_duplicate=False):
                if b is not None and id(b) not in owned:
                    state.tensors[name] = (b, saved_copy(name, b))
            # Plain tensor attributes: constants an exported program lifted (``_tensor_constant0``,
            # a model's ``self.c = torch.ones(4)``) and caches a forward may write in place.
            for owner, mod in model.named_modules(remove_duplicate=False):
                for k, v in vars(mod).items():
                    if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter) and id(v) not in owned:
                        name = f"{owner}.{k}" if owner else k
                        state.tensors.setdefault(name, (v, saved_copy(name, v)))
        return state

    def prepare(self, model: Any, training: bool) -> None:
        """Put ``model`` back in this snapshot and in train (``training``) or eval mode: where every side starts."""
        import torch

        self.restore(model)
        if isinstance(model, torch.nn.Module):
            model.train(training)

    def restore(self, model: Any, *, full: bool = False) -> None:
        """Write the snapshot back into ``model`` in place (tensors shared with exported programs too).

        A parameter whose version counter and storage did not move since it last held its saved
        value is not copied again (resnet18's weights are 45 MB, and every side of every drawn
        shape starts from a restore) unless ``full``, or :meth:`find_untracked_writes` saw a
        write the counter misses. Buffers are always copied: batch norm's kernel updates its
        running statistics without moving their counter.
        """
        import torch

        if not isinstance(model, torch.nn.Module):
            return
        for gen, saved in self.generators.values():
            gen.set_state(saved)
        modules = dict(model.named_modules(remove_duplicate=False))
        for name, flag in self.training.items():
            mod = modules.get(name)
            if mod is None:
                continue
            held, saved = vars(mod), self.attrs.get(name)
            if saved is not None:
                # Instance attributes are plain slots (parameters, buffers and submodules live in their
                # own dicts, restored below): written straight back, as nn.Module.__setattr__ is slow
                # and a restore runs before every side of every shape.
                if held.keys() != saved.keys():
                    for k in held.keys() - saved.keys():
                        del held[k]
                for k, v in saved.items():
                    if held.get(k, _UNSET) is not v:
                        held[k] = v
                for k, kept in self.contents.get(name, {}).items():
                    if not _unchanged(saved[k], kept):
                        _refill(saved[k], kept)
            if mod.training is not flag:
                mod.training = flag
        with torch.no_grad():
            for name, (tensor, saved) in self.tensors.items():
                owner, _, leaf = name.rpartition(".")
                mod = modules.get(owner)
                if mod is None:
                    continue
                current = getattr(mod, leaf, None)
                # A failed capture can leave a FakeTensor (or another object) in the slot: put the original back.
                if current is not tensor:
                    _put(mod, leaf, tensor)
                elif not (full or self.untracked_writes) and self.written.get(name) == _mark(tensor):
                    continue
                if tensor.grad_fn is not None and not _drop_history(tensor):
                    # A view (torch.export.load hands out buffers as views of one storage) cannot be
                    # detached in place: a fresh tensor takes its slot from now on.
                    tensor = saved.clone()
                    self.tensors[name] = (tensor, saved)
                    _put(mod, leaf, tensor)
                if tensor.shape == saved.shape and tensor.dtype == saved.dtype:
                    tensor.copy_(saved)
                else:
                    tensor.data = saved.clone()  # never the snapshot itself: programs share it
        for name, (tensor, _) in self.tensors.items():
            if name in self.written:  # after the loop, so that the names of one tied weight agree
                self.written[name] = _mark(tensor)
            if name in self.requires_grad:
                tensor.requires_grad_(self.requires_grad[name])
                grad = self.grads.get(name)
                tensor.grad = None if grad is None else grad.clone()

    def changed(self, model: Any) -> list[str]:
        """Return the module attributes (``"block.calls"``) a forward rebound, added, or whose list, dict
        or set it changed, since the snapshot (training flags aside): Python state a program cannot carry."""
        import torch

        if not isinstance(model, torch.nn.Module):
            return []
        found = []
        for name, mod in model.named_modules(remove_duplicate=False):
            saved, held = self.attrs.get(name), vars(mod)
            if saved is None:
                continue
            kept = self.contents.get(name, {})
            for k in sorted(held.keys() | saved.keys()):
                if k == "training" or k.startswith("__"):
                    continue
                rebound = held.get(k, _UNSET) is not saved.get(k, _UNSET)
                if rebound or (k in kept and not _unchanged(saved[k], kept[k])):
                    found.append(f"{name}.{k}" if name else k)
        return found

    def find_untracked_writes(self) -> bool:
        """After a forward: did it write a parameter without moving its version counter? Then restore copies all.

        ``p.data.add_(...)`` (weight clipping, hand-written EMA) changes the values but not
        ``p._version``; one comparison after the eager run tells whether this model does that.
        """
        import torch

        for name, mark in self.written.items():
            tensor, saved = self.tensors[name]
            if _mark(tensor) == mark and tensor.grad_fn is None and tensor.shape == saved.shape and tensor.dtype == saved.dtype:
                if not torch.equal(tensor, saved):
                    self.untracked_writes = True
                    break
        return self.untracked_writes


def _mark(tensor: Any) -> tuple[int, int]:
    """What moves when a tensor is written through autograd or given new storage."""
    return tensor._version, tensor.data_ptr()


def _drop_history(tensor: Any) -> bool:
    """Detach ``tensor`` in place from the autograd graph that wrote it (a buffer written in training)."""
    try:
        tensor.detach_()
    except RuntimeError:  # a view cannot be detached in place
        return False
    return True


def _put(mod: Any, leaf: str, tensor: Any) -> None:
    """Put ``tensor`` in the parameter, buffer or attribute slot ``leaf`` of ``mod``."""
    if leaf in mod._parameters:
        mod._parameters[leaf] = tensor
    elif leaf in mod._buffers:
        mod._buffers[leaf] = tensor
    else:
        setattr(mod, leaf, tensor)


def _refuse_lazy(model: Any) -> None:
    """Raise ValueError naming the first uninitialized lazy parameter/buffer (LazyLinear, ...)."""
    from torch.nn.parameter import is_lazy

    for kind, named in (("parameter", model.named_parameters), ("buffer", model.named_buffers)):
        for name, tensor in named(remove_duplicate=False):
            if tensor is not None and is_lazy(tensor):
                owner = model.get_submodule(name.rpartition(".")[0])
                raise ValueError(
                    f"model: {kind} {name!r} of {type(owner).__name__} is not initialized yet (a lazy module); "
                    "call the model once on an example input before exporting it"
                )
