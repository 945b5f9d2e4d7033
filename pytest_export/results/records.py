"""Per-(case, mode) records: what crosses xdist workers and lands in reports, gate, merge and diff.

One typed record, :class:`Record`, made in one place (:meth:`Record.make`: the runner, the
``export_check`` fixture, crashed and unrun tests) and read everywhere through its fields.
Its JSON form, a report's ``records[i]``, comes from the codec (exportcore.codec)::

    {
      "test": "tests/test_m.py::test_mlp[strict]",   # pytest node id
      "case": "tests/test_m.py::test_mlp",           # node id without the mode id part
      "mode": "strict",
      "verdict": "passed" | "failed" | "xfailed" | "xpassed" | "error"
                 | "timeout" | "crashed" | "skipped" | "unstable",
      "expect": {"reason": str, "category": str | None} | None,
      "duration": float,                              # seconds, whole test
      "outcome": Outcome.to_dict() | None,            # None only if no outcome could be made
      "source": "marker" | "fixture",                 # optional (default "marker"): export_check
                                                      # records are per call, not per pytest test
    }

The gate key is (case, mode); a verdict in EXPORTABLE counts as exportable. Pure: imports
neither pytest nor torch, so reports, gate, merge and diff read records through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from exportcore import vocab
from exportcore.codec import SchemaError, checked, decode, encode, one_of
from exportcore.diagnosis.failures import case_not_checked
from exportcore.outcome import Failure, Outcome
from pytest_export.results.expectation import Expectation
from pytest_export.results.verdicts import verdict_of

__all__ = [
    "EXPORTABLE", "SOURCES", "VERDICTS", "Expectation", "Record", "failure_of", "ordered_modes",
    "record_key", "split_mode", "worst",
]

# The closed sets are exportcore.vocab's (the codec enforces them); re-exported for the readers here.
VERDICTS, EXPORTABLE, SOURCES = vocab.VERDICTS, vocab.EXPORTABLE, vocab.SOURCES


@dataclass(kw_only=True)
class Record:
    """The result of one (case, mode): the verdict pytest gave and the engine's outcome."""

    test: str
    case: str
    mode: str
    verdict: str = field(metadata=one_of(VERDICTS))
    expect: Expectation | None = None
    duration: float
    outcome: Outcome | None = None
    source: str = field(default="marker", metadata=one_of(SOURCES))

    @classmethod
    def make(cls, test: str, case: str, mode: str, verdict: str, outcome: Outcome | None, *,
             expect: Expectation | None = None, duration: float = 0.0, source: str = "marker") -> Record:
        """Return a new record, checked as a loaded one is, with every text encodable and parts of its own.

        The one way records are made (runner, export_check, crashed and unrun tests), built from the typed
        values by the codec's one walk (:func:`exportcore.codec.checked`: what an encode and a decode
        would give, with no JSON in between). Its guarantees are why: every text encodable (a lone
        surrogate in a message would break every report writer and xdist's transport); builtin subclasses
        narrowed (execnet refuses torch's ``TorchVersion(str)``); and no part shared with the caller's
        ``outcome`` (export_check hands ``record.outcome`` to the test, which may change it; a later edit
        of the caller's object must not reach the report). An outcome a plugin hook left off-schema (a
        stage or finding kind outside exportcore.vocab, a wrong type) becomes an ``error`` record saying
        which field: raised here it would end the session inside pytest's hooks, with no report.
        """
        record = cls(test=test, case=case, mode=mode, verdict=verdict, expect=expect,
                     duration=round(duration, 6), outcome=outcome, source=source)
        try:
            return checked(record, "record")
        except (SchemaError, TypeError) as exc:
            if outcome is None or not str(exc).startswith("record.outcome"):
                raise  # the caller's own arguments (a verdict, a source) are this project's bug
            message = (f"the outcome is not a valid result: {exc} (a plugin's pytest_export_run or "
                       "pytest_export_outcome hook wrote it; exportcore.vocab lists the words a result may hold)")
            record.outcome = Outcome(case_id=case, mode=mode, status="error",
                                     failure=case_not_checked(type(exc).__name__, message, category="internal"))
            record.verdict = verdict_of(record.outcome)
            return checked(record, "record")

    def to_dict(self) -> dict[str, Any]:
        """Return the record's JSON form (plain builtins, as a report file and xdist carry it)."""
        return encode(self, "record")

    @classmethod
    def from_dict(cls, data: Any, where: str = "record") -> Record:
        """Rebuild a record; raise SchemaError naming the field path (``where`` first) that is wrong."""
        return decode(cls, data, where)


def record_key(record: Record) -> tuple[str, str]:
    """Return the (case, mode) key a record is gated on."""
    return (record.case, record.mode)


def failure_of(record: Record) -> Failure | None:
    """Return the failure of a record's outcome, or None."""
    return record.outcome.failure if record.outcome is not None else None


def worst(records: Sequence[Record]) -> Record:
    """Return the record that speaks for several of one key: the first that did not export, else the first.

    A key is only as good as its worst record (export_check called twice, a merged report):
    the gate must not pass on the luckier one.
    """
    return next((r for r in records if r.verdict not in EXPORTABLE), records[0])


def ordered_modes(modes: Iterable[str], order: Sequence[str]) -> list[str]:
    """Return ``modes`` as report columns: those in ``order`` first, in its order, then the rest sorted."""
    present = set(modes)
    return [m for m in order if m in present] + sorted(present - set(order))


def split_mode(nodeid: str, mode: str) -> str:
    """Return the case id of ``nodeid``: the node id without its trailing mode id.

    The plugin parametrizes the mode last, so its id is the last part of the parametrization
    id. Only that part goes: ``test[v1-strict-strict]`` is case ``test[v1-strict]`` in
    ``strict``, distinct from ``test[v1-strict]`` (case ``test[v1]``). Prefer item_case_id
    where an item is at hand.
    """
    if nodeid.endswith(f"[{mode}]"):
        return nodeid[: -len(mode) - 2]
    if nodeid.endswith(f"-{mode}]") and "[" in nodeid:
        return nodeid[: -len(mode) - 2] + "]"
    return nodeid

