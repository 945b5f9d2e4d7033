"""Targets: the runtimes an exported program is shipped to (AOTInductor, ONNX Runtime, ExecuTorch).

A target lowers the inference export of a case once, loads the artifact in its runtime,
and runs the same numerics and shape-promise checks there as on ``ep.module()``.

Importing this package imports neither torch nor any target's packages: a target's
module (and onnx, onnxruntime, executorch, torch._inductor) loads only when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from exportcore.devices import DEVICES

if TYPE_CHECKING:
    from exportcore.targets.base import Target

__all__ = ["TARGETS", "DEVICES", "column_label", "get_target", "parse_label", "unavailable"]

#: Built-in targets, in report column order.
TARGETS = ("aoti", "onnx", "executorch")


def get_target(name: str) -> Target:
    """Return the target called ``name`` (importing its module, not its runtime packages)."""
    if name not in TARGETS:
        raise ValueError(f"unknown target {name!r}; expected one of {list(TARGETS)}")
    return importlib.import_module(f"exportcore.targets.{name}").TARGET


def unavailable(name: str) -> str | None:
    """Return why target ``name`` cannot run in this process (None if it can); probed once per session."""
    from exportcore.sandbox.session_caches import active

    missing = active().missing
    if name not in missing:
        missing[name] = get_target(name).missing()
    return missing[name]


def column_label(name: str, device: str = "cpu") -> str:
    """Return the result key of a mode or target on a device: ``strict``, ``aoti``, ``strict-cuda``."""
    return name if device == "cpu" else f"{name}-{device}"


def parse_label(label: str) -> tuple[str, str]:
    """Return ``(mode or target, device)`` of a result key made by column_label()."""
    base, sep, device = label.rpartition("-")
    if sep and device in DEVICES and device != "cpu":
        return base, device
    return label, "cpu"
