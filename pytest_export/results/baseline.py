"""The baseline file: the list of known outcomes, one small stable entry per (case, mode).

An entry holds what the gate and a reviewer need — the case, the mode (a device's column is its
own mode: ``strict-cuda``), the test that checks it, the verdict, and for a failure its stage and
category — and nothing that changes between two runs of the same code (timings, dates, paths,
messages). Entries are sorted and written with sorted keys, so two updates of one run give the same
bytes and a pull request's diff shows only outcomes that changed.

A failure the baseline records is *known*: the run reports it as an expected failure with the
recorded reason (pytest_export.runner), and only the gate decides the session. Reports of the older
kind (a full JSON report used as the baseline) are still read. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from exportcore.outcome import Failure, Outcome
from pytest_export.results.records import EXPORTABLE, Record, record_key

__all__ = ["FORMAT", "VERSION", "is_baseline", "baseline_entries", "dump_baseline", "baseline_records",
           "known_failure_reason"]

#: The document's ``format`` value; a JSON file without it is read as a full report.
FORMAT = "pytest-export-baseline"
VERSION = 1


def is_baseline(data: Any) -> bool:
    """Return whether a loaded JSON document is a baseline file (not a full report)."""
    return isinstance(data, dict) and data.get("format") == FORMAT


def baseline_entries(records: Iterable[Record]) -> list[dict[str, Any]]:
    """Return the sorted entries for ``records`` (one per key; skipped results are not outcomes)."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        if r.verdict == "skipped":
            continue
        failure = r.outcome.failure if r.outcome is not None else None
        verdict = r.verdict
        if verdict == "xfailed":
            # A failure is recorded as what happened, whoever expected it (the marker or this baseline).
            verdict = r.outcome.status if r.outcome is not None and r.outcome.status != "passed" else "failed"
        entry = {"case": r.case, "mode": r.mode, "test": r.test, "verdict": verdict}
        if verdict not in EXPORTABLE and failure is not None:
            entry["stage"] = failure.stage
            entry["category"] = failure.category or ""
        entries.setdefault(record_key(r), entry)
    return [entries[k] for k in sorted(entries)]


def dump_baseline(entries: list[dict[str, Any]]) -> str:
    """Return the baseline file's text: stable bytes for the same entries."""
    doc = {"format": FORMAT, "version": VERSION, "entries": sorted(entries, key=lambda e: (e["case"], e["mode"]))}
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def baseline_records(data: dict[str, Any], name: str) -> list[Record]:
    """Return a baseline file's entries as records the gate compares with; raise ValueError naming the fault."""
    if data.get("version") != VERSION:
        raise ValueError(f"{name}: baseline format version {data.get('version')!r}, this pytest-export reads {VERSION}")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise ValueError(f"{name}: entries must be a list")
    records = []
    for i, e in enumerate(entries):
        where = f"{name}: entries[{i}]"
        if not isinstance(e, dict):
            raise ValueError(f"{where} must be an object")
        for field in ("case", "mode", "test", "verdict"):
            if not isinstance(e.get(field), str):
                raise ValueError(f"{where}.{field} must be a string")
        outcome = Outcome(case_id=e["case"], mode=e["mode"], status="passed" if e["verdict"] in EXPORTABLE else
                          e["verdict"])
        if e["verdict"] not in EXPORTABLE:
            outcome.failure = Failure(stage=str(e.get("stage") or "capture"), category=str(e.get("category") or ""),
                                      exc_type="", message="recorded in the baseline")
        records.append(Record.make(e["test"], e["case"], e["mode"], e["verdict"], outcome))
    return records


def known_failure_reason(entry: Record | None, name: str) -> str | None:
    """Return the expected-failure reason when the baseline records ``entry`` as not exportable, else None."""
    if entry is None or entry.verdict in EXPORTABLE or entry.verdict == "skipped":
        return None
    failure = entry.outcome.failure if entry.outcome is not None else None
    where = f" [{failure.stage}] {failure.category}" if failure is not None and failure.category else ""
    return f"known failure in baseline {name}: {entry.verdict}{where}"
