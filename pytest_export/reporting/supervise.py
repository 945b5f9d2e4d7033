"""With ``--export-report``, the process the shell waits for writes the reports of a session that dies.

A session killed outright (a segfault, SIGKILL, the OOM killer) runs no code of its own, so
another process must turn its journals into its reports. Were that a detached watcher, the
shell would get control back the moment pytest died and a CI step reading the report right
after would find nothing (the watcher writes it a moment later). So, on a command line run
(``pytest ...``, ``python -m pytest ...``), the process the shell started becomes a supervisor:
before any conftest can import torch it starts the same command line as its child, which runs
the session, waits for it, writes the reports from the journals the child names if the child
died without writing them, and exits only then, with the child's status (a signal that killed
the child is raised again, so a segfault still reads 139). On Linux the child is a fork of the
supervisor at that point (pytest, its plugins and the parsed command line already loaded),
taken only while the process has a single thread; elsewhere, or with a thread running, it is
the same command line started again, which costs one more start of pytest (about 0.3 s).
pytest.main() inside another program is left alone (the caller owns that process); there
reporting/journal.py's detached watcher still recovers, a moment later.

The supervisor forwards SIGTERM, SIGHUP, SIGUSR1/2 to the child. SIGINT is forwarded only when
a process sent it (``kill -INT <pid>``: the pid a user sees is the supervisor's): a Ctrl-C the
terminal sends reaches the child straight (same process group), and a second one forwarded would
cut its report writing short. The two are told apart by the signal's origin (``si_code``), read
with ``sigtimedwait`` where the platform has it (not macOS: there SIGINT is left to the terminal).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["ENV", "maybe_supervise", "supervised_by", "started_as"]

#: Set for the child: "<supervisor pid>:<how it started the child>:<file the child lists its journals in>".
ENV = "PYTEST_EXPORT_SUPERVISOR"
_FORWARDED = ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")


def started_as() -> str | None:
    """In a supervised session's own process: "fork" or "command line" (how its supervisor started it); else None."""
    supervisor = _supervisor()
    return supervisor[0] if supervisor is not None else None


def supervised_by(journals: list[Path]) -> bool:
    """Tell this session's supervisor (if it has one) which journals to recover; return whether it has one."""
    listing = _listing()
    if listing is None:
        return False
    with open(listing, "a", encoding="utf-8", errors="surrogateescape") as out:
        out.writelines(f"{os.fspath(j)}\n" for j in journals)
    return True


def _listing() -> str | None:
    supervisor = _supervisor()
    return supervisor[1] if supervisor is not None else None


def _supervisor() -> tuple[str, str] | None:
    """Return (how this process was started, its journal listing) when its parent supervises it, else None."""
    pid, _, rest = os.environ.get(ENV, "").partition(":")
    how, _, listing = rest.partition(":")
    # Only the direct child: a pytest started by a test inherits the variable but not the parent.
    return (how, listing) if pid.isdigit() and int(pid) == os.getppid() and listing else None


def maybe_supervise(early_config: Any) -> None:
    """Run the session in a child and exit with its status, when this is a command line run that writes reports."""
    if not _wanted(early_config):
        return
    capture = early_config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        # pytest already captures fds 0-2 (for the conftests); the child must get the real ones.
        capture.suspend_global_capture(in_=True)
    fd, listing = tempfile.mkstemp(prefix="pytest-export-journals-", suffix=".txt")
    os.close(fd)
    forking = _may_fork()
    blocking = forking and hasattr(signal, "sigtimedwait")
    if blocking:
        # Blocked from before the fork: a `kill -INT` that reaches the supervisor before it waits stays
        # pending for _wait_forwarding_interrupts, never lost to the handler set below.
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    pid = _fork() if forking else None
    if pid == 0:  # the child: the session goes on here, from where the supervisor stood
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        os.environ[ENV] = f"{os.getppid()}:fork:{listing}"
        if capture is not None:
            capture.resume_global_capture()
        return
    if pid is None:
        if blocking:  # the fork failed: a new process must not inherit the block
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        env = {**os.environ, ENV: f"{os.getpid()}:command line:{listing}"}
        try:
            child = subprocess.Popen([sys.executable, *sys.orig_argv[1:]], env=env)
        except OSError:
            os.unlink(listing)
            if capture is not None:
                capture.resume_global_capture()
            return  # run the session here: the detached watcher still recovers
        pid = child.pid
    for name in _FORWARDED:
        signal.signal(getattr(signal, name), lambda signum, _frame: _send(pid, signum))
    # A Python handler, not SIG_IGN: set after the child started, it is not inherited.
    signal.signal(signal.SIGINT, lambda _signum, _frame: None)
    status = _wait_forwarding_interrupts(pid) if hasattr(signal, "sigtimedwait") else _wait(pid)
    try:
        _recover(listing, status)
    finally:
        os.unlink(listing)
    _exit_like(status)


