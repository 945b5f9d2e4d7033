"""Bad input gets a clear error naming the test (or option) and the field, never a torch traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# name -> (marker arguments, what the test returns, verdict, stage, message fragment naming the field)
CASES = {
    "shapes_wrong_name": ('dynamic_shapes={"y": {0: Dim("b")}}', "lin_case()", "error", "input",
                          "dynamic_shapes: top-level keys ['y'] must be the forward's argument names"),
    "shapes_wrong_axis": ('dynamic_shapes={"x": {3: Dim("b")}}', "lin_case()",
                          "error", "input", "dynamic_shapes['x']: axis 3 is not an axis of args[0] (rank 2)"),
    "shapes_too_many": ('dynamic_shapes=({0: Dim("b")}, {0: Dim("c")})', "lin_case()",
                        "error", "input", "dynamic_shapes: has 2 entries but the inputs have 1"),
    "shapes_static_mismatch": ('dynamic_shapes={"x": {1: 5}}', "lin_case()",
                               "error", "input", "dynamic_shapes['x'][1]: static size 5 does not match"),
    "shapes_unsatisfiable": ('dynamic_shapes={"x": {0: D, 1: D - 20}}', "(Lin(), (torch.randn(4, 4),))", "error",
                             "input", "dynamic_shapes: unsatisfiable: dim 'd' declared [2, 10] has no valid size"),
    "eager_fails": ("", "(Broken(), (torch.randn(2, 4),))",
                    "error", "eager", "mat1 and mat2 shapes cannot be multiplied"),
    "args_not_forward": ("", "(Lin(), (torch.randn(2, 4), torch.randn(2)))",
                         "error", "input", "args/kwargs do not match the model's forward signature"),
    "lazy_module": ("", "(torch.nn.LazyLinear(3), (torch.randn(2, 4),))",
                    "error", "input", "model: parameter 'weight' of LazyLinear is not initialized yet"),
    "returns_none": ("", "None", "error", "input", "returned None (did you forget `return`?)"),
    "kwargs_not_dict": ("", "(Lin(), (torch.randn(2, 4),), [1])",
                        "error", "input", "kwargs (item 2 of the returned tuple) must be a dict, got list"),
    "factory_wrong_shape": ('dynamic_shapes={"x": {0: D}}, inputs=doubled', "lin_case()", "error", "input",
                            "inputs factory returned args[0] of shape [4, 4], but the drawn shape is [2, 4]"),
    "dim_min_above_max": ("", 'Case(Lin(), (torch.randn(2, 4),), dynamic_shapes={"x": {0: Dim("b", min=10, max=5)}})',
                          "error", "input", "dynamic_shapes: Dim('b', min=10, max=5) at test_bad.py:"),
    "factory_raises": ('dynamic_shapes={"x": {0: D}}, inputs=no_tokenizer', "lin_case()", "error", "input",
                       "inputs factory raised KeyError: 'tokenizer' (drawn shapes: args[0]=[2, 4])"),
}

HEADER = """
    import pytest
    import torch
    from torch.export import Dim

    from exportcore import Case
    from models import Lin, lin_case

    D = Dim("d", min=2, max=10)

    class Broken(torch.nn.Module):
        def forward(self, x):
            return x @ torch.ones(5, 5)

    def doubled(shapes, rng):
        return (torch.randn(shapes["args[0]"][0] * 2, 4),), {}

    def no_tokenizer(shapes, rng):
        raise KeyError("tokenizer")
"""


def _test(name: str, marker: str, body: str) -> str:
    args = ", ".join(a for a in ('modes=["non_strict"]', marker) if a)
    return f"\n    @pytest.mark.exportable({args})\n    def test_{name}():\n        return {body}\n"


def test_broken_cases_are_per_test_errors_that_name_the_test_and_the_field(project, records):
    project.makepyfile(test_bad=HEADER + "".join(_test(n, m, b) for n, (m, b, *_) in CASES.items()) + """
    def test_plain_neighbour_still_runs():
        pass
    """)
    result = project.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=len(CASES), passed=1)
    out = result.stdout.str()
    assert "Traceback" not in out  # torch internals only with --tb=long / -vv
    # torch's AssertionError from inside Dim() reads as one line in the terminal too, not its traceback
    assert "is invalid: Cannot create Dim with inconsistent min=10, max=5" in out
    assert "dynamic_shapes.py" not in out
    by_test = {r["test"]: r for r in records()["records"]}
    for name, (_, _, verdict, stage, message) in CASES.items():
        nodeid = f"test_bad.py::test_{name}[non_strict]"
        assert f"ERROR {nodeid}" in out
        record = by_test[nodeid]
        failure = record["outcome"]["failure"]
        assert (record["verdict"], failure["stage"]) == (verdict, stage), name
        assert message in failure["message"], (name, failure["message"])


@pytest.mark.parametrize("marker, body, message", [
    ('dynamic_shapes={"x": {0: Dim("b", min=10, max=20)}}', "lin_case()",
     "dynamic_shapes['x'][0]: example size 2 is outside the declared range of b [10, 20]"),
    ('dynamic_shapes={"x": {0: B, 1: B * 2}}', "(Lin(), (torch.randn(4, 4),))",  # 4 == 2*b gives b=2 < 4
     "dynamic_shapes['x'][1]: example size 4 gives b = 2, outside b's declared range [4, 8]"),
])
def test_example_outside_its_declared_range_is_an_input_error_naming_the_field(project, records, marker, body, message):
    project.makepyfile(test_bad=HEADER + '    B = Dim("b", min=4, max=8)\n' + _test("outside", marker, body))
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(errors=1)
    (record,) = records()["records"]
    failure = record["outcome"]["failure"]
    assert (record["verdict"], failure["stage"]) == ("error", "input")
    assert message in failure["message"]


@pytest.mark.parametrize("marker, message", [
    ("inputs=5", "inputs must be a callable or a hypothesis strategy, got int"),
    ("checks=5", "checks must be a list of check names, got int"),
    ("expect={'strict': {'reason': ''}}", "expect['strict']['reason'] must be a non-empty string"),
])
def test_misused_marker_is_a_collection_error_naming_test_and_argument(pytester, marker, message):
    pytester.makepyfile(test_m=f"""
        import pytest

        @pytest.mark.exportable({marker})
        def test_it():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert f"test_m.py::test_it: @pytest.mark.exportable: {message}" in result.stdout.str()


