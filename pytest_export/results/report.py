"""Build, validate, load and atomically write export reports.

The formats (JSON, HTML, Markdown) and their renderers: pytest_export.rendering.formats.

A report is a dict::

    {"schema": "pytest-export-report", "version": 1, "complete": bool, "stop_reason": str,
     "environment": {...}, "scope": {...}, "summary": {...}, "gate": {...} | None,
     "records": [Record, ...]}          # sorted by (case, mode); see pytest_export.results.records

In memory its records are typed (pytest_export.results.records.Record); in the JSON file each is
``Record.to_dict()``, and loading decodes and validates them with the same codec.

Pure: imports neither pytest nor torch, so ``python -m pytest_export merge`` starts fast.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from pytest_export.results.records import EXPORTABLE, VERDICTS, Record, failure_of
from pytest_export.results.runtimes import runtime_tables
from pytest_export.results.schema import GATE_BUCKETS, check_gate, check_scope

__all__ = [
    "REPORT_SCHEMA",
    "REPORT_VERSION",
    "GATE_BUCKETS",
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


def build_report(
    records: Iterable[Record],
    *,
    environment: dict[str, Any] | None = None,
    scope: dict[str, Any] | None = None,
    complete: bool = True,
    stop_reason: str = "",
    gate: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return a report dict over ``records`` (sorted by (case, mode))."""
    checked = sorted(records, key=_sort_key)
    return {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "complete": bool(complete),
        "stop_reason": stop_reason,
        "environment": dict(environment or {}),
        "scope": dict(scope or {}),
        "summary": summarize(checked),
        "gate": gate,
        "records": checked,
        "runtimes": runtime_tables(checked),
    }


def validate_report(data: Any, source: str = "report") -> dict[str, Any]:
    """Return the report a JSON document holds (records decoded), else raise ReportError naming ``source`` and the field."""
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
    try:
        check_scope(data.get("scope") or {})
        if data.get("gate") is not None:
            check_gate(data["gate"])
        records = [Record.from_dict(r, f"records[{i}]") for i, r in enumerate(data["records"])]
    except ValueError as exc:  # SchemaError included: it names the record's field
        raise ReportError(f"{source}: {exc}") from None
    out = dict(data)
    out["records"] = sorted(records, key=_sort_key)
    out.setdefault("stop_reason", "")
    out["scope"] = data.get("scope") or {}
    out.setdefault("gate", None)
    out["summary"] = summarize(out["records"])
    out["runtimes"] = runtime_tables(out["records"])
    return out


def load_report(path: str | os.PathLike[str], name: str | None = None) -> dict[str, Any]:
    """Read and validate a JSON report; raise ReportError naming the file (or ``name``) on any problem."""
    name = name or os.fspath(path)
    text = _read_text(path, name)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{name}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ReportError(f"{name}: not an export report (JSON nested too deeply)") from None
    from pytest_export.results.baseline import baseline_records, is_baseline

    if is_baseline(data):  # a baseline file (the list of known outcomes) reads as a report of those records
        try:
            return build_report(baseline_records(data, name))
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


def report_document(report: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON document of a report: its records encoded (what ``load_report`` reads back)."""
    return {**report, "records": [r.to_dict() for r in report["records"]]}


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
