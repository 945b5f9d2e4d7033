"""A misused marker is a collection error; a broken test is an error; both name the test."""

from __future__ import annotations

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


BAD_MARKERS = {
    "unknown_kwarg": ("modes=['strict'], tolerance=1e-3", "unknown argument 'tolerance'"),
    "unknown_mode": ("modes=['strict', 'eager']", "modes: unknown mode 'eager'"),
    "unknown_check": ("checks=['numerics', 'speed']", "checks: unknown check 'speed'"),
    "expect_not_run": ("modes=['strict'], expect={'training': 'bn'}", "expect names mode 'training'"),
    "shapes_type": ("dynamic_shapes='batch'", "dynamic_shapes must be a dict, tuple, list or None, got str"),
    "rtol_type": ("rtol='tight'", "rtol must be a finite non-negative number"),
    "rtol_nan": ("rtol=float('nan')", "rtol must be a finite non-negative number, got nan"),
    "atol_inf": ("atol=float('inf')", "atol must be a finite non-negative number, got inf"),
    "atol_negative": ("atol=-1e-5", "atol must be a finite non-negative number, got -1e-05"),
    "expect_empty_reason": ("expect={'strict': ''}", "expect['strict'] must be a non-empty reason, got ''"),
    "expect_blank_reason": ("expect={'strict': {'reason': ' '}}", "expect['strict']['reason'] must be a non-empty"),
    "expect_unknown_category": (
        "expect={'strict': {'reason': 'cond', 'category': 'data_dependent'}}",
        "expect['strict']['category']: unknown category 'data_dependent' (did you mean 'data-dependent'?)",
    ),
    "examples_type": ("examples=2.5", "examples must be a non-negative int"),
    "expect_type": ("expect=['strict']", "expect must be a dict"),
    "positional": ("'strict'", "takes keyword arguments only"),
}


def test_misused_marker_fails_collection_naming_test_and_argument(pytester):
    for name, (kwargs, _) in BAD_MARKERS.items():
        pytester.makepyfile(**{f"test_{name}": f"""
            import pytest

            @pytest.mark.exportable({kwargs})
            def test_{name}():
                pass
        """})
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=len(BAD_MARKERS))
    for name, (_, message) in BAD_MARKERS.items():
        literal = message.replace("[", "[[]")  # fnmatch: a bracket starts a character class
        result.stdout.fnmatch_lines([f"test_{name}.py::test_{name}: @pytest.mark.exportable: {literal}*"])
    assert "Traceback" not in result.stdout.str()
    assert "During handling of the above exception" not in result.stdout.str()
    assert "MarkerError" not in result.stdout.str()  # only the one clear line per test


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return None", "returned None (did you forget `return`?)"),
        ("return torch.nn.Linear(2, 2)", "returned Linear Linear(in_features=2*; an exportable test must return*"),
        ("return torch.nn.Linear(2, 2), torch.ones(2)", "args (item 1 of the returned tuple) must be a tuple*"),
    ],
)
def test_wrong_return_value_is_a_test_error_naming_the_test(project, records, body, message):
    project.makepyfile(test_m=f"""
        import pytest
        import torch

        @pytest.mark.exportable(modes=["strict"])
        def test_returns_wrong():
            {body}
    """)
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*test_m.py::test_returns_wrong[[]strict[]]: {message}*"])
    (record,) = records()["records"]
    assert record["verdict"] == "error"
    assert record["outcome"]["failure"]["stage"] == "input"


def test_exception_or_fixture_error_before_the_case_is_recorded_as_error(project, records):
    project.makepyfile(test_m="""
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("no weights file")

        @pytest.mark.exportable(modes=["strict"])
        def test_raises():
            raise FileNotFoundError("model.pt")

        @pytest.mark.exportable(modes=["strict"])
        def test_setup_fails(broken):
            return None

        @pytest.mark.exportable(modes=["strict"])
        @pytest.mark.skip(reason="not today")
        def test_skipped():
            return None
    """)
    result = project.runpytest()
    result.assert_outcomes(errors=2, skipped=1)
    by_test = {r["test"]: r for r in records()["records"]}
    raised = by_test["test_m.py::test_raises[strict]"]
    assert raised["verdict"] == "error"
    assert raised["outcome"]["failure"]["exc_type"] == "FileNotFoundError"
    assert "raised before returning a case" in raised["outcome"]["failure"]["message"]
    assert by_test["test_m.py::test_setup_fails[strict]"]["verdict"] == "error"
    assert by_test["test_m.py::test_skipped[strict]"]["verdict"] == "skipped"


def test_bad_case_input_and_eager_failure_are_errors_naming_the_field(project, records):
    project.makepyfile(test_m="""
        import pytest
        import torch
        from torch.export import Dim
        from models import Lin

        class BrokenInEager(torch.nn.Module):
            def forward(self, x):
                return x @ torch.ones(7, 7)

        @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"y": {0: Dim("b")}})
        def test_shapes_name_no_input():
            return Lin(), (torch.ones(2, 4),)

        @pytest.mark.exportable(modes=["non_strict"])
        def test_eager_broken():
            return BrokenInEager(), (torch.ones(2, 4),)
    """)
    result = project.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*ValueError: dynamic_shapes: *'y'*"])
    # A model that fails in eager is the case's fault, not an export failure.
    result.stdout.fnmatch_lines(["export error in non_strict: stage eager, *", "  RuntimeError: *mat1 and mat2 *"])
    by_test = {r["test"]: r for r in records()["records"]}
    shapes = by_test["test_m.py::test_shapes_name_no_input[non_strict]"]
    assert (shapes["verdict"], shapes["outcome"]["failure"]["stage"]) == ("error", "input")
    eager = by_test["test_m.py::test_eager_broken[non_strict]"]
    assert (eager["verdict"], eager["outcome"]["failure"]["stage"]) == ("error", "eager")
