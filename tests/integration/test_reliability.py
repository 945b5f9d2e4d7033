"""Hangs, crashes and leaks never lose results; the same command gives the same report (serial and -n 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from exportdb.registry import installed_torch

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

# torch before 2.9 refuses an in-place update of a parameter under no_grad while exporting ("a leaf
# Variable that requires grad is being used in an in-place operation"; measured on 2.6 to 2.9):
# the Vandal case then fails at capture, a true verdict, and its state must still not leak.
VANDAL_EXPORTS = (installed_torch() or (0, 0)) >= (2, 9)
VANDAL = ("passed", None) if VANDAL_EXPORTS else ("failed", "capture")
COUNTS = {"passed": 10, "failed": 3, "skipped": 1} if VANDAL_EXPORTS else {"passed": 8, "failed": 5, "skipped": 1}

# One project for every session here: a hang in eager, a hang inside export, a case that changes
# global state and its model, a checker that runs after it, and healthy cases around them.
TESTS = """
    import os
    import random
    import signal

    import pytest
    import torch
    from torch.export import Dim

    from models import lin_case

    class Hang(torch.nn.Module):
        def forward(self, x):
            while True:
                x = x + 0

    class HangInExport(torch.nn.Module):
        def forward(self, x):
            while getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)():
                pass
            return x + 1

    class Vandal(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.register_buffer("steps", torch.zeros(3))

        def forward(self, x):
            torch.manual_seed(99)
            random.seed(99)
            torch.set_default_dtype(torch.float64)
            torch.use_deterministic_algorithms(True, warn_only=True)
            if not getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)() and not self.training:  # training needs real tensors itself
                torch.set_default_device("meta")
                torch._dynamo.config.capture_scalar_outputs = True
            with torch.no_grad():
                self.lin.weight.mul_(3.0)
                self.steps.add_(1.0)
            self.train(not self.training)
            return self.lin(x) + self.steps

    torch.manual_seed(0)
    SHARED = Vandal()
    SHARED.eval()
    SAVED = {k: v.clone() for k, v in SHARED.state_dict().items()}
    AT_RETURN = {}

    @pytest.mark.exportable
    def test_a_before():
        return lin_case()

    @pytest.mark.exportable(modes=["non_strict"])
    def test_b_hangs_in_eager():
        return Hang(), (torch.ones(2),)

    @pytest.mark.exportable(modes=["non_strict", "strict"])
    def test_c_hangs_in_export():
        return HangInExport(), (torch.ones(2),)

    @pytest.mark.exportable(modes=["non_strict"], examples=3, dynamic_shapes={"x": {0: Dim("b", min=2, max=16)}})
    def test_d_dynamic():
        return lin_case()

    @pytest.fixture
    def rng_before():
        # torch's RNG as the test's call starts: the plugin seeds it per case for the call and puts
        # this state back afterwards, so the next test sees it, whatever the export consumed
        AT_RETURN["rng"] = torch.get_rng_state()

    @pytest.mark.exportable(modes=["non_strict", "training"])
    def test_e_vandal(rng_before):
        x = torch.ones(2, 3)
        AT_RETURN["py_rng"] = random.getstate()
        return SHARED, (x,)

    def test_f_next_test_sees_the_originals():
        if "rng" not in AT_RETURN:
            return  # the vandal ran in another xdist worker; the serial run checks this
        assert torch.equal(torch.get_rng_state(), AT_RETURN["rng"])
        assert random.getstate() == AT_RETURN["py_rng"]
        assert torch.get_default_dtype() == torch.float32
        assert not torch.are_deterministic_algorithms_enabled()
        assert torch.is_grad_enabled()
        assert torch.get_default_device() == torch.device("cpu")
        assert not torch._dynamo.config.capture_scalar_outputs
        assert not SHARED.training and SHARED.lin.weight.grad is None
        for name, value in SHARED.state_dict().items():
            assert torch.equal(value, SAVED[name]), name

    @pytest.mark.exportable(modes=["non_strict"])
    def test_g_killed_by_a_signal(request):
        # Not os.environ: an outer xdist run (of this very file) sets PYTEST_XDIST_WORKER too.
        if not hasattr(request.config, "workerinput"):
            pytest.skip("kills its process: only under xdist")
        os.kill(os.getpid(), signal.SIGKILL)

    @pytest.mark.exportable
    def test_h_after():
        return lin_case()
