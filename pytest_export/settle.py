"""Make a marker test's record say what pytest reported for it.

The engine decides a verdict before pytest has the last word: pytest's own ``xfail``
marker, a warnings filter or another plugin can still change the test's outcome.

One failure, shown once (:func:`refer_to_earlier`): a data-dependent branch fails the same way in non_strict
and training (and often strict): the same message, hint, ExportDB rewrite and torch detail, dozens of lines
each time. The first mode's report shows it in full; a later mode whose report would read the same (but for
the mode in its first line) shows its headline and "same failure as [mode]". -vv and --tb=long show every mode
in full (each with its own torch traceback). Per process: under xdist a case's modes run on one worker
(pytest_export.distributed.scheduling), so they meet here too.
"""

from __future__ import annotations

from typing import Any

import pytest

from exportcore.failures import failed_after_export
from pytest_export.results.records import Expectation, Record
from pytest_export.results.sanitize import clean_text

__all__ = ["refer_to_earlier", "settle_verdict"]


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
    record.verdict = settled
    if xfail is not None and record.expect is None:
        record.expect = Expectation(clean_text(f"pytest.mark.xfail: {xfail}".rstrip(": ")))
    outcome = record.outcome
    if settled == "failed" and outcome is not None and outcome.failure is None:
        exc_type = excinfo.typename if excinfo is not None else "Failed"
        text = clean_text(str(excinfo.value) if excinfo is not None else str(report.longrepr))
        outcome.failure = failed_after_export(clean_text(exc_type), text)


#: (case id, failure text without its first line) -> the mode whose report showed it in full.
_SHOWN = pytest.StashKey[dict]()


def refer_to_earlier(item: pytest.Item, case_id: str, mode: str, exc: BaseException | None,
                     full: bool) -> BaseException | None:
    """Return the exception the test raises: ``exc``, or a short one naming the mode that showed the same failure.

    Only a failure report (runner.ExportCheckFailed: its text and its summary ``headline``) is shortened.
    """
    if full or exc is None or not hasattr(exc, "headline"):
        return exc
    head, _, body = exc.msg.partition("\n")
    shown = item.config.stash.setdefault(_SHOWN, {})
    first = shown.setdefault((case_id, body), mode)
    if first == mode:
        return exc
    lines = body.splitlines()
    kept = [head, *lines[:1], *[line for line in lines[1:2] if line.startswith("  at ")]]
    kept.append(f"  same failure as [{first}]: its report above shows it in full (-vv shows every mode in full)")
    return type(exc)("\n".join(kept), exc.headline)
