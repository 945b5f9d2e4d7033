"""The crash journal: every record appended to ``<report>.journal`` as it completes.

A session killed outright (a segfault, the OOM killer, ``os._exit``) runs no hook that
could write its reports. So the controller appends, as JSON lines flushed and fsynced:

    {"journal": "pytest-export-journal", "version": 1, "pid": ..., "report": ..., ...}   # header
    {"scope": {...}}                          # what the session collected and selected
    {"running": {"test": ..., "case": ..., "mode": ...}}   # a test started (case/mode may be null)
    {"started": {"test": ..., "case": ..., "mode": ...}}   # an export_check case started in it
    {"done": record}                          # an export_check case finished (its test may still die)
    {"record": record}                        # a test's records reached the controller
                                              # (record: Record.to_dict(), decoded when read back)
    {"finished": test}                        # the test is over (teardown included)
    {"closed": true}                          # the reports were written: nothing to recover

and removes the file once the reports are written. A journal that outlives its session is
turned into the report by :func:`recover` (called by the session's watcher process, by the
next session writing the same report, or by ``python -m pytest_export recover``): the
records that arrived, the test that was running recorded as ``crashed``, marked incomplete.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exportcore.outcome import Failure, Outcome
from pytest_export.records import Record, record_key

__all__ = [
    "JOURNAL_SCHEMA", "Journal", "JournalState", "crashed_record", "journal_path", "lost_records", "read_journal",
    "recover",
]

JOURNAL_SCHEMA = "pytest-export-journal"
JOURNAL_VERSION = 1


def journal_path(report: str | os.PathLike[str]) -> Path:
    """Return the journal that belongs to a report path."""
    report = Path(report)
    name = report.name + ".journal"
    if len(name.encode()) > 255:  # NAME_MAX: a report name near the limit gets a shortened, stable twin
        digest = hashlib.sha1(report.name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        name = f"{report.name[:100]}.{digest}.journal"
    return report.with_name(name)


def crashed_record(test: str, case: str, mode: str, message: str, source: str = "marker") -> Record:
    """Return a record for a case whose process died while running it."""
    failure = Failure(
        stage="run", category="crashed", exc_type="WorkerCrashed", message=message,
        hint="the process died (segfault, os._exit, out of memory, a signal); rerun the test alone "
        "with -n 1 to see it fail on its own while every other result is kept",
    )
    outcome = Outcome(case_id=case, mode=mode, status="crashed", failure=failure)
    return Record.make(test, case, mode, "crashed", outcome, source=source)


class Journal:
    """An append-only JSON-lines file; every line is on disk before append() returns."""

    def __init__(self, path: Path, header: dict[str, Any], *, sync: bool = True) -> None:
        self.path = path
        # fsync guards against a machine crash too; a process crash alone never loses a flushed line.
        self.sync = sync
        # O_APPEND: a line is written whole at the end even if another writer shares the file.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o666)
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self.append({"journal": JOURNAL_SCHEMA, "version": JOURNAL_VERSION, **header})

    def append(self, entry: dict[str, Any]) -> None:
        """Write one entry as a line and force it to disk."""
        if self._file.closed:
            return
        self._file.write(json.dumps(entry, sort_keys=True, ensure_ascii=True) + "\n")
        self._file.flush()
        if self.sync:
            os.fsync(self._file.fileno())

    def close(self, remove: bool) -> None:
        """Mark the journal closed (its reports are written) and, if asked, delete it."""
        if not self._file.closed:
            self.append({"closed": True})
            self._file.close()
        if remove:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass


@dataclass
class JournalState:
    """What a journal says about its session."""

    header: dict[str, Any]
    records: list[Record] = field(default_factory=list)
    scope: dict[str, Any] = field(default_factory=dict)
    running: dict[str, Any] | None = None  # the test started last and not reported since
    started: list[dict[str, Any]] = field(default_factory=list)  # its export_check cases
    done: list[Record] = field(default_factory=list)  # its finished export_check records
    closed: bool = False


def read_journal(path: str | os.PathLike[str]) -> JournalState:
    """Return the state a journal records; a torn last line (the crash mid-write) is ignored.

    Raises ValueError (SchemaError for a record that does not decode, naming its line).
    """
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    if not entries or entries[0].get("journal") != JOURNAL_SCHEMA:
        raise ValueError(f"{os.fspath(path)}: not a pytest-export journal")
    state = JournalState(header=entries[0])
    for n, entry in enumerate(entries[1:], 2):
        if "record" in entry:
            record = Record.from_dict(entry["record"], f"{os.fspath(path)}: entry {n}: record")
            state.records.append(record)
            if state.running is not None and record.test == state.running["test"]:
                state.started, state.done = [], []
        elif "running" in entry:
            state.running, state.started, state.done = entry["running"], [], []
        elif "finished" in entry:
            if state.running is not None and state.running["test"] == entry["finished"]:
                state.running, state.started, state.done = None, [], []
        elif "started" in entry:
            state.started.append(entry["started"])
        elif "done" in entry:
            state.done.append(Record.from_dict(entry["done"], f"{os.fspath(path)}: entry {n}: done"))
        elif "scope" in entry:
            state.scope.update(entry["scope"])
        elif entry.get("closed"):
            state.closed = True
    return state


def lost_records(state: JournalState, reason: str) -> list[Record]:
    """Return the records of the test the process died in: its finished cases and a crashed one per open case."""
    running = state.running
    if running is None or any(r.test == running["test"] for r in state.records):
        return []
    lost = list(state.done)
    finished = {record_key(r) for r in state.done}
    opened = [s for s in state.started if (s["case"], s["mode"]) not in finished]
    message = f"{reason} while running {running['test']}"
    lost += [crashed_record(running["test"], s["case"], s["mode"], message, "fixture") for s in opened]
    if running.get("case") and running.get("mode"):
        lost.append(crashed_record(running["test"], running["case"], running["mode"], message))
    return lost


def recover(path: str | os.PathLike[str], reason: str = "") -> tuple[dict[str, Any], JournalState]:
    """Return the incomplete report a journal's killed session would have written, and the journal's state."""
    from pytest_export.gate import Scope, compare
    from pytest_export.report import ReportError, build_report, load_report

    state = read_journal(path)
    header = state.header
    reason = reason or f"the session (pid {header.get('pid')}) died without writing its reports (a crash, a signal, out of memory)"
    records = state.records + lost_records(state, reason)
    scope_data = dict(state.scope)
    selected = {tuple(k) for k in scope_data.pop("selected", [])}
    scope = Scope.from_dict(scope_data)
    scope.not_run = selected - {record_key(r) for r in records}
    where = f" while running {state.running['test']}" if state.running else ""
    stop = f"{reason}{where}; the report was recovered from its journal"
    gate = None
    baseline = header.get("baseline")
    if baseline:
        try:
            gate = compare(load_report(baseline), records, scope, name=header.get("baseline_shown") or baseline)
        except ReportError:
            gate = None
    report = build_report(
        records, environment=header.get("environment") or {}, scope=scope.to_dict(), complete=False,
        stop_reason=stop, gate=gate.to_dict() if gate else None,
    )
    return report, state