"""

# Every case gets a limit no healthy case comes near, even on a loaded machine; the cases that hang by
# construction get a tiny one through the pytest_export_run hook, so they cost little time.
INI = "[pytest]\nexport_examples = 0\nexport_checks = numerics\nexport_timeout = {timeout}\n"
HEALTHY_LIMIT_S = 300
HANG_LIMIT = '''
HANG_LIMIT_S = {limit}

def pytest_export_run(item, case, mode, options):
    if "hang" not in options["case_id"]:
        return None
    from exportcore.check import check_case

    return check_case(case, mode, **dict(options, timeout=HANG_LIMIT_S))
'''


def _hangs_get(project: pytest.Pytester, limit: float) -> None:
    from conftest import RECORDER

    project.makeconftest(RECORDER + HANG_LIMIT.format(limit=limit))

MODES = ("strict", "non_strict", "training")
TIMING_KEYS = {"duration", "duration_s", "timings", "started"}


def _expected(crash: bool) -> dict[str, tuple[str, str | None]]:
    """(test id) -> (verdict, failure stage)."""
    out: dict[str, tuple[str, str | None]] = {}
    for m in MODES:
        out[f"test_a_before[{m}]"] = ("passed", None)
        out[f"test_h_after[{m}]"] = ("passed", None)
    out["test_b_hangs_in_eager[non_strict]"] = ("timeout", "eager")
    out["test_c_hangs_in_export[non_strict]"] = ("timeout", "capture")
    out["test_c_hangs_in_export[strict]"] = ("timeout", "capture")
    out["test_d_dynamic[non_strict]"] = ("passed", None)
    out["test_e_vandal[non_strict]"] = VANDAL
    out["test_e_vandal[training]"] = VANDAL
    out["test_g_killed_by_a_signal[non_strict]"] = ("crashed", "run") if crash else ("skipped", None)
    return out


def _verdicts(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    out = {}
    for r in report["records"]:
        failure = (r["outcome"] or {}).get("failure") or {}
        out[r["test"].split("::", 1)[1]] = (r["verdict"], failure.get("stage"))
    return out


def _without_timings(value: Any) -> Any:
    """The report without what may differ between two equal runs: timings, and under xdist whether
    a mode reused another's runs (only when both landed on one worker; results are the same)."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS and k != "reused_from"}
    if isinstance(value, list):
        return [_without_timings(v) for v in value
                if not (isinstance(v, str) and v.startswith("reused from "))]
    return value


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_serial_hangs_time_out_state_does_not_leak_and_two_runs_report_the_same(project):
    project.makeini(INI.format(timeout=HEALTHY_LIMIT_S))
    _hangs_get(project, 1.5)
    project.makepyfile(test_rel=TESTS)
    args = ("-p", "no:cacheprovider", "--export-report=r1.json", "--export-report=r1.html")

    result = project.runpytest(*args)

    # 3 timeouts fail their tests; everything after them still ran and reported.
    result.assert_outcomes(**COUNTS)
    report = _load(project.path / "r1.json")
    assert report["complete"] is True and report["stop_reason"] == ""
    assert _verdicts(report) == _expected(crash=False)
    timeout = next(r for r in report["records"] if r["verdict"] == "timeout")["outcome"]["failure"]
    assert (timeout["category"], timeout["exc_type"]) == ("timeout", "CaseTimeout")
    assert "time limit of 1.5 s" in timeout["message"]  # the hook's limit for hangs, not the ini's
    assert (project.path / "r1.html").stat().st_size > 0
    result.stdout.fnmatch_lines(
        ["*test_b_hangs_in_eager[[]non_strict[]]*", "export timed out in non_strict: stage eager*"]
    )

    project.runpytest(*[a.replace("r1.", "r2.") for a in args]).assert_outcomes(**COUNTS)
    assert _without_timings(_load(project.path / "r2.json")) == _without_timings(report)


def test_cli_timeout_overrides_ini(project):
    project.makeini(INI.format(timeout=600))
    project.makepyfile(test_rel=TESTS)
    result = project.runpytest("-p", "no:cacheprovider", "--export-timeout=0.5", "-k", "hangs_in_eager")
    result.assert_outcomes(failed=1, deselected=13)


