"""junitxml: every exportable test carries export_mode/status/stage/category/findings, valid in each junit family."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery


def test_junit_properties(project, canned):
    canned({"test_canned_fails": ("failed", "torch.dynamic-shape")})
    project.makepyfile(test_m="""
        import pytest
        from exportcore import Case

        @pytest.mark.exportable(modes=["strict", "training"])
        def test_canned_passes():
            return Case(model=lambda x: x, args=(1,))

        @pytest.mark.exportable(modes=["non_strict"], expect={"non_strict": "dynamic dim"})
        def test_canned_fails():
            return Case(model=lambda x: x, args=(1,))
    """)
    project.runpytest("--junitxml=out.xml", "-o", "junit_family=xunit1").assert_outcomes(passed=2, xfailed=1)
    root = ET.parse(project.path / "out.xml").getroot()
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in root.iter("testcase")
    }
    assert props == {
        "test_canned_passes[strict]": {"export_mode": "strict", "export_status": "passed",
                                       "export_stage": "", "export_category": "", "export_findings": ""},
        "test_canned_passes[training]": {"export_mode": "training", "export_status": "passed",
                                         "export_stage": "", "export_category": "", "export_findings": ""},
        "test_canned_fails[non_strict]": {"export_mode": "non_strict", "export_status": "xfailed",
                                          "export_stage": "capture", "export_category": "torch.dynamic-shape",
                                          "export_findings": ""},
    }


def test_junit_properties_follow_pytests_xfail_and_warnings_as_errors(project):
    project.makepyfile(test_m="""
        import pytest
        import torch
        from torch.export import Dim
        from models import DataDependent, lin_case

        @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}})
        def test_finding():
            return lin_case()

        @pytest.mark.xfail(reason="branchy")
        @pytest.mark.exportable(modes=["non_strict"])
        def test_xfail_fails():
            return DataDependent(), (torch.ones(3),)
    """)
    project.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml", "-o", "junit_family=xunit1",
                      "-W", "error::pytest_export.runner.ExportFindingWarning").assert_outcomes(failed=1, xfailed=1)
    root = ET.parse(project.path / "out.xml").getroot()
    props = {
        case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")]
        for case in root.iter("testcase")
    }
    assert props == {
        "test_finding[non_strict]": [("export_mode", "non_strict"), ("export_status", "failed"),
                                     ("export_stage", "guards"), ("export_category", "guards"),
                                     ("export_findings", "size01_accepted")],
        "test_xfail_fails[non_strict]": [("export_mode", "non_strict"), ("export_status", "xfailed"),
                                         ("export_stage", "capture"), ("export_category", "data-dependent"),
                                         ("export_findings", "")],
    }


XUNIT2_TESTS = """
    import pytest
    import torch
    from torch.export import Dim
    from models import DataDependent, lin_case

    @pytest.mark.exportable(modes=["strict", "non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}})
    def test_finding():
        return lin_case()

    @pytest.mark.exportable(modes=["non_strict"])
    def test_branchy():
        return DataDependent(), (torch.ones(3),)
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_xunit2_keeps_testcases_free_of_properties_and_puts_them_on_the_suite(project, workers):
    # pytest's default family: a <testcase> may not hold <properties> (the xunit2 schema), so the
    # facts go to the <testsuite>, named by the test; pytest does not warn, findings are there.
    project.makepyfile(test_m=XUNIT2_TESTS)
    result = project.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml",
                                          "-o", "junit_family=xunit2", *workers)
    result.assert_outcomes(passed=2, failed=1)
    assert "incompatible with junit_family" not in result.stdout.str()
    suite = ET.parse(project.path / "out.xml").getroot().find("testsuite")
    assert all(case.find("properties") is None for case in suite.iter("testcase"))
    props = {p.get("name"): p.get("value") for p in suite.find("properties").iter("property")}
    assert props["test_m.py::test_finding[strict] export_findings"] == "size01_accepted"
    assert props["test_m.py::test_finding[non_strict] export_status"] == "passed"
    assert props["test_m.py::test_branchy[non_strict] export_status"] == "failed"
    assert props["test_m.py::test_branchy[non_strict] export_category"] == "data-dependent"
    assert len(props) == 3 * 5


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_an_export_that_could_not_be_checked_is_an_error_not_a_failure(project, workers):
    # pytest's meaning: FAILED is a check that found a problem, ERROR a test that could not run its
    # check. The engine finds a bad case in the call phase, where junitxml would write <failure>.
    project.makepyfile(test_m="""
        import pytest
        import torch
        from torch.export import Dim
        from models import DataDependent, lin_case

        @pytest.mark.exportable(modes=["non_strict"])
        def test_returns_nothing():
            pass

        @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"y": {0: Dim("b")}})
        def test_wrong_shapes_name():
            return lin_case()

        @pytest.mark.exportable(modes=["non_strict"])
        def test_branchy():
            return DataDependent(), (torch.ones(3),)

        @pytest.mark.exportable(modes=["non_strict"])
        def test_good():
            return lin_case()
    """)
    result = project.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml", *workers)
    result.assert_outcomes(passed=1, failed=1, errors=2)
    assert result.ret == 1
    out = result.stdout.str()
    assert "ERROR test_m.py::test_returns_nothing[non_strict]" in out
    assert "ERROR test_m.py::test_wrong_shapes_name[non_strict]" in out
    assert "FAILED test_m.py::test_branchy[non_strict]" in out
    suite = ET.parse(project.path / "out.xml").getroot().find("testsuite")
    tags = {case.get("name"): [child.tag for child in case if child.tag in ("error", "failure")]
            for case in suite.iter("testcase")}
    assert tags == {"test_returns_nothing[non_strict]": ["error"], "test_wrong_shapes_name[non_strict]": ["error"],
                    "test_branchy[non_strict]": ["failure"], "test_good[non_strict]": []}
    assert (suite.get("errors"), suite.get("failures"), suite.get("tests")) == ("2", "1", "4")
    message = next(c for c in suite.iter("testcase") if c.get("name") == "test_returns_nothing[non_strict]")[0]
    assert "did you forget `return`?" in message.get("message")
