"""Stage keep: hold on to the inference export for the case's targets (only when a session asked for targets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.targets import cache
from exportcore.targets.pipeline import remember_export

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]

#: Modes whose export a target can start from.
FOR_TARGETS = ("strict", "non_strict")


def run(run: Run) -> None:
    """Store ``run.ep`` for a later target column of the same case (xdist/serial alike)."""
    if cache.enabled() and run.mode.name in FOR_TARGETS:
        remember_export(run, run.ep)
