"""--export-modes / -checks / -examples / -timeout / -findings, their ini twins, hypothesis options."""

from __future__ import annotations

import json

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


# Captures the engine options the plugin would pass, without exporting anything.
SPY = '''
import json
from exportcore.outcome import Outcome

def pytest_export_run(item, case, mode, options):
    settings = options.pop("hypothesis_settings")
    options.pop("session", None)  # the engine session every engine call shares (an object: pytest_export.cache_dir)
    options["max_examples"] = settings.max_examples
    options["deadline"] = repr(settings.deadline)
    with open("options.jsonl", "a") as f:
        f.write(json.dumps({"test": item.nodeid, **options}, default=list) + "\\n")
    return Outcome(case_id=options["case_id"], mode=mode)
'''

TEST = """
    import pytest
    from exportcore import Case

    @pytest.mark.exportable
    def test_all_modes():
        return Case(model=lambda x: x, args=(1,))

    @pytest.mark.exportable(modes=["strict", "non_strict"], checks=["numerics", "reject", "accept"], examples=5)
    def test_own_settings():
        return Case(model=lambda x: x, args=(1,))
"""


def spied(pytester: pytest.Pytester) -> dict[str, dict]:
    lines = (pytester.path / "options.jsonl").read_text().splitlines()
    return {d.pop("test"): d for d in map(json.loads, lines)}


@pytest.fixture
def spy(project):
    project.makeconftest(SPY)
    project.makepyfile(test_m=TEST)
    return project


def test_export_modes_option_and_ini_select_modes(spy):
    result = spy.runpytest("--export-modes=non_strict,training", "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "test_m.py::test_all_modes[[]non_strict[]]",
        "test_m.py::test_all_modes[[]training[]]",
        "test_m.py::test_own_settings[[]non_strict[]]",
        "*3 tests collected*",
    ])
    spy.makeini("[pytest]\nexport_modes = strict\n")
    result = spy.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["test_m.py::test_all_modes[[]strict[]]", "test_m.py::test_own_settings[[]strict[]]",
                                 "*2 tests collected*"])
    # The command line wins over the ini file.
    result = spy.runpytest("--export-modes=training", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["test_m.py::test_all_modes[[]training[]]", "*1/2 tests collected (1 deselected)*"])


def test_defaults_reach_the_engine_untouched(spy):
    spy.runpytest("--export-modes=strict").assert_outcomes(passed=2)
    opts = spied(spy)
    assert opts["test_m.py::test_all_modes[strict]"] == {
        "case_id": "test_m.py::test_all_modes", "findings_as_errors": False, "examples": 2,  # ini of `project`
        "max_examples": opts["test_m.py::test_all_modes[strict]"]["max_examples"],
        "deadline": opts["test_m.py::test_all_modes[strict]"]["deadline"],
    }
    own = opts["test_m.py::test_own_settings[strict]"]
    assert own["checks"] == ["numerics", "reject", "accept"]
    assert own["examples"] == 5  # the marker wins over the run default


def test_command_line_options_reach_the_engine(spy):
    spy.runpytest(
        "--export-modes=strict", "--export-checks=numerics,accept,serialize", "--export-examples=3",
        "--export-timeout=30", "--export-findings=error",
    ).assert_outcomes(passed=2)
    opts = spied(spy)
    every = opts["test_m.py::test_all_modes[strict]"]
    assert every["checks"] == ["numerics", "accept", "serialize"]
    assert (every["examples"], every["timeout"], every["findings_as_errors"]) == (3, 30.0, True)
    # --export-checks narrows a marker's own checks; the marker's order is kept.
    assert opts["test_m.py::test_own_settings[strict]"]["checks"] == ["numerics", "accept"]


def test_ini_options_reach_the_engine(spy):
    spy.makeini(
        "[pytest]\nexport_modes = strict\nexport_checks = numerics\nexport_examples = 4\n"
        "export_timeout = 12.5\nexport_findings = error\n"
    )
    spy.runpytest().assert_outcomes(passed=2)
    every = spied(spy)["test_m.py::test_all_modes[strict]"]
    assert (every["checks"], every["examples"], every["timeout"], every["findings_as_errors"]) == (
        ["numerics"], 4, 12.5, True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--export-checks=numerics,speed"], "*--export-checks: unknown check 'speed'*"),
        (["--export-examples=many"], "*--export-examples must be an integer, got 'many'*"),
        (["--export-timeout=0"], "*--export-timeout must be positive*"),
    ],
)
def test_bad_option_values_are_usage_errors(spy, args, message):
    result = spy.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_hypothesis_profile_and_seed_are_honoured(spy):
    # A subprocess: --hypothesis-profile/-seed set hypothesis' process-wide state.
    spy.makeconftest(SPY + '''
from hypothesis import settings
settings.register_profile("tiny", max_examples=7)
''')
    spy.runpytest_subprocess(
        "--export-modes=strict", "--hypothesis-profile=tiny", "--hypothesis-seed=1234", "-p", "no:cacheprovider",
    ).assert_outcomes(passed=2)
    every = spied(spy)["test_m.py::test_all_modes[strict]"]
    assert (every["max_examples"], every["seed"]) == (7, 1234)