GOOD_REPORT = {"schema": "pytest-export-report", "version": 1, "complete": True, "environment": {}, "records": []}

BASELINES = {
    "truncated": (json.dumps(GOOD_REPORT)[:40], "not valid JSON"),
    "corrupt": ("<html>not json</html>", "not valid JSON"),
    "empty": ("", "not valid JSON"),
    "other_version": (json.dumps(dict(GOOD_REPORT, version=99)), "report version 99 is not supported (expected 1)"),
    "not_a_report": (json.dumps({"records": []}), "not an export report"),
    "list": ("[]", "not an export report (top level is list, expected object)"),
    "bad_record": (json.dumps(dict(GOOD_REPORT, records=[{"test": "t", "case": "t", "mode": "strict",
                                                           "verdict": "great", "duration": 0}])),
                   "records[0].verdict must be one of"),
    "not_utf8": (b"\xff\xfe\x00 binary", "cannot be read"),
    "a_directory": (None, "cannot be read"),
    "missing": (False, "file does not exist; create it with --export-baseline-update"),
}


@pytest.mark.parametrize("kind", BASELINES)
def test_unusable_baseline_is_a_usage_error_naming_the_option_and_file(pytester, kind):
    content, message = BASELINES[kind]
    path = pytester.path / "base.json"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not False:
        path.write_text(content)
    pytester.makepyfile(test_p="def test_p():\n    pass\n")

    result = pytester.runpytest("-p", "no:cacheprovider", "--export-baseline=base.json")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "ERROR: --export-baseline: base.json: " in err and message in err
    assert "Traceback" not in err


def test_report_path_in_a_missing_directory_is_created(pytester):
    pytester.makepyfile(test_p="def test_p():\n    pass\n")
    pytester.runpytest("-p", "no:cacheprovider", "--export-report=new/deeper/r.json").assert_outcomes(passed=1)
    assert json.loads((pytester.path / "new/deeper/r.json").read_text())["complete"] is True


@pytest.mark.parametrize("path, message", [
    ("r.txt", "--export-report: report path 'r.txt': unknown format '.txt'"),
    ("adir.json", "--export-report adir.json: is a directory, expected a file path"),
])
def test_unusable_report_path_is_a_usage_error(pytester, path, message):
    (pytester.path / "adir.json").mkdir()
    pytester.makepyfile(test_p="def test_p():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--export-report={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: {message}" in result.stderr.str()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a directory no one can write to, even root")
def test_report_path_that_cannot_be_written_is_an_error_not_a_green_run(pytester):
    # /proc refuses new files even to root, where permission bits (chmod 0o555) do not.
    target = Path("/proc/pytest-export-report.json")
    pytester.makepyfile(test_p="def test_p():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--export-report={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # before any test ran
    assert f"ERROR: --export-report {target}: directory /proc is not writable" in result.stderr.str()


def test_report_that_fails_to_write_at_the_end_fails_the_session(pytester):
    # The directory passed the up-front probe, then became a file while the tests ran.
    pytester.makepyfile(test_p="import shutil\n\ndef test_p():\n    shutil.rmtree('out')\n    open('out', 'w').close()\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--export-report=out/r.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # not pytest's 3 (its own crash)
    assert "--export-report: export report NOT written to out/r.json" in result.stdout.str()


@pytest.mark.parametrize("args, ini, message", [
    (["--export-timeout=soon"], "", "--export-timeout must be a number, got 'soon'"),
    (["--export-timeout=0"], "", "--export-timeout must be positive"),
    (["--export-timeout=-5"], "", "--export-timeout must not be negative"),
    ([], "export_timeout = 1m", "ini export_timeout: could not convert string to float: '1m'"),
])
def test_bad_timeout_is_a_usage_error_naming_the_option(pytester, args, ini, message):
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_p="def test_p():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_any_marker_arguments_are_accepted_or_refused_with_a_marker_error():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from pytest_export.marker import ARGUMENTS, MarkerError, parse_marker

    junk = st.recursive(
        st.none() | st.booleans() | st.integers(-3, 5) | st.floats() | st.text(max_size=8)
        | st.sampled_from(["strict", "non_strict", "training", "numerics", "accept", "reason"]),
        lambda c: st.lists(c, max_size=3) | st.lists(c, max_size=3).map(tuple)
        | st.frozensets(st.text(max_size=3), max_size=2)
        | st.dictionaries(st.text(max_size=10) | st.sampled_from(["strict", "reason", "category"]), c, max_size=3),
        max_leaves=8,
    )
    names = st.sampled_from(ARGUMENTS) | st.text(max_size=8)

    @settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.lists(junk, max_size=1).map(tuple), st.dictionaries(names, junk, max_size=4))
    def check(args, kwargs):
        try:
            parse_marker(args, kwargs, ("strict", "non_strict", "training"))
        except MarkerError as exc:
            assert str(exc)

    check()
