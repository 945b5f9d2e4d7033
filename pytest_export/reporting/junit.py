"""JUnit XML: each record's mode, verdict, stage, category and findings, valid in every junit family.

``xunit1`` (and ``legacy``) allow ``<properties>`` in a ``<testcase>``: the facts go there, one set
per record. ``xunit2``, pytest's default, does not (pytest warns on ``record_property`` there), so
the same facts go into the ``<testsuite>``'s properties, each name carrying the test's node id, as
``record_testsuite_property`` does.

A test whose export could not be checked at all (verdict ``error``: the test returned no valid case,
its dynamic_shapes do not fit its inputs, its model does not run in eager) is pytest's ERROR, not a
FAILED check, in the terminal and in the XML (``<error>``, as pytest writes a setup error), although
the engine finds it in the call phase. The teststatus hook says so for the terminal; junitxml, which
writes any call-phase failure as ``<failure>``, is corrected right after it wrote the testcase.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_export.results.records import Record, failure_of

__all__ = ["ErrorsAsErrors", "SuiteProperties", "is_error_report", "junit_properties", "per_testcase", "set_properties"]


def junit_properties(record: Record) -> list[tuple[str, str]]:
    """Return the junit properties (export_mode, _status, _stage, _category, _findings) of a record."""
    failure = failure_of(record)
    findings = sorted({f.kind for f in record.outcome.findings}) if record.outcome is not None else []
    return [
        ("export_mode", record.mode),
        ("export_status", record.verdict),
        ("export_stage", failure.stage if failure else ""),
        ("export_category", failure.category if failure else ""),
        ("export_findings", ",".join(findings)),
    ]


def set_properties(item: pytest.Item, report: pytest.TestReport, records: list[Record]) -> None:
    """Give the testcase its records' properties, once, from their settled verdicts (xunit1/legacy only).

    junitxml reads them from the teardown report, which copies the item's; the report at hand gets them too.
    """
    if not per_testcase(item.config):  # xunit2 allows no testcase properties: SuiteProperties
        return
    properties = [prop for record in records for prop in junit_properties(record)]
    item.user_properties.extend(properties)
    report.user_properties.extend(properties)


def is_error_report(report: pytest.TestReport) -> bool:
    """Whether a failed call-phase report is an export that could not be checked (every record not passing is an error)."""
    if report.when != "call" or not report.failed:
        return False
    from pytest_export.reporting.transport import verdicts

    return verdicts(report) - {"passed", "xfailed", "skipped"} == {"error"}


def per_testcase(config: pytest.Config) -> bool:
    """Whether this run's junit family allows properties in a testcase (workers read the same ini)."""
    try:
        family = str(config.getini("junit_family"))
    except ValueError:  # junitxml disabled (-p no:junitxml)
        return False
    return family in ("xunit1", "legacy")


class SuiteProperties:
    """Controller-side, xunit2 only: the records' properties as testsuite properties, before the XML is written."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)  # before junitxml's own sessionfinish writes the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from _pytest.junitxml import xml_key

        from pytest_export.session_state import plugin_session

        xml: Any = self.config.stash.get(xml_key, None)
        if xml is None or per_testcase(self.config):
            return
        for record in plugin_session(self.config).records:
            for name, value in junit_properties(record):
                xml.add_global_property(f"{record.test} {name}", value)


class ErrorsAsErrors:
    """Controller-side: junitxml writes a call-phase failure as ``<failure>``; an unchecked export is an ``<error>``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)  # after junitxml appended its <failure> for this report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        from _pytest.junitxml import xml_key

        xml: Any = self.config.stash.get(xml_key, None)
        if xml is None or not is_error_report(report):
            return
        nodes = xml.node_reporter(report).nodes
        failure = next((node for node in reversed(nodes) if node.tag == "failure"), None)
        if failure is None:  # another junit writer: nothing of junitxml's to correct
            return
        failure.tag = "error"
        xml.stats["failure"] -= 1
        xml.stats["error"] += 1
