"""Turn a changed ExportDB case into a "drift" failure that names the expectation to update."""

from __future__ import annotations

import dataclasses
from typing import Any, Generator

import pytest

from exportdb.registry import ExportCase, Fails, installed_torch


def _db_case(item: pytest.Item) -> ExportCase | None:
    return getattr(getattr(item, "function", None), "exportdb_case", None)


#: The last Outcome of an ExportDB item, as the plugin's documented hook handed it over.
_OUTCOME = pytest.StashKey[Any]()


def pytest_export_outcome(item: pytest.Item, case: Any, outcome: Any) -> None:
    """Fail a passing ExportDB mode whose documented finding (e.g. a silent specialization) is gone."""
    db = _db_case(item)
    if db is None:
        return
    item.stash[_OUTCOME] = outcome
    if not db.findings or outcome.status != "passed":
        return
    from exportcore.diagnosis.failures import finding_missing

    seen = {f.kind for f in outcome.findings}
    missing = [kind for kind in db.findings if kind not in seen]
    if missing:
        outcome.status = "failed"
        outcome.failure = finding_missing(missing)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outside the plugin's wrapper: our headline wins
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Prefix failures of ExportDB tests with the case, its mode and where to update the expectation."""
    result = yield
    report = result.get_result()
    case = _db_case(item)
    if case is None or report.when != "call" or not report.failed:
        return
    mode = getattr(item, "callspec", None) and item.callspec.params.get("export_mode")
    if mode not in case.expect:
        return
    headline, detail = drift_message(case, mode, _failure(item, report))
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        crash.message = headline
    if hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection("ExportDB drift", detail)
    else:
        report.longrepr = f"{headline}\n{detail}\n\n{report.longreprtext}"


def drift_message(case: Any, mode: str, failure: dict[str, Any] | None) -> tuple[str, str]:
    """Return (headline, detail) for an ExportDB case whose ``mode`` no longer behaves as recorded."""
    expected = case.expect[mode]
    where = case.location()
    version = installed_torch()
    on = f" on torch {version[0]}.{version[1]}" if version else ""
    since = case.since(mode) if hasattr(case, "since") else ""
    recorded = f"'{expected}'" + (f" for {since}" if since else "")
    if failure is None:
        now = ("now passes" if isinstance(expected, Fails) else "now fails") + on
    else:
        now = f"now fails with {failure.get('category')} at {failure.get('stage')}{on}"
    if failure is not None and failure.get("exc_type") == "FindingMissing":
        fix = "remove the missing kinds from findings= (torch no longer reports them), or fix the case"
    elif failure is None and isinstance(expected, Fails):
        fix = f'remove "{mode}" from expect= (the mode passes with torch now)'
    elif failure is None:
        fix = "no outcome was recorded; see the failure above"
    else:
        fix = f'set expect["{mode}"] = Fails("{failure.get("category")}", stage="{failure.get("stage")}")'
        if not isinstance(expected, Fails):
            fix += " and name a rewrite, or fix the case"
    after = ""
    if version and failure is not None and failure.get("exc_type") != "FindingMissing":
        after = f'Fails("{failure.get("category")}", stage="{failure.get("stage")}")'
    elif version and failure is None and isinstance(expected, Fails):
        after = "PASS"
    headline = f"drift: exportdb case {case.name} [{mode}] was recorded as {recorded}, {now}"
    detail = f"{headline}\nupdate the expectation in {where}: {fix}"
    if after:  # a torch upgrade changed it: older torch may still behave as recorded
        detail += (f'\nif older torch still behaves as recorded, declare the change instead: expect["{mode}"] = '
                   f'Changed(<as recorded>, at="{version[0]}.{version[1]}", after={after})')
    return headline, detail


def _failure(item: pytest.Item, report: pytest.TestReport) -> dict[str, Any] | None:
    outcome = item.stash.get(_OUTCOME, None)
    if outcome is None or outcome.status == "passed":
        return None
    return dataclasses.asdict(outcome.failure) if outcome.failure is not None else {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Silence finding warnings on ExportDB tests: the catalog records behaviour, it does not fix it."""
    quiet = pytest.mark.filterwarnings("ignore::pytest_export.runner.ExportFindingWarning")
    for item in items:
        if _db_case(item) is not None:
            item.add_marker(quiet)