def _may_fork() -> bool:
    # Linux only (macOS frameworks are not fork-safe without an exec), and a single thread: a
    # fork copies only the calling thread, so a lock another thread held would stay held.
    if not sys.platform.startswith("linux"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _fork() -> int | None:
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return os.fork()
    except OSError:
        return None


def _send(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass  # it has just ended: the wait below collects it


#: Linux's si_code for a signal the kernel sent: the terminal's Ctrl-C (a kill() is SI_USER, 0).
_SI_KERNEL = 0x80


def _wait_forwarding_interrupts(pid: int) -> int:
    """Wait for the child, passing on each SIGINT a process sent to the supervisor (not the terminal's)."""
    # Blocked, a SIGINT stays pending for sigtimedwait, which says where it came from.
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    try:
        while True:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(raw)
            info = signal.sigtimedwait([signal.SIGINT], 0.2)
            if info is not None and info.si_code != _SI_KERNEL:
                _send(pid, signal.SIGINT)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _wait(pid: int) -> int:
    """Wait for the child; its status as Popen.returncode reads it (-N: killed by signal N)."""
    while True:
        try:
            _, raw = os.waitpid(pid, 0)
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for handlers that raise
            continue
        return os.waitstatus_to_exitcode(raw)


def _wanted(early_config: Any) -> bool:
    if _listing() is not None:  # the supervised child itself
        return False
    if os.name != "posix" or os.environ.get("PYTEST_XDIST_WORKER"):
        return False
    if not hasattr(sys, "orig_argv") or not _command_line(early_config):
        return False
    args = early_config.known_args_namespace
    if getattr(args, "help", False) or getattr(args, "version", False) or getattr(args, "collectonly", False):
        return False
    try:
        reports = getattr(args, "export_report", None) or early_config.getini("export_report")
    except ValueError:
        return False
    return bool(reports)


def _command_line(early_config: Any) -> bool:
    # pytest's own entry points, run with exactly the arguments this session parsed: not a
    # pytest.main() inside another program (an IDE, pytester's in-process runs, a script).
    argv0 = Path(sys.argv[0])
    entry = argv0.name in ("pytest", "py.test") or (argv0.name == "__main__.py" and argv0.parent.name == "pytest")
    return entry and list(early_config.invocation_params.args) == sys.argv[1:]


def _recover(listing: str, status: int) -> None:
    from pytest_export.cli.recover import recover_to
    from pytest_export.results.journal import JournalVersionError, read_journal, signal_reason

    try:
        journals = dict.fromkeys(Path(listing).read_text(encoding="utf-8", errors="surrogateescape").split("\n"))
    except OSError:
        return
    written: list[str] = []
    counts = (0, 0)
    for name in filter(None, journals):
        journal = Path(name)
        if not journal.exists():
            continue  # the session wrote its reports and removed it
        try:
            report_path = read_journal(journal).header.get("report")
            report = recover_to(journal, report_path, signal_reason(status)) if report_path else None
        except (OSError, ValueError) as exc:  # JournalVersionError included; the journal stays for `recover`
            kind = "format" if isinstance(exc, JournalVersionError) else "error"
            print(f"pytest-export: {journal}: the report could not be recovered ({kind}: {exc})", file=sys.stderr)
            continue
        if report is not None:
            shown = os.path.relpath(report_path)
            written.append(report_path if shown.startswith("..") else shown)
            counts = (len(report.records), sum(r.verdict == "crashed" for r in report.records))
    if written:
        print(f"pytest-export: {signal_reason(status)}; wrote {', '.join(written)} from its journal: "
              f"{counts[0]} records ({counts[1]} crashed), marked incomplete", file=sys.stderr)


def _exit_like(status: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    if status < 0:
        # Die of the child's signal, so the shell sees what it would have seen (139 for SIGSEGV),
        # without a core file or a faulthandler traceback of this process.
        import faulthandler
        import resource

        faulthandler.disable()
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        except (ValueError, OSError):
            pass
        signal.signal(-status, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-status])
        os.kill(os.getpid(), -status)
        status = 128 - status  # a signal that does not end a process (SIGCHLD): the shell's convention
    os._exit(status)
