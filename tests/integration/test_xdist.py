"""pytest-xdist: workers' outcomes reach the controller unchanged; a dead worker's test is 'crashed'."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

pytest.importorskip("xdist")

TESTS = """
    import pytest
    import torch
    from models import DataDependent, lin_case

    @pytest.mark.exportable(modes=["strict", "non_strict"], checks=["numerics", "accept", "reject"])
    def test_lin():
        return lin_case()

    @pytest.mark.parametrize("n", [2, 3])
    @pytest.mark.exportable(modes=["strict", "non_strict"], expect={"strict": "branch", "non_strict": "branch"})
    def test_branchy(n):
        return DataDependent(), (torch.ones(n),)

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_fails():
        return lin_case()

    @pytest.mark.exportable(modes=["strict"])
    def test_wrong_return():
        return 42
"""


def _comparable(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[list[str]]]:
    records = []
    for r in sorted(data["records"], key=lambda r: r["test"]):
        r = dict(r, duration=None)
        if r["outcome"]:
            # torch numbers unbacked symbols per process (u0, u1, ...): which one a message names
            # depends on what that process exported before, not on the case
            outcome = json.loads(re.sub(r"\bu\d+\b", "u#", json.dumps(r["outcome"])))
            if outcome.get("failure"):
                # torch's own frames in a traceback depend on what the process ran before (dynamo's
                # wrappers appear once it has been initialised), not on the case
                outcome["failure"] = dict(outcome["failure"], traceback=None)
            r["outcome"] = dict(outcome, timings=None)
        records.append(r)
    return records, data["selected"]


def test_two_workers_aggregate_exactly_the_serial_outcomes(project, canned, records):
    canned({"test_canned_fails": ("failed", "python.builtin")})
    project.makepyfile(test_m=TESTS)
    serial = project.runpytest("-p", "no:cacheprovider")
    serial.assert_outcomes(passed=2, xfailed=4, failed=1, errors=1)  # test_wrong_return: an error
    expected = _comparable(records())
    assert len(expected[0]) == 8

    distributed = project.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    distributed.assert_outcomes(passed=2, xfailed=4, failed=1, errors=1)
    got = _comparable(records())
    assert got[1] == expected[1]
    assert [r["test"] for r in got[0]] == [r["test"] for r in expected[0]]
    for mine, theirs in zip(got[0], expected[0]):
        assert mine == theirs, f"{mine['test']}: {_differences(mine, theirs)}"


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths where two JSON values differ, with both values (a short message, not a whole report)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: xdist {a!r} != serial {b!r}"]


def test_worker_crash_is_recorded_as_crashed_and_other_outcomes_survive(project, canned, records):
    canned({})
    project.makepyfile(test_m="""
        import os
        import pytest
        from exportcore import Case

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_canned_before():
            return Case(model=lambda x: x, args=(1,))

        @pytest.mark.exportable(modes=["strict"])
        def test_dies():
            os._exit(1)

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_canned_after():
            return Case(model=lambda x: x, args=(1,))
    """)
    result = project.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*worker 'gw*' crashed while running 'test_m.py::test_dies[[]strict[]]'*"])
    data = records()
    by_test = {r["test"]: r for r in data["records"]}
    assert len(by_test) == 5
    crashed = by_test["test_m.py::test_dies[strict]"]
    assert (crashed["case"], crashed["verdict"], crashed["outcome"]["status"]) == (
        "test_m.py::test_dies", "crashed", "crashed")
    assert crashed["outcome"]["failure"]["category"] == "crashed"
    assert all(r["verdict"] == "passed" for t, r in by_test.items() if "canned" in t)
    assert ["test_m.py::test_dies", "strict"] in data["selected"]
    assert len(data["selected"]) == 5


# export_check cases through a hook: "dies" in the case id kills the worker while the case runs.
FIXTURE_CONFTEST = '''
import os
from exportcore.outcome import Outcome

def pytest_export_run(item, case, mode, options):
    if "dies" in options["case_id"] and os.environ.get("KILL_IT"):
        os._exit(1)
    return Outcome(case_id=options["case_id"], mode=mode, status="passed")
'''

FIXTURE_TESTS = """
    def test_two_cases(export_check):
        assert export_check(lambda x: x, (1,), case_id="fine").status == "passed"
        assert export_check(lambda x: x, (1,), case_id="dies", mode="strict").status == "passed"

    def test_other(export_check):
        assert export_check(lambda x: x, (1,), case_id="other").status == "passed"
