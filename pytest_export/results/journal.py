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
turned into the report by :func:`recover` (called by the process that started the session,
pytest_export.reporting.supervise, by the next session writing the same report, or by ``python -m
pytest_export recover``): the records that arrived, the test that was running recorded as
``crashed``, marked incomplete.

The writing session holds an exclusive ``flock`` on its journal while it lives (the kernel drops
it when the process dies, however it dies), so :func:`session_alive` tells a live session from a
dead one without trusting a pid that may have been reused; recovering a live session's journal
would delete it, and that session's crash would then leave an empty report.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exportcore.diagnosis.failures import worker_crashed
from exportcore.outcome import Outcome
from pytest_export.results.liveness import running
from pytest_export.results.records import Record, record_key
from pytest_export.results.report import Report
from pytest_export.results.verdicts import verdict_of

try:
    import fcntl
except ImportError:  # not POSIX: liveness falls back to the pid in the header
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "JOURNAL_SCHEMA", "Journal", "JournalBusy", "JournalState", "JournalVersionError", "crashed_record",
    "journal_path", "lost_records", "read_journal", "recover", "session_alive", "signal_reason",
]

JOURNAL_SCHEMA = "pytest-export-journal"
JOURNAL_VERSION = 1


class JournalBusy(OSError):
    """Another live process holds the journal (it is writing the same report)."""


class JournalVersionError(ValueError):
    """A journal written in a format this pytest-export does not read."""


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
    outcome = Outcome(case_id=case, mode=mode, status="crashed", failure=worker_crashed(message))
    return Record.make(test, case, mode, verdict_of(outcome), outcome, source=source)


class Journal:
    """An append-only JSON-lines file; every line is on disk before append() returns."""

    def __init__(self, path: Path, header: dict[str, Any], *, sync: bool = True) -> None:
        """Start a journal at ``path``; raise JournalBusy if a live session holds the one there."""
        self.path = path
        # fsync guards against a machine crash too; a process crash alone never loses a flushed line.
        self.sync = sync
        # O_APPEND: a line is written whole at the end even if another writer shares the file.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        lock: dict[str, str] = {}
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until this process ends
            except BlockingIOError:
                os.close(fd)
                raise JournalBusy(f"{os.fspath(path)} is held by another running session") from None
            except OSError:
                pass  # a file system without locks: liveness falls back to the header's pid
            else:
                lock = {"lock": "flock"}
        os.ftruncate(fd, 0)  # only once locked: a live session's journal is never cut short
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self.append({"journal": JOURNAL_SCHEMA, "version": JOURNAL_VERSION, **header, **lock})

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
            except (FileNotFoundError, NotADirectoryError):  # gone with its folder (the report says so)
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
    if not entries or not isinstance(entries[0], dict) or entries[0].get("journal") != JOURNAL_SCHEMA:
        raise ValueError(f"{os.fspath(path)}: not a pytest-export journal")
    version = entries[0].get("version")
    if version != JOURNAL_VERSION:
        raise JournalVersionError(  # the callers name the file
            f"journal format version {version!r}, but this pytest-export reads version "
            f"{JOURNAL_VERSION}; recover it with the pytest-export that wrote it")
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


def recover(path: str | os.PathLike[str], reason: str = "") -> tuple[Report, JournalState]:
    """Return the incomplete report a journal's killed session would have written, and the journal's state."""
    from pytest_export.results.gate import compare
    from pytest_export.results.report import ReportError, build_report, load_report
    from pytest_export.results.schema import Scope

    state = read_journal(path)
    header = state.header
    reason = reason or f"the session (pid {header.get('pid')}) died without writing its reports (a crash, a signal, out of memory)"
    records = state.records + lost_records(state, reason)
    scope_data = dict(state.scope)
    selected = {tuple(k) for k in scope_data.pop("selected", [])}
    # The shard as the session named it: a CI shard that crashed is recovered as that shard, so
    # `merge` still knows which part of the run it holds (without it the merge called it unknown).
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
        records, environment=header.get("environment") or {}, scope=scope, complete=False,
        stop_reason=stop, gate=gate.to_doc() if gate else None,
    )
    return report, state


def session_alive(path: str | os.PathLike[str], header: dict[str, Any]) -> int | None:
    """Return the pid of the live session that writes the journal at ``path``, or None if it is gone.

    A journal its session locked (header ``lock``) is live while the lock is held; a pid alone
    may belong to an unrelated process by now. A lock still held after the session's pid died is
    held by a process it forked (a DataLoader worker) that outlived it: the session is gone. "Died"
    is the pid, its start time (header ``pid_started``) and its state (results.liveness): a zombie
    its parent has not reaped yet is dead.
    """
    pid = header.get("pid")
    started = header.get("pid_started")
    started = started if isinstance(started, int) else None
    alive = isinstance(pid, int) and pid != os.getpid() and running(pid, started)
    if header.get("lock") == "flock" and fcntl is not None and not _lock_held(path):
        return None
    return pid if alive else None


def _lock_held(path: str | os.PathLike[str]) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # drops the shared lock if it was taken
    return False


def signal_reason(returncode: int) -> str:
    """Return why a process ended, in words, from its (negative for a signal) exit status."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the session was killed by {name}"
    return f"the session exited with status {returncode} without writing its reports"
