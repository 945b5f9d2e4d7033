"""Shapes × runtimes: per case, what each runtime did with each input shape tried.

Built from the ``shape_table`` rows that target outcomes carry (exportcore.targets):
rows are input shapes (the examples, drawn in-range shapes, out-of-range probes),
columns the exported program's ``.module()`` and each target; a cell is accepted,
rejected, wrong result or error. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from typing import Any

from pytest_export.records import Record
from pytest_export.report_style import render_page

__all__ = ["MODULE_COLUMN", "runtime_tables", "runtimes_html", "runtimes_markdown", "runtimes_section"]

MODULE_COLUMN = ".module()"
_TARGET_ORDER = ("aoti", "onnx", "executorch")
_KIND_ORDER = {"example": 0, "in range": 1}


def runtime_tables(records: list[Record]) -> dict[str, dict[str, Any]]:
    """Return ``{case or "case [device]": {"columns": [...], "rows": [{"shapes", "kind", column: verdict}]}}``."""
    tables: dict[str, dict[str, Any]] = {}
    for record in records:
        rows = record.outcome.shape_table if record.outcome is not None else []
        if not rows:
            continue
        target, _, device = record.mode.partition("-")
        key = record.case if not device else f"{record.case} [{device}]"
        table = tables.setdefault(key, {"columns": [MODULE_COLUMN], "rows": []})
        if target not in table["columns"]:
            table["columns"].append(target)
        by_shape = {r["shapes"]: r for r in table["rows"]}
        for row in rows:
            merged = by_shape.get(row["shapes"])
            if merged is None:
                merged = {"shapes": row["shapes"], "kind": row.get("kind", "")}
                table["rows"].append(merged)
                by_shape[row["shapes"]] = merged
            if target in row:
                merged[target] = row[target]
            if MODULE_COLUMN in row:
                merged.setdefault(MODULE_COLUMN, row[MODULE_COLUMN])
    for table in tables.values():
        first, rest = table["columns"][:1], table["columns"][1:]
        table["columns"] = first + sorted(rest, key=lambda c: (_TARGET_ORDER + (c,)).index(c))
        table["rows"].sort(key=lambda r: (_KIND_ORDER.get(r["kind"], 2), r["kind"]))
    return dict(sorted(tables.items()))


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
