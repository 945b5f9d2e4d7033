"""Make a marker test's record, once, with what pytest reported for it.

The engine proposes a verdict before pytest has the last word: pytest's own ``xfail``
marker, a warnings filter or another plugin can still change the test's outcome. So the
runner leaves a :class:`Pending` result on the item and :func:`settle`, called from
``pytest_runtest_makereport``, makes the record with the final verdict; its junit properties
are set from it there too (pytest_export.reporting.junit.set_properties).

One failure, shown once (:func:`refer_to_earlier`): a data-dependent branch fails the same way in non_strict
and training (and often strict): the same message, hint, ExportDB rewrite and torch detail, dozens of lines
each time. The first mode's report shows it in full; a later mode whose report would read the same (but for
the mode in its first line) shows its headline and "same failure as [mode]". -vv and --tb=long show every mode
in full (each with its own torch traceback). Per process: under xdist a case's modes run on one worker
(pytest_export.distributed.scheduling), so they meet here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from exportcore.diagnosis.failures import failed_after_export
from exportcore.outcome import Outcome
from pytest_export.results.records import Expectation, Record
from pytest_export.results.verdicts import after_pytest
from pytest_export.session_state import plugin_session

__all__ = ["Pending", "refer_to_earlier", "settle"]


@dataclass
class Pending:
    """A marker test's result before pytest's last word: the engine's outcome and the verdict it proposes."""

    test: str
    case: str
    mode: str
    proposed: str  # results.verdicts.verdict_of's, before pytest's xfail, warnings filters and other plugins
    outcome: Outcome
    expect: Expectation | None
    duration: float


def settle(pending: Pending, report: pytest.TestReport, excinfo: Any) -> Record:
    """Return the marker test's record, its verdict what pytest reported for it (after xfail handling).

    The one place a marker record's verdict is decided: pytest's own ``xfail`` marker turns a
    failing export into XFAIL and a passing one into XPASS; another plugin or a warnings filter
    can fail a test whose export passed. The record, and so the matrix, the reports, the gate and
    the junit properties, follow pytest.
    """
    verdict, expect, outcome = pending.proposed, pending.expect, pending.outcome
    xfail = getattr(report, "wasxfail", None)
    strict_xpass = report.failed and str(report.longrepr).startswith("[XPASS(strict)]")
    if strict_xpass:
        xfail = str(report.longrepr)[len("[XPASS(strict)]"):].strip()
    settled = after_pytest(verdict, skipped=report.skipped, passed=report.passed, xfail=xfail is not None,
                           strict_xpass=strict_xpass)
    if settled != verdict:
        if xfail is not None and expect is None:
            expect = Expectation(f"pytest.mark.xfail: {xfail}".rstrip(": "))
        if settled == "failed" and outcome.failure is None:
            exc_type = excinfo.typename if excinfo is not None else "Failed"
            text = str(excinfo.value) if excinfo is not None else str(report.longrepr)
            outcome.failure = failed_after_export(exc_type, text)
    # Record.make makes every text encodable (the codec's encoder): a message needs no cleaning before
    return Record.make(pending.test, pending.case, pending.mode, settled, outcome, expect=expect,
                       duration=pending.duration)


def refer_to_earlier(item: pytest.Item, case_id: str, mode: str, exc: BaseException | None,
                     full: bool) -> BaseException | None:
    """Return the exception the test raises: ``exc``, or a short one naming the mode that showed the same failure.

    Only a failure report (runner.ExportCheckFailed: its text and its summary ``headline``) is shortened.
    """
    if full or exc is None or not hasattr(exc, "headline"):
        return exc
    head, _, body = exc.msg.partition("\n")
    shown = plugin_session(item.config).shown_failures
    first = shown.setdefault((case_id, body), mode)
    if first == mode:
        return exc
    lines = body.splitlines()
    kept = [head, *lines[:1], *[line for line in lines[1:2] if line.startswith("  at ")]]
    kept.append(f"  same failure as [{first}]: its report above shows it in full (-vv shows every mode in full)")
    return type(exc)("\n".join(kept), exc.headline)
