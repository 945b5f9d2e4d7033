"""Make a marker test's record say what pytest reported for it, junit properties included.

The engine decides a verdict before pytest has the last word: pytest's own ``xfail``
marker, a warnings filter or another plugin can still change the test's outcome.
"""

from __future__ import annotations

from typing import Any

import pytest

from exportcore.outcome import Failure
from pytest_export.junit import junit_properties
from pytest_export.records import Expectation, Record
from pytest_export.sanitize import clean_text

__all__ = ["settle_verdict"]


def settle_verdict(item: pytest.Item, record: Record, report: pytest.TestReport, excinfo: Any) -> None:
    """Make a marker test's record say what pytest reported for it (after xfail handling).

    pytest's own ``xfail`` marker turns a failing export into XFAIL and a passing one into
    XPASS; another plugin or a warnings filter can fail a test whose export passed. The
    record, and so the matrix, the reports and the gate, follow pytest.
    """
    verdict = record.verdict
    xfail = getattr(report, "wasxfail", None)
    if report.skipped:
        settled = "xfailed" if xfail is not None else "skipped"
    elif report.passed:
        settled = "xpassed" if xfail is not None else "passed"
    elif str(report.longrepr).startswith("[XPASS(strict)]"):
        settled, xfail = "xpassed", str(report.longrepr)[len("[XPASS(strict)]"):].strip()
    else:
        settled = verdict if verdict in ("failed", "error", "timeout", "crashed", "xpassed") else "failed"
    if settled == verdict:
        return
    old = junit_properties(record)
    record.verdict = settled
    if xfail is not None and record.expect is None:
        record.expect = Expectation(clean_text(f"pytest.mark.xfail: {xfail}".rstrip(": ")))
    outcome = record.outcome
    if settled == "failed" and outcome is not None and outcome.failure is None:
        exc_type = excinfo.typename if excinfo is not None else "Failed"
        text = clean_text(str(excinfo.value) if excinfo is not None else str(report.longrepr))
        first = (text.strip().splitlines() or [exc_type])[0]
        outcome.failure = Failure(
            stage="test", category="test", exc_type=clean_text(exc_type), message=first, detail=text,
            hint="the export passed, but pytest failed the test (a hook, fixture or warnings filter)",
        )
    # junit takes the properties from the item (teardown report); this report holds a copy.
    for props in (item.user_properties, report.user_properties):
        _replace(props, old, junit_properties(record))


def _replace(props: list[tuple[str, Any]], old: list[tuple[str, str]], new: list[tuple[str, str]]) -> None:
    start = next((i for i in range(len(props) - len(old), -1, -1) if list(props[i:i + len(old)]) == old), None)
    if start is not None:
        props[start:start + len(old)] = new
