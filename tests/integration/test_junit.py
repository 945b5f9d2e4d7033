"""junitxml: every exportable test carries export_mode/status/stage/category/findings, valid in each junit family."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest


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
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=out.xml",
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
