"""Leave no trace: restore global torch state and the user's model after each case.

torch.export can leave fake tensors in a model's attributes when capture fails
half-way, training runs mutate buffers, and user models flip RNG / dtype /
grad-mode / autocast / ``torch.backends`` flags; a gate must not let one case leak
into the next.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field
from typing import Any, Iterator

__all__ = ["GlobalState", "ModelState", "isolated", "reset_compile_caches"]


@dataclass
class GlobalState:
    """Process-wide torch and Python settings a case may change."""

    torch_rng: Any = None
    cuda_rng: Any = None
    py_rng: Any = None
    default_dtype: Any = None
    grad_enabled: bool = True
    deterministic: bool = False
    deterministic_warn_only: bool = False
    default_device: Any = None
    anomaly: tuple[bool, bool] = (False, True)  # (enabled, check_nan)
    matmul_precision: str = "highest"
    num_threads: int = 0
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # config module -> its settings
    autocast: Any = None  # exportcore.backend_flags.AutocastState
    backends: Any = None  # exportcore.backend_flags.BackendFlags

    @classmethod
    def capture(cls) -> GlobalState:
        """Return a snapshot of the current global state."""
        import torch

        from exportcore.backend_flags import AutocastState, BackendFlags

        cuda = None
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            cuda = torch.cuda.get_rng_state_all()
        return cls(
            torch_rng=torch.get_rng_state(),
            cuda_rng=cuda,
            py_rng=random.getstate(),
            default_dtype=torch.get_default_dtype(),
            grad_enabled=torch.is_grad_enabled(),
            deterministic=torch.are_deterministic_algorithms_enabled(),
            deterministic_warn_only=torch.is_deterministic_algorithms_warn_only_enabled(),
            default_device=torch.get_default_device(),
            anomaly=(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
            matmul_precision=torch.get_float32_matmul_precision(),
            num_threads=torch.get_num_threads(),
            configs={name: module.get_config_copy() for name, module in _config_modules()},
            autocast=AutocastState.capture(),
            backends=BackendFlags.capture(),
        )

    def restore(self) -> None:
        """Put every captured setting back."""
        import torch

        torch.set_rng_state(self.torch_rng)
        if self.cuda_rng is not None:
            torch.cuda.set_rng_state_all(self.cuda_rng)
        random.setstate(self.py_rng)
        torch.set_default_dtype(self.default_dtype)
        torch.set_grad_enabled(self.grad_enabled)
        torch.use_deterministic_algorithms(self.deterministic, warn_only=self.deterministic_warn_only)
        if self.autocast is not None:
            self.autocast.restore()
        if self.backends is not None:
            self.backends.restore()  # before the matmul precision, which is a view of the same setting
        # Each of these, left changed by one case, breaks or slows every later one (a "meta"
        # default device makes every tensor a meta tensor); set only what changed.
        if torch.get_default_device() != self.default_device:
            torch.set_default_device(None if self.default_device == torch.device("cpu") else self.default_device)
            context = getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None)
            if context is not None and getattr(context, "device_context", False) is None:
                del context.device_context  # torch 2.6 leaves None behind, which get_default_device() trips on
        if (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) != self.anomaly:
            torch.set_anomaly_enabled(*self.anomaly)
        if torch.get_float32_matmul_precision() != self.matmul_precision:
            torch.set_float32_matmul_precision(self.matmul_precision)
        if torch.get_num_threads() != self.num_threads:
            torch.set_num_threads(self.num_threads)
        for name, module in _config_modules():
            saved = self.configs.get(name) or {}
            now = module.get_config_copy()
            # Key by key: load_config() would also set deprecated keys, each warning.
            for key, value in saved.items():
                if key in now and now[key] != value:
                    setattr(module, key, value)


def _config_modules() -> list[tuple[str, Any]]:
    """Return the torch config modules export reads (dynamo, functorch, symbolic shapes, export)."""
    import importlib

    out = []
    for name in ("torch._dynamo.config", "torch._functorch.config", "torch.fx.experimental._config",
                 "torch._export.config"):
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - a torch without one of them
            continue
        if hasattr(module, "get_config_copy"):
            out.append((name, module))
    return out


@dataclass
class ModelState:
    """Training flags, parameter/buffer values, requires_grad and grads of an nn.Module."""

    training: dict[str, bool] = field(default_factory=dict)
    tensors: dict[str, Any] = field(default_factory=dict)  # name -> (tensor object, saved clone)
    grads: dict[str, Any] = field(default_factory=dict)
    requires_grad: dict[str, bool] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)  # module name -> shallow copy of plain attributes

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
            state.attrs[name] = {
                k: v for k, v in vars(mod).items() if not k.startswith("_") and isinstance(v, (int, float, bool, str))
            }
        owned = {id(t) for t, _ in shared_with.tensors.values()} if shared_with is not None else set()
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

    def restore(self, model: Any) -> None:
        """Write the snapshot back into ``model`` in place (tensors shared with exported programs too)."""
        import torch

        if not isinstance(model, torch.nn.Module):
            return
        modules = dict(model.named_modules(remove_duplicate=False))
        for name, flag in self.training.items():
            if name in modules:
                modules[name].training = flag
                for k, v in self.attrs.get(name, {}).items():
                    setattr(modules[name], k, v)
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
            if name in self.requires_grad:
                tensor.requires_grad_(self.requires_grad[name])
                grad = self.grads.get(name)
                tensor.grad = None if grad is None else grad.clone()


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


def reset_compile_caches() -> None:
    """Drop dynamo caches so guards and graphs from one case cannot serve the next."""
    import torch

    torch._dynamo.reset()


@contextlib.contextmanager
def isolated(model: Any) -> Iterator[ModelState]:
    """Run a case with global state and ``model`` restored afterwards, whatever happened."""
    global_state = GlobalState.capture()
    model_state = ModelState.capture(model)
    try:
        yield model_state
    finally:
        try:
            model_state.restore(model)
        finally:
            global_state.restore()
            reset_compile_caches()
