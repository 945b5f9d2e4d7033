"""--export-baseline / --export-baseline-update: the CI gate on exportability regressions."""

from __future__ import annotations

import json

import pytest

from pytest_export.results.report import load_report

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

TESTS = """
import pytest
from models import lin_case

@pytest.mark.exportable(modes=["strict", "non_strict"]{expect})
def test_canned_a():
    return lin_case()

@pytest.mark.exportable(modes=["strict"])
def test_canned_b():
    return lin_case()
"""


def write_tests(project: pytest.Pytester, expect: str = "", **files: str) -> None:
    project.makepyfile(test_m=TESTS.replace("{expect}", expect), **files)


@pytest.fixture
def baseline(project, canned):
    """Record a baseline in which every (case, mode) passes; return its path."""
    canned({})
    write_tests(project)
    result = project.runpytest("--export-baseline=base.json", "--export-baseline-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["export baseline updated: base.json"])
    return project.path / "base.json"


def test_regression_fails_the_session_even_when_every_test_xfails(project, canned, baseline):
    canned({"test_canned_a": ("failed", "data-dependent")})
    write_tests(project, expect=', expect={"strict": "known", "non_strict": "known"}')
    result = project.runpytest("--export-baseline=base.json", "-k", "test_canned_a")
    result.assert_outcomes(xfailed=2, deselected=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*= export gate =*",
        "export gate FAILED vs base.json: 2 regressions, 0 improvements, 1 deselected",
        "  REGRESSION test_m.py::test_canned_a [[]non_strict[]]: passed -> xfailed: [[]capture[]] data-dependent: "
        "UserError: it broke*",
        "  REGRESSION test_m.py::test_canned_a [[]strict[]]: passed -> xfailed*",
    ])


def test_unchanged_run_passes_and_improvements_are_listed(project, canned):
    canned({"test_canned_b": ("failed", "torch.operator")})
    write_tests(project)
    # the update records the failure as known: pytest sees it expected, the baseline says failed
    project.runpytest("--export-baseline=base.json", "--export-baseline-update").assert_outcomes(passed=2, xfailed=1)
    assert load_report(project.path / "base.json")["summary"]["verdicts"] == {"passed": 2, "failed": 1}
    canned({})
    result = project.runpytest("--export-baseline=base.json")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "export gate passed vs base.json: 0 regressions, 1 improvement",
        "  improvement test_m.py::test_canned_b [[]strict[]]: failed -> passed",
        "*--export-baseline-update*",
    ])


