"""pytest.main() in a script that segfaults: the detached watcher writes the reports once the script is dead.

The watcher must tell a dead session from a live one by more than kill(pid, 0): a script its own
parent has not reaped yet is a zombie (kill still succeeds), and the kernel closes a dying process's
files one by one (the watcher's pipe may reach EOF while the journal is still locked). Each test here
makes one of these orders certain instead of waiting for a loaded machine to hit it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.machinery,
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals, fork and locks")]

SCRIPT = """
import sys

import pytest

# pytest inside another program: no supervisor (the caller owns this process), a detached watcher.
sys.exit(pytest.main(["-p", "no:cacheprovider", "--export-report=r.json", "--export-report=r.md"]))
"""

TESTS = """
    import ctypes
    import os
    import time

    import pytest
    from exportcore import Case

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_a_first():
        return Case(model=lambda x: x, args=(1,))

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_b_dies(pytestconfig):
        how = os.environ["HOW_TO_DIE"]
        if how == "forked":
            # A process the session forked (a DataLoader worker) outlives it for a while, holding every
            # file the session had open: the journal's lock stays held after the session is dead.
            child = os.fork()
            if child == 0:
                time.sleep(600)
                os._exit(0)
            with open("child.pid", "w") as out:
                out.write(str(child))
        if how == "pipe first":
            # A dying process's files are closed one after the other: the watcher's pipe can reach EOF
            # while the journal is still locked. Close the pipe first here, and give the watcher all the
            # time it needs to look (it ends at once if it takes the EOF for the session's death).
            watcher = pytestconfig.pluginmanager.get_plugin("export-journal").watcher
            watcher.stdin.close()
            try:
                watcher.wait(timeout=10)
            except Exception:
                pass
        ctypes.string_at(0)  # a segfault

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_c_never_runs():
        return Case(model=lambda x: x, args=(1,))
"""


def _verdicts(path: Path) -> dict[str, str]:
    return {r["test"].split("::")[-1]: r["verdict"] for r in json.loads(path.read_text())["records"]}


def _wait_for_report(report: Path, stderr: Path, seconds: float = 300) -> None:
    """Wait for the watcher to write ``report``; fail at once if it gives up on the dead session."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if report.exists():
            return
        if "is still running" in stderr.read_text(errors="replace"):
            time.sleep(1)  # a report after all would have been written by now
            if not report.exists():
                raise AssertionError(f"the watcher took the dead session for a live one:\n{stderr.read_text()}")
        time.sleep(0.1)
    raise AssertionError(f"no report after {seconds} s:\n{stderr.read_text(errors='replace')}")


@pytest.mark.parametrize("how", ["forked", "pipe first"])
def test_a_script_whose_session_segfaults_gets_its_reports_from_the_watcher(project, canned, how):
    canned({})
    project.makepyfile(test_die=TESTS)
    (project.path / "run.py").write_text(SCRIPT)
    stderr = project.path / "stderr.txt"
    env = {**os.environ, "HOW_TO_DIE": how}
    with open(stderr, "wb") as err:
        # Its own process group, so that the forked child can be ended with it; not waited for until the
        # report is there: the dead script stays a zombie meanwhile (kill(pid, 0) still succeeds).
        script = subprocess.Popen([sys.executable, "run.py"], cwd=project.path, env=env, stdout=subprocess.DEVNULL,
                                  stderr=err, start_new_session=True)
    try:
        _wait_for_report(project.path / "r.md", stderr)
    finally:
        try:
            os.killpg(script.pid, signal.SIGKILL)  # the forked child, if any (the watcher has its own session)
        except ProcessLookupError:
            pass
        status = script.wait(timeout=300)
    assert status == -signal.SIGSEGV
    report = json.loads((project.path / "r.json").read_text())
    assert _verdicts(project.path / "r.json") == {"test_canned_a_first[non_strict]": "passed",
                                                  "test_canned_b_dies[non_strict]": "crashed"}
    assert report["complete"] is False
    assert "while running test_die.py::test_canned_b_dies[non_strict]" in report["stop_reason"]
    assert not list(project.path.glob("*.journal"))
