"""junitxml: every exportable test carries export_mode/status/stage/category properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET


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
    project.runpytest("--junitxml=out.xml").assert_outcomes(passed=2, xfailed=1)
    root = ET.parse(project.path / "out.xml").getroot()
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in root.iter("testcase")
    }
    assert props == {
        "test_canned_passes[strict]": {"export_mode": "strict", "export_status": "passed",
                                       "export_stage": "", "export_category": ""},
        "test_canned_passes[training]": {"export_mode": "training", "export_status": "passed",
                                         "export_stage": "", "export_category": ""},
        "test_canned_fails[non_strict]": {"export_mode": "non_strict", "export_status": "xfailed",
                                          "export_stage": "capture", "export_category": "torch.dynamic-shape"},
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
    project.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml",
                      "-W", "error::pytest_export.runner.ExportFindingWarning").assert_outcomes(failed=1, xfailed=1)
    root = ET.parse(project.path / "out.xml").getroot()
    props = {
        case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")]
        for case in root.iter("testcase")
    }
    assert props == {
        "test_finding[non_strict]": [("export_mode", "non_strict"), ("export_status", "failed"),
                                     ("export_stage", "guards"), ("export_category", "guards")],
        "test_xfail_fails[non_strict]": [("export_mode", "non_strict"), ("export_status", "xfailed"),
                                         ("export_stage", "capture"), ("export_category", "data-dependent")],
    }
