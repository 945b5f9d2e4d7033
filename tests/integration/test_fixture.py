"""export_check fixture: custom flows get the Outcome back, and it still lands in the records."""

from __future__ import annotations


def test_export_check_returns_outcome_and_records_it(project, records):
    project.makepyfile(test_m="""
        import torch
        from torch.export import Dim
        from models import DataDependent, lin_case

        def test_custom_flow(export_check):
            model, args = lin_case()
            outcome = export_check(model, args, mode="strict", dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}},
                                   checks=["numerics", "accept"])
            assert outcome.passed, outcome.failure
            assert outcome.graph.op_histogram  # the exported graph's op counts
            assert outcome.declared

        def test_failing_case_is_returned_not_raised(export_check):
            outcome = export_check(DataDependent(), (torch.ones(3),), checks=["numerics"])
            assert outcome.status == "failed"
            assert outcome.failure.stage == "capture"
            assert outcome.mode == "non_strict"
    """)
    project.runpytest().assert_outcomes(passed=2)
    by_test = {r["test"]: r for r in records()["records"]}
    flow = by_test["test_m.py::test_custom_flow"]
    assert (flow["case"], flow["mode"], flow["verdict"]) == ("test_m.py::test_custom_flow", "strict", "passed")
    assert flow["outcome"]["checks"] == ["accept", "numerics"]
    failing = by_test["test_m.py::test_failing_case_is_returned_not_raised"]
    assert (failing["mode"], failing["verdict"]) == ("non_strict", "failed")


def test_export_check_bad_arguments_raise_clearly(project, canned, records):
    canned({})
    project.makepyfile(test_m="""
        import pytest
        import torch
        from exportcore import Case

        def test_bad_args(export_check):
            with pytest.raises(ValueError, match="export_check\\\\(\\\\): unknown mode 'eager'"):
                export_check(lambda x: x, (1,), mode="eager")
            with pytest.raises(TypeError, match="unexpected option 'tolerance'"):
                export_check(lambda x: x, (1,), tolerance=1)
            with pytest.raises(TypeError, match="args must be a tuple, got list"):
                export_check(lambda x: x, [1])
            with pytest.raises(ValueError, match="unknown check"):
                export_check(torch.nn.Linear(2, 2), (torch.ones(2),), checks=["speed"])

        def test_canned_twice(export_check):
            assert export_check(lambda x: x, (1,), mode="strict").passed
            assert export_check(lambda x: x, (1,), mode="strict").passed
    """)
    project.runpytest().assert_outcomes(passed=2)
    # Two calls in one test and mode stay two records with distinct keys.
    assert sorted((r["case"], r["mode"]) for r in records()["records"]) == [
        ("test_m.py::test_canned_twice", "strict"),
        ("test_m.py::test_canned_twice#2", "strict"),
    ]
