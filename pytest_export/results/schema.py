"""The typed sections of a report (pytest_export.results.report.Report): scope, gate and merge.

A loaded report holds these, decoded by the codec from their types, so a wrong baseline is refused
naming the field (``scope.shard must be [index, count] with 1 <= index <= count``). The gate reads
the same :class:`Scope` a report keeps; its working result, with its strict flag, is ``gate.GateResult``
(:class:`GateDoc` is what a report keeps of it). Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from exportcore import vocab
from exportcore.codec import SchemaError, decode, encode, one_of
from pytest_export.results.numerics_growth import Move

__all__ = ["GATE_BUCKETS", "GateBuckets", "GateEntry", "GateDoc", "MergeDoc", "MergeEntry", "Scope", "check_scope",
           "check_gate"]

#: Result buckets of the baseline gate, in the order they are shown.
GATE_BUCKETS = ("regressions", "missing", "changed", "improvements", "skipped", "vanished", "not_run", "deselected", "new")


@dataclass
class Scope:
    """What a run looked at, so the gate can tell why a baseline key is absent; a report's ``scope``.

    None means unknown (a report that did not say, xdist's deselection); a report writes the sets as
    sorted lists, ``not_run`` as ``[case, mode]`` pairs.
    """

    files: set[str] | None = None  # test files collected
    modes: set[str] | None = None  # modes run
    deselected: set[str] | None = None  # node ids deselected by -k/-m
    tests: set[str] | None = None  # node ids collected and selected
    ran: set[str] | None = None  # node ids that ran to the end
    not_run: set[tuple[str, ...]] | None = None  # (case, mode) keys selected and without a record
    shard: list[int] | None = None  # [index, count] of a CI shard
    filtered: bool = False  # -k or -m was given

    def __post_init__(self) -> None:
        if self.not_run is not None and any(len(pair) != 2 for pair in self.not_run):
            raise SchemaError("scope.not_run must be a list of [case, mode] string pairs")
        if self.shard is not None and not (len(self.shard) == 2 and 1 <= self.shard[0] <= self.shard[1]):
            raise SchemaError(f"scope.shard must be [index, count] with 1 <= index <= count, got {self.shard!r}")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form a report stores as its "scope"."""
        return encode(self, "scope")

    @classmethod
    def from_dict(cls, data: Scope | Mapping[str, Any] | None) -> Scope:
        """Return the scope of a report's "scope" (a missing one: all unknown); SchemaError names a wrong field."""
        return data if isinstance(data, Scope) else decode(cls, dict(data or {}), "scope")


@dataclass
class GateEntry:
    """One (case, mode) of a gate bucket: its verdict before and after, and why it is there."""

    case: str
    mode: str
    test: str | None = None
    before: str | None = field(default=None, metadata=one_of((*vocab.VERDICTS, None)))  # None: a new key
    after: str | None = field(default=None, metadata=one_of((*vocab.VERDICTS, None)))  # None: absent now
    headline: str | None = None
    why: str | None = None


@dataclass
class GateBuckets:
    """The baseline gate's buckets (GATE_BUCKETS): the gate's result in memory and a report's copy of it."""

    regressions: list[GateEntry] = field(default_factory=list)
    missing: list[GateEntry] = field(default_factory=list)  # in no shard of a merge that lacks shards
    # a known failure that now fails at another stage or category (or with another verdict): ``why`` says how
    changed: list[GateEntry] = field(default_factory=list)
    improvements: list[GateEntry] = field(default_factory=list)
    skipped: list[GateEntry] = field(default_factory=list)
    vanished: list[GateEntry] = field(default_factory=list)
    not_run: list[GateEntry] = field(default_factory=list)
    deselected: list[GateEntry] = field(default_factory=list)
    new: list[GateEntry] = field(default_factory=list)


@dataclass
class GateDoc(GateBuckets):
    """The baseline gate's result as a report stores it: its buckets and its decision."""

    baseline: str | None = None
    failed: bool = False
    #: every (case, mode, program) whose worst error moved by a bucket against the baseline's number
    numerics: list[Move] = field(default_factory=list)
    #: --export-baseline-numerics-growth: growth reaching this bucket failed the gate (None: warnings only)
    growth_threshold: float | None = None


@dataclass
class MergeEntry:
    """One (case, mode) that several shard reports hold: which reports, and each one's verdicts."""

    case: str
    mode: str
    sources: list[str] = field(default_factory=list)
    verdicts: dict[str, list[str]] = field(default_factory=dict)  # report name -> its verdicts for the key


@dataclass
class MergeDoc:
    """What a merge found: keys several shards held with the same verdicts, and with different ones."""

    duplicates: list[MergeEntry] = field(default_factory=list)
    conflicts: list[MergeEntry] = field(default_factory=list)


def check_scope(scope: Any) -> None:
    """Raise SchemaError (naming ``scope.<field>``) unless ``scope`` is a valid report scope."""
    decode(Scope, scope, "scope")


def check_gate(gate: Any) -> None:
    """Raise SchemaError (naming ``gate.<bucket>[i].<field>``) unless ``gate`` is a valid gate result."""
    decode(GateDoc, gate, "gate")
