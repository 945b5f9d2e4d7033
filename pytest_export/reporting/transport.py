"""How a test's records reach the controller: one attribute of its TestReport, encoded once, decoded once.

The process that ran the test (a worker, or the controller itself in a serial run) encodes the
settled records (``Record.to_dict()``, JSON builtins) onto ``report.export_records`` where the
report is made; pytest-xdist serializes report attributes, so serial and distributed runs take
the same path. The controller decodes them once, in its ``pytest_runtest_logreport``
(pytest_export.plugin.Controller); later readers of the same report (the journal, the junit
correction) read the encoded form, which the controller keeps equal to what it admitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    import pytest

    from pytest_export.results.records import Record

__all__ = ["attach", "carried", "decode", "verdicts"]

_ATTRIBUTE = "export_records"


def attach(report: pytest.TestReport, records: Iterable[Record]) -> None:
    """Put ``records`` on ``report`` for the controller (replacing any it carried)."""
    setattr(report, _ATTRIBUTE, [record.to_dict() for record in records])


def carried(report: Any) -> list[dict[str, Any]]:
    """Return the encoded records ``report`` carries (none for a report of no exportable test)."""
    return getattr(report, _ATTRIBUTE, None) or []


def decode(report: pytest.TestReport) -> list[Record]:
    """Return the records ``report`` carries; a malformed one raises SchemaError naming the test and field."""
    from pytest_export.results.records import Record

    return [Record.from_dict(data, f"{report.nodeid}: export_records[{i}]") for i, data in enumerate(carried(report))]


def verdicts(report: Any) -> set[str]:
    """Return the verdicts of the records ``report`` carries, without decoding them."""
    return {data.get("verdict") for data in carried(report)}
