"""pytest_export.unittest.ExportableMixin: unittest.TestCase suites record into the session's reports and gate."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

SUITE = """
import unittest

import torch
from torch.export import Dim

import exportcore
from pytest_export.unittest import ExportableMixin


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.lin(x))


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


class ModelTests(ExportableMixin, unittest.TestCase):
    def test_mlp(self):
        outcomes = self.assertExportable(Mlp(), (torch.randn(4, 4),),
                                         dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
        self.assertEqual([o.mode for o in outcomes], ["strict", "non_strict", "training"])

    def test_branch(self):
        self.assertExportable(DataDependent(), (torch.ones(2, 3),), modes=["non_strict"])

    def test_recorded(self):
        outcome = exportcore.check(Mlp(), (torch.randn(3, 4),), mode="strict", case_id="by_hand")
        self.recordExportOutcome(outcome)
        self.assertEqual(outcome.status, "passed")
"""


def test_mixin_records_one_record_per_mode(pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--export-report=r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    # The failure reads as a marker test's does: the plugin's summary, stage and category.
    result.stdout.fnmatch_lines(["*export failed in non_strict: stage capture, category *"])
    report = json.loads((pytester.path / "r.json").read_text())
    got = sorted((r["test"].split("::")[-1], r["case"], r["mode"], r["verdict"]) for r in report["records"])
    assert got == [
        ("test_branch", "test_suite.py::ModelTests::test_branch", "non_strict", "failed"),
        ("test_mlp", "test_suite.py::ModelTests::test_mlp", "non_strict", "passed"),
        ("test_mlp", "test_suite.py::ModelTests::test_mlp", "strict", "passed"),
        ("test_mlp", "test_suite.py::ModelTests::test_mlp", "training", "passed"),
        ("test_recorded", "by_hand", "strict", "passed"),
    ]


def test_mixin_follows_export_modes(pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-k", "mlp", "--export-modes=strict", "--export-report=r.json",
                                           "-p", "no:cacheprovider")
    # test_mlp asserts all three modes: narrowed to one, its own assertEqual fails, which is the point.
    result.assert_outcomes(failed=1, deselected=2)
    report = json.loads((pytester.path / "r.json").read_text())
    assert [(r["mode"], r["verdict"]) for r in report["records"]] == [("strict", "passed")]


def test_mixin_under_plain_unittest(pytester) -> None:
    path = pytester.makepyfile(test_suite=SUITE)
    proc = subprocess.run([sys.executable, "-m", "unittest", "-v", path.stem], cwd=pytester.path,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr
    assert "test_mlp (test_suite.ModelTests" in proc.stderr and "ok" in proc.stderr
    assert "export failed in non_strict: stage capture" in proc.stderr
    assert "FAILED (failures=1)" in proc.stderr


ALL_MODES = SUITE.replace('self.assertExportable(DataDependent(), (torch.ones(2, 3),), modes=["non_strict"])',
                          "self.assertExportable(DataDependent(), (torch.ones(2, 3),))")


def test_a_failure_shared_by_modes_is_shown_once_and_the_mixin_is_not_in_the_traceback(pytester) -> None:
    # the data-dependent branch fails the same way in every mode: one full report, then references
    assert ALL_MODES != SUITE
    pytester.makepyfile(test_suite=ALL_MODES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "branch")
    result.assert_outcomes(failed=1)
    # the failure report only: with CI set, pytest repeats the whole message in its short summary
    out = result.stdout.str().split("short test summary info")[0]
    # strict fails in dynamo's words, non_strict and training alike: two reports, one reference
    assert out.count("hint:") == 2, out
    assert "export failed in training: stage capture, category data-dependent" in out
    assert "same failure as non_strict: shown in full above" in out
    assert "pytest_export/unittest.py" not in out  # __tracebackhide__: the test's own line is the frame shown
    full = pytester.runpytest("-p", "no:cacheprovider", "-k", "branch", "-vv")
    assert "same failure as" not in full.stdout.str()


def test_under_plain_unittest_the_text_names_no_pytest_flag_it_cannot_take(pytester) -> None:
    path = pytester.makepyfile(test_suite=ALL_MODES)
    proc = subprocess.run([sys.executable, "-m", "unittest", f"{path.stem}.ModelTests.test_branch"],
                          cwd=pytester.path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr
    assert "use --tb=long or -vv" not in err and "run the test under pytest with --tb=long to show it" in err
    assert "pytest_export/unittest.py" not in err  # __unittest: unittest leaves the mixin's frames out
    assert err.count("hint:") == 2 and "same failure as non_strict" in err
