"""The report: one typed :class:`Report`, built, validated, loaded and atomically written.

The formats (JSON, HTML, Markdown) and their renderers: pytest_export.rendering.formats.

Its JSON document, encoded and decoded by the codec (exportcore.codec) from the types below::

    {"schema": "pytest-export-report", "version": 1, "complete": bool, "stop_reason": str,
     "environment": {...}, "scope": Scope, "gate": GateDoc | None,
     "records": [Record, ...],          # sorted by (case, mode); see pytest_export.results.records
     "merge": MergeDoc,                 # only in a merged report that found duplicates or conflicts
     "summary": {...}, "runtimes": {...}}   # for readers of the file: computed from the records when
                                            # written (report_document), ignored when loaded

Pure: imports neither pytest nor torch, so ``python -m pytest_export merge`` starts fast.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from exportcore.codec import decode, encode, one_of, version as version_stamp
from pytest_export.results.records import EXPORTABLE, VERDICTS, Record, failure_of
from pytest_export.results.runtimes import runtime_tables
from pytest_export.results.schema import GATE_BUCKETS, GateDoc, MergeDoc, Scope

__all__ = [
    "REPORT_SCHEMA",
    "REPORT_VERSION",
    "GATE_BUCKETS",
    "Report",
    "ReportError",
    "build_report",
    "summarize",
    "validate_report",
    "load_report",
    "atomic_write",
    "temp_prefix",
    "report_document",
    "nodeid_file",
]

REPORT_SCHEMA = "pytest-export-report"
REPORT_VERSION = 1


class ReportError(ValueError):
    """A report file is unreadable or not a valid report; the message names the file and field."""


def nodeid_file(nodeid: str) -> str:
    """Return the file part of a pytest node id."""
    return nodeid.split("::", 1)[0]


def _sort_key(record: Record) -> tuple[str, str, str]:
    return (record.case, record.mode, record.test)


def summarize(records: Iterable[Record]) -> dict[str, Any]:
    """Return counts per verdict, per failure category and per mode."""
    records = list(records)
    verdicts = Counter(r.verdict for r in records)
    categories: Counter[str] = Counter()
    stages: Counter[str] = Counter()
    by_mode: dict[str, Counter[str]] = {}
    for r in records:
        by_mode.setdefault(r.mode, Counter())[r.verdict] += 1
        failure = failure_of(r)
        if r.verdict not in EXPORTABLE and r.verdict != "skipped" and failure:
            categories[failure.category] += 1
            stages[failure.stage] += 1
    return {
        "total": len(records),
        "cases": len({r.case for r in records}),
        "modes": sorted(by_mode),
        "verdicts": {v: verdicts[v] for v in VERDICTS if verdicts[v]},
        "categories": dict(sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))),
        "stages": dict(sorted(stages.items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_mode": {m: dict(sorted(c.items())) for m, c in sorted(by_mode.items())},
    }


#: What a report file holds for its readers only: computed from the records when written, never read back.
DERIVED = ("summary", "runtimes")


@dataclass(kw_only=True)
class Report:
    """One session's (or one merge's) results: what ran, the gate's decision and one record per (case, mode).

    ``summary`` and ``runtimes`` are not fields: they follow from the records, so whoever shows them
    computes them (:func:`summarize`, ``runtime_tables``) and a loaded file cannot contradict them.
    """

    schema: str = field(default=REPORT_SCHEMA, metadata=one_of((REPORT_SCHEMA,)))
    version: int = field(default=REPORT_VERSION, metadata=version_stamp(REPORT_VERSION))
    complete: bool = True
    stop_reason: str = ""  # why an incomplete run stopped ("" when complete)
    environment: dict[str, Any] = field(default_factory=dict)  # torch, python, platform, ... as shown
    scope: Scope = field(default_factory=Scope)
    gate: GateDoc | None = None
    records: list[Record] = field(default_factory=list)
    merge: MergeDoc | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the report's JSON document without its derived sections (see :func:`report_document`)."""
        doc = encode(self, "report")
        if self.merge is None:
            del doc["merge"]  # a report that merged nothing keeps the keys it always had
        return doc

    @classmethod
    def from_dict(cls, data: Any, source: str = "report") -> Report:
        """Rebuild a report from its JSON document; raise ReportError naming ``source`` and the field at fault."""
        return validate_report(data, source)

    def __getitem__(self, key: str) -> Any:
        """Read a section by its JSON name, as a report read when it was a dict (``report["records"]``).

        Records stay typed; ``summary`` and ``runtimes`` are computed; ``scope``, ``gate`` and ``merge``
        come as their JSON form. Kept for scripts and notebooks written against the dict; code here reads
        the fields.
        """
        if key == "summary":
            return summarize(self.records)
        if key == "runtimes":
            return runtime_tables(self.records)
        if key == "records":
            return self.records
        if key in ("scope", "gate", "merge"):
            value = getattr(self, key)
            return None if value is None else encode(value, key)
        if key in {"schema", "version", "complete", "stop_reason", "environment"}:
            return getattr(self, key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``report[key]``, with ``default`` for a section the report lacks."""
        try:
            value = self[key]
        except KeyError:
            return default
        return default if value is None else value


def _gate(gate: GateDoc | Mapping[str, Any] | None) -> GateDoc | None:
    if gate is None or isinstance(gate, GateDoc):
        return gate
    return decode(GateDoc, dict(gate), "gate")


def build_report(
    records: Iterable[Record],
    *,
    environment: Mapping[str, Any] | None = None,
    scope: Scope | Mapping[str, Any] | None = None,
    complete: bool = True,
    stop_reason: str = "",
    gate: GateDoc | Mapping[str, Any] | None = None,
    merge: MergeDoc | None = None,
) -> Report:
    """Return the report over ``records`` (sorted by (case, mode)); a ``scope`` or ``gate`` given as its JSON
    form is decoded (SchemaError naming the field when it is wrong)."""
    return Report(
        complete=bool(complete), stop_reason=stop_reason, environment=dict(environment or {}),
        scope=Scope.from_dict(scope), gate=_gate(gate), records=sorted(records, key=_sort_key), merge=merge,
    )


def validate_report(data: Any, source: str = "report") -> Report:
    """Return the report a JSON document holds, else raise ReportError naming ``source`` and the field.

    ``summary`` and ``runtimes`` are ignored: they are recomputed from the records by whoever shows them,
    so a report written before they were derived (or edited by hand) loads the same.
    """
    if not isinstance(data, dict):
        raise ReportError(f"{source}: not an export report (top level is {type(data).__name__}, expected object)")
    if data.get("schema") != REPORT_SCHEMA:
        raise ReportError(
            f"{source}: not an export report (field 'schema' is {data.get('schema')!r}, "
            f"expected {REPORT_SCHEMA!r})"
        )
    if data.get("version") != REPORT_VERSION:
        raise ReportError(
            f"{source}: report version {data.get('version')!r} is not supported (expected {REPORT_VERSION}); "
            "regenerate it with this pytest-export"
        )
    for name, types in (("complete", (bool,)), ("environment", (dict,)), ("records", (list,))):
        if not isinstance(data.get(name), types):
            got = type(data.get(name)).__name__
            raise ReportError(f"{source}: field {name!r} must be {types[0].__name__}, got {got}")
    for name in ("scope", "gate"):
        if data.get(name) is not None and not isinstance(data[name], dict):
            raise ReportError(f"{source}: field {name!r} must be an object or null")
    doc = {k: v for k, v in data.items() if k not in DERIVED}
    if doc.get("scope") is None:
        doc["scope"] = {}  # an old report's null scope: nothing known about what ran
    try:
        report = decode(Report, doc, "")
    except ValueError as exc:  # SchemaError included: it names the field
        raise ReportError(f"{source}: {exc}") from None
    report.records.sort(key=_sort_key)
    return report


def load_report(path: str | os.PathLike[str], name: str | None = None) -> Report:
    """Read and validate a JSON report; raise ReportError naming the file (or ``name``) on any problem."""
    name = name or os.fspath(path)
    text = _read_text(path, name)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{name}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ReportError(f"{name}: not an export report (JSON nested too deeply)") from None
    from pytest_export.results.baseline import is_baseline, read_baseline

    if is_baseline(data):  # a baseline file (the list of known outcomes) reads as a report of those records
        try:
            return build_report(read_baseline(text, name))  # the text: a fault is named by its line
        except ValueError as exc:  # SchemaError is a ValueError
            raise ReportError(str(exc)) from None
    try:
        return validate_report(data, name)
    except RecursionError:
        raise ReportError(f"{name}: not an export report (nested too deeply)") from None


#: The largest report file read (a real report of 10,000 records is ~30 MiB).
MAX_REPORT_BYTES = 1 << 30


def _read_text(path: str | os.PathLike[str], name: str) -> str:
    # A FIFO would block the open, /dev/zero would fill memory: only regular files are reports.
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ReportError(f"{name}: file does not exist") from None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{name}: cannot be read ({exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ReportError(f"{name}: cannot be read (it is a directory)")
    if not stat.S_ISREG(info.st_mode):
        raise ReportError(f"{name}: cannot be read (not a regular file)")
    if info.st_size > MAX_REPORT_BYTES:
        raise ReportError(f"{name}: cannot be read (file too large: {info.st_size} bytes)")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_REPORT_BYTES + 1)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, MemoryError) as exc:
        raise ReportError(f"{name}: cannot be read ({exc})") from None


def report_document(report: Report) -> dict[str, Any]:
    """Return the JSON document of a report (what ``load_report`` reads back), with the summary and the
    shapes x runtimes tables its readers find in the file computed from the records."""
    return {**report.to_dict(), "summary": summarize(report.records), "runtimes": runtime_tables(report.records)}


def atomic_write(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the whole new one, never a part."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; a report is an ordinary file others (CI uploaders) read.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def temp_prefix(target: Path) -> str:
    """Return the prefix of ``target``'s temporary twin (short: the target's name may be at NAME_MAX)."""
    return f".{target.name[:40]}."


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
