"""The baseline file: the list of known outcomes, one small stable entry per (case, mode).

An entry holds what the gate and a reviewer need — the case, the mode (a device's column is its
own mode: ``strict-cuda``), the test that checks it, the verdict, and for a failure its stage and
category — and nothing that changes between two runs of the same code (timings, dates, paths,
messages). Entries are sorted and written with sorted keys, so two updates of one run give the same
bytes and a pull request's diff shows only outcomes that changed.

A failure the baseline records is *known*: the run reports it as an expected failure with the
recorded reason (pytest_export.runner), and only the gate decides the session. Reports of the older
kind (a full JSON report used as the baseline) are still read. Pure: imports neither pytest nor torch.

An entry also keeps, per program compared, its worst error as a fraction of the tolerance (``numerics``:
``{"exported": 0.12}``, three significant digits so that rounding noise rarely touches the file), on
passes too: the gate reports an error that grew (results.numerics_growth) against it. An entry without
it (a baseline written before) is read as unmeasured: nothing moves against it.

A failure is known *as recorded*: its verdict, stage and category (:func:`known_as`). The same key
failing another way now (capture -> numerics: it exports, but a wrong program) is a change the gate
reports, not the known failure. One entry per key: a file holding a key twice (both sides of a merge
conflict kept) is refused naming both lines, since the gate and the known-failure lookup would each
have to pick one.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from exportcore.outcome import Failure, Outcome, ProgramError
from pytest_export.results.numerics_growth import worst_errors
from pytest_export.results.json_lines import RepeatedField, decode_with_lines, unrepeated
from pytest_export.results.records import EXPORTABLE, Record, record_key, worst
from pytest_export.results.verdicts import as_happened

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
    verdict = as_happened(verdict, outcome)
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
        numerics = {p: float(f"{e.worst_fraction:.3g}") for p, e in sorted(worst_errors(r.outcome).items())}
        if numerics:
            entry["numerics"] = numerics
        entries.append(entry)
    return entries


def dump_baseline(entries: list[dict[str, Any]]) -> str:
    """Return the baseline file's text: stable bytes for the same entries."""
    doc = {"format": FORMAT, "version": VERSION, "entries": sorted(entries, key=lambda e: (e["case"], e["mode"]))}
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def read_baseline(text: str, name: str) -> list[Record]:
    """Return the records of a baseline file's ``text``; raise ValueError naming the fault and its line.

    Stricter than ``json.loads``: a field named twice in one entry is refused too (one conflicting
    line kept from both sides of a merge would otherwise be read as its last side).
    """
    try:
        data = json.loads(text, object_pairs_hook=unrepeated)
    except RepeatedField as fast:
        try:
            decode_with_lines(text)
        except RepeatedField as exc:
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
        outcome.numerics = _numerics(e.get("numerics"), f"{where}.numerics")
        records.append(Record.make(e["test"], e["case"], e["mode"], e["verdict"], outcome))
    return records


def _numerics(value: Any, where: str) -> list[ProgramError]:
    if value is None:
        return []
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            for k, v in value.items()):
        raise ValueError(f"{where} must map each program to its worst error as a fraction of the tolerance "
                         "(a number >= 0), e.g. {\"exported\": 0.12}")
    return [ProgramError(program=k, worst_fraction=float(v)) for k, v in sorted(value.items())]


def _twice(name: str, key: tuple[str, str], entries: list[Any], first: int, second: int, text: str | None) -> str:
    # Which of the two is true cannot be told from the file: the gate reads the worse, a lookup the
    # other, and the session could pass on a regression. The user resolves it.
    where = f"entries[{first}] and entries[{second}]"
    if text is not None:
        doc, lines = decode_with_lines(text)  # held while the ids are read
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
