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

from exportcore.sandbox.backend_flags import matmul_precision
from exportcore.sandbox.model_state import ModelState

__all__ = [
    "GlobalState", "ModelState", "drop_leaked_export_hooks", "globals_restored", "isolated", "reset_compile_caches",
    "settings_text",
]


@dataclass
class GlobalState:
    """Process-wide torch and Python settings a case may change."""

    torch_rng: Any = None
    cuda_rng: Any = None
    cuda_queued_seeds: dict[str, Any] | None = None  # CUDA not started: the seeds torch queued for its start
    py_rng: Any = None
    default_dtype: Any = None
    grad_enabled: bool = True
    deterministic: bool = False
    deterministic_warn_only: bool = False
    default_device: Any = None
    anomaly: tuple[bool, bool] = (False, True)  # (enabled, check_nan)
    matmul_precision: str | None = "highest"  # None: torch refuses to say (backends.precision.* hold it)
    num_threads: int = 0
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # config module -> its settings
    autocast: Any = None  # exportcore.sandbox.backend_flags.AutocastState
    backends: Any = None  # exportcore.sandbox.backend_flags.BackendFlags
    module_hooks: dict[str, Any] = field(default_factory=dict)  # nn.Module's global hook tables -> their entries

    @classmethod
    def capture(cls) -> GlobalState:
        """Return a snapshot of the current global state."""
        import torch

        from exportcore.sandbox.backend_flags import AutocastState, BackendFlags

        cuda = queued = None
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            cuda = torch.cuda.get_rng_state_all()
        elif not torch.cuda.is_initialized():
            queued = _queued_cuda_seeds()
        return cls(
            torch_rng=torch.get_rng_state(),
            cuda_rng=cuda,
            cuda_queued_seeds=queued,
            py_rng=random.getstate(),
            default_dtype=torch.get_default_dtype(),
            grad_enabled=torch.is_grad_enabled(),
            deterministic=torch.are_deterministic_algorithms_enabled(),
            deterministic_warn_only=torch.is_deterministic_algorithms_warn_only_enabled(),
            default_device=torch.get_default_device(),
            anomaly=(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
            matmul_precision=matmul_precision(),
            num_threads=torch.get_num_threads(),
            configs={name: module.get_config_copy() for name, module in _config_modules()},
            autocast=AutocastState.capture(),
            backends=BackendFlags.capture(),
            module_hooks={name: _copy(value) for name, value in _module_hook_tables()},
        )

    def restore(self) -> None:
        """Put every captured setting back."""
        import torch

        torch.set_rng_state(self.torch_rng)
        if self.cuda_rng is not None:
            torch.cuda.set_rng_state_all(self.cuda_rng)
        if self.cuda_queued_seeds is not None:
            _restore_queued_cuda_seeds(self.cuda_queued_seeds)
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
                # torch 2.6 leaves None behind, which get_default_device() trips on (it reads
                # device_context.device unguarded; pytorch/pytorch#148621 rewrote that read)
                del context.device_context
        if (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) != self.anomaly:
            torch.set_anomaly_enabled(*self.anomaly)
        if self.matmul_precision is not None and matmul_precision() != self.matmul_precision:
            torch.set_float32_matmul_precision(self.matmul_precision)
        if torch.get_num_threads() != self.num_threads:
            torch.set_num_threads(self.num_threads)
        # A global nn.Module hook a case left behind (a model's, or torch's own buffer-assignment
        # hook of a non-strict export that raised: torch removes it without a `finally`) runs in
        # every later case, and strict capture refuses to trace it ("Attempted to call function
        # marked as skipped"): a false capture failure.
        import torch.nn.modules.module as nn_module

        for name, saved in self.module_hooks.items():
            now = getattr(nn_module, name)
            if isinstance(saved, dict):
                if list(now.items()) != list(saved.items()):
                    now.clear()
                    now.update(saved)  # in place: the removable handles hold the table itself
            elif now is not saved:
                setattr(nn_module, name, saved)
        for name, module in _config_modules():
            saved = self.configs.get(name) or {}
            now = module.get_config_copy()
            # Key by key: load_config() would also set deprecated keys, each warning.
            for key, value in saved.items():
                if key in now and now[key] != value:
                    setattr(module, key, value)


def settings_text() -> str | None:
    """The process-wide settings a case's results depend on, as text the same in every process that has them.

    A conftest that turns on deterministic algorithms (an op may raise), TF32 or another matmul
    precision (numbers past tolerance), another default dtype or device, autocast, a global forward
    hook: eager and the programs compute other things, so a result found under other settings is not
    this one's. Left out: the RNG (each case seeds its own), the thread count (the machine's, not the
    user's), dynamo's config (its hash names the working folder; capture reads it and the graph shows
    what it did) and the registration hooks (they compute nothing). None when a hook is unreadable.
    """
    import torch

    from exportcore.sandbox.backend_flags import AutocastState, BackendFlags
    from exportcore.sandbox.python_state import Reader

    autocast = AutocastState.capture()
    configs = sorted((name, module.get_hash().hex()) for name, module in _config_modules()
                     if name != "torch._dynamo.config" and hasattr(module, "get_hash"))
    try:
        hooks = [(name, Reader(torch)(list(table.values()) if isinstance(table, dict) else table))
                 for name, table in _module_hook_tables()
                 if name.startswith(("_global_forward", "_global_backward"))]
    except Exception:  # noqa: BLE001 - Unreadable, or a hook object that raises when read: nothing is proven
        return None
    precision = matmul_precision() or "mixed"
    return repr((
        str(torch.get_default_dtype()), str(torch.get_default_device()), torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(), precision,
        sorted((k, str(v)) for k, v in BackendFlags.capture().values.items()),
        sorted((k, str(v)) for k, v in autocast.devices.items()), autocast.cache_enabled, autocast.nesting,
        configs, hooks,
    ))


def _module_hook_tables() -> list[tuple[str, Any]]:
    """Return nn.Module's process-wide hook tables (``register_module_forward_hook`` and kin) by name."""
    import torch.nn.modules.module as nn_module

    return [(name, value) for name, value in vars(nn_module).items() if name.startswith("_global_")]


def _copy(value: Any) -> Any:
    return type(value)(value) if isinstance(value, dict) else value


def _queued_cuda_seeds() -> dict[str, Any] | None:
    """The seeds torch keeps for CUDA's start (``torch.cuda._lazy_seed_tracker``), None where it has none.

    Before CUDA starts, ``torch.manual_seed`` does not seed it: it queues the seed, and only the
    latest one stays. A run's own seeding (torch.manual_seed where a GPU could start) would
    replace the user's, so a user who seeds, runs a check and then starts CUDA would draw from
    the check's seed.
    """
    import torch

    tracker = getattr(torch.cuda, "_lazy_seed_tracker", None)
    if tracker is None or not isinstance(getattr(tracker, "__dict__", None), dict):
        return None
    saved = dict(vars(tracker))
    if isinstance(saved.get("call_order"), list):
        saved["call_order"] = list(saved["call_order"])
    return saved


def _restore_queued_cuda_seeds(saved: dict[str, Any]) -> None:
    import torch

    tracker = torch.cuda._lazy_seed_tracker
    if not torch.cuda.is_initialized():
        vars(tracker).update(saved)
        return
    # CUDA started during the case and took the seeds queued then, the case's last: seed it as
    # the user's own queued seeds would have when it started, in their order. (With none queued
    # it keeps the case's: torch's default seed for a fresh start is not reachable from Python.)
    for call in saved.get("call_order") or ():
        if call:
            call[0]()


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


def reset_compile_caches() -> None:
    """Drop dynamo caches so guards and graphs from one case cannot serve the next."""
    import torch

    torch._dynamo.reset()


def drop_leaked_export_hooks() -> int:
    """Remove torch's own buffer-assignment hooks left over from an earlier non-strict export; return how many.

    torch registers the hook for the duration of one non-strict trace and removes it without a
    ``finally`` (torch 2.6-2.15), so an export that raises or is interrupted at the wrong moment
    leaves it in nn.Module's global table, in the user's code as well as ours. Every later
    strict capture of a buffer assignment (``self.n += 1``) then fails on it ("Attempted to
    call function marked as skipped"): a false failure of a correct model. Outside a running
    export the hook is never wanted. Upstream: pytorch/pytorch#172213; pytorch/pytorch#184956
    moves the hook's removal into a ``finally``.
    """
    import torch.nn.modules.module as nn_module

    table = nn_module._global_buffer_registration_hooks
    leaked = [key for key, hook in table.items() if _is_export_hook(hook)]
    for key in leaked:
        del table[key]
    return len(leaked)


def _is_export_hook(hook: Any) -> bool:
    return (getattr(hook, "__module__", "") or "").startswith("torch.") and getattr(hook, "__qualname__", "").endswith(
        "register_buffer_assignment_hook.<locals>._map_assigned_buffer_to_proxy"
    )


@contextlib.contextmanager
def globals_restored() -> Iterator[None]:
    """Put the process-wide torch state back after the block, whatever happened in it.

    For work around a case that is not the model's check: a zoo factory builds its model here, so a
    ``set_default_dtype(torch.float64)`` holds for its own case and not for every model after it.
    """
    state = GlobalState.capture()
    try:
        yield
    finally:
        state.restore()


@contextlib.contextmanager
def isolated(model: Any) -> Iterator[ModelState]:
    """Run a case with global state and ``model`` restored afterwards, whatever happened."""
    drop_leaked_export_hooks()  # before the snapshot, which would otherwise put them back
    global_state = GlobalState.capture()
    model_state = ModelState.capture(model)
    try:
        yield model_state
    finally:
        try:
            model_state.restore(model, full=True)
        finally:
            global_state.restore()
            reset_compile_caches()
