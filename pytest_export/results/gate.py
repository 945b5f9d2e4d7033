"""The baseline gate: compare this run's records with an earlier report, key by key.

A (case, mode) key that was exportable in the baseline and is not now is a regression and
fails the session. A known failure that now fails another way (another stage, category or
verdict: capture -> numerics is a program that exports and is wrong) is *changed*: listed, and
failing under ``strict`` as an improvement does, until the baseline records it. Keys in the baseline but absent from the run are sorted into
"deselected" (not asked for: -k/-m, a subset of files, other modes), "not_run" (asked for,
but the session stopped first) and "vanished" (asked for and no longer exists: a warning). Apart from the buckets, ``numerics`` lists every
program whose worst error grew by a bucket against the baseline's number (results.numerics_growth), both
runs passing or not: a warning, failing under ``growth_threshold`` (--export-baseline-numerics-growth).
A known numerics failure that passes now is an improvement whose ``why`` says how close it is.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from exportcore.codec import encode
from pytest_export.results.baseline import describe_known, known_as, same_failure
from pytest_export.results.numerics_growth import Move, failing_growth, headroom, moves
from pytest_export.results.records import EXPORTABLE, Record, failure_of, record_key, worst
from pytest_export.results.report import GATE_BUCKETS, Report, build_report, nodeid_file
from pytest_export.results.schema import GateBuckets, GateDoc, GateEntry, Scope

__all__ = ["Scope", "GateResult", "compare", "records_by_key", "summary_lines", "updated_baseline", "BUCKETS"]

Key = tuple[str, str]

#: Result buckets in the order they are shown.
BUCKETS = GATE_BUCKETS


@dataclass
class GateResult(GateBuckets):
    """The per-key comparison of a run with its baseline (named ``baseline``)."""

    baseline: str = ""
    # --export-baseline-strict: an improvement or a changed known failure fails too, until the baseline records it
    strict: bool = False
    #: every (case, mode, program) whose worst error grew by a bucket against the baseline's number
    numerics: list[Move] = field(default_factory=list)
    #: --export-baseline-numerics-growth: growth reaching this bucket fails the gate (None: a warning only)
    growth_threshold: float | None = None

    @property
    def failed(self) -> bool:
        """Return True when the gate fails (a regression, a key a missing shard should have checked, under
        ``strict`` an improvement or changed known failure the baseline does not record yet, or an error grown
        past ``growth_threshold``)."""
        return bool(self.regressions or self.missing or (self.strict and (self.improvements or self.changed))
                    or self.grown_past)

    @property
    def grown_past(self) -> list[Move]:
        """Return the moves that fail the gate under ``growth_threshold``."""
        return failing_growth(self.numerics, self.growth_threshold)

    def to_doc(self) -> GateDoc:
        """Return what a report keeps of the gate: its decision and its buckets."""
        return GateDoc(baseline=self.baseline, failed=self.failed, numerics=list(self.numerics),
                       growth_threshold=self.growth_threshold, **{name: list(getattr(self, name)) for name in BUCKETS})

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form stored in a report's "gate"."""
        return encode(self.to_doc(), "gate")

    def unchecked_keys(self) -> set[Key]:
        """Return baseline keys this run did not check (their baseline record stays valid)."""
        return {(e.case, e.mode) for e in (*self.deselected, *self.not_run, *self.skipped, *self.missing)}


def records_by_key(records: Iterable[Record]) -> dict[Key, Record]:
    """Return the record that speaks for each key (records.worst): the gate and the known-failure lookup read the same."""
    grouped: dict[Key, list[Record]] = {}
    for r in records:
        grouped.setdefault(record_key(r), []).append(r)
    return {k: worst(v) for k, v in grouped.items()}


def _entry(key: Key, before: Record | None, after: Record | None, why: str = "") -> GateEntry:
    ref = after or before
    assert ref is not None
    failure = failure_of(after) if after else None
    return GateEntry(case=key[0], mode=key[1], test=ref.test, before=before.verdict if before else None,
                     after=after.verdict if after else None, headline=failure.headline() if failure else "", why=why)


def _absent_bucket(key: Key, before: Record, scope: Scope) -> tuple[str, str]:
    test = before.test
    if scope.deselected is not None and test in scope.deselected:
        return "deselected", "deselected (-k/-m)"
    if scope.modes is not None and key[1] not in scope.modes:
        return "deselected", f"mode {key[1]} not run"
    if scope.files is not None and nodeid_file(test) not in scope.files:
        return "deselected", f"{nodeid_file(test)} not collected"
    if key in (scope.not_run or ()):
        return "not_run", "selected but not run (session stopped early?)"
    if scope.deselected is None and scope.filtered:
        # Under xdist without deselection data a -k/-m miss cannot be told from a removal.
        return "deselected", "not selected (-k/-m)"
    if scope.tests is not None and test in scope.tests and scope.ran is not None and test not in scope.ran:
        # Its test is still there but did not run to the end (the session stopped, a worker died).
        return "not_run", "its test did not run to the end (session stopped or crashed)"
    if scope.tests is not None and test in scope.tests:
        return "vanished", "its test ran and no longer checks this case"
    return "vanished", "collected file has no such test any more"