"""


def test_a_dead_workers_in_flight_fixture_cases_are_crashed_and_stay_in_the_baseline(project, records, monkeypatch):
    from conftest import RECORDER

    from pytest_export.results.report import load_report

    project.makeconftest(RECORDER + FIXTURE_CONFTEST)
    project.makepyfile(test_f=FIXTURE_TESTS)
    xdist = ("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    project.runpytest_subprocess(*xdist, "--export-baseline=base.json", "--export-baseline-update").assert_outcomes(
        passed=2)

    monkeypatch.setenv("KILL_IT", "1")
    result = project.runpytest_subprocess(*xdist, "--export-baseline=base.json", "--export-report=r.json")
    result.assert_outcomes(passed=1, failed=1)
    verdicts = {(r["case"], r["mode"]): r["verdict"] for r in records()["records"]}
    # The case that finished before the crash keeps its verdict; the one running is crashed, not lost.
    assert verdicts == {("fine", "non_strict"): "passed", ("dies", "strict"): "crashed",
                        ("other", "non_strict"): "passed"}
    gate = load_report(project.path / "r.json")["gate"]
    assert [(e["case"], e["after"]) for e in gate["regressions"]] == [("dies", "crashed")]
    assert not gate["vanished"]

    result = project.runpytest_subprocess(*xdist, "--export-baseline=base.json", "--export-baseline-update")
    baseline = {(r.case, r.mode): r.verdict for r in load_report(project.path / "base.json")["records"]}
    assert baseline == verdicts  # updated to what ran; nothing dropped


@pytest.mark.parametrize("n", ["0", "2"])
def test_ctrl_c_leaves_the_keys_it_did_not_reach_not_run_never_vanished(project, canned, n):
    from pytest_export.results.report import load_report

    canned({})
    # A shell starts background jobs with SIGINT ignored, and an ignored signal stays ignored in every
    # child (Python then installs no KeyboardInterrupt handler): a suite run with `... &` or nohup
    # could not be interrupted at all. Give the inner sessions (controller included) Ctrl-C back.
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + "\nimport signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n")
    project.makepyfile(test_m="""
        import os
        import signal
        import pytest
        from exportcore import Case

        @pytest.mark.exportable(modes=["non_strict"])
        def test_canned_a():
            if os.environ.get("STOP_IT"):
                # Ctrl-C reaches the whole process group: the controller (xdist) or the session itself.
                # Not PYTEST_XDIST_WORKER: a serial session inherits it from an outer xdist run of this file.
                os.kill(os.getppid() if os.environ["STOP_IT"] == "controller" else os.getpid(), signal.SIGINT)
            return Case(model=lambda x: x, args=(1,))

        @pytest.mark.parametrize("i", range(12))
        @pytest.mark.exportable(modes=["non_strict"])
        def test_canned_later(i):
            import time
            time.sleep(0.5)
            return Case(model=lambda x: x, args=(1,))
    """)
    args = ("-p", "no:cacheprovider", "-p", "xdist", "-n", n, "--export-baseline=base.json")
    project.runpytest_subprocess(*args, "--export-baseline-update").assert_outcomes(passed=13)
    os_env = {"STOP_IT": "session" if n == "0" else "controller"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in os_env.items():
            mp.setenv(k, v)
        result = project.runpytest_subprocess(*args, "--export-report=r.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = load_report(project.path / "r.json")
    gate = report["gate"]
    assert report["complete"] is False
    assert not gate["vanished"]
    ran = {(r.case, r.mode) for r in report["records"]}
    assert len(ran) < 13 and len(gate["not_run"]) == 13 - len(ran)
    assert all("did not run" in e["why"] or "not run" in e["why"] for e in gate["not_run"])


@pytest.mark.parametrize("chosen", ["fair_share", "environment", "conftest"])
def test_each_worker_gets_a_fair_share_of_torch_threads_unless_the_user_chose(pytester, monkeypatch, chosen):
    from pytest_export.distributed.threads import available_cores, fair_share

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    monkeypatch.delenv("PYTEST_EXPORT_FAIR_THREADS", raising=False)
    expected = fair_share(available_cores(), 2)
    if chosen == "environment":
        if available_cores() < 2:
            pytest.skip("torch caps OMP_NUM_THREADS at the core count: one core cannot tell the user's 2 from 1")
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        expected = 2
    if chosen == "conftest":
        pytester.makeconftest("import torch\ntorch.set_num_threads(3)\n")
        expected = 3
    pytester.makepyfile(test_t=f"""
        import pytest
        import torch

        @pytest.mark.parametrize("n", range(4))
        def test_threads(n):
            assert torch.get_num_threads() == {expected}
    """)
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider", "-p", "no:benchmark")
    result.assert_outcomes(passed=4)
    header = {
        "fair_share": f"pytest-export: 2 workers x {expected} torch thread* (fair share of {available_cores()} cores; "
                      "set OMP_NUM_THREADS or call torch.set_num_threads to choose)",
        "environment": "pytest-export: 2 workers, torch threads as set by OMP_NUM_THREADS=2",
        "conftest": "pytest-export: 2 workers x * torch thread*",
    }[chosen]
    result.stdout.fnmatch_lines([header])


def test_a_serial_run_keeps_torchs_own_thread_count(pytester, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("PYTEST_EXPORT_FAIR_THREADS", raising=False)
    # An outer xdist run of this file sets these; the session below must be serial.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    pytester.makepyfile(test_t="""
        import os
        import torch

        def test_threads():
            assert "OMP_NUM_THREADS" not in os.environ
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:benchmark")
    result.assert_outcomes(passed=1)
    assert "torch thread" not in result.stdout.str()
