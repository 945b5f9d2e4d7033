"""Two tests recording one (case, mode) key is an error naming both, serial and under xdist."""

from __future__ import annotations

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

TESTS = """
    import torch

    def test_canned_first(export_check):
        assert export_check(torch.nn.ReLU(), (torch.ones(2),), case_id="shared").status == "passed"

    def test_canned_second(export_check):
        assert export_check(torch.nn.ReLU(), (torch.ones(2),), case_id="shared").status == "passed"

    def test_canned_own(export_check):
        assert export_check(torch.nn.ReLU(), (torch.ones(2),), case_id="own").status == "passed"
"""


@pytest.mark.parametrize("xdist", [(), ("-p", "xdist", "-n", "2")], ids=["serial", "xdist"])
def test_a_case_id_reused_by_another_test_is_an_error_naming_both(project, canned, records, xdist):
    canned({})
    project.makepyfile(test_m=TESTS)
    result = project.runpytest(*xdist, "-p", "no:cacheprovider", "--export-report=r.json")
    # Under xdist either test may report first; the second one fails, naming the first.
    result.assert_outcomes(passed=2, errors=1)  # two tests claiming one key: neither check is at fault
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.re_match_lines([
        r"test_m.py::test_canned_(first|second): result key \(case 'shared', mode 'non_strict'\) is already "
        r"recorded by test_m.py::test_canned_(first|second); two results under one key would let one hide the "
        r"other from the reports and the gate: give each test a unique export_check\(case_id=\.\.\.\)"
    ])
    got = sorted((r["case"], r["verdict"]) for r in records()["records"])
    assert got == [("own", "passed"), ("shared", "error"), ("shared", "passed")]
    from pytest_export.results.report import load_report

    report = load_report(project.path / "r.json")
    (error,) = [r for r in report["records"] if r.verdict == "error"]
    assert error.outcome.failure.exc_type == "DuplicateKey"

