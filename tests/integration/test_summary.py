"""The terminal summary: cases x modes matrix, failure categories, slowest exports on request."""

from __future__ import annotations

import pytest

from exportcore.outcome import Failure, Outcome
from pytest_export.results.records import Record
from pytest_export.rendering.summary import summary_lines

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


def _record(case: str, mode: str, verdict: str, category: str | None = None, duration: float = 0.1) -> Record:
    failure = Failure(stage="capture", category=category, exc_type="E", message="m") if category else None
    outcome = Outcome(case, mode, status="failed" if failure else "passed", failure=failure)
    return Record.make(f"{case}[{mode}]", case, mode, verdict, outcome, duration=duration)


def test_summary_lines_matrix_categories_and_slowest():
    lines = summary_lines(
        [
            _record("t.py::test_b", "strict", "failed", "data-dependent", 2.0),
            _record("t.py::test_b", "training", "crashed", "crashed"),
            _record("t.py::test_a", "strict", "passed", duration=3.5),
            _record("t.py::test_a", "non_strict", "xfailed", "data-dependent"),
            _record("t.py::test_a", "training", "timeout", "timeout"),
        ],
        mode_order=("strict", "non_strict", "training"),
        slowest=5,
    )
    assert lines[:3] == [
        "              strict non_strict training",
        "t.py::test_a    .        x         T    ",
        "t.py::test_b    F        -         C    ",
    ]
    assert "failure categories: crashed 1, data-dependent 1, timeout 1" in lines
    # a known failure is not counted as trouble
    assert "expected failures by category: data-dependent 1" in lines
    assert lines[lines.index("slowest exports (5):") + 1] == "     3.50s  t.py::test_a[strict]"


def test_large_matrix_folds_rows_that_need_no_attention():
    records = [_record(f"t.py::test_{i:02d}", "strict", "passed") for i in range(40)]
    records.append(_record("t.py::test_zz", "strict", "failed", "data-dependent"))
    lines = summary_lines(records, ("strict",), max_rows=30)
    assert lines[1:3] == [
        "t.py::test_zz    F   ",
        "(+40 cases that passed or failed as expected in every mode; -v shows them)",
    ]
    assert len(summary_lines(records, ("strict",), max_rows=None)) > 41


def test_no_records_no_summary():
    assert summary_lines([]) == []


def test_summary_printed_at_session_end(project, canned):
    canned({"test_canned_b": ("failed", "python.builtin")})
    project.makepyfile(test_m="""
        import pytest
        from exportcore import Case

        @pytest.mark.exportable
        def test_canned_a():
            return Case(model=lambda x: x, args=(1,))

        @pytest.mark.exportable(modes=["strict"])
        def test_canned_b():
            return Case(model=lambda x: x, args=(1,))

        def test_plain():
            pass
    """)
    result = project.runpytest()
    result.stdout.fnmatch_lines([
        "*= export matrix =*",
        "*strict non_strict training",
        "test_m.py::test_canned_a    .        .         .*",
        "test_m.py::test_canned_b    F        -         -*",
        "legend: *",
        "results: 3 passed, 1 failed (4 from 2 cases in 3 modes)",
        "failure categories: python.builtin 1",
    ])
    assert "slowest exports" not in result.stdout.str()  # only on request, like --durations
    result = project.runpytest("--export-slowest=2")
    result.stdout.fnmatch_lines(["failure categories: python.builtin 1", "slowest exports (2):", "  *s  test_m.py::*"])


def test_no_summary_without_exportable_tests(pytester):
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest()
    assert "export matrix" not in result.stdout.str()


def test_fixture_results_explain_why_verdicts_outnumber_tests_and_findings_are_counted(project):
    project.makepyfile(test_m="""
        import pytest
        from torch.export import Dim
        from models import lin_case

        @pytest.mark.exportable(modes=["non_strict"], checks=["numerics"])
        def test_marked():
            return lin_case()

        def test_three_exports(export_check):
            model, args = lin_case()
            for mode in ("strict", "non_strict", "training"):
                assert export_check(model, args, mode=mode, checks=["numerics"]).passed

        # torch lets sizes 0/1 through for Dim.AUTO: a size01_accepted finding.
        @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}})
        def test_auto():
            return lin_case()
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines([
        "results: 5 passed (5 from 3 cases in 3 modes; pytest counts tests: 3 of these results come from "
        "export_check calls in 1 test, which it counts once each)",
        "findings: size01_accepted 1 (the first of each kind in the warnings summary; every one with -v and in the report)",
    ])