def test_hanging_case_times_out_and_the_session_goes_on(project, canned, records):
    canned({})  # test_canned_fine: a canned pass, so a loaded machine cannot make it time out too
    project.makepyfile(test_m="""
        import time
        import pytest
        import torch
        from models import lin_case

        class Hangs(torch.nn.Module):
            def forward(self, x):
                while True:
                    time.sleep(0.01)

        @pytest.mark.exportable(modes=["non_strict"])
        def test_canned_fine():
            return lin_case()

        @pytest.mark.exportable(modes=["non_strict"])
        def test_hangs():
            return Hangs(), (torch.ones(2),)
    """)
    result = project.runpytest("--export-timeout=2")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["export timed out in non_strict: stage eager, category timeout"])
    by_test = {r["test"]: r for r in records()["records"]}
    assert by_test["test_m.py::test_hangs[non_strict]"]["verdict"] == "timeout"
    assert by_test["test_m.py::test_hangs[non_strict]"]["outcome"]["failure"]["stage"] == "eager"
    assert by_test["test_m.py::test_canned_fine[non_strict]"]["verdict"] == "passed"


def test_pytest_timeout_limit_gives_the_export_its_share(spy):
    pytest.importorskip("pytest_timeout")
    spy.makepyfile(test_t="""
        import pytest
        from exportcore import Case

        @pytest.mark.timeout(10)
        @pytest.mark.exportable(modes=["strict"])
        def test_marked():
            return Case(model=lambda x: x, args=(1,))
    """)
    spy.runpytest("--timeout=100", "--export-modes=strict").assert_outcomes(passed=3)
    opts = spied(spy)
    # 90%: the export stops first and records the stage it hung in.
    assert opts["test_t.py::test_marked[strict]"]["timeout"] == pytest.approx(9.0)
    assert opts["test_m.py::test_all_modes[strict]"]["timeout"] == pytest.approx(90.0)
    spy.runpytest("--timeout=100", "--export-timeout=5", "--export-modes=strict").assert_outcomes(passed=3)
    assert spied(spy)["test_m.py::test_all_modes[strict]"]["timeout"] == 5.0


def test_report_header_shows_changed_settings(spy):
    spy.makeini("[pytest]\n")
    assert "export:" not in spy.runpytest("--collect-only").stdout.str()
    result = spy.runpytest("--collect-only", "--export-modes=strict", "--export-timeout=20")
    result.stdout.fnmatch_lines(
        ["export: modes strict; checks default; examples default; timeout 20s; findings warning"]
    )


PROFILES = '''
from hypothesis import settings
settings.register_profile("three", max_examples=3)
settings.register_profile("many", max_examples=200)
'''

COUNTED = """
    import pytest
    import torch
    from torch.export import Dim

    from models import Lin

    B = Dim("b", min=2, max=64)

    @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: B}}, checks=["numerics"], examples=EXAMPLES)
    def test_own_count():
        return Lin(), (torch.randn(4, 4),)

    @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: B}}, checks=["numerics"])
    def test_profile_count():
        return Lin(), (torch.randn(4, 4),)
"""


@pytest.mark.parametrize(("profile", "marker", "own", "profile_count"), [("three", 8, (4, 8), (1, 3)),
                                                                         ("many", 3, (1, 3), (4, 200))])
def test_marker_examples_beat_the_hypothesis_profile(project, records, profile, marker, own, profile_count):
    # A subprocess: --hypothesis-profile sets hypothesis' process-wide settings.
    project.makeini("[pytest]\n")  # no export_examples: the profile is the run's default
    project.makeconftest(project.path.joinpath("conftest.py").read_text() + PROFILES)
    project.makepyfile(test_m=COUNTED.replace("EXAMPLES", str(marker)))
    project.runpytest_subprocess(f"--hypothesis-profile={profile}", "-p", "no:cacheprovider").assert_outcomes(passed=2)
    tried = {r["test"].split("::")[1]: r["outcome"]["examples"]["tried"] for r in records()["records"]}
    # distinct shapes only are counted, so a run may count fewer than it drew
    assert own[0] <= tried["test_own_count[non_strict]"] <= own[1], tried
    assert profile_count[0] <= tried["test_profile_count[non_strict]"] <= profile_count[1], tried


def test_ini_options_use_pytests_typed_kinds(spy):
    # linelist: one per line, a line may still hold a comma list; int/float: pytest converts
    spy.makeini("[pytest]\nexport_modes =\n    strict\n    non_strict\nexport_checks = numerics, accept\n"
                "export_examples = 3\nexport_timeout = 20.5\n")
    result = spy.runpytest("--collect-only")
    result.stdout.fnmatch_lines(
        ["export: modes strict, non_strict; checks numerics, accept; examples 3; timeout 20.5s; findings warning"])
    spy.makeini("[pytest]\nexport_examples = three\n")
    result = spy.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini export_examples: invalid literal for int() with base 10: 'three'" in result.stderr.str()
