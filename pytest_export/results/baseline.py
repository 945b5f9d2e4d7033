"""The baseline file: the list of known outcomes, one small stable entry per (case, mode).

An entry holds what the gate and a reviewer need — the case, the mode (a device's column is its
own mode: ``strict-cuda``), the test that checks it, the verdict, and for a failure its stage and
category — and nothing that changes between two runs of the same code (timings, dates, paths,
messages). Entries are sorted and written with sorted keys, so two updates of one run give the same
bytes and a pull request's diff shows only outcomes that changed.

A failure the baseline records is *known*: the run reports it as an expected failure with the
recorded reason (pytest_export.runner), and only the gate decides the session. Reports of the older
kind (a full JSON report used as the baseline) are still read. Pure: imports neither pytest nor torch.

A failure is known *as recorded*: its verdict, stage and category (:func:`known_as`). The same key
failing another way now (capture -> numerics: it exports, but a wrong program) is a change the gate
reports, not the known failure. One entry per key: a file holding a key twice (both sides of a merge
conflict kept) is refused naming both lines, since the gate and the known-failure lookup would each
have to pick one.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from typing import Any, Iterable

from exportcore.outcome import Failure, Outcome
from pytest_export.results.records import EXPORTABLE, Record, record_key, worst

__all__ = ["FORMAT", "VERSION", "is_baseline", "baseline_entries", "dump_baseline", "baseline_records",
           "read_baseline", "Known", "outcome_known", "known_as", "same_failure", "describe_known",
           "known_failure_reason"]

#: The document's ``format`` value; a JSON file without it is read as a full report.
FORMAT = "pytest-export-baseline"
VERSION = 1


def is_baseline(data: Any) -> bool:
    """Return whether a loaded JSON document is a baseline file (not a full report)."""
    return isinstance(data, dict) and data.get("format") == FORMAT


Known = tuple[str, str, str]  # (verdict, stage, category), as a baseline records an outcome


def outcome_known(verdict: str, outcome: Outcome | None) -> Known:
    """Return (verdict, stage, category) as a baseline records an outcome given ``verdict``.

    An xfailed result is recorded as what happened, whoever expected it (the marker or this baseline);
    an exportable one has neither stage nor category.
    """
    failure = outcome.failure if outcome is not None else None
    if verdict == "xfailed":
        status = outcome.status if outcome is not None else "failed"
        verdict = status if status != "passed" else "failed"
    if verdict in EXPORTABLE or failure is None:
        return verdict, "", ""
    return verdict, failure.stage, failure.category or ""


def known_as(record: Record) -> Known:
    """Return (verdict, stage, category) as a baseline records ``record``: what a known failure is known by."""
    return outcome_known(record.verdict, record.outcome)


def same_failure(recorded: Known, now: Known) -> bool:
    """Return whether ``now`` is the failure ``recorded``: the same verdict, stage and category.

    An entry without a stage (written by hand) is known by its verdict alone.
    """
    return recorded[0] == now[0] and (not recorded[1] or recorded[1:] == now[1:])


def describe_known(known: Known) -> str:
    """Return ``failed [capture] data-dependent``: a recorded outcome as the terminal and reports show it."""
    verdict, stage, category = known
    return " ".join(part for part in (verdict, f"[{stage}]" if stage else "", category) if part)


def baseline_entries(records: Iterable[Record]) -> list[dict[str, Any]]:
    """Return the sorted entries for ``records``: one per key, its worst record (as the gate reads it).

    Skipped results are not outcomes.
    """
    grouped: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        if r.verdict != "skipped":
            grouped.setdefault(record_key(r), []).append(r)
    entries = []
    for key in sorted(grouped):
        r = worst(grouped[key])
        verdict, stage, category = known_as(r)
        entry = {"case": r.case, "mode": r.mode, "test": r.test, "verdict": verdict}
        if stage:
            entry["stage"], entry["category"] = stage, category
        entries.append(entry)
    return entries


def dump_baseline(entries: list[dict[str, Any]]) -> str:
    """Return the baseline file's text: stable bytes for the same entries."""
    doc = {"format": FORMAT, "version": VERSION, "entries": sorted(entries, key=lambda e: (e["case"], e["mode"]))}
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


class _RepeatedName(ValueError):
    """One JSON object names a field twice (json.loads would keep the last silently)."""

    def __init__(self, field: str, line: int | None = None) -> None:
        super().__init__(field)
        self.field, self.line = field, line


def _unrepeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        names = [k for k, _ in pairs]
        raise _RepeatedName(next(k for i, k in enumerate(names) if k in names[:i]))
    return obj


