"""The typed shape of a report's "scope" and "gate" sections: validation comes from these types.

Records have their own dataclass (:class:`pytest_export.results.records.Record`); these two sections
stay plain dicts in a loaded report (gate and merge read them as such), and are checked here
with the same codec, so a wrong baseline is refused naming the field
(``scope.shard must be [index, count] with 1 <= index <= count``). Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from exportcore.codec import SchemaError, decode

__all__ = ["GATE_BUCKETS", "GateEntry", "GateDoc", "ScopeDoc", "check_scope", "check_gate"]

#: Result buckets of the baseline gate, in the order they are shown.
GATE_BUCKETS = ("regressions", "missing", "improvements", "skipped", "vanished", "not_run", "deselected", "new")


@dataclass
class ScopeDoc:
    """What a run looked at (``gate.Scope`` in memory); a missing or null list means "unknown"."""

    files: list[str] | None = None
    modes: list[str] | None = None
    deselected: list[str] | None = None
    tests: list[str] | None = None
    ran: list[str] | None = None
    not_run: list[list[str]] | None = None  # [case, mode] pairs
    shard: list[int] | None = None  # [index, count] of a CI shard
    filtered: bool = False

    def __post_init__(self) -> None:
        if self.not_run is not None and any(len(pair) != 2 for pair in self.not_run):
            raise SchemaError("scope.not_run must be a list of [case, mode] string pairs")
        if self.shard is not None and not (len(self.shard) == 2 and 1 <= self.shard[0] <= self.shard[1]):
            raise SchemaError(f"scope.shard must be [index, count] with 1 <= index <= count, got {self.shard!r}")


@dataclass
class GateEntry:
    """One (case, mode) of a gate bucket: its verdict before and after, and why it is there."""

    case: str
    mode: str
    test: str | None = None
    before: str | None = None
    after: str | None = None
    headline: str | None = None
    why: str | None = None


@dataclass
class GateDoc:
    """The baseline gate's result as a report stores it."""

    baseline: str | None = None
    failed: bool = False
    regressions: list[GateEntry] = field(default_factory=list)
    missing: list[GateEntry] = field(default_factory=list)
    improvements: list[GateEntry] = field(default_factory=list)
    skipped: list[GateEntry] = field(default_factory=list)
    vanished: list[GateEntry] = field(default_factory=list)
    not_run: list[GateEntry] = field(default_factory=list)
    deselected: list[GateEntry] = field(default_factory=list)
    new: list[GateEntry] = field(default_factory=list)


def check_scope(scope: Any) -> None:
    """Raise SchemaError (naming ``scope.<field>``) unless ``scope`` is a valid report scope."""
    decode(ScopeDoc, scope, "scope")


def check_gate(gate: Any) -> None:
    """Raise SchemaError (naming ``gate.<bucket>[i].<field>``) unless ``gate`` is a valid gate result."""
    decode(GateDoc, gate, "gate")
