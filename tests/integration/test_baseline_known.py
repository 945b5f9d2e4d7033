"""--export-baseline as the list of known outcomes: adopt on a suite with known failures in one update."""

from __future__ import annotations

import json

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

SUITE = """
import pytest
import torch


class Good(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Bad(torch.nn.Module):
    def forward(self, x):
        return x + 1 if x.sum() > 0 else x - 1


@pytest.mark.exportable(modes=["non_strict"])
def test_good():
    return {good}(), (torch.ones(2),)


@pytest.mark.exportable(modes=["non_strict"])
def test_bad():
    return {bad}(), (torch.ones(2),)
"""


def suite(good: str = "Good", bad: str = "Bad") -> str:
    return SUITE.format(good=good, bad=bad)


def run(pytester, *args: str):
    return pytester.runpytest("-p", "no:cacheprovider", "-rx", *args)


def test_one_update_adopts_known_failures_and_the_gate_alone_decides(pytester) -> None:
    pytester.makepyfile(test_m=suite())
    update = run(pytester, "--export-baseline=b.json", "--export-baseline-update")
    assert update.ret == 0
    first = (pytester.path / "b.json").read_bytes()
    assert run(pytester, "--export-baseline=b.json", "--export-baseline-update").ret == 0
    assert (pytester.path / "b.json").read_bytes() == first  # two updates of one run: the same bytes
    doc = json.loads(first)
    # a pass keeps how much of its tolerance each program used (the gate reports growth against it)
    good = doc["entries"][1]["numerics"]
    assert good and all(0 <= fraction < 1 for fraction in good.values()), good
    del doc["entries"][1]["numerics"]
    assert doc["format"] == "pytest-export-baseline" and doc["entries"] == [
        {"case": "test_m.py::test_bad", "category": "data-dependent", "mode": "non_strict", "stage": "capture",
         "test": "test_m.py::test_bad[non_strict]", "verdict": "failed"},
        {"case": "test_m.py::test_good", "mode": "non_strict", "test": "test_m.py::test_good[non_strict]",
         "verdict": "passed"},
    ]
    assert not any(word in first.decode() for word in ("duration", "started", "timings", str(pytester.path)))

    gated = run(pytester, "--export-baseline=b.json")
    assert gated.ret == 0
    gated.assert_outcomes(passed=1, xfailed=1)
    gated.stdout.fnmatch_lines([
        "*export gate passed vs b.json: 0 regressions, 0 improvements*",
        "XFAIL test_m.py::test_bad[[]non_strict[]] - non_strict: known failure in baseline b.json: "
        "failed [[]capture[]] data-dependent",
    ])

    pytester.makepyfile(test_m=suite(good="Bad"))  # the exportable model is not any more
    regressed = run(pytester, "--export-baseline=b.json")
    assert regressed.ret == 1
    regressed.stdout.fnmatch_lines(["*export gate FAILED vs b.json: 1 regression*",
                                    "*REGRESSION test_m.py::test_good [[]non_strict[]]: passed -> failed*"])
    assert (pytester.path / "b.json").read_bytes() == first  # never written without the update flag


def test_improvements_are_listed_and_fail_only_under_strict(pytester) -> None:
    pytester.makepyfile(test_m=suite())
    run(pytester, "--export-baseline=b.json", "--export-baseline-update")
    pytester.makepyfile(test_m=suite(bad="Good"))  # the known failure is fixed
    improved = run(pytester, "--export-baseline=b.json")
    assert improved.ret == 0
    improved.stdout.fnmatch_lines(["*export gate passed vs b.json: 0 regressions, 1 improvement*"])
    strict = run(pytester, "--export-baseline=b.json", "--export-baseline-strict")
    assert strict.ret == 1
    strict.stdout.fnmatch_lines(["*export gate FAILED vs b.json: 0 regressions, 1 improvement*",
                                 "*--export-baseline-strict: improvements fail until --export-baseline-update*"])
    run(pytester, "--export-baseline=b.json", "--export-baseline-update")
    assert run(pytester, "--export-baseline=b.json", "--export-baseline-strict").ret == 0


def test_a_deleted_test_leaves_the_file_only_on_update(pytester) -> None:
    pytester.makepyfile(test_m=suite())
    run(pytester, "--export-baseline=b.json", "--export-baseline-update")
    pytester.makepyfile(test_m=suite().split("@pytest.mark.exportable(modes=[\"non_strict\"])\ndef test_bad")[0])
    assert run(pytester, "--export-baseline=b.json").ret == 0
    assert "test_bad" in (pytester.path / "b.json").read_text()
    run(pytester, "--export-baseline=b.json", "--export-baseline-update")
    assert "test_bad" not in (pytester.path / "b.json").read_text()


def test_a_broken_baseline_file_names_the_field(pytester) -> None:
    pytester.makepyfile(test_m=suite())
    (pytester.path / "b.json").write_text(json.dumps(
        {"format": "pytest-export-baseline", "version": 1, "entries": [{"case": "c", "mode": 3}]}))
    result = run(pytester, "--export-baseline=b.json")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--export-baseline: b.json: entries[[]0[]].mode must be a string*"])
