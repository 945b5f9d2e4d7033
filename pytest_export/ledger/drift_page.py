"""A drift as a Markdown page: a summary table of counts, then each group's rows with their repro commands."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from pytest_export.ledger.drift import ERROR_FLOOR, ERROR_STEPS, TIME_FLOOR, TIME_STEP, Change, Drift
from pytest_export.ledger.page_parts import cell, model_name
from pytest_export.ledger.rows import LedgerRow

__all__ = ["render_drift"]


def render_drift(d: Drift, covers: str = "") -> str:
    """Return the drift page; ``covers`` is a sentence on what the two sides hold (shown under the title)."""
    lines = [f"# Drift: {d.old_label} → {d.new_label}", ""]
    if covers:
        lines += [covers, ""]
    scope = f" among the cases matching {', '.join(f'`{g}`' for g in d.only)}" if d.only else ""
    lines += [f"{d.compared} results compared (the (model, mode) pairs on both sides){scope}: {d.old_cases} models"
              f" before, {d.new_cases} after. A start or stop of failing is between an exportable verdict and a"
              " failure; a skip on either side is an other change. Each row's repro re-checks it on the torch"
              " installed.", ""]
    groups = [("Started failing", d.started_failing), ("Started passing", d.started_passing),
              ("Other verdict changes", d.other)]
    moves = [(f"Measured error moved ≥{step:g}×", d.error_moves.get(step, [])) for step in ERROR_STEPS]
    times = [(f"Export time ≥{TIME_STEP:g}× slower", d.slower), (f"Export time ≥{TIME_STEP:g}× faster", d.faster)]
    categories = [c for rows in d.new_categories.values() for c in rows]
    summary = [*groups, ("New models", d.new_models), ("Missing models", d.missing_models), *moves, *times,
               ("Results in a new failure category", categories)]
    lines += ["| what | count |", "|---|---:|", *(f"| {name} | {len(rows)} |" for name, rows in summary), ""]
    for name, rows in groups:
        lines += _section(name, rows, _verdict_table(rows))
    lines += _section("New models", d.new_models, [", ".join(f"`{model_name(c)}`" for c in d.new_models), ""])
    lines += _section("Missing models", d.missing_models,
                      [", ".join(f"`{model_name(c)}`" for c in d.missing_models), ""])
    for name, rows in moves:
        lines += _section(name, rows, _number_table(rows, "error", _error))
    if any(rows for _, rows in moves):
        lines += [f"(errors are fractions of the tolerance, 1 fails; moves where both are under {ERROR_FLOOR:g} are"
                  " rounding, not listed)", ""]
    for name, rows in times:
        lines += _section(name, rows, _number_table(rows, "export s", _time))
    if d.slower or d.faster:
        lines += [f"(times under {TIME_FLOOR:g} s on both sides are not listed: they move with the machine's load)",
                  ""]
    for category, rows in sorted(d.new_categories.items()):
        lines += _section(f"New failure category `{category}`", rows, _verdict_table(rows))
    return "\n".join(lines)


def _error(row: Optional[LedgerRow]) -> float:
    return row.error if row is not None and row.error is not None else 0.0


def _time(row: Optional[LedgerRow]) -> float:
    return row.export_s if row is not None and row.export_s is not None else 0.0


def _section(name: str, rows: Sequence[object], body: list[str]) -> list[str]:
    if not rows:
        return []
    return [f"## {name} ({len(rows)})", "", *body]


def _verdict_table(rows: Sequence[Change]) -> list[str]:
    out = ["| model | mode | before | after | repro |", "|---|---|---|---|---|"]
    out += [f"| `{model_name(c.case)}` | {c.mode} | {cell(c.old)} | {cell(c.new)} | `{c.repro}` |" for c in rows]
    return [*out, ""]


def _number_table(rows: Sequence[Change], what: str, value: Callable[[Optional[LedgerRow]], float]) -> list[str]:
    out = [f"| model | mode | {what} before | {what} after | × | repro |", "|---|---|---:|---:|---:|---|"]
    out += [f"| `{model_name(c.case)}` | {c.mode} | {value(c.old):.3g} | {value(c.new):.3g} | {c.by:.2f} | "
            f"`{c.repro}` |" for c in sorted(rows, key=lambda c: -max(c.by, 1 / c.by))]
    return [*out, ""]
