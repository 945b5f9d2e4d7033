"""``python -m pytest_export recover reports/export.json``: a killed session's report, from its journal.

exit status: 0 a report recovered, or nothing to recover; 2 a journal whose session is still
running, an unreadable journal or one of an unknown format version, or an unwritable report.
:func:`recover_to` is also how the supervising process (pytest_export.reporting.supervise) writes
the reports of a session that died.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from pytest_export.rendering.formats import write_report
from pytest_export.results.journal import journal_path, read_journal, recover, session_alive

__all__ = ["WATCH_DONE", "add_parser", "recover_to", "run"]

#: What a session writes to its watcher's stdin before closing it when it ends alive (its reports
#: written, or left to the next session): without it the end of the watcher's stdin is the session dying.
WATCH_DONE = b"done\n"


def add_parser(sub: Any) -> None:
    """Register the ``recover`` subcommand."""
    parser = sub.add_parser(
        "recover",
        help="write the report of a killed pytest session from its journal (REPORT.journal)",
        description="A session killed before writing its reports (segfault, OOM killer) leaves REPORT.journal "
        "next to each --export-report path; this writes REPORT from it, marked incomplete, the test that was "
        "running recorded as crashed.",
        epilog="exit status: 0 a report recovered (the report says the run is incomplete) or nothing to recover; "
        "2 the journal's session is still running, an unreadable journal or one of an unknown format version, "
        "or an unwritable report",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="report paths (or their .journal files)")
    parser.add_argument("--watch", type=int, metavar="PID", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return its exit status."""
    if args.watch is not None:
        _watch(args.watch)
    status = 0
    for name in args.reports:
        report_path = Path(name[: -len(".journal")] if name.endswith(".journal") else name)
        journal = journal_path(report_path)
        if not journal.exists():
            if args.watch is None:
                print(f"{report_path}: no journal ({journal}): nothing to recover")
            continue
        try:
            pid = session_alive(journal, read_journal(journal).header)
            # A live session's journal is its only record so far: recovering (deleting) it would
            # leave that session's crash, if it comes, with an empty report.
            report = None if pid is not None else recover_to(journal, report_path)
        except (OSError, ValueError) as exc:  # an unreadable journal, an unknown format, an unwritable report
            print(f"error: {journal}: cannot be recovered ({exc})", file=sys.stderr)
            status = 2
            continue
        if pid is not None:
            print(f"error: {journal}: its session (pid {pid}) is still running; it writes {report_path} itself "
                  "when it ends (or its journal is recovered when it dies): nothing done", file=sys.stderr)
            status = 2
        elif report is not None:
            crashed = sum(r.verdict == "crashed" for r in report.records)
            print(f"pytest-export: recovered {report_path} from its journal: {len(report.records)} records "
                  f"({crashed} crashed), incomplete: {report.stop_reason}", file=sys.stderr)
    return status


def _watch(parent: int) -> None:
    """Return once the pytest session ``parent`` is over: it said so on our stdin (WATCH_DONE), or it died.

    Its death is the kernel reparenting us, not the end of our stdin: a dying process's files are
    closed one after the other, so the pipe may end while its journal is still locked (the session
    would read as running, and its report would never be written); by the time its children are
    reparented every file of it is closed. A zombie its parent has not reaped yet is dead to
    session_alive (results.liveness).
    """
    import select
    import signal
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the session's to handle (it writes the reports)
    said: bytes | None = b""
    while os.getppid() == parent:
        if said is None:  # our stdin ended unsaid: the session is dying
            time.sleep(0.05)
            continue
        ready, _, _ = select.select([sys.stdin], [], [], 0.5)
        if not ready:
            continue
        data = os.read(sys.stdin.fileno(), 4096)
        if data:
            said += data
        elif WATCH_DONE in said:
            return
        else:
            said = None


def recover_to(journal: str | os.PathLike[str], report_path: str | os.PathLike[str], reason: str = "",
               ) -> dict[str, Any] | None:
    """Write the report of a dead session's journal to ``report_path`` and remove the journal.

    Return the report, or None when the journal was closed (the session wrote its reports
    itself). Raises ValueError for an unreadable journal, JournalVersionError for one of another
    format, OSError for an unwritable report. The caller checks :func:`session_alive` first.
    """
    report, state = recover(journal, reason)
    if state.closed:
        Path(journal).unlink(missing_ok=True)
        return None
    write_report(report, report_path)
    Path(journal).unlink(missing_ok=True)
    return report
