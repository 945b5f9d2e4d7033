"""A failing zoo row names the least restrictive spec that passes, verified (issue 55 item 1).

timm's test_resnet (160x160, total reduction 32) is declared with H/W 80..160: torch cannot prove its
strided stem's floored sizes over that range, so the row fails at constraints, true for that spec (checked
with bare torch.export); the same case re-checked with only the batch dynamic passes, and the row's notes
say so. A factory model that branches on a value fails static too, and its notes say the failure is not the
spec's. Two tiny models, one mode, one session: real exports.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("timm")


BRANCHY = """
import torch

class Branchy(torch.nn.Module):
    def forward(self, x):
        return x if x.sum() > 0 else -x  # data-dependent: no spec exports it

def make():
    return Branchy(), (torch.randn(2, 3),), None, ({0: torch.export.Dim("batch", min=2, max=8)},)
"""


def test_a_failing_zoo_row_names_the_spec_that_passes_or_says_none_does(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(branchy_models=BRANCHY)
    result = pytester.runpytest_subprocess("--export-model=timm:test_resnet", "--export-model=branchy_models:make",
                                           "--export-modes=non_strict", "--export-examples=2", "--export-report=r.json",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    outcomes = {o["case_id"]: o for o in _outcomes(json.loads((pytester.path / "r.json").read_text()))}
    branchy = outcomes["zoo/branchy_models/make"]
    assert branchy["failure"]["stage"] == "capture"  # and static fails the same way: the notes say so
    assert any(note.startswith("fails with fewer dynamic dims too (verified; with a static input size (no dynamic "
                               "dim): failed at capture)") for note in branchy["notes"])
    outcome = outcomes["zoo/timm/test_resnet"]
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
