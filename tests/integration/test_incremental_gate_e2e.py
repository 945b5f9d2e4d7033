"""The incremental gate end to end: a warm session serves the unchanged pairs whole, and after an edit says
which pairs it checked again and what changed, in the terminal (-v per pair) and in the JSON report."""

from __future__ import annotations

import json

import pytest

# Cache machinery over real sessions: the same on any torch (.ci/run runs it on the newest only).
pytestmark = pytest.mark.machinery

HELPERS = """
def scaled(x):
    return x * 2{edit}
"""

SUITE = """
import pytest
import torch
from torch.export import Dim

from gate_helpers import scaled


class Scaled(torch.nn.Module):
    def forward(self, x):
        return scaled(x)


class Plain(torch.nn.Module):
    def forward(self, x):
        return x + 1


SPEC = {"x": {0: Dim("b", min=2, max=8)}}


@pytest.mark.exportable(modes=["strict", "non_strict"], examples=2, dynamic_shapes=SPEC)
def test_scaled():
    return Scaled(), (torch.randn(4, 3),)


@pytest.mark.exportable(modes=["non_strict"], examples=2, dynamic_shapes=SPEC)
def test_plain():
    return Plain(), (torch.randn(4, 3),)
"""


def _outcomes(pytester: pytest.Pytester, report: str) -> dict[str, dict]:
    records = json.loads((pytester.path / report).read_text())["records"]
    return {f"{r['outcome']['case_id'].rsplit('::', 1)[-1]}[{r['outcome']['mode']}]": r["outcome"] for r in records}


def test_a_warm_session_serves_unchanged_pairs_whole_and_names_what_changed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(gate_helpers=HELPERS.format(edit=""), test_gate=SUITE)
    cold = pytester.runpytest_subprocess("--export-report=cold.json")
    assert cold.ret == 0, cold.stdout.str()

    warm = pytester.runpytest_subprocess("--export-report=warm.json")
    assert warm.ret == 0, warm.stdout.str()
    outcomes = _outcomes(pytester, "warm.json")
    assert outcomes["test_scaled[non_strict]"]["reused_from"].startswith("cache: whole, non_strict, ")
    assert outcomes["test_plain[non_strict]"]["reused_from"].startswith("cache: whole, non_strict, ")
    strict = outcomes["test_scaled[strict]"]["reused_from"]
    assert strict.startswith("cache: ") and not strict.startswith("cache: whole")  # strict: after capture only
    warm.stdout.fnmatch_lines(["reused: 2 served whole from the result cache, 1 from the result cache, of 3 results*"])

    pytester.makepyfile(gate_helpers=HELPERS.format(edit=" + 0.5"))
    edited = pytester.runpytest_subprocess("--export-report=edited.json", "-v")
    assert edited.ret == 0, edited.stdout.str()
    outcomes = _outcomes(pytester, "edited.json")
    assert outcomes["test_plain[non_strict]"]["reused_from"].startswith("cache: whole, ")  # exactly its pairs
    scaled = outcomes["test_scaled[non_strict]"]
    # checked in full (its checks after capture maybe shared with strict's identical program), and passes:
    # eager and the program agree again
    assert not (scaled["reused_from"] or "").startswith("cache:") and scaled["status"] == "passed"
    assert scaled["rechecked_because"] == "code: gate_helpers:scaled"
    edited.stdout.fnmatch_lines([
        "reused: 1 served whole from the result cache*, of 3 results*; 1 re-checked in full, changed: "
        "code: gate_helpers:scaled",
        "  *test_scaled* [[]non_strict[]]: re-checked, changed: code: gate_helpers:scaled",
    ])
