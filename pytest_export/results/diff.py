"""What changed between two export reports, per (case, mode): the torch-upgrade report.

``python -m pytest_export diff OLD.json NEW.json`` answers "what happens to our models if we
upgrade torch from X to Y": run the same suite on both, then diff the two JSON reports.
Each (case, mode) present in either report lands in exactly one group, the most severe
that applies: regression (exportable before, not now), fix (the reverse), changed findings,
changed ranges, other changes (failure stage/category, verdict among non-exportable ones,
graph op counts, export time), new, gone. Apart from the groups, ``numerics`` lists every program whose
worst error moved by a bucket (results.numerics_growth), passing or not: a (case, mode) can pass in both
runs and still be on its way to failing.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from exportcore.outcome import Outcome
from pytest_export.results.numerics_growth import Move, failing_growth, headroom, moves
from pytest_export.results.records import EXPORTABLE, Record, failure_of, record_key, worst
from pytest_export.results.report import Report

__all__ = ["GROUPS", "Entry", "DiffResult", "diff_reports", "torch_version", "TIME_RATIO", "TIME_MIN_S"]

#: Group names in report order, with their titles.
GROUPS: dict[str, str] = {
    "regressions": "Regressions (exportable before, not now)",
    "fixes": "Fixes (not exportable before, exportable now)",
    "findings": "Changed findings",
    "ranges": "Changed ranges",
    "changed": "Other changes",
    "new": "New (only in the new report)",
    "gone": "Gone (only in the old report)",
}

#: An export time change is reported when it is at least this factor and this many seconds:
#: timings of one run vary by tens of percent on a busy machine; smaller moves are noise.
TIME_RATIO = 1.5
TIME_MIN_S = 0.2


@dataclass
class Entry:
    """One (case, mode) that differs between the reports."""

    case: str
    mode: str
    group: str
    before: str  # one-line state in the old report ("" when absent)
    after: str  # one-line state in the new report ("" when absent)
    changes: list[str] = field(default_factory=list)  # what differs, one line each


@dataclass
class DiffResult:
    """Every difference between two reports, grouped."""

    old: dict[str, str]  # {"source": path, "torch": version}
    new: dict[str, str]
    entries: list[Entry] = field(default_factory=list)
    unchanged: int = 0
    #: every (case, mode, program) whose worst error moved by a bucket, in both directions
    numerics: list[Move] = field(default_factory=list)
    #: --fail-on-numerics-growth: growth reaching this bucket fails the diff (None: it only warns)
    growth_threshold: float | None = None

    @property
    def regressed(self) -> bool:
        """Return True when some (case, mode) was exportable in the old report and is not now."""
        return any(e.group == "regressions" for e in self.entries)

    @property
    def grown(self) -> list[Move]:
        """Return the moves where the error grew."""
        return [m for m in self.numerics if m.grew]

    @property
    def numerics_failed(self) -> bool:
        """Return True when some error grew past ``growth_threshold``."""
        return bool(failing_growth(self.numerics, self.growth_threshold))

    def group(self, name: str) -> list[Entry]:
        """Return the entries of group ``name`` (a key of GROUPS), sorted by (case, mode)."""
        if name not in GROUPS:
            raise ValueError(f"unknown group {name!r}; groups: {', '.join(GROUPS)}")
        return [e for e in self.entries if e.group == name]

    def counts(self) -> dict[str, int]:
        """Return group name -> number of entries (every group, zeros included)."""
        return {g: len(self.group(g)) for g in GROUPS}

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON-serializable data."""
        return {
            "old": dict(self.old), "new": dict(self.new), "regressed": self.regressed,
            "counts": self.counts(), "unchanged": self.unchanged,
            "entries": [asdict(e) for e in self.entries],
            "numerics": [asdict(m) for m in self.numerics], "growth_threshold": self.growth_threshold,
            "numerics_failed": self.numerics_failed,
        }


def torch_version(report: Report) -> str:
    """Return the torch version a report was made with ("unknown" when it does not say)."""
    env = report.environment
    versions = [env.get("torch")] + [m.get("torch") for m in env.get("merged_from") or [] if isinstance(m, dict)]
    versions += [r.outcome.torch_version for r in report.records if r.outcome is not None]
    for v in versions:
        if isinstance(v, str) and v and v != "not loaded":
            return v
    return "unknown"


def diff_reports(old: Report, new: Report, *, old_name: str = "old", new_name: str = "new",
                 growth_threshold: float | None = None) -> DiffResult:
    """Return the grouped differences between two validated reports (``load_report`` output).

    ``growth_threshold``: a numerics bucket (results.numerics_growth.BUCKETS) growth past which fails the diff.
    """
    before, after = _by_key(old), _by_key(new)
    result = DiffResult(
        old={"source": old_name, "torch": torch_version(old)},
        new={"source": new_name, "torch": torch_version(new)},
        growth_threshold=growth_threshold,
    )
    for key in sorted(set(before) | set(after)):
        entry = _compare(key, before.get(key), after.get(key))
        if entry is None:
            result.unchanged += 1
        else:
            result.entries.append(entry)
        was, now = before.get(key), after.get(key)
        if was is not None and now is not None:
            result.numerics += moves(key[0], key[1], was.outcome, now.outcome)
    return result


