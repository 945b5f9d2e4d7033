"""Targets: the runtimes an exported program is shipped to (AOTInductor, ONNX Runtime, ExecuTorch).

A target lowers the inference export of a case once, loads the artifact in its runtime,
and runs the same numerics and shape-promise checks there as on ``ep.module()``.

Importing this package imports neither torch nor any target's packages: a target's
module (and onnx, onnxruntime, executorch, torch._inductor) loads only when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from exportcore.targets.base import Target

__all__ = ["TARGETS", "get_target", "unavailable"]

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

