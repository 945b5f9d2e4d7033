"""Merge shard reports from several CI machines into one report and one gate decision.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pytest_export.results.gate import GateResult, compare
from pytest_export.results.records import EXPORTABLE, Record, record_key
from pytest_export.results.report import Report, build_report
from pytest_export.results.schema import MergeDoc, MergeEntry, Scope

__all__ = ["MergeError", "MergeResult", "merge_reports"]

Key = tuple[str, str]


@dataclass
class MergeResult:
    """The merged report plus what was found while merging."""

    report: Report
    duplicates: list[MergeEntry] = field(default_factory=list)  # same key, same verdicts
    conflicts: list[MergeEntry] = field(default_factory=list)  # same key, different verdicts
    gate: GateResult | None = None
    missing_shards: str = ""  # why some shards' results may be absent ("" when all are here)
    absent_shards: str = ""  # which shards' reports are provably absent (merged under allow_missing), else ""
    stopped: list[str] = field(default_factory=list)  # "name: why" for each shard report whose session stopped early


class MergeError(ValueError):
    """The shard reports contradict each other about how the run was split."""


def _missing_shards(reports: Sequence[tuple[str, Report]], shards: int | None) -> tuple[str, bool]:
    """Return (why the shards given may not be the whole run, whether shards are provably absent).

    ("", False) when the reports provably are every shard. Raises MergeError when they disagree on the
    number of shards or two of them are the same shard.
    """
    declared: dict[str, tuple[int, int]] = {}
    for name, report in reports:
        shard = report.scope.shard
        if shard:
            declared[name] = (int(shard[0]), int(shard[1]))
    counts = {n for _, n in declared.values()} | ({shards} if shards else set())
    if len(counts) > 1:
        seen = ", ".join(f"{name}: shard {i}/{n}" for name, (i, n) in declared.items())
        raise MergeError(f"the reports disagree on the number of shards ({seen}{f'; --shards {shards}' if shards else ''})")
    if not counts:
        return ("in no shard report; the number of shards is unknown, so a shard may be missing (pass --shards N, "
                "or run each shard with --export-shard=I/N)"), False
    count = counts.pop()
    by_shard: dict[int, list[str]] = {}
    for name, (index, _) in declared.items():
        by_shard.setdefault(index, []).append(name)
    for index, names in sorted(by_shard.items()):
        if len(names) > 1:
            raise MergeError(f"{' and '.join(names)} are each shard {index} of {count}: one shard's report given "
                             "twice (or two runs of one shard); give each shard's report once")
    if len(declared) == len(reports):
        absent = sorted(set(range(1, count + 1)) - set(by_shard))
        if absent:
            return f"in no shard report; shard {', '.join(map(str, absent))} of {count} is missing", True
        return "", False
    if len(reports) < count:
        return f"in no shard report; {len(reports)} of {count} shard reports given", True
    return "", False


def _union(scopes: Iterable[Scope], present_tests: set[str]) -> Scope:
    """Return the scope of several shards run together."""
    scopes = list(scopes)

    def joined(values: list[set[str] | None]) -> set[str] | None:
        # One shard that did not know makes the union unknown.
        known = [v for v in values if v is not None]
        return set().union(*known) if values and len(known) == len(values) else None

    deselected = joined([s.deselected for s in scopes])
    if deselected is not None:
        # A test one shard deselected and another ran was not deselected overall.
        deselected -= present_tests
    return Scope(
        files=joined([s.files for s in scopes]),
        modes=joined([s.modes for s in scopes]),
        deselected=deselected,
        not_run=set().union(*(s.not_run or () for s in scopes)),
        filtered=any(s.filtered for s in scopes),
        tests=joined([s.tests for s in scopes]),
        ran=joined([s.ran for s in scopes]),
    )


def _verdicts(records: list[Record]) -> tuple[str, ...]:
    return tuple(sorted(r.verdict for r in records))


def _worst(candidates: list[tuple[str, list[Record]]]) -> tuple[str, list[Record]]:
    # On a conflict keep the failing side: the gate must not pass on the luckier shard.
    for source, records in candidates:
        if any(r.verdict not in EXPORTABLE for r in records):
            return source, records
    return candidates[0]


def merge_reports(
    reports: Sequence[tuple[str, Report]],
    *,
    baseline: tuple[str, Report] | None = None,
    shards: int | None = None,
    allow_missing: bool = False,
    strict: bool = False,
    growth_threshold: float | None = None,
) -> MergeResult:
    """Return the union of ``reports`` ((name, report) pairs, already validated), gated on ``baseline``.

    A baseline key in no report is *missing* (and fails the gate) unless the reports provably are
    every shard of the run: ``shards`` given or each report's scope naming its shard I/N.
    Raises MergeError when the reports disagree on the shard count, name one shard twice, or (unless
    ``allow_missing``: the merged report then says it is incomplete) provably lack a shard.
    ``strict`` and ``growth_threshold``: the gate's --export-baseline-strict and
    --export-baseline-numerics-growth, so the merged run is gated as each session would have been.
    """
    if not reports:
        raise ValueError("merge needs at least one report")
    missing, absent = _missing_shards(reports, shards)
    if absent and not allow_missing:
        raise MergeError(f"{missing.removeprefix('in no shard report; ')}: the merge would not be the whole run "
                         "(give every shard's report, or --allow-missing-shards to merge what there is, marked "
                         "incomplete)")
    per_key: dict[Key, list[tuple[str, list[Record]]]] = {}
    for name, report in reports:
        mine: dict[Key, list[Record]] = {}
        for r in report.records:
            mine.setdefault(record_key(r), []).append(r)
        for key, records in mine.items():
            per_key.setdefault(key, []).append((name, records))

    merged: list[Record] = []
    result = MergeResult(report=Report(), missing_shards=missing)
    for key in sorted(per_key):
        candidates = per_key[key]
        if len(candidates) > 1:
            sources = [name for name, _ in candidates]
            verdicts = {name: list(_verdicts(recs)) for name, recs in candidates}
            entry = MergeEntry(case=key[0], mode=key[1], sources=sources, verdicts=verdicts)
            if len({_verdicts(recs) for _, recs in candidates}) == 1:
                result.duplicates.append(entry)
            else:
                result.conflicts.append(entry)
        merged.extend(_worst(candidates)[1])

    present = {r.test for r in merged}
    scope = _union((rep.scope for _, rep in reports), present)
    environment = {"merged_from": [{"source": name, **rep.environment} for name, rep in reports]}
    result.stopped = [f"{name}: {rep.stop_reason or 'incomplete'}" for name, rep in reports if not rep.complete]
    stops = [f"{name}: {rep.stop_reason}" for name, rep in reports if rep.stop_reason]
    if absent:
        # Not an interruption: every session given ran to its end, and a shard's report is not here.
        result.absent_shards = missing.removeprefix("in no shard report; ")
        stops.append(f"{result.absent_shards} (merged with --allow-missing-shards)")
    stop = "; ".join(stops)
    if baseline is not None:
        result.gate = compare(baseline[1], merged, scope, name=baseline[0], missing=missing)
        result.gate.strict, result.gate.growth_threshold = strict, growth_threshold
    result.report = build_report(
        merged,
        environment=environment,
        scope=scope,
        complete=not absent and all(rep.complete for _, rep in reports),
        stop_reason=stop,
        gate=result.gate.to_doc() if result.gate else None,
        merge=MergeDoc(result.duplicates, result.conflicts) if result.duplicates or result.conflicts else None,
    )
    return result
