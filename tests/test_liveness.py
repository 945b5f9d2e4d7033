"""A session's liveness is its pid, its start time and its state: a zombie or a reused pid is not the session."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from pytest_export.results.journal import Journal, session_alive
from pytest_export.results.liveness import running, start_time

pytestmark = [pytest.mark.machinery, pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")]
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/<pid>/stat")


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        text = stat.read()
    return text[text.rindex(b")") + 2:].split()[0].decode()


def _until(pid: int, state: str) -> None:
    end = time.monotonic() + 300
    while _state(pid) != state:
        assert time.monotonic() < end, f"process {pid} never reached state {state}"
        time.sleep(0.02)


@pytest.fixture
def zombie():
    """A process that ended and that nobody has reaped yet (this test is its parent)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    _until(child.pid, "Z")
    yield child.pid
    child.wait()


def test_a_running_process_runs_and_is_known_by_its_start_time():
    me = os.getpid()
    assert running(me)
    if sys.platform.startswith("linux"):
        assert running(me, start_time(me))
        assert not running(me, start_time(me) + 1)  # the same pid, another process: reused
    else:
        assert start_time(me) is None and running(me, None)


@linux
def test_a_zombie_does_not_run_though_kill_still_reaches_it(zombie):
    os.kill(zombie, 0)  # what a pid alone says: it is there
    assert not running(zombie)
    assert not running(zombie, start_time(zombie))


def test_a_reaped_process_does_not_run():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not running(child.pid)


@linux
def test_a_process_whose_main_thread_ended_first_still_runs():
    # Its leader reads Z while another thread runs on and holds the process's files.
    code = ("import ctypes, threading, time\n"
            "threading.Thread(target=time.sleep, args=(600,)).start()\n"
            "ctypes.CDLL(None).pthread_exit(None)\n")
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        _until(child.pid, "Z")
        assert running(child.pid, start_time(child.pid))
    finally:
        child.kill()
        child.wait()


@linux
def test_a_journal_still_locked_by_a_fork_of_its_zombie_session_is_recoverable(tmp_path, zombie):
    # The lock is held (here by this process, as by a DataLoader worker the session forked), but the
    # session itself is a zombie its parent has not reaped: it is gone, its journal is recoverable.
    journal = Journal(tmp_path / "r.json.journal", {"pid": zombie, "pid_started": start_time(zombie)})
    try:
        assert session_alive(journal.path, {"pid": zombie, "pid_started": start_time(zombie), "lock": "flock"}) is None
    finally:
        journal.close(remove=True)


@linux
def test_a_journal_whose_pid_runs_again_as_another_process_is_recoverable(tmp_path):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        header = {"pid": other.pid, "pid_started": start_time(other.pid) - 1, "lock": "flock"}  # started before
        journal = Journal(tmp_path / "r.json.journal", header)
        try:
            assert session_alive(journal.path, header) is None
            assert session_alive(journal.path, {**header, "pid_started": start_time(other.pid)}) == other.pid
        finally:
            journal.close(remove=True)
    finally:
        other.kill()
        other.wait()
