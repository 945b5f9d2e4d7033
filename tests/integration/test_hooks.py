"""Hookspecs: other plugins add modes, run them, replace cases and post-process outcomes."""

from __future__ import annotations

import pytest

PLUGIN = '''
from exportcore.outcome import Failure, Outcome

def pytest_export_modes(config):
    return ["aoti"]

def pytest_export_case(item, case, mode):
    case.extra["seen_by"] = "plugin"
    return case

def pytest_export_run(item, case, mode, options):
    # Runs every mode here so the test needs no torch; a real plugin returns None for modes it does not own.
    assert case.extra["seen_by"] == "plugin"
    return Outcome(case_id=options["case_id"], mode=mode)

def pytest_export_outcome(item, case, outcome):
    outcome.notes.append(f"post-processed {outcome.mode}")
    if outcome.mode == "aoti" and "slow" in item.name:
        outcome.status = "failed"
        outcome.failure = Failure(stage="run", category="aoti", exc_type="AOTIError", message="too slow")
'''

TEST = """
    import pytest
    from exportcore import Case

    @pytest.mark.exportable
    def test_every_mode():
        return Case(model=lambda x: x, args=(1,))

    @pytest.mark.exportable(modes=["aoti"], expect={"aoti": {"reason": "slow compile", "category": "aoti"}})
    def test_slow_in_aoti():
        return Case(model=lambda x: x, args=(1,))
"""


@pytest.fixture
def with_plugin(project):
    project.makeconftest(project.path.joinpath("conftest.py").read_text() + PLUGIN)
    project.makepyfile(test_m=TEST)
    return project


def test_plugin_modes_run_and_outcomes_are_post_processed(with_plugin, records):
    result = with_plugin.runpytest("-v")
    result.assert_outcomes(passed=4, xfailed=1)
    result.stdout.fnmatch_lines(["*test_m.py::test_every_mode[[]aoti[]] PASSED*"])
    by_test = {r["test"]: r for r in records()["records"]}
    assert by_test["test_m.py::test_every_mode[aoti]"]["outcome"]["notes"] == ["post-processed aoti"]
    assert by_test["test_m.py::test_slow_in_aoti[aoti]"]["verdict"] == "xfailed"


def test_plugin_modes_are_valid_in_export_modes(with_plugin):
    result = with_plugin.runpytest("--export-modes=aoti", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["test_m.py::test_every_mode[[]aoti[]]", "test_m.py::test_slow_in_aoti[[]aoti[]]"])


def test_invalid_mode_name_from_a_plugin_is_a_usage_error(project):
    project.makeconftest("def pytest_export_modes(config):\n    return ['not-a-name']\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pytest_export_modes returned an invalid mode name 'not-a-name'*"])


TYPED_PLUGIN = '''
from exportcore.outcome import Outcome

def pytest_export_run(item, case, column, engine_options, engine_session, mode, options):
    # the typed arguments and the older untyped ones say the same
    assert mode == column.label and options["session"] is engine_session
    assert options.get("export_mode", column.name) == engine_options.mode
    note = f"{column.name} {column.device} {column.is_target} {engine_options.mode} {engine_options.target}"
    return Outcome(case_id=engine_options.case_id, mode=column.label, notes=[note])
'''

TYPED_TEST = """
    import pytest
    from exportcore import Case

    @pytest.mark.exportable(modes=["strict"], targets=["onnx"], target_mode="strict", devices=["cpu", "cuda"])
    def test_columns():
        return Case(model=lambda x: x, args=(1,))
"""


def test_a_run_hook_gets_the_column_and_the_engine_options_typed(project, records):
    project.makeconftest(project.path.joinpath("conftest.py").read_text() + TYPED_PLUGIN)
    project.makepyfile(test_m=TYPED_TEST)
    result = project.runpytest()
    result.assert_outcomes(passed=4)
    notes = {r["mode"]: r["outcome"]["notes"] for r in records()["records"]}
    assert notes == {"strict": ["strict cpu False strict None"], "onnx": ["onnx cpu True strict onnx"],
                     "strict-cuda": ["strict cuda False strict None"], "onnx-cuda": ["onnx cuda True strict onnx"]}
