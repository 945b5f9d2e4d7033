"""Shapes × runtimes: per case, what each runtime did with each input shape tried (the data a report keeps).

Built from the ``shape_table`` rows (exportcore.outcome.ShapeRow) that target outcomes carry:
rows are input shapes (the examples, drawn in-range shapes, out-of-range probes),
columns the exported program's ``.module()`` and each target; a cell is accepted,
rejected, wrong result or error. Drawn by pytest_export.rendering.runtimes. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from typing import Any

from exportcore.columns import Column
from pytest_export.results.records import Record

__all__ = ["MODULE_COLUMN", "runtime_tables"]

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
        column = Column.parse(record.mode)  # a report's label
        target, device = column.name, column.device
        key = record.case if device == "cpu" else f"{record.case} [{device}]"
        table = tables.setdefault(key, {"columns": [MODULE_COLUMN], "rows": []})
        if target not in table["columns"]:
            table["columns"].append(target)
        by_shape = {r["shapes"]: r for r in table["rows"]}
        for row in rows:
            merged = by_shape.get(row.shapes)
            if merged is None:
                merged = {"shapes": row.shapes, "kind": row.kind}
                table["rows"].append(merged)
                by_shape[row.shapes] = merged
            if target in row.cells:
                merged[target] = row.cells[target]
            if MODULE_COLUMN in row.cells:
                merged.setdefault(MODULE_COLUMN, row.cells[MODULE_COLUMN])
    for table in tables.values():
        first, rest = table["columns"][:1], table["columns"][1:]
        table["columns"] = first + sorted(rest, key=lambda c: (_TARGET_ORDER + (c,)).index(c))
        table["rows"].sort(key=lambda r: (_KIND_ORDER.get(r["kind"], 2), r["kind"]))
    return dict(sorted(tables.items()))
