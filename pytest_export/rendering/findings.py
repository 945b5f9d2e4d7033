"""Findings at a glance: what torch.export let through, per case, for the HTML and Markdown reports.

A finding (``size01_accepted``, ``specialized``, ``state_missing``, ...) does not fail a
test by default, so it must be visible without opening a record. Pure: no pytest, no torch.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, NamedTuple

from pytest_export.results.records import Record

__all__ = [
    "FindingRow", "UNCHECKED", "finding_rows", "findings_badge", "findings_markdown", "findings_section", "unchecked",
]

_MAX_ROWS = 500
#: The finding of a verdict that ran none of its drawn shapes: a pass that must not read as a plain one.
UNCHECKED = "no_shape_checked"


class FindingRow(NamedTuple):
    """One finding of one record."""

    case: str
    mode: str
    verdict: str
    severity: str
    kind: str
    input: str
    message: str
    index: int  # position of the record in the report's records


def finding_rows(records: list[Record]) -> list[FindingRow]:
    """Return every finding of every record, in record order."""
    rows = []
    for i, r in enumerate(records):
        for f in r.outcome.findings if r.outcome is not None else ():
            rows.append(FindingRow(r.case, r.mode, r.verdict, f.severity, f.kind, f.input or "", f.message, i))
    return rows


def unchecked(record: Record) -> str:
    """Return why a record checked no drawn shape at all ("" when it checked some, or had none to check)."""
    findings = record.outcome.findings if record.outcome is not None else []
    return next((f.message for f in findings if f.kind == UNCHECKED), "")


def findings_badge(record: Record) -> tuple[str, str] | None:
    """Return the matrix-cell badge of a record's findings as (kinds, label); None if it has none."""
    findings = record.outcome.findings if record.outcome is not None else []
    if not findings:
        return None
    kinds = ", ".join(sorted({f.kind for f in findings}))
    return kinds, f"⚑ {len(findings)} finding{'s' if len(findings) > 1 else ''}"


def findings_section(records: list[Record], anchors: list[str]) -> dict[str, Any] | None:
    """Return the Findings section: one row per finding with its record's anchor (None if there is none)."""
    rows = finding_rows(records)
    if not rows:
        return None
    kinds = sorted(Counter(row.kind for row in rows).items(), key=lambda kv: (-kv[1], kv[0]))
    return {"total": len(rows), "kinds": kinds, "rows": [(row, anchors[row.index]) for row in rows[:_MAX_ROWS]],
            "more": max(0, len(rows) - _MAX_ROWS)}


def findings_markdown(records: list[Record], code: Callable[[Any], str], text: Callable[[Any], str],
                      limit: int) -> list[str]:
    """Return the Markdown Findings list (``code``/``text`` escape as the Markdown renderer does)."""
    rows = finding_rows(records)
    if not rows:
        return []
    out = ["", f"### Findings ({len(rows)})", ""]
    for row in rows[:limit]:
        where = f" {text(row.input)}" if row.input else ""
        out.append(f"- {code(row.case)} [{text(row.mode)}] **{text(row.kind)}**{where}: {text(row.message)}")
    if len(rows) > limit:
        out.append(f"- … {len(rows) - limit} more findings; see the HTML/JSON report.")
    return out