@pytest.mark.slow
def test_xdist_a_hang_and_a_killed_worker_leave_a_complete_report_and_two_runs_agree(project):
    pytest.importorskip("xdist")
    project.makeini(INI.format(timeout=HEALTHY_LIMIT_S))
    _hangs_get(project, 1.5)
    project.makepyfile(test_rel=TESTS)
    kept = ("test_a_", "test_b_", "test_d_", "test_g_", "test_h_")
    chosen = " or ".join(k.strip("_") for k in kept)
    reports = []
    for n in (1, 2):
        result = project.runpytest_subprocess(
            "-p", "xdist", "-n", "2", "-p", "no:cacheprovider", "-p", "no:benchmark", "-k", chosen,
            f"--export-report=r{n}.json",
        )
        result.assert_outcomes(passed=7, failed=2)  # xdist deselects on the workers: no count here
        reports.append(_load(project.path / f"r{n}.json"))

    first = reports[0]
    assert first["complete"] is True
    assert _verdicts(first) == {t: v for t, v in _expected(crash=True).items() if t.startswith(kept)}
    crashed = next(r for r in first["records"] if r["verdict"] == "crashed")
    assert crashed["outcome"]["failure"]["category"] == "crashed"
    # Which worker ran (and lost) a test depends on scheduling, not on the code under test.
    normalized = [re.sub(r"\bgw\d+\b", "gwN", json.dumps(_without_timings(r), sort_keys=True)) for r in reports]
    assert normalized[0] == normalized[1]


def test_each_xdist_worker_has_its_own_compile_cache_dir(pytester):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_env="""
        import os
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_where(n):
            worker = os.environ["PYTEST_XDIST_WORKER"]
            with open(f"{worker}.txt", "w") as f:
                f.write(os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""))
    """)
    # No torch here: workers start in a second. --dist each: every worker runs every test.
    pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "--dist", "each", "-p", "no:cacheprovider",
                                  "-p", "no:benchmark").assert_outcomes(passed=12)
    dirs = {p.stem: p.read_text() for p in pytester.path.glob("gw*.txt")}
    assert sorted(dirs) == ["gw0", "gw1"]
    assert all(path.endswith(f"/{worker}") for worker, path in dirs.items()), dirs


DIES = """
    import ctypes
    import os
    import signal
    import pytest
    from exportcore import Case

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_a_first():
        return Case(model=lambda x: x, args=(1,))

    def test_canned_b_fixture(export_check):
        assert export_check(lambda x: x, (1,), case_id="fixture-case").status == "passed"

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_c_dies():
        how = os.environ["HOW_TO_DIE"]  # what a segfault, the OOM killer or a stray exit does to a run
        if how == "exit":
            os._exit(int(os.environ["EXIT_STATUS"]))
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        ctypes.string_at(0)

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_d_never_runs():
        return Case(model=lambda x: x, args=(1,))
"""


def _wait_for(path: Path, seconds: float = 120) -> None:
    # The killed session's watcher writes the report once it sees its parent gone.
    import time

    end = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.1)


@pytest.mark.parametrize("how, status", [("exit", 3), ("exit", 0), ("kill", None), ("segfault", None)])
def test_serial_session_killed_mid_run_still_leaves_the_finished_results(project, canned, monkeypatch, how, status):
    canned({})
    project.makepyfile(test_die=DIES)
    monkeypatch.setenv("HOW_TO_DIE", how)
    monkeypatch.setenv("EXIT_STATUS", str(status))
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=r.json", "--export-report=r.md")
    assert result.ret != 0  # os._exit(0) included: a run that lost its end is never green
    if how == "exit":
        assert result.ret == (status or 3)
        assert "called os._exit" in result.stderr.str()
    _wait_for(project.path / "r.md")
    report = _load(project.path / "r.json")
    assert report["complete"] is False
    assert "test_die.py::test_canned_c_dies[non_strict]" in report["stop_reason"]
    assert _verdicts(report) == {
        "test_canned_a_first[non_strict]": ("passed", None),
        "test_canned_b_fixture": ("passed", None),
        "test_canned_c_dies[non_strict]": ("crashed", "run"),
    }
    assert report["scope"]["not_run"] == [["test_die.py::test_canned_d_never_runs", "non_strict"]]
    assert "Incomplete" in (project.path / "r.md").read_text() or "incomplete" in (project.path / "r.md").read_text()
    assert not list(project.path.glob("*.journal"))


