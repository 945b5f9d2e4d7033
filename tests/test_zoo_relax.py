"""A failing zoo row names the least restrictive spec that passes, verified (issue 55 item 1).

timm's test_resnet (160x160, total reduction 32) is declared with H/W 80..160: torch cannot prove its
strided stem's floored sizes over that range, so the row fails at constraints, true for that spec (checked
with bare torch.export); the same case re-checked with only the batch dynamic passes, and the row's notes
say so. One small model, one mode: a real session, real exports.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("timm")


def test_a_strided_timm_row_names_the_spec_that_passes(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--export-model=timm:test_resnet", "--export-modes=non_strict",
                                           "--export-examples=2", "--export-report=r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    (outcome,) = _outcomes(json.loads((pytester.path / "r.json").read_text()))
    assert outcome["failure"]["stage"] == "constraints"
    inferred, relaxed = outcome["notes"][:2]
    assert "H/W dynamic 80..160 x 80..160" in inferred
    assert relaxed.startswith("least restrictive spec that passes: exports with only the batch dynamic (verified")


def _outcomes(report: object) -> list[dict]:
    found: list[dict] = []
    if isinstance(report, dict):
        if "notes" in report and "status" in report and "failure" in report:
            return [report]
        for value in report.values():
            found += _outcomes(value)
    elif isinstance(report, list):
        for value in report:
            found += _outcomes(value)
    return found
