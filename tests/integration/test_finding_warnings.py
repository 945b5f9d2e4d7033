"""Warnings filters (issue 20 point 10): the user's filters reach the plugin's findings, not torch's internals.

Real exports: nn.LSTM's non-strict export warns inside torch ("tensor attributes ... were assigned
during export") although it exports; under ``filterwarnings = error`` that warning must not become
a capture failure. Each finding kind has its own class, so one can be ignored and the others kept.
"""

from __future__ import annotations

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


LSTM = """
    import pytest
    import torch

    class Recurrent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(3, 4, batch_first=True)

        def forward(self, x):
            return self.lstm(x)[0]

    @pytest.mark.exportable(modes=["non_strict"])
    def test_lstm():
        torch.manual_seed(0)
        return Recurrent(), (torch.randn(2, 5, 3),)
"""

FINDINGS = """
    import pytest
    import torch
    from torch.export import Dim

    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    @pytest.mark.exportable(modes=["strict", "non_strict"], dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}})
    def test_double():
        return Double(), (torch.randn(4, 3),)
"""


@pytest.mark.parametrize("how", ["-W", "ini"])
def test_error_filter_does_not_turn_torch_internal_warnings_into_failures(project: pytest.Pytester, how: str) -> None:
    project.makepyfile(test_m=LSTM)
    args = ["-p", "no:cacheprovider", "-p", "no:benchmark"]
    if how == "-W":
        args += ["-W", "error"]
    else:
        project.makeini("[pytest]\nfilterwarnings = error\n")
    result = project.runpytest(*args)
    result.assert_outcomes(passed=1)


def test_each_finding_kind_has_its_own_warning_class(project: pytest.Pytester) -> None:
    project.makepyfile(test_m=FINDINGS)
    project.makeini("[pytest]\nexport_examples = 2\nfilterwarnings =\n    error\n"
                    "    ignore::pytest_export.Size01AcceptedWarning\n")
    result = project.runpytest("-p", "no:cacheprovider", "-p", "no:benchmark")
    # size01_accepted is ignored; dtype_accepted still fails under `error`
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "DtypeAcceptedWarning: dtype_accepted" in out
    assert "ignore::pytest_export.DtypeAcceptedWarning" in out  # the hint names the one class to ignore
    assert "Size01AcceptedWarning" not in out

    project.makeini("[pytest]\nexport_examples = 2\nfilterwarnings =\n    error\n"
                    "    ignore::pytest_export.Size01AcceptedWarning\n"
                    "    ignore::pytest_export.DtypeAcceptedWarning\n")
    project.runpytest("-p", "no:cacheprovider", "-p", "no:benchmark").assert_outcomes(passed=2)


def test_one_finding_of_two_modes_is_one_warning_in_the_summary(project: pytest.Pytester) -> None:
    project.makepyfile(test_m=FINDINGS)
    project.makeini("[pytest]\nexport_examples = 2\nfilterwarnings = ignore::pytest_export.DtypeAcceptedWarning\n")
    result = project.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2, warnings=2)
    summary = result.stdout.str().split("warnings summary")[1]
    # pytest groups identical messages: both items listed above one message
    assert summary.count("Size01AcceptedWarning: size01_accepted (args[0])") == 1
    assert "test_m.py::test_double[strict]" in summary and "test_m.py::test_double[non_strict]" in summary


def test_without_v_the_summary_shows_the_first_finding_of_each_kind(project: pytest.Pytester) -> None:
    project.makepyfile(test_m=FINDINGS)
    project.makeini("[pytest]\nexport_examples = 2\n")
    result = project.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    out = result.stdout.str()
    summary = out.split("warnings summary")[1].split("export matrix")[0]
    assert summary.count("Size01AcceptedWarning: size01_accepted") == 1
    assert summary.count("DtypeAcceptedWarning: dtype_accepted") == 1
    assert "test_m.py::test_double[strict]" in summary and "test_m.py::test_double[non_strict]" not in summary
    # the matrix still counts every one
    result.stdout.fnmatch_lines(["findings: *size01_accepted 2*(the first of each kind in the warnings summary*"])


def test_warning_classes_import_without_torch() -> None:
    import subprocess
    import sys

    code = ("import sys, pytest_export; pytest_export.Size01AcceptedWarning; "
            "assert issubclass(pytest_export.Size01AcceptedWarning, pytest_export.ExportFindingWarning); "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