def test_a_journal_left_behind_is_recovered_by_the_cli_and_by_the_next_session(project, canned):
    import subprocess
    import sys

    from pytest_export.results.journal import Journal

    canned({})
    project.makepyfile(test_die=DIES)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs: the session that wrote the journal is gone

    def leave_journal() -> None:
        journal = Journal(project.path / "r.json.journal", {"pid": dead.pid, "report": "r.json", "environment": {}})
        journal.append({"scope": {"selected": [["test_die.py::test_canned_a_first", "non_strict"],
                                               ["test_die.py::test_canned_c_dies", "non_strict"]]}})
        ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "first",
                              "--export-report=first.json"], cwd=project.path, capture_output=True, text=True)
        journal.append({"record": _load(project.path / "first.json")["records"][0]})
        journal.append({"running": {"test": "test_die.py::test_canned_c_dies[non_strict]",
                                    "case": "test_die.py::test_canned_c_dies", "mode": "non_strict"}})
        journal._file.close()  # killed: no "closed" line
        assert ran.returncode == 0, ran.stdout

    leave_journal()
    cli = [sys.executable, "-m", "pytest_export", "recover", "r.json"]
    done = subprocess.run(cli, cwd=project.path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # recovered; the report itself says the run is incomplete
    assert "recovered r.json from its journal: 2 records (1 crashed)" in done.stderr
    report = _load(project.path / "r.json")
    assert report["complete"] is False and _verdicts(report)["test_canned_c_dies[non_strict]"] == ("crashed", "run")
    again = subprocess.run(cli, cwd=project.path, capture_output=True, text=True)
    assert again.returncode == 0 and "nothing to recover" in again.stdout

    leave_journal()
    result = project.runpytest("-p", "no:cacheprovider", "--export-report=r.json", "-k", "first")
    result.stdout.fnmatch_lines(["pytest-export: recovered r.json from the journal of a killed session (*"])
    assert not (project.path / "r.json.journal").exists()
    assert _load(project.path / "r.json")["complete"] is True  # and this run then wrote its own


def test_export_check_fixture_returns_a_timeout_and_the_test_goes_on(project, records):
    _hangs_get(project, 0.5)
    project.makepyfile(test_fix="""
        import torch

        class Hang(torch.nn.Module):
            def forward(self, x):
                while True:
                    x = x + 0

        def test_stuck_then_fine(export_check):
            hung = export_check(Hang(), (torch.ones(2),), examples=0, checks=["numerics"], case_id="hang")
            assert (hung.status, hung.failure.stage) == ("timeout", "eager")
            fine = export_check(torch.nn.Linear(2, 2), (torch.ones(1, 2),), examples=0, checks=["numerics"])
            assert fine.status == "passed"
    """)
    project.runpytest("-p", "no:cacheprovider", f"--export-timeout={HEALTHY_LIMIT_S}").assert_outcomes(passed=1)
    assert [r["verdict"] for r in records()["records"]] == ["timeout", "passed"]


# A stand-in for pytest-timeout's signal method where it is not installed: same plugin name, option and
# marker, and like it, one ITIMER_REAL timer around each test whose handler fails the test.
FAKE_PYTEST_TIMEOUT = '''
import signal
import pytest

class _Timeout:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item):
        marker = item.get_closest_marker("timeout")
        seconds = float(marker.args[0]) if marker else float(item.config.getoption("timeout") or 0)
        def fail(signum, frame):
            pytest.fail(f"Timeout (>{seconds}s) from pytest-timeout", pytrace=False)
        previous = signal.signal(signal.SIGALRM, fail)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

def pytest_addoption(parser):
    parser.addoption("--timeout", default=None)

def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): per-test limit")
    config.pluginmanager.register(_Timeout(), "timeout")
'''


def _pytest_timeout_signal_method() -> tuple[str, list[str]]:
    """Return (conftest text, options) for pytest-timeout's signal method: the real one where installed."""
    import importlib.util

    if importlib.util.find_spec("pytest_timeout") is not None:
        return "", ["--timeout-method=signal"]
    return FAKE_PYTEST_TIMEOUT, []


@pytest.mark.parametrize("export_timeout", [[], ["--export-timeout=90"]], ids=["share", "both"])
def test_under_pytest_timeouts_signal_method_the_case_is_recorded_as_timeout_first(project, records, export_timeout):
    from conftest import RECORDER

    fake, options = _pytest_timeout_signal_method()
    project.makeconftest(RECORDER + fake)
    # The hang's limit is tiny (it hangs by construction); the healthy neighbour's is generous.
    project.makepyfile(test_pt="""
        import pytest
        import torch
        from models import lin_case

        class Hang(torch.nn.Module):
            def forward(self, x):
                while True:
                    x = x + 0

        @pytest.mark.timeout(2)
        @pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=0)
        def test_hangs():
            return Hang(), (torch.ones(2),)

        @pytest.mark.timeout(300)
        @pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=0)
        def test_fine_after():
            return lin_case()
    """)
    result = project.runpytest("-p", "no:cacheprovider", *options, *export_timeout)
    result.assert_outcomes(failed=1, passed=1)
    (hung, fine) = sorted(records()["records"], key=lambda r: r["test"], reverse=True)
    # pytest-export's share of the limit ran out first: the stage is known, pytest-timeout never fired.
    assert (hung["verdict"], hung["outcome"]["failure"]["stage"]) == ("timeout", "eager")
    assert "from pytest-timeout" not in result.stdout.str()
    assert fine["verdict"] == "passed"


def test_a_tiny_engine_limit_never_leaks_its_alarm_into_later_code():
    import signal
    import time

    import torch

    import exportcore

    def mine(signum, frame):  # pragma: no cover - must never run
        raise AssertionError("an alarm reached code after the case")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        for _ in range(3):
            # The alarm fires while the timer is being armed: it must still stay inside the case.
            outcome = exportcore.check(torch.nn.Linear(2, 2), (torch.ones(1, 2),), timeout=1e-9, examples=0,
                                       checks=["numerics"])
            assert outcome.status == "timeout"
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
            assert signal.getsignal(signal.SIGALRM) is mine
        end = time.monotonic() + 3  # longer than any retry or backstop the deadline arms
        while time.monotonic() < end:
            sum(range(1000))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("limit", ["1e-9", "0.05"])
def test_an_absurdly_small_export_timeout_is_a_usage_error(pytester, limit):
    pytester.makepyfile(test_p="def test_p():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--export-timeout={limit}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"--export-timeout must be at least 0.1 s: no export finishes sooner, so every case would time out "
            f"(it is in seconds), got {float(limit):g}") in result.stderr.str()


# The first export in a process pays torch's lazy imports; here one of them is slow by construction
# (longer than the test's pytest-timeout limit), and the models use what it defines.
SLOW_FIRST_IMPORT = '''
import sys
import exportcore.sandbox.deadline as stages

(__import__("pathlib").Path(__file__).parent / "slow_lazy.py").write_text(
    "import time\\ntime.sleep(25)\\nutils = 1\\n")
_original = stages.warm_up

def warm_up():
    import slow_lazy  # noqa: F401 - what torch._dynamo is to a real first export
    _original()

stages.warm_up = warm_up
'''

HEALTHY_AFTER_A_SLOW_START = """
    import sys
    import pytest
    import torch

    class UsesLazy(torch.nn.Module):
        def forward(self, x):
            return x * sys.modules["slow_lazy"].utils  # imported by the first export's warm-up

    @pytest.mark.parametrize("n", [1, 2, 3])
    @pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=0)
    def test_healthy(n):
        return UsesLazy(), (torch.ones(n + 1),)
"""


@pytest.mark.parametrize("method, workers", [("signal", []), ("thread", ["-p", "xdist", "-n", "2"])],
                         ids=["signal", "thread-n2"])
def test_the_first_exports_warm_up_is_outside_pytest_timeouts_budget(project, records, method, workers):
    pytest.importorskip("pytest_timeout")
    from conftest import RECORDER

    project.makeconftest(RECORDER + SLOW_FIRST_IMPORT)
    project.makepyfile(test_slow=HEALTHY_AFTER_A_SLOW_START)
    # 20 s is plenty for a tiny export on a loaded machine; the slow import alone takes 25 s.
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:benchmark", "--timeout=20",
                                          f"--timeout-method={method}", *workers)
    result.assert_outcomes(passed=3)
    assert {r["verdict"] for r in records()["records"]} == {"passed"}
