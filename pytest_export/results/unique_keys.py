"""One result per (case, mode) in a session: a second test recording a key another test holds is an error.

Reports and the gate read a key through one record (records.worst), so two tests under one key
(``export_check(case_id="shared")`` in both) hide one another: a real passed -> failed change
of one reads as no regression next to the other's known failure. The controller checks the
records as they arrive, which also holds under xdist, where each worker sees only its share.
"""

from __future__ import annotations

from typing import Any

from exportcore.diagnosis.failures import duplicate_key
from exportcore.outcome import Outcome
from pytest_export.results.records import Record, record_key
from pytest_export.results.verdicts import verdict_of

__all__ = ["KeyOwners", "fail_report"]


class KeyOwners:
    """The test that recorded each (case, mode) first in this session."""

    def __init__(self) -> None:
        self.owners: dict[tuple[str, str], str] = {}

    def admit(self, record: Record) -> Record:
        """Return ``record``, or, if another test already holds its key, an ``error`` record naming both tests.

        The same test may record a key again (a rerun): only a second test is refused.
        """
        key = record_key(record)
        owner = self.owners.setdefault(key, record.test)
        if owner == record.test:
            return record
        how = "export_check(case_id=...)" if record.source == "fixture" else "its case id"
        message = (f"{record.test}: result key (case {record.case!r}, mode {record.mode!r}) is already recorded by "
                   f"{owner}; two results under one key would let one hide the other from the reports and the "
                   f"gate: give each test a unique {how}")
        outcome = Outcome(case_id=record.case, mode=record.mode, status="error", failure=duplicate_key(message))
        return Record.make(record.test, record.case, record.mode, verdict_of(outcome), outcome, duration=record.duration,
                           source=record.source)


def fail_report(report: Any, problems: list[str]) -> None:
    """Make a test's report fail with ``problems`` (it keeps its own failure text if it has one)."""
    text = "\n".join(problems)
    if report.failed:
        report.sections.append(("pytest-export: duplicate result key", text))
        return
    report.outcome = "failed"
    report.longrepr = text
    if hasattr(report, "wasxfail"):
        del report.wasxfail  # not an expected failure: the session's results are ambiguous
