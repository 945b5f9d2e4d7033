"""A ledger directory: one JSON-lines file per torch version (``torch-2.15.0.jsonl``), sorted and stable.

The first line of a file is its header (the torch version, the runs it was built from, their
environment and notes); each further line is one record, sorted by (case, mode), a model's note on its
inputs on its first line only. Written whole to a
temporary twin, then renamed over the old file, so a reader (and a build reading the previous
ledger from the same directory) never sees a part.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_export.ledger.rows import LedgerError, LedgerRow
from pytest_export.results.report import atomic_write

__all__ = ["FORMAT", "Ledger", "VersionLedger", "file_name", "read_ledger", "read_version", "version_key",
           "write_version"]

FORMAT = 1
_NAME = re.compile(r"^torch-(.+)\.jsonl$")


@dataclass
class VersionLedger:
    torch: str  # "2.15.0": the release, without a local build tag
    header: dict[str, Any] = field(default_factory=dict)
    rows: list[LedgerRow] = field(default_factory=list)

    def by_key(self) -> dict[tuple[str, str], LedgerRow]:
        return {row.key: row for row in self.rows}


#: torch version -> its ledger, newest first
Ledger = dict[str, VersionLedger]


def version_key(torch: str) -> tuple[int, ...]:
    """Sort key of a torch release: 2.15.0 after 2.6.0."""
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.+]", torch))


def file_name(torch: str) -> str:
    return f"torch-{torch}.jsonl"


def read_version(path: Path) -> VersionLedger:
    """Read one torch version's file; raise LedgerError naming the file, the line and the field."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{path}: cannot read the ledger file ({exc})") from None
    if not lines:
        raise LedgerError(f"{path}: empty; the first line must be the ledger's header")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        raise LedgerError(f"{path}:1: the header is not JSON ({exc.msg})") from None
    if not isinstance(header, dict) or header.get("ledger") != FORMAT or not isinstance(header.get("torch"), str):
        raise LedgerError(f"{path}:1: not a ledger header (needs \"ledger\": {FORMAT} and \"torch\")")
    rows = [LedgerRow.from_line(text, f"{path}:{i}") for i, text in enumerate(lines[1:], 2) if text.strip()]
    for before, row in zip(rows, rows[1:]):
        if row.case == before.case and not row.inputs:
            row.inputs = before.inputs  # written once per model (write_version)
    return VersionLedger(header["torch"], header, rows)


def read_ledger(folder: Path) -> Ledger:
    """Read every torch version of a ledger directory (a missing directory is an empty ledger)."""
    if folder.exists() and not folder.is_dir():
        raise LedgerError(f"{folder}: a ledger is a directory of torch-VERSION.jsonl files")
    found = [read_version(p) for p in sorted(folder.glob("torch-*.jsonl"))] if folder.is_dir() else []
    for version in found:
        expected = file_name(version.torch)
        if not (folder / expected).exists():
            raise LedgerError(f"{folder}: a file's header says torch {version.torch}; it must be named {expected}")
    return {v.torch: v for v in sorted(found, key=lambda v: version_key(v.torch), reverse=True)}


def write_version(folder: Path, version: VersionLedger) -> Path:
    """Write one torch version's file (header, then the records sorted by case and mode); return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    header = {**version.header, "ledger": FORMAT, "torch": version.torch}
    lines = [json.dumps(header, sort_keys=True, ensure_ascii=False)]
    previous: LedgerRow | None = None
    for row in sorted(version.rows, key=lambda r: r.key):
        # a model's note on its inputs is the same in every mode: written once, on its first line
        same = previous is not None and previous.case == row.case and previous.inputs == row.inputs
        lines.append((replace(row, inputs="") if same else row).to_line())
        previous = row
    path = folder / file_name(version.torch)
    atomic_write(path, "\n".join(lines) + "\n")
    return path
