"""``kill -INT`` on the pytest process a user sees stops the run, with its reports written.

With ``--export-report`` that process is the supervisor (pytest_export/reporting/supervise.py),
the session its child. A Ctrl-C reaches both from the terminal; a SIGINT sent to the supervisor's
pid alone reached nothing: the supervisor ignored it and the run went on.
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

from tests.processes import session_env

pytestmark = [pytest.mark.machinery,
              pytest.mark.skipif(not hasattr(signal, "sigtimedwait"), reason="no siginfo here (macOS, Windows)")]

TESTS = """
import os
import time

import pytest
from exportcore import Case


@pytest.mark.exportable(modes=["non_strict"])
def test_a_first():
    return Case(model=lambda x: x, args=(1,))


def test_b_waits():
    open("waiting", "w").close()
    time.sleep(600)
"""


def test_sigint_to_the_visible_process_stops_the_run_with_reports(tmp_path: Path) -> None:
    (tmp_path / "test_slow.py").write_text(TESTS)
    env = session_env()  # not an xdist worker's: a session taking itself for one is never supervised
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--export-report=r.json"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True,  # no terminal, a group of its own: only our kill reaches it
                            # SIGINT as a terminal's foreground job has it: a suite run in the background
                            # (`... &`, nohup, a CI runner) ignores SIGINT, every child inherits that, and an
                            # interpreter started so never turns SIGINT into KeyboardInterrupt
                            preexec_fn=_interruptible)
    try:
        end = time.monotonic() + 300
        while not (tmp_path / "waiting").exists():
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()[0]
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGINT)  # the supervisor's pid, as `kill -INT <pid>` of `python -m pytest`
        try:
            out, _ = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            states = _signal_states(proc.pid)  # which process lost the SIGINT: blocked, ignored, pending
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the run went on 300 s after SIGINT; signal state {states}; its output:\n"
                        + proc.communicate()[0])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 2, out  # pytest's "interrupted"
    assert "KeyboardInterrupt" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(r["test"].split("::")[-1], r["verdict"]) for r in report["records"]] == [
        ("test_a_first[non_strict]", "passed")]


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_states(pid: int) -> dict[str, list[str]]:
    """The supervisor's and its children's signal masks from /proc: where a SIGINT went."""
    found = {}
    children = Path(f"/proc/{pid}/task/{pid}/children")
    pids = [pid] + [int(p) for p in (children.read_text().split() if children.exists() else [])]
    for each in pids:
        try:
            status = Path(f"/proc/{each}/status").read_text()
        except OSError:
            continue
        found[str(each)] = [line for line in status.splitlines() if line.startswith(("State", "Sig", "ShdPnd"))]
    return found
