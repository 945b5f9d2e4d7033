"""The unstable verdict of --export-repeat, decided in results/verdicts and read by the gate: never a silent pass."""

from __future__ import annotations

import pytest
from report_factory import make_record

from exportcore.outcome import Failure, Outcome
from pytest_export.results.expectation import Expectation
from pytest_export.results.gate import Scope, compare
from pytest_export.results.report import build_report
from pytest_export.results.verdicts import PROBLEMS, after_pytest, as_happened, verdict_of

pytestmark = pytest.mark.machinery


def _outcome(*repeats: str) -> Outcome:
    failure = Failure(stage="numerics", category="numerics", exc_type="ValueMismatch", message="differs")
    return Outcome(case_id="t.py::test_m", mode="non_strict", status="failed", failure=failure, repeats=list(repeats))


def test_runs_that_differ_are_unstable_whatever_was_expected_and_runs_that_agree_keep_their_verdict() -> None:
    flaky = _outcome("passed", "failed", "passed")
    assert verdict_of(flaky) == "unstable"
    assert verdict_of(flaky, Expectation("flaky", "numerics")) == "unstable"  # expect= speaks of a failure
    assert verdict_of(flaky, known=True) == "unstable"  # so does a baseline's known failure
    assert verdict_of(_outcome("failed", "failed")) == "failed"
    assert verdict_of(_outcome("failed", "failed"), Expectation("known", "numerics")) == "xfailed"
    # pytest's own last word keeps it: its xfail makes the test XFAIL, the record stays unstable
    assert after_pytest("unstable", skipped=True, passed=False, xfail=True) == "unstable"  # (pytest's XFAIL report)
    assert after_pytest("failed", skipped=True, passed=False, xfail=True) == "xfailed"
    assert as_happened("unstable", flaky) == "unstable" and "unstable" in PROBLEMS


def test_the_gate_counts_an_exportable_key_gone_unstable_as_a_regression() -> None:
    case = "tests/test_m.py::test_mlp"
    before = build_report([make_record(case, "strict", "passed"), make_record(case, "non_strict", "unstable")])
    now = [make_record(case, "strict", "unstable"), make_record(case, "non_strict", "passed")]
    result = compare(before, now, Scope())
    assert [(e.mode, e.before, e.after) for e in result.regressions] == [("strict", "passed", "unstable")]
    assert [(e.mode, e.after) for e in result.improvements] == [("non_strict", "passed")]
    assert result.failed
