"""Snapshot and restore autocast state and the ``torch.backends.*`` flags a model's forward may flip.

A forward that leaves autocast on, or turns on cudnn.benchmark, TF32 or the MHA fast path,
changes the numerics of every later case in the process. Each flag is read through its own
attribute or getter and skipped where this torch (or this build) lacks it: features are
detected, not versions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["AutocastState", "BackendFlags", "matmul_precision", "precision_flags", "read_flag", "write_flag"]

#: Device types autocast may be switched on for (torch.amp.is_autocast_available lists the same).
_AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia", "privateuseone")

# Attribute flags under torch.backends (legacy TF32 switches included).
_ATTRIBUTES = (
    "cuda.matmul.allow_tf32", "cuda.matmul.allow_fp16_reduced_precision_reduction",
    "cuda.matmul.allow_bf16_reduced_precision_reduction", "cuda.matmul.allow_fp16_accumulation",
    "cudnn.enabled", "cudnn.benchmark", "cudnn.benchmark_limit", "cudnn.deterministic", "cudnn.allow_tf32",
    "mkldnn.enabled", "mkldnn.deterministic",
    "opt_einsum.enabled", "opt_einsum.strategy",
    "quantized.engine",
)

# The newer fp32_precision switches, as torch keys them: (backend, op). An op set to "none"
# inherits its backend's "all", which inherits "generic": they are restored parents first.
# The legacy allow_tf32 flags are another view of the same setting, which torch refuses to
# read while the two disagree; they are restored around these (see BackendFlags.restore).
_PRECISIONS = (
    ("generic", "all"), ("cuda", "all"), ("mkldnn", "all"),
    ("cuda", "matmul"), ("cuda", "conv"), ("cuda", "rnn"),
    ("mkldnn", "matmul"), ("mkldnn", "conv"), ("mkldnn", "rnn"),
)


def _function_flags() -> dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]]:
    """Return name -> (getter, setter) for flags torch exposes as functions, where they exist."""
    import torch

    b = torch.backends
    pairs = {
        "mha.fastpath": ("mha", "get_fastpath_enabled", "set_fastpath_enabled"),
        "cuda.flash_sdp": ("cuda", "flash_sdp_enabled", "enable_flash_sdp"),
        "cuda.mem_efficient_sdp": ("cuda", "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp"),
        "cuda.math_sdp": ("cuda", "math_sdp_enabled", "enable_math_sdp"),
        "cuda.cudnn_sdp": ("cuda", "cudnn_sdp_enabled", "enable_cudnn_sdp"),
        "cuda.fp16_bf16_reduction_math_sdp": (
            "cuda", "fp16_bf16_reduction_math_sdp_allowed", "allow_fp16_bf16_reduction_math_sdp"),
    }
    out: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {}
    for name, (module, getter, setter) in pairs.items():
        mod = getattr(b, module, None)
        if hasattr(mod, getter) and hasattr(mod, setter):
            out[name] = (getattr(mod, getter), getattr(mod, setter))
    if hasattr(torch._C, "_get_nnpack_enabled") and hasattr(torch._C, "_set_nnpack_enabled"):
        out["nnpack.enabled"] = (torch._C._get_nnpack_enabled, torch._C._set_nnpack_enabled)
    return out


def precision_flags() -> dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]]:
    """Return "precision.<backend>.<op>" -> (getter, setter) where torch has fp32_precision switches (>= 2.9)."""
    import torch

    get = getattr(torch._C, "_get_fp32_precision_getter", None)
    put = getattr(torch._C, "_set_fp32_precision_setter", None)
    if get is None or put is None:
        return {}
    out: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {}
    for backend, op in _PRECISIONS:
        try:
            get(backend, op)
        except Exception:  # noqa: BLE001 - a backend this build does not know
            continue
        out[f"precision.{backend}.{op}"] = (
            lambda b=backend, o=op: get(b, o), lambda v, b=backend, o=op: put(b, o, v))
    return out


def matmul_precision() -> str | None:
    """Return ``torch.get_float32_matmul_precision()``, or None where torch refuses to read it.

    torch >= 2.9 raises when the fp32_precision switches of its backends disagree, which is what
    its own docs lead to (``torch.backends.cuda.matmul.fp32_precision = "tf32"`` alone does it);
    those switches are captured one by one (precision_flags), so nothing is lost.
    """
    import torch

    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError:
        return None


def read_flag(path: str) -> Any:
    """Return ``torch.backends.<path>`` (``"cudnn.allow_tf32"``), loading a backend older torch loads lazily."""
    import importlib

    import torch

    obj: Any = torch.backends
    module, _, _ = path.partition(".")
    if not hasattr(obj, module):
        # Older torch (2.6) loads some backends (opt_einsum) only when imported: a forward that
        # imports one and flips it must still be put back, so it is loaded here too.
        importlib.import_module(f"torch.backends.{module}")
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def write_flag(path: str, value: Any) -> None:
    """Set ``torch.backends.<path>`` (``"cudnn.allow_tf32"``) to ``value``."""
    import torch

    owner, _, leaf = path.rpartition(".")
    setattr(read_flag(owner) if owner else torch.backends, leaf, value)


@dataclass
class BackendFlags:
    """The values of every ``torch.backends`` flag this torch has (name -> value)."""

    values: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def capture(cls) -> BackendFlags:
        """Return the current flags; a flag this build cannot read is left out."""
        values: dict[str, Any] = {}
        with warnings.catch_warnings():
            # Reading a legacy flag (allow_tf32) warns about the newer API; not the user's business.
            warnings.simplefilter("ignore")
            for path in _ATTRIBUTES:
                try:
                    value = read_flag(path)
                except Exception:  # noqa: BLE001 - absent in this torch, or unreadable in this state
                    continue
                if value is None or isinstance(value, (bool, int, str)):
                    values[path] = value
            for name, (getter, _) in {**precision_flags(), **_function_flags()}.items():
                try:
                    values[name] = getter()
                except Exception:  # noqa: BLE001
                    continue
        return cls(values)

    def restore(self) -> None:
        """Set back every flag whose value changed (see _ATTRIBUTES for why twice)."""
        # Legacy flags, then the precisions parents first, then the legacy flags again: whichever
        # view a model changed is put back, and the other view follows it.
        functions = {**precision_flags(), **_function_flags()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):
                for path, saved in self.values.items():
                    try:
                        if path in functions:
                            getter, setter = functions[path]
                            if getter() != saved:
                                setter(saved)
                        elif read_flag(path) != saved:
                            write_flag(path, saved)
                    except Exception:  # noqa: BLE001 - a legacy view torch refuses to read in a mixed state
                        continue


@dataclass
class AutocastState:
    """Autocast per device type (enabled, dtype), its cache flag and nesting depth."""

    devices: dict[str, tuple[bool, Any]] = field(default_factory=dict)
    cache_enabled: bool | None = None
    nesting: int | None = None

    @classmethod
    def capture(cls) -> AutocastState:
        """Return the current autocast state."""
        import torch

        state = cls()
        for device in _AUTOCAST_DEVICES:
            try:
                state.devices[device] = (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
            except (TypeError, RuntimeError, AttributeError):  # a torch without per-device autocast APIs
                continue
        if hasattr(torch, "is_autocast_cache_enabled"):
            state.cache_enabled = torch.is_autocast_cache_enabled()
        state.nesting = _nesting()
        return state

    def restore(self) -> None:
        """Put autocast back: a forward that entered ``torch.autocast`` and never left must not leak it."""
        import torch

        for device, (enabled, dtype) in self.devices.items():
            try:
                if torch.get_autocast_dtype(device) != dtype:
                    torch.set_autocast_dtype(device, dtype)
                if torch.is_autocast_enabled(device) != enabled:
                    torch.set_autocast_enabled(device, enabled)
            except (TypeError, RuntimeError, AttributeError):
                continue
        if self.cache_enabled is not None and torch.is_autocast_cache_enabled() != self.cache_enabled:
            torch.set_autocast_cache_enabled(self.cache_enabled)
        now = _nesting()
        if self.nesting is None or now is None:
            return
        while now > self.nesting:
            now = torch.autocast_decrement_nesting()
            if now == 0:
                torch.clear_autocast_cache()  # what leaving the outermost autocast does
        while now < self.nesting:
            now = torch.autocast_increment_nesting()


def _nesting() -> int | None:
    """Return autocast's nesting depth (torch exposes it only through increment/decrement)."""
    import torch

    if not (hasattr(torch, "autocast_increment_nesting") and hasattr(torch, "autocast_decrement_nesting")):
        return None
    depth = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return depth
