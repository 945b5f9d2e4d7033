"""Shapes × runtimes, drawn: the HTML section and the Markdown table (the data: pytest_export.results.runtimes).

Built from the ``shape_table`` rows that target outcomes carry (exportcore.targets):
rows are input shapes (the examples, drawn in-range shapes, out-of-range probes),
columns the exported program's ``.module()`` and each target; a cell is accepted,
rejected, wrong result or error. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from typing import Any

from pytest_export.rendering.style import render_page
from pytest_export.results.runtimes import MODULE_COLUMN, runtime_tables

#: MODULE_COLUMN and runtime_tables (the data) are results.runtimes', re-exported for the renderers' callers.
__all__ = ["MODULE_COLUMN", "runtime_tables", "runtimes_html", "runtimes_markdown", "runtimes_section"]


def runtimes_section(tables: dict[str, dict[str, Any]]) -> list[tuple[str, list[str], list[Any]]]:
    """Return per case (case, columns, rows of (shapes, kind, [(cell text, wrong?)])) for the HTML section."""
    out = []
    for case, table in tables.items():
        cols = table["columns"]
        rows = []
        for row in table["rows"]:
            out_of_range = row["kind"].startswith("out of range")
            cells = []
            for c in cols:
                verdict = row.get(c, "")
                # An out-of-range shape must be rejected, an in-range one accepted with the right result.
                bad = verdict in ("wrong result", "error") or (out_of_range and verdict == "accepted") or (
                    not out_of_range and verdict == "rejected")
                cells.append((verdict or "–", bad))
            rows.append((row["shapes"], row["kind"], cells))
        out.append((case, cols, rows))
    return out


def runtimes_html(tables: dict[str, dict[str, Any]]) -> str:
    """Return the HTML section with one shapes × runtimes table per case ("" when there is none)."""
    if not tables:
        return ""
    return render_page("report_runtimes.html.j2", runtimes=runtimes_section(tables))


def runtimes_markdown(tables: dict[str, dict[str, Any]]) -> list[str]:
    """Return Markdown lines: one shapes × runtimes table per case (none when there is none).

    A broken cell (an in-range shape rejected or computed wrong, an out-of-range shape accepted)
    is marked, as the HTML colours it, and the legend says what an empty cell means.
    """
    if not tables:
        return []
    lines = ["", "### Shapes × runtimes", "",
             "❌ marks a broken cell: an in-range shape rejected, errored or computed wrong, or an out-of-range "
             "shape accepted. – : not tried in that runtime (its check stopped earlier, or the shape could not "
             "be built there).", ""]
    for case, cols, rows in runtimes_section(tables):
        lines += [f"**{case.replace('|', '/')}**", "", "| shapes | kind | " + " | ".join(cols) + " |",
                  "|---|---|" + "---|" * len(cols)]
        for shapes, kind, cells in rows:
            shown = " | ".join(f"❌ **{text}**" if bad else text for text, bad in cells)
            lines.append(f"| `{shapes}` | {kind} | {shown} |")
        lines.append("")
    return lines