def compare(
    baseline: Report, records: Iterable[Record], scope: Scope, name: str = "baseline",
    missing: str = "",
) -> GateResult:
    """Return the gate result of ``records`` against the ``baseline`` report.

    ``missing``: why the run may lack results (a merge without every shard); then a baseline key
    absent from the run is *missing* and fails the gate, unless its mode was not run at all.
    """
    before = records_by_key(baseline.records)
    after = records_by_key(records)
    result = GateResult(baseline=name)
    for key in sorted(before.keys() | after.keys()):
        b, a = before.get(key), after.get(key)
        if b is None:
            result.new.append(_entry(key, None, a))
        elif a is None and missing and (scope.modes is None or key[1] in scope.modes):
            result.missing.append(_entry(key, b, None, missing))
        elif a is None:
            bucket, why = _absent_bucket(key, b, scope)
            getattr(result, bucket).append(_entry(key, b, None, why))
        elif a.verdict == "skipped":
            result.skipped.append(_entry(key, b, a, "skipped now: not checked"))
        elif b.verdict in EXPORTABLE and a.verdict not in EXPORTABLE:
            result.regressions.append(_entry(key, b, a))
        elif b.verdict not in EXPORTABLE and a.verdict in EXPORTABLE:
            result.improvements.append(_entry(key, b, a, _now_passes(b, a)))
        elif b.verdict not in (*EXPORTABLE, "skipped") and not same_failure(known_as(b), known_as(a)):
            why = f"recorded {describe_known(known_as(b))}, now {describe_known(known_as(a))}"
            result.changed.append(_entry(key, b, a, why))
        if a is not None and b is not None and a.verdict != "skipped":
            result.numerics += [m for m in moves(key[0], key[1], b.outcome, a.outcome) if m.grew]
    return result


def _now_passes(before: Record, after: Record) -> str:
    # tt-torch's users asked to be told when a known numerics failure starts passing, to tighten thresholds
    if known_as(before)[2] != "numerics":
        return ""
    close = headroom(after.outcome)
    return f"known numerics failure now passes{': ' + close if close else ''}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_lines(result: GateResult, *, verbose: bool = False, limit: int = 50) -> list[str]:
    """Return the human-readable gate summary, regressions first."""
    counts = [
        _count(len(result.regressions), "regression"),
        _count(len(result.improvements), "improvement"),
    ]
    if result.missing:
        counts.insert(1, f"{len(result.missing)} missing")
    if result.changed:
        counts.append(f"{len(result.changed)} changed")
    if result.numerics:
        counts.append(f"{len(result.numerics)} numerics grown")
    for name in ("skipped", "vanished", "not_run", "deselected", "new"):
        if getattr(result, name):
            counts.append(f"{len(getattr(result, name))} {name.replace('_', ' ')}")
    verdict = "FAILED" if result.failed else "passed"
    lines = [f"export gate {verdict} vs {result.baseline}: {', '.join(counts)}"]

    def show(label: str, entries: list[GateEntry], detail: bool, why_first: bool = False) -> None:
        for e in entries[:limit]:
            change = f"{e.before} -> {e.after}" if e.after else e.before
            line = f"  {label} {e.case} [{e.mode}]: {change}"
            note = (e.why or e.headline) if why_first else (e.headline or e.why)
            if detail and note:
                line += f": {note}"
            lines.append(line)
        if len(entries) > limit:
            lines.append(f"  ... and {len(entries) - limit} more {label.lower()}")

    show("REGRESSION", result.regressions, True)
    show("MISSING", result.missing, True)
    show("CHANGED" if result.strict else "changed", result.changed, True, why_first=True)
    show("improvement", result.improvements, True, why_first=True)
    show("skipped", result.skipped, True)
    show("vanished", result.vanished, True)
    show("not run", result.not_run, True)
    if verbose:
        show("deselected", result.deselected, True)
        show("new", result.new, False)
    _numerics_lines(result, lines, limit)
    stale = [what for what, entries in (("improvements", result.improvements),
                                        ("changed known failures", result.changed)) if entries]
    if result.strict and stale:
        lines.append(f"  (--export-baseline-strict: {' and '.join(stale)} fail until --export-baseline-update "
                     "records them)")
    elif result.changed:
        lines.append("  (a changed known failure does not fail the gate; --export-baseline-strict fails on it, "
                     "--export-baseline-update records it)")
    elif result.improvements or result.vanished:
        lines.append("  (run with --export-baseline-update to record this run as the new baseline)")
    return lines


def _numerics_lines(result: GateResult, lines: list[str], limit: int) -> None:
    if not result.numerics:
        return
    failing = result.grown_past
    word = "NUMERICS GREW" if failing else "warning: numerics grew"
    threshold = f" (--export-baseline-numerics-growth={result.growth_threshold:g} fails ≥{result.growth_threshold:g}×)" \
        if result.growth_threshold is not None else ""
    lines.append(f"  {word} for {len(result.numerics)} (case, mode, program) against the baseline's worst error"
                 f"{threshold}:")
    for m in result.numerics[:limit]:
        mark = "NUMERICS" if m in failing else "numerics"
        lines.append(f"  {mark} {m.case} [{m.mode}] {m.text()}")
    if len(result.numerics) > limit:
        lines.append(f"  ... and {len(result.numerics) - limit} more numerics moves")


def updated_baseline(baseline: Report | None, report: Report, result: GateResult | None) -> Report:
    """Return the new baseline: this run's records plus baseline records for keys it did not check."""
    records = [r for r in report.records if r.verdict != "skipped"]
    if baseline is not None and result is not None:
        keep = result.unchecked_keys()
        records += [r for r in baseline.records if record_key(r) in keep]
    return build_report(records, environment=report.environment, scope=report.scope, complete=report.complete,
                        stop_reason=report.stop_reason)
