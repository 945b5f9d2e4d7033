"""Record an outcome made inside a running test (``export_check``, the unittest mixin, a bare check())."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

    from exportcore.case import Case
    from exportcore.outcome import Outcome

__all__ = ["record_outcome"]


def record_outcome(item: pytest.Item, outcome: Outcome, *, case: Case | None = None, duration: float = 0.0,
                   source: str = "fixture") -> Outcome:
    """Settle ``outcome`` (plugins' hook, clean text, findings warned), record it for ``item``; return it.

    The key is (outcome's case id or the test's node id, outcome's mode): what reports and the gate
    see, the same as for a marker test.
    """
    from pytest_export.journaling import note_done
    from pytest_export.records import Record
    from pytest_export.runner import add_record, settle_outcome

    outcome = settle_outcome(item, case, outcome)
    record = Record.make(item.nodeid, outcome.case_id or item.nodeid, outcome.mode, outcome.status, outcome,
                         duration=duration, source=source)
    add_record(item, record)
    note_done(item, record)
    return outcome
