"""Failure output: the headline first, then the detail; torch's traceback only on request."""

from __future__ import annotations

import pytest

TEST = """
    import pytest
    from exportcore import Case

    @pytest.mark.exportable(modes=["strict"])
    def test_canned():
        return Case(model=lambda x: x, args=(1,))
"""


@pytest.fixture
def failing(project, canned):
    canned({"test_canned": ("failed", "python.control-flow")})
    project.makepyfile(test_m=TEST)
    return project


def test_headline_then_detail_without_torch_traceback(failing):
    result = failing.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*_ test_canned[[]strict[]] _*",
        "export failed in strict: stage capture, category python.control-flow",
        "  UserError: it broke",
        "  at model.py:12 in forward: if x.sum() > 0:",
        "  hint: try the rewrite",
        "  see ExportDB case: cond_branch_class_method",
        "",
        "detail:",
        "  it broke",
        "  Suggested fix: do not",
        "*torch's internal traceback hidden: use --tb=long or -vv to show it*",
    ])
    # The short summary line is the headline, not an exception class path.
    result.stdout.fnmatch_lines([
        "FAILED test_m.py::test_canned[[]strict[]] - strict failed: [[]capture[]] python.*"
    ])
    assert "TORCH-INTERNAL-FRAMES" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("flag", ["--tb=long", "-vv"])
def test_torch_traceback_on_request(failing, flag):
    result = failing.runpytest(flag)
    result.stdout.fnmatch_lines(["torch traceback:", "  TORCH-INTERNAL-FRAMES"])


def test_warning_findings_show_in_the_warnings_summary(project, canned):
    canned({})
    project.makeconftest(project.path.joinpath("conftest.py").read_text() + '''
from exportcore.outcome import Finding

def pytest_export_outcome(item, case, outcome):
    outcome.findings.append(Finding("specialized", "warning", "dim b was specialized to 4", input="args[0]"))
''')
    project.makepyfile(test_m=TEST)
    result = project.runpytest()
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*SpecializedWarning: specialized (args[[]0[]]): dim b was specialized to 4"])


SPECIALIZES = """
    import logging
    import pytest
    import torch
    from torch.export import Dim

    class Specializes(torch.nn.Module):
        def forward(self, x):
            if not torch.compiler.is_compiling():  # eager only: strict capture refuses logging calls
                logging.getLogger("torch.user_visible").warning("a torch record that reaches the root logger")
            if x.shape[0] == 4:
                return x + 1
            return x - 1

    @pytest.mark.exportable(modes=["strict"], dynamic_shapes={"x": {0: Dim("b", min=2, max=16)}})
    def test_spec():
        return Specializes(), (torch.ones(4, 3),)
"""

# Some setups let torch's records propagate to the root logger, where pytest captures them.
PROPAGATE = """
import logging
import torch  # its import configures torch's loggers; change them afterwards
logging.getLogger("torch").propagate = True
"""


def test_torch_logging_stays_out_of_a_failure_unless_asked_for(project):
    project.makeconftest((project.path / "conftest.py").read_text() + PROPAGATE)
    project.makepyfile(test_m=SPECIALIZES)
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["export failed in strict: stage constraints, category torch.dynamic-shape"])
    assert "Error while creating guard" not in out
    assert "a torch record that reaches the root logger" not in out
    assert "Captured log call" not in out and "Captured stderr call" not in out
    # Asked for: torch's own output is all there.
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--tb=long")
    result.assert_outcomes(failed=1)
    assert result.stdout.str().count("Error while creating guard") >= 1
    result.stdout.fnmatch_lines(["*Captured log call*", "*a torch record that reaches the root logger*"])


def test_failure_links_its_exportdb_case_once_the_docs_are_built(project):
    from exportdb.docs import render
    from exportdb.registry import get

    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import DataDependent

        @pytest.mark.exportable(modes=["non_strict"])
        def test_branchy():
            return DataDependent(), (torch.ones(3),)
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["  see ExportDB case: if_on_tensor_value"])  # no docs: no link
    render(project.path / "build" / "exportdb")
    page = f"{(project.path / 'build' / 'exportdb').resolve().as_uri()}/{get('if_on_tensor_value').category}.html"
    result = project.runpytest("-p", "no:cacheprovider", "--export-report=r.html")
    result.stdout.fnmatch_lines([f"  see ExportDB case: if_on_tensor_value ({page}#if_on_tensor_value)"])
    assert f'href="{page}#if_on_tensor_value"' in (project.path / "r.html").read_text()


def test_a_finding_warning_points_at_the_users_test_not_the_plugin(project):
    project.makepyfile(test_m="""
        import pytest
        from torch.export import Dim
        from models import lin_case


        @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}})
        def test_auto():
            return lin_case()
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*= warnings summary =*",
        "test_m.py::test_auto[[]non_strict[]]",
        # pytest places a test at its first decorator line.
        "  test_m.py:6: Size01AcceptedWarning: size01_accepted (args[[]0[]]): ep.module() accepted size *",
    ])
    warnings_section = result.stdout.str().split("warnings summary")[1]
    assert "pytest_export" not in warnings_section.split("-- Docs")[0]
