"""Findings at a glance: what torch.export let through, per case, for the HTML and Markdown reports.

A finding (``size01_accepted``, ``specialized``, ``state_missing``, ...) does not fail a
test by default, so it must be visible without opening a record. Pure: no pytest, no torch.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any, Callable, NamedTuple

from pytest_export.sanitize import shown_text

__all__ = ["FindingRow", "finding_rows", "findings_badge", "findings_html", "findings_markdown"]

_MAX_ROWS = 500


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


def _e(value: Any) -> str:
    return escape(shown_text(value), quote=True)


def finding_rows(records: list[dict[str, Any]]) -> list[FindingRow]:
    """Return every finding of every record, in record order."""
    rows = []
    for i, r in enumerate(records):
        for f in (r.get("outcome") or {}).get("findings") or []:
            rows.append(FindingRow(r["case"], r["mode"], r["verdict"], str(f.get("severity", "")),
                                   str(f.get("kind", "")), str(f.get("input") or ""), str(f.get("message", "")), i))
    return rows


def findings_badge(record: dict[str, Any]) -> str:
    """Return the matrix-cell badge of a record's findings (empty if it has none)."""
    findings = (record.get("outcome") or {}).get("findings") or []
    if not findings:
        return ""
    kinds = ", ".join(sorted({str(f.get("kind", "")) for f in findings}))
    label = f"⚑ {len(findings)} finding{'s' if len(findings) > 1 else ''}"
    return f'<small class="fd" title="{_e(kinds)}">{_e(label)}</small>'


def findings_html(records: list[dict[str, Any]], anchors: list[str]) -> str:
    """Return the Findings section: one row per finding, linking to its record (empty if none)."""
    rows = finding_rows(records)
    if not rows:
        return ""
    kinds = Counter(row.kind for row in rows)
    summary = ", ".join(f"<code>{_e(k)}</code> {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    body = "".join(
        f'<tr><td><a href="#{anchors[row.index]}"><code>{_e(row.case)}</code></a> [{_e(row.mode)}]</td>'
        f'<td><span class="sev-{_e(row.severity)}">{_e(row.severity)}</span></td><td><code>{_e(row.kind)}</code></td>'
        f"<td>{_e(row.input)}</td><td>{_e(row.message)}</td></tr>"
        for row in rows[:_MAX_ROWS]
    )
    more = f'<p class="muted">… {len(rows) - _MAX_ROWS} more in the JSON report.</p>' if len(rows) > _MAX_ROWS else ""
    return (f'<h2 id="findings">Findings ({len(rows)})</h2>'
            f'<p class="muted">What torch.export let through without failing the test: {summary}.</p>'
            '<table class="index findings"><tr><th>case [mode]</th><th>severity</th><th>kind</th><th>input</th>'
            f"<th>message</th></tr>{body}</table>{more}")


def findings_markdown(records: list[dict[str, Any]], code: Callable[[Any], str], text: Callable[[Any], str],
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
