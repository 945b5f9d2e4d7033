"""A failing zoo row names the least restrictive spec that passes, verified (issue 55 item 1).

timm's test_resnet (160x160, total reduction 32) is declared with H/W in multiples of 32 from 64: torch
exports that, but its program's input check does not test divisibility (a non-multiple image runs), so the
row fails at guards, true for that spec; the same case re-checked with only the batch dynamic passes, and
the row's notes say so. One small model, one mode: a real session, real exports.
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
    assert outcome["failure"]["stage"] == "guards"  # ep.module() accepts a non-multiple of 32
    inferred, relaxed = outcome["notes"][:2]
    assert "H/W dynamic in multiples of the total reduction 32 from 64x64 to 160x160" in inferred
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
