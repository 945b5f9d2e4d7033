"""Numerics movement between two runs that both pass: the baseline gate and ``diff`` report it, bucketed.

Real sessions, real exports. ``test_drift``'s exported program adds ``delta`` while torch exports it
(eager does not), so its error is exactly ``delta / atol`` of the budget (rtol 0, eager output 2.0): 0.1
in the first run, 0.3 in the second, both passing (a 3x growth, bucket ≥2x). ``test_known`` fails on
numerics in the first run (recorded as a known failure) and passes in the second.
"""

from __future__ import annotations

import json

import pytest

from pytest_export.__main__ import main

MODELS = '''
import pytest
import torch


def exporting():
    # torch.compiler.is_exporting is 2.7+; on 2.6 is_compiling is true while export traces
    return getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)()


class Planted(torch.nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.delta = delta

    def forward(self, x):
        y = x * 2.0
        if exporting():
            y = y + self.delta
        return y


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=0, rtol=0.0, atol=1e-4)
def test_drift():
    return Planted({drift}), (torch.ones(2, 3),)


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=0, rtol=0.0, atol=1e-4)
def test_known():
    return Planted({known}), (torch.ones(2, 3),)
'''


def _session(pytester: pytest.Pytester, drift: float, known: float, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_models=MODELS.format(drift=drift, known=known))
    return pytester.runpytest("-p", "no:cacheprovider", "--export-baseline=base.json", *args)


def test_growth_both_runs_passing_is_flagged_by_the_gate_and_diff(pytester, capsys):
    # One project, four real sessions: the baseline, the second run, and it under the option at two buckets.
    pytester.makeini("[pytest]\nexport_examples = 0\n")
    first = _session(pytester, 1e-5, 1e-3, "--export-baseline-update", "--export-report=old.json")
    _check_baseline(first, pytester)
    second = _session(pytester, 3e-5, 1e-5, "--export-report=new.json", "--export-report=new.md",
                      "--export-report=new.html")
    _check_gate_warns(second)
    _check_gate_fails(_session(pytester, 3e-5, 1e-5, "--export-baseline-numerics-growth=2",
                               "--export-report=failing.json"))
    gate = json.loads((pytester.path / "failing.json").read_text())["gate"]
    assert (gate["failed"], gate["growth_threshold"], gate["regressions"]) == (True, 2.0, [])
    grown = [(m["case"].split("::")[-1], m["program"], m["grew"], m["bucket"]) for m in gate["numerics"] if m["grew"]]
    assert grown == [("test_drift", "exported", True, 2.0)]  # why it failed, in the report
    # 3x growth does not reach the 10x bucket
    assert _session(pytester, 3e-5, 1e-5, "--export-baseline-numerics-growth=10").ret == pytest.ExitCode.OK
    _check_reports(pytester)
    _check_diff(pytester, capsys)


def _check_baseline(first, pytester):
    first.assert_outcomes(passed=1, xfailed=1)
    entries = {e["case"].split("::")[-1]: e for e in json.loads((pytester.path / "base.json").read_text())["entries"]}
    assert entries["test_drift"]["numerics"]["exported"] == pytest.approx(0.1, rel=1e-2)
    assert entries["test_known"]["category"] == "numerics"
    assert entries["test_known"]["numerics"]["exported"] == pytest.approx(10.0, rel=1e-2)


def _check_gate_warns(second):
    second.assert_outcomes(passed=2)
    assert second.ret == pytest.ExitCode.OK
    second.stdout.fnmatch_lines([
        "export gate passed vs base.json: 0 regressions, 1 improvement, * numerics grown",
        "  improvement test_models.py::test_known [[]non_strict[]]: failed -> passed: known numerics failure now "
        "passes: worst 0.1× of tolerance (*output*",
        "  warning: numerics grew for * (case, mode, program) against the baseline's worst error:",
        "  numerics test_models.py::test_drift [[]non_strict[]] exported: worst 0.1× -> 0.3× of tolerance "
        "(grew 3.0×, ≥2×)*",
    ])
    assert "test_known [non_strict] exported" not in second.stdout.str()  # it shrank: no warning


def _check_gate_fails(failing):
    failing.assert_outcomes(passed=2)
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    failing.stdout.fnmatch_lines([
        "export gate FAILED vs base.json:*numerics grown",
        "  NUMERICS GREW for * (--export-baseline-numerics-growth=2 fails ≥2×):",
        "  NUMERICS test_models.py::test_drift [[]non_strict[]] exported: worst 0.1× -> 0.3×*",
    ])


def _check_reports(pytester):
    md = (pytester.path / "new.md").read_text()
    assert "✅ passed · 0.3× tol" in md
    assert "known numerics failure now passes: worst 0.1× of tolerance" in md
    html = (pytester.path / "new.html").read_text()
    assert "worst 0.3× of tolerance (exported, output" in html


def _check_diff(pytester, capsys):
    path = pytester.path
    old, new = str(path / "old.json"), str(path / "new.json")
    assert main(["diff", old, new, "-o", str(path / "d.md"), "-o", str(path / "d.html")]) == 0
    out = capsys.readouterr().out
    assert "warning: numerics grew for " in out
    assert "test_drift [non_strict] exported: worst 0.1× -> 0.3× of tolerance (grew 3.0×, ≥2×)" in out
    assert "test_known [non_strict] exported: worst 10× -> 0.1× of tolerance (shrank" in out
    assert "numerics failure now passes: worst 0.1× of tolerance" in out  # its fix says how close it is
    assert "Numerics movement" in (path / "d.md").read_text()
    assert "grew ≥2× (3.0×)" in (path / "d.html").read_text()
    assert main(["diff", old, new, "--fail-on-numerics-growth=2"]) == 1
    assert "result: NUMERICS GREW" in capsys.readouterr().out
    assert main(["diff", old, new, "--fail-on-numerics-growth=10"]) == 0


@pytest.mark.parametrize("option", ["--export-baseline-numerics-growth=2", "--export-baseline-strict"])
def test_a_gate_option_without_a_baseline_is_a_usage_error_not_ignored(pytester, option):
    # Without a baseline there is no gate: the option would silently do nothing, and a CI job that
    # dropped its --export-baseline by mistake would go on believing growth fails it.
    pytester.makepyfile(test_m="def test_nothing():\n    pass\n")
    result = pytester.runpytest(option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {option.split('=')[0]} needs --export-baseline=PATH (or ini export_baseline)"])