def _by_key(report: Report) -> dict[tuple[str, str], Record]:
    grouped: dict[tuple[str, str], list[Record]] = {}
    for r in report.records:
        grouped.setdefault(record_key(r), []).append(r)
    # Duplicate keys (a merged report): the failing record speaks, as in merge and the gate.
    return {key: worst(records) for key, records in grouped.items()}


def state(record: Record | None) -> str:
    """Return a record's one-line state: verdict, and for failures [stage] category: message."""
    if record is None:
        return ""
    failure = failure_of(record)
    if record.verdict in EXPORTABLE or not failure:
        return record.verdict
    return f"{record.verdict}: [{failure.stage}] {failure.category}: {failure.message}"


def _compare(key: tuple[str, str], old: Record | None, new: Record | None) -> Entry | None:
    case, mode = key
    if old is None or new is None:
        group = "new" if old is None else "gone"
        return Entry(case, mode, group, state(old), state(new), [f"only in the {'new' if old is None else 'old'} report"])
    changes: list[str] = []
    _verdict(old, new, changes)
    changes += _numerics_fixed(old, new)
    findings = _findings(old, new)
    ranges = _ranges(old, new)
    other = _failure(old, new) + _ops(old, new) + _export_time(old, new)
    changes += findings + ranges + other
    if not changes:
        return None
    was, now = old.verdict in EXPORTABLE, new.verdict in EXPORTABLE
    skipped = "skipped" in (old.verdict, new.verdict)
    if was and not now and not skipped:
        group = "regressions"
    elif now and not was and not skipped:
        group = "fixes"
    elif findings:
        group = "findings"
    elif ranges:
        group = "ranges"
    else:
        group = "changed"
    return Entry(case, mode, group, state(old), state(new), changes)


#: What a record without an outcome compares as: nothing exported, nothing found.
_NO_OUTCOME = Outcome(case_id="", mode="")


def _outcome(record: Record) -> Outcome:
    return record.outcome if record.outcome is not None else _NO_OUTCOME


def _verdict(old: Record, new: Record, changes: list[str]) -> None:
    if old.verdict != new.verdict:
        changes.append(f"verdict: {old.verdict} -> {new.verdict}")


def _numerics_fixed(old: Record, new: Record) -> list[str]:
    # A known numerics failure that starts passing is what users tighten thresholds from: say how close it is.
    failure = failure_of(old)
    if new.verdict not in EXPORTABLE or old.verdict in EXPORTABLE or not failure or failure.category != "numerics":
        return []
    close = headroom(new.outcome)
    return [f"numerics failure now passes{': ' + close if close else ''}"]


def _failure(old: Record, new: Record) -> list[str]:
    a, b = failure_of(old), failure_of(new)
    out = []
    for name in ("stage", "category"):
        was, now = getattr(a, name, None), getattr(b, name, None)
        if was != now:
            out.append(f"{name}: {was or '-'} -> {now or '-'}")
    if a and b and (a.exc_type, a.message) != (b.exc_type, b.message):
        out.append(f"message: {a.exc_type}: {a.message} -> {b.exc_type}: {b.message}")
    return out


def _finding_set(record: Record) -> set[tuple[str, str]]:
    return {(f.kind, f.input or "") for f in _outcome(record).findings}


def _findings(old: Record, new: Record) -> list[str]:
    a, b = _finding_set(old), _finding_set(new)
    show = lambda kind, where: f"{kind} ({where})" if where else kind  # noqa: E731
    out = [f"finding added: {show(*f)}" for f in sorted(b - a)]
    out += [f"finding gone: {show(*f)}" for f in sorted(a - b)]
    return out


def _ranges(old: Record, new: Record) -> list[str]:
    a, b = _outcome(old).range_constraints, _outcome(new).range_constraints
    if not (a and b) and old.verdict != new.verdict:
        return []  # a failed export has no ranges: the verdict change already says it
    out = []
    for sym in sorted(set(a) | set(b)):
        if a.get(sym) != b.get(sym):
            out.append(f"range {sym}: {a.get(sym, '-')} -> {b.get(sym, '-')}")
    return out


def _ops(old: Record, new: Record) -> list[str]:
    ga, gb = _outcome(old).graph, _outcome(new).graph
    a = ga.op_histogram if ga is not None else {}
    b = gb.op_histogram if gb is not None else {}
    if not (a and b):
        return []  # one side never exported: nothing to compare op by op
    moved = [f"{op} {a.get(op, 0)} -> {b.get(op, 0)}" for op in sorted(set(a) | set(b)) if a.get(op, 0) != b.get(op, 0)]
    return [f"ops: {', '.join(moved)}"] if moved else []


def _export_time(old: Record, new: Record) -> list[str]:
    a, b = _outcome(old).timings.get("capture"), _outcome(new).timings.get("capture")
    if not a or not b:
        return []
    lo, hi = sorted((a, b))
    if hi - lo < TIME_MIN_S or hi / lo < TIME_RATIO:
        return []
    return [f"export time: {a:.2f} s -> {b:.2f} s ({b / a:.1f}x)"]