def _slow_decode(text: str) -> tuple[Any, dict[int, int]]:
    """Return (the document, id(object) -> the line of its opening brace); a repeated field names its line.

    Slow (the pure-Python scanner, which calls ``parse_object``; the C one does not): only run to name
    the lines of a fault already found. The ids are valid while the caller holds the document.
    """
    starts: dict[int, int] = {}
    decoder = json.JSONDecoder(object_pairs_hook=_unrepeated)

    def line(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        begin = s_and_end[1] - 1  # s_and_end[1] is just past the brace
        try:
            obj, end = json.decoder.JSONObject(s_and_end, *args)
        except _RepeatedName as exc:
            if exc.line is not None:  # an inner object's, already placed
                raise
            # The second `"field":` after the brace is the repeat (an entry holds no nested object).
            keys = list(re.finditer(re.escape(json.dumps(exc.field)) + r"\s*:", text[begin:]))
            raise _RepeatedName(exc.field, line(begin + keys[1].start() if len(keys) > 1 else begin)) from None
        starts[id(obj)] = begin
        return obj, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    doc = decoder.decode(text)
    return doc, {key: line(offset) for key, offset in starts.items()}


def read_baseline(text: str, name: str) -> list[Record]:
    """Return the records of a baseline file's ``text``; raise ValueError naming the fault and its line.

    Stricter than ``json.loads``: a field named twice in one entry is refused too (one conflicting
    line kept from both sides of a merge would otherwise be read as its last side).
    """
    try:
        data = json.loads(text, object_pairs_hook=_unrepeated)
    except _RepeatedName as fast:
        try:
            _slow_decode(text)
        except _RepeatedName as exc:
            fast = exc  # the same fault, with its line
        where = f"line {fast.line}: " if fast.line is not None else ""
        raise ValueError(f"{name}: {where}an entry names the field {fast.field!r} twice (both sides of a merge "
                         "conflict kept?): keep the one that is true now") from None
    return baseline_records(data, name, text)


def baseline_records(data: dict[str, Any], name: str, text: str | None = None) -> list[Record]:
    """Return a baseline file's entries as records the gate compares with; raise ValueError naming the fault.

    ``text``: the file's text, to name the lines of a key recorded twice (else the entries' indexes).
    """
    if data.get("version") != VERSION:
        raise ValueError(f"{name}: baseline format version {data.get('version')!r}, this pytest-export reads {VERSION}")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise ValueError(f"{name}: entries must be a list")
    records = []
    seen: dict[tuple[str, str], int] = {}
    for i, e in enumerate(entries):
        where = f"{name}: entries[{i}]"
        if not isinstance(e, dict):
            raise ValueError(f"{where} must be an object")
        for field in ("case", "mode", "test", "verdict"):
            if not isinstance(e.get(field), str):
                raise ValueError(f"{where}.{field} must be a string")
        key = (e["case"], e["mode"])
        first = seen.setdefault(key, i)
        if first != i:
            raise ValueError(_twice(name, key, entries, first, i, text))
        outcome = Outcome(case_id=e["case"], mode=e["mode"], status="passed" if e["verdict"] in EXPORTABLE else
                          e["verdict"])
        if e["verdict"] not in EXPORTABLE and e.get("stage"):
            # No stage recorded (an entry written by hand): none is made up, so known_as reads it as recorded.
            outcome.failure = Failure(stage=str(e["stage"]), category=str(e.get("category") or ""),
                                      exc_type="", message="recorded in the baseline")
        records.append(Record.make(e["test"], e["case"], e["mode"], e["verdict"], outcome))
    return records


def _twice(name: str, key: tuple[str, str], entries: list[Any], first: int, second: int, text: str | None) -> str:
    # Which of the two is true cannot be told from the file: the gate reads the worse, a lookup the
    # other, and the session could pass on a regression. The user resolves it.
    where = f"entries[{first}] and entries[{second}]"
    if text is not None:
        doc, lines = _slow_decode(text)  # held while the ids are read
        where = f"line {lines[id(doc['entries'][first])]} and line {lines[id(doc['entries'][second])]}"
    said = " and ".join(repr(describe_known(_entry_known(entries[i]))) for i in (first, second))
    return (f"{name}: (case {key[0]!r}, mode {key[1]!r}) is recorded twice, at {where} ({said}); a baseline holds "
            "one entry per (case, mode) (both sides of a merge conflict kept?): keep the one that is true now, "
            "or rerun --export-baseline-update after removing one")


def _entry_known(entry: dict[str, Any]) -> Known:
    if entry["verdict"] in EXPORTABLE:
        return entry["verdict"], "", ""
    return entry["verdict"], str(entry.get("stage") or ""), str(entry.get("category") or "")


def known_failure_reason(entry: Record | None, name: str, now: Known | None = None,
                         strict: bool = False) -> str | None:
    """Return the expected-failure reason when the baseline records ``entry`` as not exportable, else None.

    ``now``: the failure this run got (``outcome_known``). A failure of another stage or category than
    recorded is not the known one: it stays an expected failure whose reason names the change (the
    gate lists it as *changed*), or, under ``strict`` (--export-baseline-strict), is no longer known and
    fails with its own report.
    """
    if entry is None or entry.verdict in EXPORTABLE or entry.verdict == "skipped":
        return None
    recorded = known_as(entry)
    if now is None or same_failure(recorded, now):
        return f"known failure in baseline {name}: {describe_known(recorded)}"
    if strict:
        return None
    return (f"known failure in baseline {name} changed: recorded {describe_known(recorded)}, now "
            f"{describe_known(now)} (--export-baseline-strict fails on it; --export-baseline-update records it)")
