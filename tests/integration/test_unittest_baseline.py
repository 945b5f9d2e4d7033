"""ExportableMixin.assertExportable honours the baseline as marker tests do, and reads as a unittest's own.

Known failures are XFAIL with the baseline's reason and their records ``xfailed``; one
``--export-baseline-update`` run adopts a unittest suite's failures (exit 0), and the rerun exits 0 with
the gate's 0 regressions. A verified fix says where a unittest takes it (assertExportable, not the
marker, which a TestCase method refuses), and plain ``python -m unittest`` prints no torch graph dumps.
"""

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


class Reshape4(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 2)

    def forward(self, x):
        return self.lin(x.reshape(4, -1))  # fixes the batch to 4: a verified fix declares it static


class ModelTests(ExportableMixin, unittest.TestCase):
    def test_mlp(self):
        self.assertExportable({mlp}(), (torch.randn(4, 4),), modes=["strict", "non_strict"], examples=1)

    def test_branch(self):
        self.assertExportable(DataDependent(), (torch.ones(2, 3),), modes={branch_modes}, examples=1)
"""

FIX = """
class FixTests(ModelTests):
    test_mlp = test_branch = None  # type: ignore[assignment]

    def test_reshape(self):
        self.assertExportable(Reshape4(), (torch.randn(4, 8, 4),), dynamic_shapes={"x": {0: Dim("batch", max=64)}},
                              modes=["non_strict"], examples=1)
"""


def suite(mlp: str = "Mlp", branch_modes: str = '["strict", "non_strict"]') -> str:
    return SUITE.format(mlp=mlp, branch_modes=branch_modes)


def run(pytester, *args: str):
    return pytester.runpytest("-p", "no:cacheprovider", "-rx", *args)


def test_assert_exportable_known_failures_and_the_update_run_as_marker_tests(pytester) -> None:
    pytester.makepyfile(test_suite=suite())
    update = run(pytester, "--export-baseline=b.json", "--export-baseline-update", "--export-report=u.json")
    assert update.ret == 0, update.stdout.str()
    update.assert_outcomes(passed=1, xfailed=1)
    verdicts = sorted((r["mode"], r["verdict"]) for r in json.loads((pytester.path / "u.json").read_text())["records"]
                      if r["case"].endswith("test_branch"))
    assert verdicts == [("non_strict", "xfailed"), ("strict", "xfailed")]
    entries = json.loads((pytester.path / "b.json").read_text())["entries"]
    assert sorted((e["case"].split("::")[-1], e["mode"], e["verdict"], e.get("stage")) for e in entries) == [
        ("test_branch", "non_strict", "failed", "capture"), ("test_branch", "strict", "failed", "capture"),
        ("test_mlp", "non_strict", "passed", None), ("test_mlp", "strict", "passed", None)]

    rerun = run(pytester, "--export-baseline=b.json", "--export-report=r.json")
    assert rerun.ret == 0, rerun.stdout.str()
    rerun.assert_outcomes(passed=1, xfailed=1)
    rerun.stdout.fnmatch_lines([
        "*export gate passed vs b.json: 0 regressions, 0 improvements*",
        "XFAIL test_suite.py::ModelTests::test_branch - strict: known failure in baseline b.json: failed [[]capture[]] "
        "data-dependent; non_strict: known failure in baseline b.json: failed [[]capture[]] data-dependent",
    ])
    report = json.loads((pytester.path / "r.json").read_text())
    assert not report["gate"]["failed"] and not report["gate"]["regressions"]

    pytester.makepyfile(test_suite=suite(mlp="DataDependent"))  # test_mlp regresses
    regressed = run(pytester, "--export-baseline=b.json")
    assert regressed.ret == 1
    regressed.assert_outcomes(failed=1, xfailed=1)
    regressed.stdout.fnmatch_lines(["*export gate FAILED vs b.json: 2 regressions*"])

    # One test, a known failure in two modes and a new one in a third: it fails on the new one, naming the known.
    pytester.makepyfile(test_suite=suite(branch_modes='["strict", "non_strict", "training"]'))
    mixed = run(pytester, "--export-baseline=b.json", "--export-report=m.json", "-k", "branch")
    assert mixed.ret == 1
    mixed.assert_outcomes(failed=1, deselected=1)
    mixed.stdout.fnmatch_lines(["*export failed in training: stage capture*",
                                "*also failing, as known: strict: known failure in baseline b.json: failed*",
                                "*also failing, as known: non_strict: known failure in baseline b.json: failed*"])
    records = json.loads((pytester.path / "m.json").read_text())["records"]
    assert sorted((r["mode"], r["verdict"]) for r in records) == [
        ("non_strict", "xfailed"), ("strict", "xfailed"), ("training", "failed")]


def test_a_verified_fix_names_assert_exportable_not_the_marker(pytester) -> None:
    pytester.makepyfile(test_suite=suite() + FIX)
    result = run(pytester, "-k", "reshape")
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(["*fix: verified*", "*  paste into self.assertExportable(...):",
                                 "*    dynamic_shapes={'x': {0: 4}}"])
    assert "paste into @pytest.mark.exportable" not in result.stdout.str()


def test_plain_unittest_prints_no_torch_graph_dump(pytester) -> None:
    path = pytester.makepyfile(test_suite=suite() + FIX)
    proc = subprocess.run([sys.executable, "-m", "unittest", f"{path.stem}.FixTests.test_reshape",
                           f"{path.stem}.ModelTests.test_branch"], cwd=pytester.path, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr
    assert "FAILED (failures=2)" in proc.stderr
    assert "export failed in strict: stage capture, category data-dependent" in proc.stderr
    assert "paste into self.assertExportable(...):" in proc.stderr
    # torch's own output: a failed export's partial graph (printed) and its symbolic-shapes warnings (logged)
    assert "def forward(self, arg0_1" not in proc.stderr and "symbolic_shapes.py" not in proc.stderr, proc.stderr
    assert proc.stdout == ""
