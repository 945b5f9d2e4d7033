"""A session that dies: its reports exist when pytest returns; `recover` leaves a live session's journal alone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.machinery, pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and locks")]

TESTS = """
    import ctypes
    import os
    import time
    import pytest
    from exportcore import Case

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_a_first():
        from pytest_export.reporting import supervise

        with open("started_as.txt", "w") as out:
            out.write(str(supervise.started_as()))
        return Case(model=lambda x: x, args=(1,))

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_b_dies():
        while os.environ.get("WAIT_FOR") and not os.path.exists(os.environ["WAIT_FOR"]):
            time.sleep(0.05)
        ctypes.string_at(0)  # a segfault

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_c_never_runs():
        return Case(model=lambda x: x, args=(1,))
"""


def _verdicts(path: Path) -> dict[str, str]:
    return {r["test"].split("::")[-1]: r["verdict"] for r in json.loads(path.read_text())["records"]}


# A plugin that starts a thread on import (before pytest-export's supervisor acts): a fork would
# copy only the main thread, so the session is started again as a command line instead.
THREAD_PLUGIN = """
    import threading
    import time

    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
"""


@pytest.mark.parametrize("started_as", ["fork", "command line"])
def test_after_a_segfault_the_reports_exist_when_pytest_returns(project, canned, started_as):
    canned({})
    project.makepyfile(test_die=TESTS)
    plugins = []
    if started_as == "command line":
        project.makepyfile(thread_plugin=THREAD_PLUGIN)
        plugins = ["-p", "thread_plugin"]
    result = project.runpytest_subprocess("-p", "no:cacheprovider", *plugins, "--export-report=r.json",
                                          "--export-report=r.md")
    if sys.platform.startswith("linux") or started_as == "command line":  # elsewhere it never forks
        assert (project.path / "started_as.txt").read_text() == started_as
    # Read at once, as a CI step right after pytest would: no waiting for a watcher.
    assert (project.path / "r.json").exists() and (project.path / "r.md").exists()
    assert result.ret == -signal.SIGSEGV  # the shell still sees 139
    assert _verdicts(project.path / "r.json") == {"test_canned_a_first[non_strict]": "passed",
                                                  "test_canned_b_dies[non_strict]": "crashed"}
    report = json.loads((project.path / "r.json").read_text())
    assert report["complete"] is False
    assert report["stop_reason"].startswith("the session was killed by SIGSEGV while running "
                                            "test_die.py::test_canned_b_dies[non_strict]")
    result.stderr.fnmatch_lines(["pytest-export: the session was killed by SIGSEGV; wrote r.json, r.md from its "
                                 "journal: 2 records (1 crashed), marked incomplete"])
    assert not list(project.path.glob("*.journal"))


def _wait_for_text(path: Path, text: str, seconds: float = 300) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} never showed {text!r}")


def test_recover_refuses_a_live_sessions_journal_and_its_crash_is_still_reported(project, canned, monkeypatch):
    canned({})
    project.makepyfile(test_die=TESTS)
    go = project.path / "go"
    monkeypatch.setenv("WAIT_FOR", str(go))
    journal = project.path / "r.json.journal"
    session = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--export-report=r.json"],
                               cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_text(journal, "test_canned_b_dies")  # the session runs the test that will die
        cli = subprocess.run([sys.executable, "-m", "pytest_export", "recover", "r.json"], cwd=project.path,
                             capture_output=True, text=True)
        assert cli.returncode == 2, cli.stderr
        assert "r.json.journal: its session (pid " in cli.stderr
        assert "is still running; it writes r.json itself when it ends" in cli.stderr
        assert journal.exists() and not (project.path / "r.json").exists()

        # A second session writing the same report is refused instead of truncating the journal.
        second = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--export-report=r.json",
                                 "-k", "first"], cwd=project.path, capture_output=True, text=True)
        assert second.returncode == pytest.ExitCode.USAGE_ERROR, second.stdout + second.stderr
        assert "--export-report r.json: another running pytest session writes this report" in second.stderr
        assert "test_canned_b_dies" in journal.read_text()
    finally:
        go.touch()
        session.communicate(timeout=300)
    assert session.returncode == -signal.SIGSEGV
    assert _verdicts(project.path / "r.json") == {"test_canned_a_first[non_strict]": "passed",
                                                  "test_canned_b_dies[non_strict]": "crashed"}


def test_recover_rejects_a_journal_of_an_unknown_version(tmp_path):
    journal = tmp_path / "r.json.journal"
    journal.write_text(json.dumps({"journal": "pytest-export-journal", "version": 99, "pid": 1}) + "\n")
    cli = subprocess.run([sys.executable, "-m", "pytest_export", "recover", "r.json"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert cli.returncode == 2
    assert cli.stderr.strip() == (
        "error: r.json.journal: cannot be recovered (journal format version 99, but this "
        "pytest-export reads version 1; recover it with the pytest-export that wrote it)")
    assert journal.exists() and not (tmp_path / "r.json").exists()


def test_recover_trusts_the_journals_lock_over_a_pid_that_is_alive_again(tmp_path):
    from pytest_export.results.journal import Journal

    # The header's pid runs (reused by another process), but nothing holds the journal's lock:
    # its session is gone and the journal is recovered.
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        journal = Journal(tmp_path / "r.json.journal", {"pid": other.pid, "report": "r.json", "environment": {}})
        journal.append({"scope": {}})
        journal._file.close()  # the session died: the kernel dropped its lock
        cli = subprocess.run([sys.executable, "-m", "pytest_export", "recover", "r.json"], cwd=tmp_path,
                             capture_output=True, text=True)
    finally:
        other.kill()
        other.wait()
    assert cli.returncode == 0, cli.stderr
    assert "pytest-export: recovered r.json from its journal: 0 records (0 crashed)" in cli.stderr
    assert (tmp_path / "r.json").exists() and not (tmp_path / "r.json.journal").exists()
