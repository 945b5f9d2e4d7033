"""xdist scheduling by case: a case's modes run on one worker, one after another.

Strict and non-strict export usually capture the same program, and the later mode then takes the
earlier one's results from the engine session's memory store (exportcore.reuse.donations). xdist's
default ``load`` scheduling sends the modes of one case to different workers, where they run at the
same time and share nothing.
When the user chose no distribution (``-n N`` alone), the plugin schedules like xdist's
``loadscope`` with the case as the scope. A ``--dist`` the user gives is always kept.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING, Any, Sequence

import pytest

if TYPE_CHECKING:
    from exportcore.columns import Column

__all__ = ["CaseScheduler", "case_scheduling_wanted", "case_scope"]


def case_scope(nodeid: str, columns: Sequence[Column]) -> str:
    """Return the case a node id belongs to: the id without its mode (or target) part."""
    from pytest_export.results.records import split_mode
    from pytest_export.distributed.xdist_workers import column_of

    column = column_of(nodeid, columns)
    return split_mode(nodeid, column.label) if column is not None else nodeid


def case_scheduling_wanted(config: pytest.Config) -> bool:
    """Return whether xdist runs with the distribution it picks by itself (``-n`` without ``--dist``)."""
    if getattr(config.option, "dist", None) != "load":
        return False
    given = [*config.invocation_params.args, *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    try:
        given += list(config.getini("addopts"))
    except ValueError:
        pass
    return not any(str(arg) == "--dist" or str(arg).startswith("--dist=") for arg in given)


class CaseScheduler:
    """Controller-side plugin (registered with xdist present): picks the scheduler when the user did not."""

    def __init__(self, columns: Sequence[Column]) -> None:
        self.columns = tuple(columns)

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if not case_scheduling_wanted(config):
            return None  # xdist (or the user's choice) decides
        from xdist.scheduler import LoadScopeScheduling

        columns = self.columns

        class CaseScheduling(LoadScopeScheduling):  # type: ignore[misc]
            """xdist's loadscope with each case as one scope."""

            def _split_scope(self, nodeid: str) -> str:
                return case_scope(nodeid, columns)

            def remove_node(self, node: Any) -> str | None:
                # loadscope queues a crashed worker's whole unit again, the test that killed it
                # included, so a replacement worker runs (and dies on) it again; xdist reports the
                # crashed test itself, so only the rest of its unit goes back to the queue.
                workload = self.assigned_work.get(node, {})
                pending = [nodeid for unit in workload.values() for nodeid, done in unit.items() if not done]
                if pending:
                    for unit in workload.values():
                        if pending[0] in unit:
                            unit[pending[0]] = True
                    super().remove_node(node)
                    return pending[0]
                return super().remove_node(node)

        return CaseScheduling(config, log)
