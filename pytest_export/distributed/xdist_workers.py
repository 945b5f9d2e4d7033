"""pytest-xdist glue: what crosses from workers to the controller, and crashed workers.

How results travel:
- each exportable test's records ride on its TestReport (pytest_export.reporting.transport),
  serial or distributed alike;
- the controller does not collect tests under xdist, so each worker publishes the
  (case, mode) keys it selected (after -k / -m) in ``workeroutput["export_selected"]``
  and the controller joins them in ``pytest_testnodedown``; every worker collects the
  whole selection, so one surviving worker is enough;
- a worker that dies mid-test (os._exit, a signal) never sends a report; xdist makes one
  on the controller and calls ``pytest_handlecrashitem``, where we attach a "crashed"
  record built from the node id (its column is the id part naming a known column).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pytest

from pytest_export.session_state import plugin_session
from pytest_export.distributed.threads import header_line

if TYPE_CHECKING:
    from exportcore.columns import Column
    from pytest_export.results.records import Record

__all__ = ["XdistController", "column_of", "is_worker", "publish_selected", "crashed_record"]

_SELECTED_KEY = "export_selected"


def is_worker(config: pytest.Config) -> bool:
    """Return whether this process is an xdist worker (not the controller or a serial run)."""
    return hasattr(config, "workerinput")


def publish_selected(config: pytest.Config, keys: Iterable[tuple[str, str]]) -> None:
    """Hand a worker's selected (case, mode) keys to the controller."""
    config.workeroutput[_SELECTED_KEY] = sorted([list(k) for k in keys])  # type: ignore[attr-defined]


def column_of(nodeid: str, columns: Sequence[Column]) -> Column | None:
    """Return the known column whose label a node id's parametrization names (the last one), or None."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return None
    known = {column.label: column for column in columns}
    # pytest joins the parameter ids with "-", and a label spans one id part or two (a column on a device)
    params = nodeid[:-1].partition("[")[2].split("-")
    for end in range(len(params), 0, -1):
        for width in (2, 1):  # "strict-cuda" (a mode on a device) before "strict"
            part = "-".join(params[max(0, end - width):end])
            if part in known:
                return known[part]
    return None


def crashed_record(nodeid: str, mode: str, message: str) -> Record:
    """Return a record for a marker test whose worker died while running it."""
    from pytest_export.results.journal import crashed_record as journal_crashed_record
    from pytest_export.results.records import split_mode

    return journal_crashed_record(nodeid, split_mode(nodeid, mode), mode, message)


class XdistController:
    """Controller-side hooks that exist only when pytest-xdist is installed."""

    def __init__(self, config: pytest.Config, columns: Sequence[Column]) -> None:
        self.config = config
        self.columns = tuple(columns)

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        """Say how many torch threads each worker gets (pytest_export.distributed.threads)."""
        workers = len(config.getoption("tx", None) or ())
        return header_line(workers) if workers else None

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """Attach a crashed record to xdist's report for the test that killed its worker."""
        # Imported here: a session whose workers never crash loads no record or journal code.
        from pytest_export.reporting.journal import crashed_inflight
        from pytest_export.results.records import record_key

        message = str(report.longrepr) if report.longrepr else f"worker crashed while running {crashitem}"
        column = column_of(crashitem, self.columns)
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "")
        # export_check cases the test finished or had started before its worker died (none for a marker test).
        records = crashed_inflight(self.config, worker, crashitem, message) if worker else []
        if column is not None:
            records.append(crashed_record(crashitem, column.label, message))
        if not records:
            return
        from pytest_export.reporting.transport import attach

        attach(report, records)
        selected = plugin_session(self.config).selected
        for record in records:
            selected.add(record_key(record))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Join a finished worker's selected keys into the controller's SELECTED."""
        output = getattr(node, "workeroutput", None) or {}
        selected = plugin_session(self.config).selected
        for case, mode in output.get(_SELECTED_KEY, ()):
            selected.add((case, mode))
