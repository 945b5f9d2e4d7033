"""Stage module: ep.module(), the program users call; its own state snapshot is kept for later runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore.classify import classify
from exportcore.sides import prepare, remember

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(run: Run) -> None:
    """Set ``run.programs["exported"]``."""
    prepare(run)
    with run.clock.stage("module"):
        try:
            remember(run, "exported", run.ep.module())
        except Exception as exc:
            run.fail(classify(exc, "module"))
