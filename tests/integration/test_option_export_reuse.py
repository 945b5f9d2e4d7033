"""Sharing runs between modes, end to end: the report says which mode reused which, --export-no-reuse stops it."""

from __future__ import annotations

import json

import pytest

TESTS = '''
import pytest
import torch
from torch import nn
from torch.export import Dim


@pytest.mark.exportable(modes=["strict", "non_strict", "training"], dynamic_shapes={"input": {0: Dim("b", min=2, max=16)}})
def test_seeded():
    torch.manual_seed(0)  # the same weights in every mode: strict and non-strict capture one program
    return nn.Sequential(nn.Linear(8, 4), nn.ReLU()), (torch.randn(4, 8, generator=torch.Generator().manual_seed(1)),)


@pytest.mark.exportable(modes=["strict", "non_strict"])
def test_unseeded(export_mode):
    torch.manual_seed(len(export_mode))  # other weights in each mode: nothing to share
    return nn.Linear(8, 4), (torch.randn(4, 8),)
'''


@pytest.mark.parametrize("flag", [None, "--export-no-reuse"])
def test_the_report_names_the_mode_a_result_was_reused_from(pytester: pytest.Pytester, flag):
    pytester.makepyfile(test_m=TESTS)
    args = ["-p", "no:cacheprovider", "--export-report=r.json"] + ([flag] if flag else [])
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=5)
    records = json.loads((pytester.path / "r.json").read_text())["records"]
    reused = {(r["case"].split("::")[1], r["mode"]): r["outcome"]["reused_from"] for r in records}
    expected = None if flag else "strict"
    assert reused == {("test_seeded", "strict"): None, ("test_seeded", "non_strict"): expected,
                      ("test_seeded", "training"): None,
                      ("test_unseeded", "strict"): None, ("test_unseeded", "non_strict"): None}
    timings = {(r["case"].split("::")[1], r["mode"]): r["outcome"]["timings"] for r in records}
    assert ("run" in timings[("test_seeded", "non_strict")]) == (flag is not None)
    # training may not take strict's walk, but it captured strict's program: it takes strict's
    # decomposed program and save/load answer (not with --export-no-reuse), then runs its own checks
    notes = {(r["case"].split("::")[1], r["mode"]): r["outcome"]["notes"] for r in records}
    shared = [n.split(":")[0] for n in notes[("test_seeded", "training")] if "this capture is the program strict" in n]
    assert shared == ([] if flag else ["decompose", "save/load"])
    assert "run" in timings[("test_seeded", "training")]
    assert not [n for key, ns in notes.items() if key[1] != "training" for n in ns if "this capture is the program" in n]
