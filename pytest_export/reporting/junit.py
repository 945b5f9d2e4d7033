"""JUnit XML: each record's mode, verdict, stage, category and findings, valid in every junit family.

``xunit1`` (and ``legacy``) allow ``<properties>`` in a ``<testcase>``: the facts go there, one set
per record. ``xunit2``, pytest's default, does not (pytest warns on ``record_property`` there), so
the same facts go into the ``<testsuite>``'s properties, each name carrying the test's node id, as
``record_testsuite_property`` does.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_export.results.records import Record, failure_of

__all__ = ["SuiteProperties", "junit_properties", "per_testcase"]


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

        from pytest_export.session_state import RECORDS

        xml: Any = self.config.stash.get(xml_key, None)
        if xml is None or per_testcase(self.config):
            return
        for record in self.config.stash.get(RECORDS, []):
            for name, value in junit_properties(record):
                xml.add_global_property(f"{record.test} {name}", value)
