"""A changed ExportDB case fails as drift naming the expectation to update (exportdb/conftest.py).

Outcomes are canned through the plugin's pytest_export_run hook: only the verdict and the
drift message are under test here; the real catalog run is ``pytest --pyargs exportdb``.
"""

from __future__ import annotations

import pytest

CONFTEST = '''
from exportcore.outcome import Failure, Outcome

pytest_plugins = ["exportdb.conftest"]


def pytest_export_run(item, case, mode, options):
    if item.originalname.startswith("test_now_fails"):
        failure = Failure(stage="capture", category="data-dependent", exc_type="GuardOnDataDependentSymNode",
                          message="Could not guard on data-dependent expression Eq(u0, 1).")
        return Outcome(case_id=options["case_id"], mode=mode, status="failed", failure=failure)
    return Outcome(case_id=options["case_id"], mode=mode, status="passed")
'''

TESTS = '''
import pytest
from exportdb.registry import MODES, PASS, ExportCase, Fails


def build():
    return (lambda x: x, (1.0,))


def make(name, expect, findings=()):
    case = ExportCase(name, "control_flow", ("python.control-flow",), "a description long enough",
                      {m: expect.get(m, PASS) for m in MODES}, build, rewrite="cond_on_tensor_value",
                      findings=findings)

    @pytest.mark.exportable(modes=["non_strict"], expect=case.marker_expect(), examples=1)
    def test():
        return case.instantiate()

    test.exportdb_case = case
    return test


test_now_fails = make("was_passing", {})
test_now_fails_elsewhere = make("was_operator", {"non_strict": Fails("torch.operator")})
test_now_fails_as_recorded = make("still_failing", {"non_strict": Fails("data-dependent")})
test_now_passes = make("was_failing", {"non_strict": Fails("data-dependent")})
test_still_passes = make("still_passing", {})
test_lost_finding = make("was_specialized", {}, findings=("specialized",))
'''


@pytest.fixture
def result(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_db=TESTS)
    return pytester.runpytest("-p", "no:cacheprovider", "-rA")


def test_unchanged_cases_pass_or_xfail(result: pytest.RunResult) -> None:
    result.assert_outcomes(passed=1, xfailed=1, failed=4)


def test_case_that_now_fails_names_the_expectation(result: pytest.RunResult) -> None:
    result.stdout.fnmatch_lines([
        "*drift: exportdb case was_passing [[]non_strict[]] was recorded as 'passes', "
        "now fails with data-dependent at capture*",
        '*update the expectation in *test_db.py:*: set expect[[]"non_strict"[]] = '
        'Fails("data-dependent", stage="capture") and name a rewrite*',
        # the short summary line leads with the drift too
        "FAILED test_db.py::test_now_fails[[]non_strict[]] - drift: exportdb case was_pass*",
    ])


def test_case_that_now_passes_says_remove(result: pytest.RunResult) -> None:
    result.stdout.fnmatch_lines([
        "*drift: exportdb case was_failing [[]non_strict[]] was recorded as 'fails: data-dependent', now passes*",
        '*remove "non_strict" from expect=*',
    ])


def test_case_failing_in_another_category(result: pytest.RunResult) -> None:
    result.stdout.fnmatch_lines([
        "*drift: exportdb case was_operator [[]non_strict[]] was recorded as 'fails: torch.operator', "
        "now fails with data-dependent at capture*",
        '*set expect[[]"non_strict"[]] = Fails("data-dependent", stage="capture")',
    ])


def test_documented_finding_that_disappears(result: pytest.RunResult) -> None:
    result.stdout.fnmatch_lines([
        "*FindingMissing: expected finding(s) [[]'specialized'[]] were not reported*",
        "*drift: exportdb case was_specialized [[]non_strict[]] was recorded as 'passes', now fails with drift*",
        "*update the expectation in *: remove the missing kinds from findings=*",
    ])
