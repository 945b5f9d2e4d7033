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
    result.stdout.fnmatch_lines(["*ExportFindingWarning: strict: specialized (args[[]0[]]): dim b was specialized to 4"])
