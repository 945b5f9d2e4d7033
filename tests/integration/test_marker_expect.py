"""expect={mode: ...}: expected failures behave like xfail(strict=True), with category drift."""

from __future__ import annotations


def test_expected_failure_xfails_and_unexpected_pass_fails(project, canned, records):
    canned({
        "test_canned_fails": ("failed", "data-dependent"),
        "test_canned_drifts": ("failed", "torch.operator"),
    })
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict"], expect={"strict": "data-dependent branch"})
        def test_canned_fails():
            return lin_case()

        @pytest.mark.exportable(modes=["strict"], expect={"strict": {"reason": "cond", "category": "data-dependent"}})
        def test_canned_fails_in_category():
            return lin_case()

        @pytest.mark.exportable(modes=["strict", "non_strict"], expect={"strict": "used to fail"})
        def test_canned_passes():
            return lin_case()

        @pytest.mark.exportable(modes=["strict"], expect={"strict": {"reason": "cond", "category": "data-dependent"}})
        def test_canned_drifts():
            return lin_case()
    """)
    result = project.runpytest("-rxX")
    # test_canned_fails_in_category is canned "passed": the expectation no longer holds.
    result.assert_outcomes(xfailed=1, failed=3, passed=1)
    result.stdout.fnmatch_lines(["*XFAIL test_m.py::test_canned_fails[[]strict[]]*strict: data-dependent branch*"])
    result.stdout.fnmatch_lines(["*now exportable in strict: remove the expectation*"])
    result.stdout.fnmatch_lines([
        "*drift: strict now fails with torch.operator, expected data-dependent: update the expectation*"
    ])
    by_test = {r["test"]: r for r in records()["records"]}
    assert by_test["test_m.py::test_canned_fails[strict]"]["verdict"] == "xfailed"
    assert by_test["test_m.py::test_canned_fails[strict]"]["expect"] == {"reason": "data-dependent branch",
                                                                         "category": None}
    assert by_test["test_m.py::test_canned_passes[strict]"]["verdict"] == "xpassed"
    assert by_test["test_m.py::test_canned_passes[non_strict]"]["verdict"] == "passed"
    assert by_test["test_m.py::test_canned_drifts[strict]"]["verdict"] == "failed"
    assert by_test["test_m.py::test_canned_fails_in_category[strict]"]["verdict"] == "xpassed"


def test_expected_category_matches_xfails(project, canned, records):
    canned({"test_canned": ("failed", "data-dependent")})
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict"], expect={"strict": {"reason": "cond", "category": "data-dependent"}})
        def test_canned():
            return lin_case()
    """)
    project.runpytest().assert_outcomes(xfailed=1)
    assert records()["records"][0]["verdict"] == "xfailed"


def test_real_data_dependent_branch_is_an_expected_failure(project, records):
    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import DataDependent

        @pytest.mark.exportable(modes=["non_strict"], expect={"non_strict": "branches on tensor data"})
        def test_branchy():
            return DataDependent(), (torch.ones(2, 3),)
    """)
    project.runpytest().assert_outcomes(xfailed=1)
    (record,) = records()["records"]
    assert record["verdict"] == "xfailed"
    assert record["outcome"]["status"] == "failed"
    assert record["outcome"]["failure"]["stage"] == "capture"


def test_runxfail_reports_the_expected_failure_itself(project, records):
    # pytest's --runxfail reports xfail tests as if they were not marked: here, the export failure
    # report the test would give without expect= (never a traceback through the plugin), and an
    # expected failure that now passes simply passes.
    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import DataDependent, Lin

        @pytest.mark.exportable(modes=["non_strict"], expect={"non_strict": "branches on tensor data"})
        def test_branchy():
            return DataDependent(), (torch.ones(2, 3),)

        @pytest.mark.exportable(modes=["non_strict"], expect={"non_strict": "used to fail"})
        def test_fixed():
            return Lin(), (torch.ones(2, 4),)
    """)
    plain = project.runpytest("-rx")
    plain.assert_outcomes(xfailed=1, failed=1)
    plain.stdout.fnmatch_lines(["*XFAIL test_m.py::test_branchy[[]non_strict[]]*non_strict: branches on tensor data*"])
    plain.stdout.no_fnmatch_line("*runner.py*")
    result = project.runpytest("--runxfail")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*export failed in non_strict: stage capture, category data-dependent*"])
    result.stdout.no_fnmatch_line("*runner.py*")
    result.stdout.no_fnmatch_line("*case_seed.py*")
    verdicts = {r["test"]: r["verdict"] for r in records()["records"]}
    assert verdicts == {"test_m.py::test_branchy[non_strict]": "failed", "test_m.py::test_fixed[non_strict]": "passed"}
