# Over 300 lines: the record types and their JSON codec together, so a field and its check change in one place.
"""The result of checking one (case, mode): plain data that round-trips through JSON.

Nothing here may hold a tensor, an exported program or a frame: outcomes cross
pytest-xdist workers and CI shards, and must not keep torch state alive.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "STAGES",
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
    "Outcome",
    "SchemaError",
]

SCHEMA_VERSION = 1

#: passed: every enabled check held. failed: the model runs in eager but export or a
#: check failed. error: the case itself is broken (eager failure, bad input).
#: timeout / crashed: the case was stopped or its process died.
STATUSES = ("passed", "failed", "error", "timeout", "crashed", "skipped")

#: verified: the corrected spec exports and its accept/reject checks pass; suggested: it did not.
FIX_STATUSES = ("verified", "suggested")

#: Pipeline stages in execution order; a failure names exactly one of them.
STAGES = (
    "input",  # validating the user's case (args, dynamic_shapes, mode)
    "eager",  # eager reference run
    "capture",  # torch.export.export
    "constraints",  # constraint solving (dynamic shape violations)
    "decompose",  # run_decompositions() to core ATen
    "serialize",  # torch.export.save / load round trip
    "module",  # ExportedProgram.module()
    "run",  # calling the exported module
    "numerics",  # outputs differ from eager
    "training",  # gradients / buffer mutations differ from eager
    "guards",  # accept / reject checks on concrete shapes
    "state",  # parameter / buffer parity
    "lower",  # a target: lowering / compiling the exported program (exportcore.targets)
    "load",  # a target: loading the artifact in its runtime
)


class SchemaError(ValueError):
    """Raised when a JSON document is not a valid outcome of this schema version."""


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
    stage: str
    category: str
    exc_type: str
    message: str  # first line, for headlines
    detail: str = ""  # full message (torch's "Suggested fixes" included)
    hint: str = ""  # one-line fix hint
    source: SourceLocation | None = None  # deepest user frame outside torch
    exportdb_case: str | None = None  # nearest ExportDB case name
    traceback: str = ""  # torch's internal traceback, shown only on request

    def headline(self) -> str:
        """Return the one-line summary shown first in a failure report."""
        parts = [f"[{self.stage}] {self.category}: {self.exc_type}: {self.message}"]
        if self.source is not None:
            parts.append(f"at {self.source}")
        return " ".join(parts)


@dataclass
class Finding:
    """Something torch let through or changed that the user should know about."""

    kind: str  # e.g. "specialized", "narrowed", "dtype_accepted", "size01_accepted", "state_missing"
    severity: str  # "warning" or "error"
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
    note: str = ""  # e.g. "most draws discarded: the declared spec is wider than the model"


@dataclass
class Counterexample:
    shapes: dict[str, list[int]]  # input pytree path -> concrete shape
    message: str = ""
    reproduce: str = ""  # a snippet / command that reproduces the failure


@dataclass
class SpecFix:
    """A corrected ``dynamic_shapes``, re-exported once to check it (failing cases only)."""

    status: str  # "verified": exports and its accept/reject checks pass; "suggested": it did not
    dynamic_shapes: str  # ready-to-paste Python: Dim definitions, then ``dynamic_shapes=...``
    origin: str = ""  # "torch's suggested fixes" or "solved from the violated guard"
    changes: list[str] = field(default_factory=list)  # e.g. "w: min 32 -> 33"
    reason: str = ""  # why a suggestion is not verified
    exports: int = 0  # re-exports spent on it
    seconds: float = 0.0


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
class Explanation:
    """Extra work done for a failing case only: a verified spec, the failing submodule, every issue."""

    fix: SpecFix | None = None
    submodules: list[SubmoduleFailure] = field(default_factory=list)
    issues: list[DraftIssue] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # "fix", "submodules", "draft" -> seconds
    notes: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    case_id: str
    mode: str
    status: str = "passed"
    failure: Failure | None = None
    checks: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    graph: GraphStats | None = None
    declared: dict[str, str] = field(default_factory=dict)  # dim name -> declared range
    range_constraints: dict[str, str] = field(default_factory=dict)  # dim name (symbol if none) -> exported range
    range_symbols: dict[str, str] = field(default_factory=dict)  # dim name -> torch's symbol for it ("s6")
    findings: list[Finding] = field(default_factory=list)
    examples: ExampleStats = field(default_factory=ExampleStats)
    counterexample: Counterexample | None = None
    notes: list[str] = field(default_factory=list)  # what was and was not checked
    #: Targets: one row per input tried, {"shapes", "kind", ".module()", <target>} -> accepted/rejected/...
    shape_table: list[dict[str, str]] = field(default_factory=list)
    explanation: Explanation | None = None  # failing cases only (exportcore.explain)
    torch_version: str = ""
    reused_from: str | None = None
    schema: int = SCHEMA_VERSION

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict of plain builtins (str/int/float subclasses narrowed)."""
        return _plain(dataclasses.asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any) -> Outcome:
        """Rebuild an Outcome; raise SchemaError naming the field that is wrong."""
        if not isinstance(data, dict):
            raise SchemaError(f"outcome must be an object, got {type(data).__name__}")
        version = data.get("schema")
        if version != SCHEMA_VERSION:
            raise SchemaError(f"outcome schema {version!r} is not supported (expected {SCHEMA_VERSION})")
        try:
            return _build(cls, data, "outcome")
        except SchemaError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise SchemaError(f"invalid outcome: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"outcome is not valid JSON: {exc}") from None
        return cls.from_dict(data)


def _plain(value: Any) -> Any:
    # execnet (xdist) refuses builtin subclasses such as torch's TorchVersion(str).
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value


_NESTED: dict[str, type] = {
    "failure": Failure,
    "source": SourceLocation,
    "graph": GraphStats,
    "examples": ExampleStats,
    "counterexample": Counterexample,
    "explanation": Explanation,
    "fix": SpecFix,
}
#: List fields whose items are records.
_LISTS: dict[str, type] = {"findings": Finding, "submodules": SubmoduleFailure, "issues": DraftIssue}


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise SchemaError(f"{where} must be an object, got {type(data).__name__}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(names)
    if unknown:
        raise SchemaError(f"{where}: unknown field(s) {sorted(unknown)}")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        path = f"{where}.{name}"
        if name in _NESTED and value is not None:
            value = _build(_NESTED[name], value, path)
        elif name in _LISTS:
            if not isinstance(value, list):
                raise SchemaError(f"{path} must be a list")
            value = [_build(_LISTS[name], v, f"{path}[{i}]") for i, v in enumerate(value)]
        kwargs[name] = value
    missing = [
        f.name
        for f in names.values()
        if f.name not in kwargs
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING  # type: ignore[misc]
    ]
    if missing:
        raise SchemaError(f"{where}: missing field(s) {missing}")
    obj = cls(**kwargs)
    _check_types(obj, where)
    return obj


_SCALARS = {
    "case_id": str, "mode": str, "status": str, "stage": str, "category": str,
    "exc_type": str, "message": str, "detail": str, "hint": str, "traceback": str,
    "file": str, "line": int, "function": str, "code": str, "kind": str,
    "severity": str, "node_count": int, "tried": int, "discarded": int,
    "accepted": int, "rejected": int, "note": str, "reproduce": str,
    "torch_version": str, "schema": int,
    "dynamic_shapes": str, "origin": str, "reason": str, "exports": int, "seconds": (int, float),
    "path": str, "module_type": str, "instances": int, "location": str, "suggestion": str,
}


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _list_of(kind: type | tuple[type, ...]) -> Any:
    return lambda v: isinstance(v, list) and all(_is(x, kind) for x in v)


def _dict_of(kind: Any) -> Any:
    test = kind if callable(kind) and not isinstance(kind, type) else (lambda x: _is(x, kind))
    return lambda v: isinstance(v, dict) and all(isinstance(k, str) and test(x) for k, x in v.items())


#: Container fields: a loaded report is rendered and gated, so a wrong shape must fail here, by name.
_CONTAINERS: dict[str, tuple[Any, str]] = {
    "checks": (_list_of(str), "a list of str"),
    "changes": (_list_of(str), "a list of str"),
    "notes": (_list_of(str), "a list of str"),
    "timings": (_dict_of((int, float)), "an object of numbers"),
    "declared": (_dict_of(str), "an object of str"),
    "range_constraints": (_dict_of(str), "an object of str"),
    "range_symbols": (_dict_of(str), "an object of str"),
    "op_histogram": (_dict_of(int), "an object of int"),
    "shapes": (_dict_of(_list_of(int)), "an object of int lists"),
    "shape_table": (lambda v: isinstance(v, list) and all(_dict_of(str)(r) for r in v), "a list of objects of str"),
}
_OPTIONAL_STR = ("input", "exportdb_case")


def _check_types(obj: Any, where: str) -> None:
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        want = _SCALARS.get(f.name)
        if want is not None and not _is(value, want):
            wanted = want.__name__ if isinstance(want, type) else "a number"
            raise SchemaError(f"{where}.{f.name} must be {wanted}, got {type(value).__name__}")
        container = _CONTAINERS.get(f.name)
        if container is not None and not container[0](value):
            raise SchemaError(f"{where}.{f.name} must be {container[1]}")
        if f.name in _OPTIONAL_STR and value is not None and not isinstance(value, str):
            raise SchemaError(f"{where}.{f.name} must be a str or null, got {type(value).__name__}")
    if isinstance(obj, Outcome) and obj.status not in STATUSES:
        raise SchemaError(f"{where}.status must be one of {STATUSES}, got {obj.status!r}")
    if isinstance(obj, SpecFix) and obj.status not in FIX_STATUSES:
        raise SchemaError(f"{where}.status must be one of {FIX_STATUSES}, got {obj.status!r}")
