"""Export modes: how a case is prepared and captured."""

from __future__ import annotations

from dataclasses import dataclass

from exportcore.columns import Column
from exportcore.targets import TARGETS

__all__ = [
    "Mode", "BUILTIN_MODES", "MODES", "TARGET_MODES", "register_mode", "get_mode", "mode_names", "target_mode_problem",
]


@dataclass(frozen=True)
class Mode:
    """One way to export: ``strict`` selects TorchDynamo capture; ``training`` the training IR."""

    name: str
    strict: bool
    training: bool
    description: str = ""


BUILTIN_MODES = (
    Mode("strict", strict=True, training=False, description="eval(); export(strict=True) via TorchDynamo"),
    Mode("non_strict", strict=False, training=False, description="eval(); export(strict=False) via Python tracing"),
    Mode("training", strict=False, training=True, description="train(); training IR; outputs, buffers, grads"),
)

#: The built-in modes' names, in report column order: the one place they are spelled out.
MODES: tuple[str, ...] = tuple(m.name for m in BUILTIN_MODES)
#: The modes a target (aoti, onnx, executorch) can start from: the built-in inference exports.
TARGET_MODES: tuple[str, ...] = tuple(m.name for m in BUILTIN_MODES if not m.training)

_REGISTRY: dict[str, Mode] = {m.name: m for m in BUILTIN_MODES}


def register_mode(mode: Mode) -> None:
    """Make an extra mode available to check(); re-registering the same definition is a no-op."""
    if not isinstance(mode, Mode):
        raise TypeError(f"register_mode() expects a Mode, got {type(mode).__name__}")
    if mode.name in TARGETS or Column.parse(mode.name).name != mode.name:
        # A mode's name is its report column and result key, which targets' columns (aoti, strict-cuda)
        # share: the two results would overwrite each other and --export-targets would mean both.
        what = "a target's name" if mode.name in TARGETS else "a device column's name"
        raise ValueError(f"mode {mode.name!r} is {what}: results are keyed by column, so pick another name")
    existing = _REGISTRY.get(mode.name)
    if existing is not None and existing != mode:
        raise ValueError(f"mode {mode.name!r} is already registered with another definition")
    _REGISTRY[mode.name] = mode


def get_mode(name: str) -> Mode:
    """Return the registered mode called ``name``; ValueError lists the known ones."""
    if isinstance(name, Mode):
        return name
    if not isinstance(name, str):
        raise TypeError(f"mode must be a str, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown mode {name!r}; expected one of {sorted(_REGISTRY)}") from None


def mode_names() -> tuple[str, ...]:
    """Return the names of all registered modes, built-ins first."""
    return tuple(_REGISTRY)


def target_mode_problem(name: object) -> str | None:
    """Return why ``name`` cannot be the mode targets start from ("must be ..., got ..."), or None if it can."""
    if name in TARGET_MODES:
        return None
    return f"must be {' or '.join(repr(m) for m in TARGET_MODES)}, got {name!r}"
