"""The result of checking one (case, mode): plain data that round-trips through JSON.

Nothing here may hold a tensor, an exported program or a frame: outcomes cross
pytest-xdist workers and CI shards, and must not keep torch state alive. The JSON form and
its validation come from the field types (exportcore.codec): a new field needs no other edit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from exportcore import vocab
from exportcore.codec import SchemaError, decode, encode, one_of, upgrade, version

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "STAGES",
    "DimOutcome",
    "SourceLocation",
    "Failure",
    "Finding",
    "GraphStats",
    "ExampleStats",
    "Counterexample",
    "SpecFix",
    "SubmoduleFailure",
    "DraftIssue",
    "Explanation",
    "OptionRescue",
    "Outcome",
    "ProgramError",
    "ShapeRow",
    "SchemaError",
]

SCHEMA_VERSION = 1

# The closed sets live in exportcore.vocab (the codec enforces them); re-exported for their readers.
STATUSES, FIX_STATUSES, STAGES = vocab.STATUSES, vocab.FIX_STATUSES, vocab.STAGES


@dataclass
class SourceLocation:
    file: str
    line: int
    function: str = ""
    code: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Failure:
    stage: str = field(metadata=one_of(vocab.STAGES))
    #: Open to a plugin's own mode (pytest_export_run), so not enforced by the codec; the engine's
    #: writers use vocab.CATEGORIES only (tests/test_vocab.py walks them).
    category: str
    exc_type: str
    message: str  # first line, for headlines
    detail: str = ""  # full message (torch's "Suggested fixes" included)
    hint: str = ""  # one-line fix hint
    source: SourceLocation | None = None  # deepest user frame outside torch
    exportdb_case: str | None = None  # nearest ExportDB case name
    traceback: str = ""  # torch's internal traceback, shown only on request

    def headline(self, *, at: bool = True) -> str:
        """Return the one-line summary shown first in a failure report (``at``: with its source line)."""
        parts = [f"[{self.stage}] {self.category}: {self.exc_type}: {self.message}"]
        if at and self.source is not None:
            parts.append(f"at {self.source}")
        return " ".join(parts)


@dataclass
class Finding:
    """Something torch let through or changed that the user should know about."""

    kind: str = field(metadata=one_of(vocab.FINDING_KINDS))
    severity: str = field(metadata=one_of(vocab.SEVERITIES))
    message: str
    input: str | None = None  # pytree path of the input concerned, e.g. "args[0]"


@dataclass
class GraphStats:
    node_count: int = 0
    op_histogram: dict[str, int] = field(default_factory=dict)
    code: str = ""  # the exported graph module's Python code (may be truncated)


@dataclass
class ExampleStats:
    tried: int = 0  # shapes drawn and run
    discarded: int = 0  # eager itself rejected the drawn shape
    accepted: int = 0  # in-spec shapes accepted by the exported module
    rejected: int = 0  # out-of-spec shapes rejected by the exported module
    skipped: int = 0  # drawn shapes not probed: an input could not be built at that shape (see notes)
    note: str = ""  # e.g. "most draws discarded: the declared spec is wider than the model"


@dataclass
class DimOutcome:
    """What one declared dynamic dim became in the program, and what the checks ran of it."""

    name: str  # the user's dim name ("batch")
    declared: str  # "[2, 64]" (int_oo when unbounded)
    kind: str = field(metadata=one_of(vocab.DIM_KINDS))
    exported: str = ""  # "[2, 32]", "4", "= 2*batch": what the program takes
    checked: str = ""  # what the checks ran: "sizes 2 and 64 and 8 drawn ran; out-of-range sizes refused"
    where: str = ""  # the input axis it was read off ("x dim 0")
    #: why it failed the case, when a failure is this dim's (a size the range promises that was refused)
    failed: str = ""

    def short(self) -> str:
        """``batch 2..8 ✓`` / ``seq 2..64 → 2..32`` / ``h 16..160 → 224``: the compact column of the reports."""
        declared = _dots(self.declared)
        if self.kind == "dynamic":
            return f"{self.name} {declared} ✓" + (" ✗" if self.failed else "")
        exported = _dots(self.exported) if self.exported.startswith("[") else self.exported
        return f"{self.name} {declared} → {exported or self.kind}" + (" ✗" if self.failed else "")


def _dots(text: str) -> str:
    # "[2, 64]" -> "2..64", "[2, int_oo]" -> "2..∞"
    return text.strip("[]").replace(", ", "..").replace("int_oo", "∞")


@dataclass
class ProgramError:
    """How close one program came to eager over every input it was compared on, passing or not.

    ``worst_fraction`` is the largest ``|program - eager| / (atol + rtol * |eager|)`` over the elements
    of every leaf compared (outputs, and in training the buffers and grads), with the tolerances the
    verdict used: below 1 within the tolerance, 0.9 is close to failing. A leaf that differs with no
    finite budget (an integer, a NaN position, a shape) counts as the largest float.
    """

    program: str  # "exported", "decomposed", "reloaded", or a target's runtime ("aoti")
    worst_fraction: float = 0.0
    max_abs: float = 0.0  # the largest |program - eager| of any element
    max_rel: float = 0.0  # the largest relative error where eager is not 0
    max_ulp: float = 0.0  # the largest distance in representable values of a floating leaf's dtype
    where: str = ""  # the leaf of the worst fraction ("output[0]", "grads['w']")
    inputs: str = ""  # the inputs it was seen on: "the example inputs", "a drawn in-range shape (x=[3, 4])"
    samples: int = 0  # the input sets compared
    #: the worst leaf was past its tolerance yet forgiven as rounding, judged against a float64 run
    forgiven: bool = False


@dataclass
class Counterexample:
    shapes: dict[str, list[int]]  # input pytree path -> concrete shape
    message: str = ""
    reproduce: str = ""  # a snippet / command that reproduces the failure


@dataclass
class SpecFix:
    """A corrected ``dynamic_shapes``, re-exported once to check it (failing cases only)."""

    #: "verified": exports and the checks ``verified_by`` names pass; "suggested": it did not.
    status: str = field(metadata=one_of(FIX_STATUSES))
    dynamic_shapes: str  # ready-to-paste Python: Dim definitions, then ``dynamic_shapes=...``
    origin: str = ""  # "torch's suggested fixes" or "solved from the violated guard"
    changes: list[str] = field(default_factory=list)  # e.g. "w: min 32 -> 33"
    reason: str = ""  # why a suggestion is not verified
    exports: int = 0  # re-exports spent on it
    seconds: float = 0.0
    #: what the re-check that decides verified or suggested ran: the case's accept/reject checks (a spec
    #: the guards refused), or every check the case ran, values included (a range raised past a size 0 or 1)
    verified_by: str = "its accept/reject checks"
    #: the kinds of the findings the verifying re-check reported: warnings, which fail the test where
    #: findings are errors (a range raised to 2 leaves size01_accepted: torch does not guard 0/1)
    findings: list[str] = field(default_factory=list)


@dataclass
class SubmoduleFailure:
    """A submodule that fails to export on its own, in the same category as the whole model."""

    path: str  # qualified name, e.g. "encoder.layers.3.self_attn"
    module_type: str
    category: str
    message: str = ""
    instances: int = 1  # modules of this type the eager run called


@dataclass
class DraftIssue:
    """One problem torch.export.draft_export found (all of them come from one pass)."""

    kind: str  # torch's failure type, e.g. "DATA_DEPENDENT_ERROR", "GUARD_ADDED"
    message: str
    location: str = ""  # the user's file:line
    code: str = ""  # the user's source line
    suggestion: str = ""  # torch's suggested fix, when it gives one


@dataclass
class OptionRescue:
    """An export option torch offers, retried on a failing case with every check the case ran."""

    #: "verified": the case passes under ``option``; "none": no option tried passed
    status: str = field(metadata=one_of(("verified", "none")))
    option: str = ""  # "backed_size_oblivious"
    code: str = ""  # what to write: the marker's export_config=, and the export call's context
    tried: list[str] = field(default_factory=list)  # every option retried, in order
    findings: list[str] = field(default_factory=list)  # the finding kinds the passing re-check still reports
    reasons: dict[str, str] = field(default_factory=dict)  # option -> why it did not rescue (its headline)
    seconds: float = 0.0


@dataclass
class Explanation:
    """Extra work done for a failing case only: a verified spec, the failing submodule, every issue."""

    fix: SpecFix | None = None
    rescue: OptionRescue | None = None
    submodules: list[SubmoduleFailure] = field(default_factory=list)
    issues: list[DraftIssue] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # "fix", "submodules", "draft" -> seconds
    notes: list[str] = field(default_factory=list)


@dataclass
class ShapeRow:
    """One input a target column's checks tried: its shapes, what kind of input, each program's verdict."""

    shapes: str  # every input's shape: "args[0]=[2, 4], args[1]=[2]"
    kind: str  # "example", "in range", "out of range (above_max:batch)"
    cells: dict[str, str] = field(default_factory=dict)  # column (".module()", "aoti") -> one of vocab.CELLS

    def __post_init__(self) -> None:
        wrong = {column: cell for column, cell in self.cells.items() if cell not in vocab.CELLS}
        if wrong:
            raise SchemaError(f"shape row {self.shapes!r}: cells {wrong} must be among {vocab.CELLS}")


def _rows_before_cells(rows: Any) -> Any:
    # Written before rows were typed: {"shapes", "kind", <column>: <cell>, ...} per row.
    if not isinstance(rows, list):
        return rows
    return [{"shapes": r.get("shapes"), "kind": r.get("kind", ""),
             "cells": {k: v for k, v in r.items() if k not in ("shapes", "kind")}}
            if isinstance(r, dict) and "cells" not in r else r for r in rows]


@dataclass
class Outcome:
    case_id: str
    mode: str
    status: str = field(default="passed", metadata=one_of(STATUSES))
    failure: Failure | None = None
    checks: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    graph: GraphStats | None = None
    declared: dict[str, str] = field(default_factory=dict)  # dim name -> declared range
    range_constraints: dict[str, str] = field(default_factory=dict)  # dim name (symbol if none) -> exported range
    range_symbols: dict[str, str] = field(default_factory=dict)  # dim name -> torch's symbol for it ("s6")
    #: per declared dynamic dim, what the program made of it (exportcore.checks.dynamism)
    dims: list[DimOutcome] = field(default_factory=list)
    #: per program compared with eager, its measured error on the examples and drawn shapes (programs/parity.py)
    numerics: list[ProgramError] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    examples: ExampleStats = field(default_factory=ExampleStats)
    counterexample: Counterexample | None = None
    notes: list[str] = field(default_factory=list)  # what was and was not checked
    #: A target column: one row per input its checks tried, each program's verdict on it (checks/table.py)
    shape_table: list[ShapeRow] = field(default_factory=list, metadata=upgrade(_rows_before_cells))
    explanation: Explanation | None = None  # failing cases only (exportcore.diagnosis.explain)
    torch_version: str = ""
    reused_from: str | None = None
    #: --export-repeat: each run's status in order (empty when checked once); differing ones make it unstable
    repeats: list[str] = field(default_factory=list)
    #: checked in full although checked before: the first part of the proof that changed since
    #: (exportcore.reuse.changes: ``code: models.resnet:Net.forward``, ``weights``, ``torch 2.14.1 → 2.15.0``)
    rechecked_because: str | None = None
    schema: int = field(default=SCHEMA_VERSION, metadata=version(SCHEMA_VERSION))

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict of plain builtins (str/int/float subclasses narrowed)."""
        return encode(self, "outcome")

    def to_json(self) -> str:
        """Return the outcome as a JSON text (keys sorted)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any) -> Outcome:
        """Rebuild an Outcome; raise SchemaError naming the field that is wrong."""
        return decode(cls, data, "outcome")

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        """Rebuild an Outcome from JSON text; raise SchemaError on bad JSON or a wrong field."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"outcome is not valid JSON: {exc}") from None
        return cls.from_dict(data)
