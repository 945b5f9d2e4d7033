"""pytest glue for the crash journal (pytest_export.results.journal): results survive a killed process.

- Serial runs with ``--export-report``: the controller appends each record to
  ``<report>.journal`` as it arrives. If the session dies without writing its reports
  (segfault, SIGKILL, the OOM killer), the process that started it turns the journals into the
  reports before the shell gets control back (pytest_export.reporting.supervise); where pytest runs
  inside another program (``pytest.main()``), a detached watcher (``python -m pytest_export
  recover --watch``) does, a moment after. ``os._exit`` inside a test is caught in-process, the
  reports are written, and the exit status is never 0. A leftover journal is also recovered
  by the next session writing the same report, or by ``python -m pytest_export recover``.
- Under xdist each worker notes the test it runs and its ``export_check`` cases in a
  journal of its own, so when the worker dies the controller records the fixture cases
  that were in flight as ``crashed`` (marker cases are known from the node id).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Generator

import pytest

from pytest_export.cli.recover import WATCH_DONE, recover_to
from pytest_export.marker import item_case_id
from pytest_export.rendering.formats import write_report
from pytest_export.results.journal import (Journal, JournalBusy, JournalVersionError, journal_path, lost_records,
                                           read_journal, recover, session_alive)
from pytest_export.results.liveness import start_time
from pytest_export.results.records import Record
from pytest_export.session_state import distributed, plugin_session

__all__ = [
    "InflightDir", "JournalPlugin", "WorkerNotes", "crashed_inflight", "note_done",
    "note_started", "recover_stale",
]

_WORKER_DIR = "export_inflight_dir"
#: The exit status of a session a test ended with os._exit(0): never 0, like an internal error.
KILLED_STATUS = int(pytest.ExitCode.INTERNAL_ERROR)


def note_started(item: pytest.Item, case: str, mode: str) -> None:
    """Note that an export_check case starts in ``item`` (so a crash in it is recorded)."""
    for journal in plugin_session(item.config).inflight:
        journal.append({"started": {"test": item.nodeid, "case": case, "mode": mode}})


def note_done(item: pytest.Item, record: Record) -> None:
    """Note an export_check case's record (it survives a crash later in the same test)."""
    for journal in plugin_session(item.config).inflight:
        journal.append({"done": record.to_dict()})


def _running(item: pytest.Item, mode_of: Callable[[pytest.Item], str | None]) -> dict[str, Any]:
    mode = mode_of(item)
    return {"test": item.nodeid, "case": item_case_id(item, mode) if mode else None, "mode": mode}


def recover_stale(path: Path, shown: str) -> str:
    """Turn a journal left by a killed session into its report; return a line saying so ("" if none)."""
    journal = journal_path(path)
    if not journal.exists():
        return ""
    try:
        state = read_journal(journal)
    except JournalVersionError as exc:
        return f"pytest-export: {shown}: its journal cannot be recovered ({exc}); this session's journal replaces it"
    except (OSError, ValueError):
        journal.unlink(missing_ok=True)
        return ""
    pid = session_alive(journal, state.header)
    if pid is not None:
        return f"pytest-export: {shown} is being written by a running session (pid {pid}); its journal is left alone"
    report = recover_to(journal, path)
    if report is None:
        return ""
    return f"pytest-export: recovered {shown} from the journal of a killed session ({report.stop_reason})"


