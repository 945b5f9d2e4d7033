"""What moved between two ledgers (two torch versions, or two runs of one suite), grouped for a reader.

Per (case, mode) found on both sides: started failing (exportable before, not now), started passing,
other verdict changes (a skip, a timeout, a failure at another stage or category), the measured
error moved by 1.5x / 2x / 10x either way, the export time moved by 2x either way; per case: new and
missing models; per category: a failure category the old side never had. Skips are no verdict: a
result skipped on one side is an "other change", never a start or a stop of failing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Sequence

from pytest_export.ledger.rows import LedgerRow
from pytest_export.ledger.store import VersionLedger

__all__ = ["Change", "Drift", "drift"]

EXPORTABLE = ("passed", "xpassed")
ERROR_STEPS = (10.0, 2.0, 1.5)
#: below a thousandth of the tolerance an error is rounding: moves under it are not reported as moves
ERROR_FLOOR = 1e-3
TIME_STEP = 2.0
#: export times under a second move with the machine's load, not with torch
TIME_FLOOR = 1.0


@dataclass
class Change:
    case: str
    mode: str
    old: LedgerRow | None
    new: LedgerRow | None
    by: float = 0.0  # the ratio new/old of a moved number

    @property
    def repro(self) -> str:
        row = self.new or self.old
        return row.repro if row is not None else ""


@dataclass
class Drift:
    old_label: str
    new_label: str
    compared: int = 0  # (case, mode) results on both sides
    old_cases: int = 0
    new_cases: int = 0
    only: Sequence[str] = ()
    started_failing: list[Change] = field(default_factory=list)
    started_passing: list[Change] = field(default_factory=list)
    other: list[Change] = field(default_factory=list)
    new_models: list[str] = field(default_factory=list)
    missing_models: list[str] = field(default_factory=list)
    #: threshold (10, 2, 1.5) -> the results whose error moved by at least that much (and less than the next)
    error_moves: dict[float, list[Change]] = field(default_factory=dict)
    slower: list[Change] = field(default_factory=list)
    faster: list[Change] = field(default_factory=list)
    new_categories: dict[str, list[Change]] = field(default_factory=dict)

    @property
    def regressed(self) -> bool:
        return bool(self.started_failing or self.missing_models)


def _kept(rows: Sequence[LedgerRow], only: Sequence[str]) -> dict[tuple[str, str], LedgerRow]:
    return {r.key: r for r in rows if not only or any(fnmatchcase(r.case, glob) for glob in only)}


def drift(old: VersionLedger, new: VersionLedger, old_label: str, new_label: str,
          only: Sequence[str] = ()) -> Drift:
    """Return what moved from ``old`` to ``new``; ``only`` (globs over case ids) narrows both sides."""
    before, after = _kept(old.rows, only), _kept(new.rows, only)
    old_cases, new_cases = {c for c, _ in before}, {c for c, _ in after}
    out = Drift(old_label, new_label, old_cases=len(old_cases), new_cases=len(new_cases), only=tuple(only))
    out.new_models = sorted(new_cases - old_cases)
    out.missing_models = sorted(old_cases - new_cases)
    for key in sorted(set(before) & set(after)):
        a, b = before[key], after[key]
        out.compared += 1
        change = Change(key[0], key[1], a, b)
        if a.verdict in EXPORTABLE and b.verdict not in EXPORTABLE and b.verdict != "skipped":
            out.started_failing.append(change)
        elif b.verdict in EXPORTABLE and a.verdict not in EXPORTABLE and a.verdict != "skipped":
            out.started_passing.append(change)
        elif (a.verdict, a.stage, a.category) != (b.verdict, b.stage, b.category):
            out.other.append(change)
        _moves(out, a, b)
    old_categories = {r.category for r in before.values() if r.category}
    for key, row in sorted(after.items()):
        if row.category and row.category not in old_categories:
            out.new_categories.setdefault(row.category, []).append(Change(key[0], key[1], before.get(key), row))
    return out


def _moves(out: Drift, a: LedgerRow, b: LedgerRow) -> None:
    if a.error is not None and b.error is not None and max(a.error, b.error) >= ERROR_FLOOR:
        ratio = max(b.error, ERROR_FLOOR) / max(a.error, ERROR_FLOOR)
        step = next((s for s in ERROR_STEPS if max(ratio, 1 / ratio) >= s), None)
        if step is not None:
            out.error_moves.setdefault(step, []).append(Change(a.case, a.mode, a, b, ratio))
    if a.export_s is not None and b.export_s is not None and max(a.export_s, b.export_s) >= TIME_FLOOR:
        ratio = max(b.export_s, 0.01) / max(a.export_s, 0.01)
        if ratio >= TIME_STEP:
            out.slower.append(Change(a.case, a.mode, a, b, ratio))
        elif 1 / ratio >= TIME_STEP:
            out.faster.append(Change(a.case, a.mode, a, b, ratio))