def test_vanished_deselected_and_uncollected_keys_are_reported_not_failed(project, canned, baseline):
    canned({})
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict"])
        def test_canned_a():
            return lin_case()
    """, test_other="def test_plain(): pass")
    result = project.runpytest("--export-baseline=base.json", "-k", "not plain", "-v")
    assert result.ret == pytest.ExitCode.OK
    # test_canned_a[non_strict] and test_canned_b are gone from a collected file: a warning, not a failure.
    result.stdout.fnmatch_lines([
        "export gate passed vs base.json: 0 regressions, 0 improvements, 2 vanished",
        "  vanished test_m.py::test_canned_a [[]non_strict[]]: passed: collected file has no such test any more",
        "  vanished test_m.py::test_canned_b [[]strict[]]: passed*",
    ])
    write_tests(project)
    result = project.runpytest("--export-baseline=base.json", "-k", "test_canned_b", "-v")
    result.stdout.fnmatch_lines([
        "export gate passed vs base.json: 0 regressions, 0 improvements, 2 deselected",
        "  deselected test_m.py::test_canned_a [[]non_strict[]]: passed: deselected (-k/-m)",
    ])
    result = project.runpytest("--export-baseline=base.json", "test_other.py")
    result.stdout.fnmatch_lines(["export gate passed vs base.json: 0 regressions, 0 improvements, 3 deselected"])


def test_update_from_a_partial_run_keeps_the_keys_it_did_not_run(project, canned, baseline):
    canned({"test_canned_b": ("failed", "torch.operator")})
    result = project.runpytest("--export-baseline=base.json", "--export-baseline-update", "-k", "test_canned_b")
    result.assert_outcomes(xfailed=1, deselected=2)  # the update records the failure as known
    result.stdout.fnmatch_lines(["*(not failing: --export-baseline-update records these as the new baseline)*"])
    verdicts = {(r.case, r.mode): r.verdict for r in load_report(baseline)["records"]}
    assert verdicts == {("test_m.py::test_canned_a", "strict"): "passed",
                        ("test_m.py::test_canned_a", "non_strict"): "passed",
                        ("test_m.py::test_canned_b", "strict"): "failed"}


def test_interrupted_run_does_not_update_the_baseline(project, canned, baseline):
    before = baseline.read_text()
    project.makepyfile(test_z="def test_stop():\n    raise KeyboardInterrupt\n")
    result = project.runpytest("--export-baseline=base.json", "--export-baseline-update", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert baseline.read_text() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{oops", "*base.json: not valid JSON*"),
        (json.dumps({"schema": "junit"}), "*base.json: not an export report (field 'schema' is 'junit'*"),
        (json.dumps({"schema": "pytest-export-report", "version": 7}), "*base.json: report version 7 is not supported*"),
        (json.dumps({"schema": "pytest-export-report", "version": 1, "complete": True, "environment": {},
                     "records": [{"test": "t", "case": "c", "mode": "strict", "verdict": "ok", "duration": 1}]}),
         "*base.json: records[[]0[]].verdict must be one of*got 'ok'"),
    ],
)
def test_corrupt_or_wrong_schema_baseline_is_a_usage_error(project, content, message):
    (project.path / "base.json").write_text(content)
    result = project.runpytest("--export-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --export-baseline: {message}"])


def test_missing_baseline_and_update_without_baseline_are_usage_errors(project):
    result = project.runpytest("--export-baseline=nope.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --export-baseline: nope.json: file does not exist; create it with "
                                 "--export-baseline-update"])
    result = project.runpytest("--export-baseline-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --export-baseline-update needs --export-baseline=PATH*"])


def test_gate_lands_in_the_report(project, canned, baseline):
    canned({"test_canned_b": ("failed", "torch.operator")})
    result = project.runpytest("--export-baseline=base.json", "--export-report=r.json", "--export-report=r.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    gate = load_report(project.path / "r.json")["gate"]
    assert gate["failed"] and [(e["case"], e["mode"]) for e in gate["regressions"]] == [("test_m.py::test_canned_b",
                                                                                          "strict")]
    assert "**Gate** ❌ **failed** vs `base.json`" in (project.path / "r.md").read_text()


def test_regression_fails_an_xdist_run_too(project, canned, baseline):
    canned({"test_canned_b": ("failed", "torch.operator")})
    write_tests(project, expect=', expect={"strict": "known"}')
    result = project.runpytest("-n", "2", "--export-baseline=base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["export gate FAILED vs base.json: 1 regression*"])


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "deep_json", "long_name"])
def test_a_pathological_baseline_path_is_a_usage_error_naming_it(project, kind):
    import os

    if kind == "fifo":
        os.mkfifo(project.path / "base.json")  # opening it to read would block for ever
        path, message = "base.json", "base.json: cannot be read (not a regular file)"
    elif kind == "dev_zero":
        path, message = "/dev/zero", "/dev/zero: cannot be read (not a regular file)"  # reading it fills memory
    elif kind == "deep_json":
        (project.path / "base.json").write_text("[" * 100_000 + "]" * 100_000)
        path, message = "base.json", "base.json: not an export report (JSON nested too deeply)"
    else:
        path = "b" * 300 + ".json"
        message = f"{path}: cannot be used as a file path (File name too long)"
    result = project.runpytest(f"--export-baseline={path}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: --export-baseline: {message}" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("n", [0, 2])
def test_a_report_over_the_baseline_is_refused_unless_updating_it(project, canned, baseline, n):
    before = baseline.read_text()
    xdist = ["-n", str(n)] if n else []
    result = project.runpytest("--export-baseline=base.json", "--export-report=./base.json",
                                          "-p", "no:cacheprovider", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("ERROR: --export-report base.json is the --export-baseline file: writing the report would overwrite "
            "the baseline; write the report elsewhere, or pass --export-baseline-update to replace the baseline"
            ) in result.stderr.str()
    assert baseline.read_text() == before
    # With --export-baseline-update replacing it is the point; the run ends up as the new baseline.
    canned({"test_canned_b": ("failed", "torch.operator")})
    result = project.runpytest("--export-baseline=base.json", "--export-report=base.json", "--export-baseline-update")
    result.assert_outcomes(passed=2, xfailed=1)
    assert load_report(baseline)["summary"]["verdicts"] == {"passed": 2, "failed": 1}