class JournalPlugin:
    """Controller side: journals next to the report paths, the watcher, the os._exit guard."""

    def __init__(self, config: pytest.Config, reports: list[tuple[Path, str]], header: dict[str, Any],
                 scope: Callable[[], dict[str, Any]], mode_of: Callable[[pytest.Item], str | None]) -> None:
        self.config = config
        self.reports = reports
        self.scope = scope
        self.mode_of = mode_of
        self.serial = not distributed(config)
        self.recovered = [line for path, shown in reports if (line := recover_stale(path, shown))]
        self.pid = os.getpid()
        self.journals = []
        # The pid with its start time: a pid outlives its process (a zombie, a number reused).
        owner = {"pid": self.pid, "pid_started": start_time(self.pid)}
        for path, shown in reports:
            try:
                self.journals.append(Journal(journal_path(path), {**header, **owner, "report": str(path)}))
            except JournalBusy:
                raise pytest.UsageError(
                    f"--export-report {shown}: another running pytest session writes this report (its journal "
                    f"{journal_path(path).name} is locked); wait for it, or write the report elsewhere") from None
        self.current: dict[str, Any] | None = None
        self.watcher: subprocess.Popen[bytes] | None = None
        if self.journals:
            plugin_session(config).inflight = self.journals if self.serial else []
            from pytest_export.reporting.supervise import supervised_by

            # The process that started this one writes the reports if this one dies; else a watcher.
            if not supervised_by([j.path for j in self.journals]):
                self.watcher = _start_watcher(self.pid, [j.path for j in self.journals])

    def append(self, entry: dict[str, Any]) -> None:
        for journal in self.journals:
            journal.append(entry)

    def pytest_report_header(self) -> list[str]:
        return self.recovered

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        self.append({"scope": self.scope()})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        if not self.serial:
            return (yield)
        self.current = _running(item, self.mode_of)
        self.append({"running": self.current})
        real_exit = os._exit
        os._exit = self._guard(real_exit)  # type: ignore[assignment]
        try:
            return (yield)
        finally:
            os._exit = real_exit
            self.append({"finished": item.nodeid})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        from pytest_export.reporting.transport import carried

        for record in carried(report):  # already JSON builtins
            self.append({"record": record})

    def _guard(self, real_exit: Callable[[int], Any]) -> Callable[[int], Any]:
        def exit_guard(status: int) -> None:
            # A forked child (multiprocessing, a DataLoader worker) ends with os._exit too: not ours.
            if os.getpid() != self.pid:
                real_exit(status)
            os._exit = real_exit  # type: ignore[assignment]
            test = self.current["test"] if self.current else "a test"
            self.finish_killed(f"the process called os._exit({status})")
            code = status if isinstance(status, int) and status != 0 else KILLED_STATUS
            capture = self.config.pluginmanager.getplugin("capturemanager")
            if capture is not None:
                capture.suspend_global_capture(in_=False)  # the message must reach the real stderr
            sys.stderr.write(f"\npytest-export: {test} called os._exit({status}); the reports were written "
                             f"incomplete; exit status {code}\n")
            sys.stderr.flush()
            real_exit(code)

        return exit_guard

    def finish_killed(self, reason: str) -> None:
        """Write every report from its journal now (the process is about to end)."""
        for (path, _), journal in zip(self.reports, self.journals):
            try:
                report, _ = recover(journal.path, reason)
                write_report(report, path)
            except Exception:  # noqa: BLE001 - the watcher or the next session tries again
                continue
            journal.close(remove=True)

    def finish(self) -> None:
        """The reports are written: drop the journals and let the watcher go."""
        for journal in self.journals:
            journal.close(remove=True)
        plugin_session(self.config).inflight = []
        self._stop_watcher()

    def pytest_unconfigure(self) -> None:
        self._stop_watcher()

    def _stop_watcher(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is None:
            return
        if watcher.stdin is not None:
            # The word, then EOF: the watcher finds the journals closed and exits (EOF alone is a death).
            try:
                watcher.stdin.write(WATCH_DONE)
                watcher.stdin.close()
            except OSError:
                pass  # the watcher is gone already
        try:
            watcher.wait(timeout=30)
        except subprocess.TimeoutExpired:
            watcher.kill()
            watcher.wait()


def _start_watcher(pid: int, journals: list[Path]) -> subprocess.Popen[bytes] | None:
    package_root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, "-m", "pytest_export", "recover", "--watch", str(pid), *map(str, journals)]
    try:
        # Its own session: a signal sent to the test run's process group (a CI timeout) spares it.
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env,
                                start_new_session=True, close_fds=True)
    except OSError:
        return None  # no watcher: the next session or `recover` still finds the journal


class WorkerNotes:
    """Worker side (xdist): the running test and its export_check cases, for the controller to read on a crash."""

    def __init__(self, config: pytest.Config) -> None:
        directory = config.workerinput.get(_WORKER_DIR)  # type: ignore[attr-defined]
        self.journal: Journal | None = None
        if directory:
            worker = config.workerinput["workerid"]  # type: ignore[attr-defined]
            self.journal = Journal(Path(directory) / f"{worker}.journal", {"pid": os.getpid()}, sync=False)
            plugin_session(config).inflight = [self.journal]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        if self.journal is not None:
            self.journal.append({"running": {"test": item.nodeid, "case": None, "mode": None}})
        try:
            return (yield)
        finally:
            if self.journal is not None:
                self.journal.append({"finished": item.nodeid})


class InflightDir:
    """Controller side (xdist): the directory the workers' notes go to."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="pytest-export-inflight-")

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_WORKER_DIR] = self.path

    def pytest_unconfigure(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def crashed_inflight(config: pytest.Config, worker: str, test: str, message: str) -> list[Record]:
    """Return the records a dead worker's notes hold for ``test``: finished export_check cases and crashed ones."""
    plugin = config.pluginmanager.get_plugin("export-inflight")
    if plugin is None:
        return []
    path = Path(plugin.path) / f"{worker}.journal"
    try:
        state = read_journal(path)
    except (OSError, ValueError):
        return []
    if state.running is None or state.running["test"] != test:
        return []
    return lost_records(state, message)
