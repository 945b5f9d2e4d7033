"""The record, the matrix, the reports and the gate say what pytest reported for each test.

pytest's own xfail marker and a ``filterwarnings = error`` setting change a test's outcome
after the export decided its verdict; real exports, serially and under pytest-xdist.
"""

from __future__ import annotations

import json

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

TESTS = """
    import pytest
    import torch
    from torch.export import Dim
    from models import DataDependent, lin_case

    # torch lets sizes 0/1 through for Dim.AUTO: a size01_accepted finding (a warning).
    @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}})
    def test_finding():
        return lin_case()

    @pytest.mark.xfail(reason="branchy")
    @pytest.mark.exportable(modes=["non_strict"])
    def test_xfail_fails():
        return DataDependent(), (torch.ones(3),)

    @pytest.mark.xfail(reason="was broken")
    @pytest.mark.exportable(modes=["non_strict"])
    def test_xfail_passes():
        return lin_case()

    @pytest.mark.xfail(reason="was broken", strict=True)
    @pytest.mark.exportable(modes=["non_strict"])
    def test_xfail_strict_passes():
        return lin_case()
"""

# What pytest reports for each test when findings are errors, and what the record must say.
EXPECTED = {
    "test_finding": "failed",
    "test_xfail_fails": "xfailed",
    "test_xfail_passes": "xpassed",
    "test_xfail_strict_passes": "xpassed",
}

# Writes pytest's own view of each test (as the controller's terminal sees it).
PYTEST_VIEW = '''

_SEEN = {}

def pytest_runtest_logreport(report):
    if report.when != "call" and report.passed:
        return
    if hasattr(report, "wasxfail"):
        word = "xfailed" if report.skipped else "xpassed"
    elif report.failed and str(report.longrepr).startswith("[XPASS(strict)]"):
        word = "xpassed (strict)"
    else:
        word = report.outcome
    _SEEN[report.nodeid] = word

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        (config.rootpath / "pytest_view.json").write_text(json.dumps(_SEEN))
'''

RUNS = {"serial": (), "xdist": ("-p", "xdist", "-n", "2", "-p", "no:benchmark")}


@pytest.mark.parametrize("run", list(RUNS))
def test_pytest_outcome_decides_the_record_report_and_gate(project, records, run):
    project.makeconftest((project.path / "conftest.py").read_text() + PYTEST_VIEW)
    project.makepyfile(test_m=TESTS)
    # pytest-benchmark warns at start-up when run under xdist, which filterwarnings = error would turn
    # into an INTERNALERROR (also for a serial session started from an xdist worker).
    args = ("-p", "no:cacheprovider", "-p", "no:benchmark", *RUNS[run])
    # First run: findings are warnings; the baseline says test_finding passes.
    first = project.runpytest(*args, "--export-baseline=base.json", "--export-baseline-update")
    first.assert_outcomes(passed=1, xfailed=1, xpassed=1, failed=1)
    assert json.loads((project.path / "pytest_view.json").read_text())["test_m.py::test_finding[non_strict]"] == "passed"

    project.makeini("[pytest]\nexport_examples = 2\nfilterwarnings = error\n")
    result = project.runpytest(*args, "--export-report=r.json", "--export-baseline=base.json")
    result.assert_outcomes(xfailed=1, xpassed=1, failed=2)
    view = json.loads((project.path / "pytest_view.json").read_text())
    assert view == {
        "test_m.py::test_finding[non_strict]": "failed",
        "test_m.py::test_xfail_fails[non_strict]": "xfailed",
        "test_m.py::test_xfail_passes[non_strict]": "xpassed",
        "test_m.py::test_xfail_strict_passes[non_strict]": "xpassed (strict)",
    }
    got = {r["case"].split("::")[1]: r["verdict"] for r in records()["records"]}
    assert got == EXPECTED
    report = json.loads((project.path / "r.json").read_text())
    assert {r["case"].split("::")[1]: r["verdict"] for r in report["records"]} == EXPECTED
    assert report["summary"]["verdicts"] == {"failed": 1, "xfailed": 1, "xpassed": 2}
    by_test = {r["case"].split("::")[1]: r for r in report["records"]}
    finding = by_test["test_finding"]["outcome"]["failure"]
    assert finding["exc_type"] == "Size01AcceptedWarning" and "size01_accepted" in finding["message"]
    assert by_test["test_xfail_fails"]["expect"] == {"reason": "pytest.mark.xfail: branchy", "category": None}
    assert by_test["test_xfail_fails"]["outcome"]["failure"]["category"] == "data-dependent"
    # The gate sees the finding-as-error test regress, like pytest does.
    assert [e["case"] for e in report["gate"]["regressions"]] == ["test_m.py::test_finding"]
    result.stdout.fnmatch_lines(["*test_m.py::test_finding * F *", "*test_m.py::test_xfail_fails * x *",
                                 "*test_m.py::test_xfail_passes * X *"])


def test_pytest_xfail_next_to_expect_for_the_same_mode_is_a_collection_error(project):
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.xfail(reason="flaky")
        @pytest.mark.exportable(modes=["strict", "non_strict"], expect={"strict": "branch"})
        def test_both():
            return lin_case()

        @pytest.mark.exportable(modes=["non_strict"])
        def test_fine():
            return lin_case()
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*test_m.py::test_both[[]strict[]]: @pytest.mark.xfail together with "
        "@pytest.mark.exportable(expect=...) for mode 'strict': pytest's xfail would report XFAIL even "
        "when the export now passes; keep one*",
    ])
    assert "test_both[non_strict]:" not in result.stdout.str()
