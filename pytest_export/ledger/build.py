"""Build one torch version's ledger from plugin JSON reports, keeping dates from the previous ledger.

The reports are taken in the order they started: a later run's result of a (case, mode), a rerun
after a fix, replaces an earlier one, and the header names the cases each report replaced. The
records are exactly the reports' results: a model they do not hold is not in the new ledger (a
drift page lists it as missing), except a case a stopped run was in when it was stopped, whose
previous record is kept (not re-checked) and which the header lists as unfinished. ``first_seen``
comes from the previous ledger (or the earliest report holding the result); ``last_changed`` stays
while the verdict, the failing stage and the category stay.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from pytest_export.ledger.rows import LedgerError, LedgerRow, row_of, state_of
from pytest_export.ledger.store import VersionLedger
from pytest_export.results.records import Record, failure_of
from pytest_export.results.report import Report

__all__ = ["build_version", "release_of", "report_torch"]

#: the environment fields the pages show, copied from the reports into the header
_ENVIRONMENT = ("python", "platform", "pytest_export")


def release_of(torch: str) -> str:
    """Return the release of a torch version string: ``2.15.0+cu132`` -> ``2.15.0``."""
    return torch.split("+", 1)[0].strip()


def report_torch(report: Report) -> str:
    """Return the torch a report ran on (a report recovered from its journal: its outcomes' version)."""
    recorded = str((report.environment or {}).get("torch", ""))
    if recorded[:1].isdigit():
        return recorded
    return next((r.outcome.torch_version for r in report.records if r.outcome is not None
                 and r.outcome.torch_version), "")


def _stopped(record: Record, stop_reason: str) -> bool:
    # The case a shard stopped at a deadline was in records "crashed: killed by SIGTERM":
    # the run's end, not the model's.
    failure = failure_of(record)
    if record.verdict != "crashed" or failure is None:
        return False
    return f"running {record.test}" in stop_reason or "SIGTERM" in f"{failure.message} {failure.detail}"


def build_version(reports: Sequence[tuple[str, Report]], torch: str, previous: VersionLedger | None,
                  notes: Sequence[str] = ()) -> VersionLedger:
    """Return the ledger of torch ``torch`` from ``reports`` (name, report); raise LedgerError on a mismatch."""
    for name, report in reports:
        ran = report_torch(report)
        if release_of(ran) != torch:
            raise LedgerError(f"report {name} ran on torch {ran or '(not recorded)'}, not {torch}: build each torch "
                              "version's ledger from its own reports (--torch)")
    ordered = sorted(reports, key=lambda nr: (str(nr[1].environment.get("started", "")), nr[0]))
    old = previous.by_key() if previous is not None else {}
    rows: dict[tuple[str, str], LedgerRow] = {}
    source: dict[tuple[str, str], str] = {}
    replaced: dict[str, set[str]] = {}
    unfinished: set[str] = set()
    for name, report in ordered:
        date = str(report.environment.get("started", ""))[:10] or "unknown"
        for record in report.records:
            if _stopped(record, report.stop_reason):
                unfinished.add(record.case)
                continue
            key = (record.case, record.mode)
            row, before = row_of(record, date), rows.get(key) or old.get(key)
            if before is not None:
                row.first_seen = min(before.first_seen, date)
                if state_of(before) == state_of(row):
                    row.last_changed = before.last_changed
            if key in source:
                replaced.setdefault(name, set()).add(record.case)
            rows[key], source[key] = row, name
    # A case the stopped run did not finish is not judged on its finished modes alone: its last records stay.
    rows = {key: row for key, row in rows.items() if key[0] not in unfinished}
    rows.update({key: replace(row) for key, row in old.items() if key[0] in unfinished})
    header = _header(ordered, source, replaced, sorted(unfinished), notes)
    return VersionLedger(torch, header, sorted(rows.values(), key=lambda r: r.key))


def _header(ordered: Sequence[tuple[str, Report]], source: dict[tuple[str, str], str],
            replaced: dict[str, set[str]], unfinished: list[str], notes: Sequence[str]) -> dict[str, Any]:
    runs = []
    for name, report in ordered:
        env = report.environment or {}
        entry: dict[str, Any] = {"name": name, "started": str(env.get("started", "")), "torch": report_torch(report),
                                 "results": len({(r.case, r.mode) for r in report.records})}
        # a report that replaced an earlier result is a rerun: the header names every case whose rows it gave
        cases = sorted({r.case for r in report.records if source.get((r.case, r.mode)) == name})
        if replaced.get(name) and cases:
            entry["replaced"] = cases
        if env.get("zoo_packages"):
            entry["zoo_packages"] = dict(sorted(env["zoo_packages"].items()))
        if not report.complete:
            entry["incomplete"] = report.stop_reason or "interrupted"
        runs.append(entry)
    first = ordered[0][1].environment if ordered else {}
    header: dict[str, Any] = {k: str(first.get(k)) for k in _ENVIRONMENT if first.get(k) is not None}
    if ordered:
        header["torch_build"] = report_torch(ordered[0][1])
    header["reports"] = runs
    header["notes"] = [n for n in notes if n.strip()]
    header["unfinished"] = unfinished
    return header
