"""Audits of a run's records that no verdict may contradict: read by tests and by anyone holding a report.

A record counted ``passed`` whose own dynamism ledger says a dim declared with a range became
narrower or one size would be a pass the program does not back: the declared range is a promise
(``Dim("batch", min=2, max=64)``), and a size it promises that the program refuses is a failure.
A dim declared ``Dim.AUTO`` (or unbounded ``Dim.DYNAMIC``) promises no range: torch's choice is
reported, not audited.
"""

from __future__ import annotations

from typing import Iterable

from pytest_export.results.records import Record

__all__ = ["passes_contradicting_their_dims"]


def passes_contradicting_their_dims(records: Iterable[Record]) -> list[str]:
    """``case [mode]: dim`` for each passed record with a range-declared dim narrowed or specialized."""
    out = []
    for record in records:
        if record.verdict not in ("passed", "xpassed") or record.outcome is None:
            continue
        for dim in record.outcome.dims:
            promised = "int_oo" not in dim.declared
            if promised and dim.kind in ("narrowed", "specialized"):
                out.append(f"{record.case} [{record.mode}]: {dim.short()} ({dim.kind})")
    return out
