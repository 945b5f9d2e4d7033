"""--export-repeat=K: a (case, mode)'s checks run K times from fresh seeds; a verdict that changes is unstable.

The flaky model is nondeterministic as the engine sees it: the same module object, the same inputs and the
same checks give another program at each export, because forward reads a counter the model itself advances
every time it is traced (hidden state the engine neither owns nor restores, as a clock or a global would be).
Its odd exports bake in ``+ 0`` and match eager, its even ones bake in ``+ 1`` and do not: one run passes,
the next fails, whatever the seed. One green run of it is a false pass; K runs see both.
"""

from __future__ import annotations

import json

import pytest

SUITE = """
import pytest
import torch


class TracedCounter(torch.nn.Module):
    traces = 0  # on the class: the engine restores a module's state, not its class's

    def forward(self, x):
        if not torch.compiler.is_compiling():  # (is_exporting is 2.7+)
            return x * 2
        type(self).traces += 1
        return x * 2 + (type(self).traces + 1) % 2  # every second export bakes in a wrong constant


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"])
def test_flaky():
    return TracedCounter(), (torch.randn(2, 3),)


class Tolerated(TracedCounter):
    traces = 0  # its own counter


@pytest.mark.xfail(reason="known to flip")  # the user tolerates it: XFAIL, and the record still says unstable
@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"])
def test_tolerated():
    return Tolerated(), (torch.randn(2, 3),)


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"])
def test_stable():
    return torch.nn.Linear(3, 2), (torch.randn(2, 3),)
"""


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
def test_a_verdict_that_changes_between_repeats_is_unstable_fails_its_test_and_the_gate(pytester) -> None:
    pytester.makepyfile(test_m=SUITE)
    # One run per case: the flaky model's first export matches eager, so a single run passes it (and caches it).
    once = pytester.runpytest("--export-baseline=b.json", "--export-baseline-update")
    assert once.ret == 0, once.stdout.str()
    again = pytester.runpytest("--export-repeat=4", "--export-baseline=b.json", "--export-report=r.json",
                                          "--export-report=r.md", "--export-report=r.html", "--junitxml=j.xml",
                                          "-rf")
    assert again.ret == 1, again.stdout.str()
    out = again.stdout.str()
    assert "results: 2 unstable, 1 passed (3 from 3 cases in 1 mode)" in out
    assert "1 failed, 1 passed, 1 xfailed" in out
    assert "U unstable" in out and ["test_m.py::test_flaky", "U"] in [line.split() for line in again.stdout.lines]
    assert "unstable in non_strict: the verdict changed between the 4 runs of --export-repeat " \
           "(run 1 passed, run 2 failed, run 3 passed, run 4 failed)" in out
    assert "FAILED test_m.py::test_flaky[non_strict] - unstable in non_strict" in out
    assert "REGRESSION test_m.py::test_flaky [non_strict]: passed -> unstable" in out

    report = json.loads((pytester.path / "r.json").read_text())
    assert report["summary"]["verdicts"] == {"passed": 1, "unstable": 2}
    records = {r["case"].split("::")[-1]: r for r in report["records"]}
    flaky, stable = records["test_flaky"], records["test_stable"]
    assert records["test_tolerated"]["verdict"] == "unstable"
    assert flaky["verdict"] == "unstable" and flaky["outcome"]["status"] == "failed"  # the run that failed, shown
    assert flaky["outcome"]["repeats"] == ["passed", "failed", "passed", "failed"]
    # the stable model: four fresh runs (not the first session's cached result), four seeds, one verdict
    assert stable["verdict"] == "passed" and stable["outcome"]["repeats"] == ["passed"] * 4
    assert stable["outcome"]["reused_from"] is None
    seeds = [n.split("(seed ")[1].split(")")[0] for n in stable["outcome"]["notes"] if "--export-repeat run" in n]
    assert len(set(seeds)) == 4
    assert "🎲 unstable" in (pytester.path / "r.md").read_text()
    page = (pytester.path / "r.html").read_text()
    assert "UNSTABLE" in page and "the verdict changed between --export-repeat runs" in page
    junit = (pytester.path / "j.xml").read_text()
    assert '<failure message="unstable in non_strict: the verdict changed' in junit


@pytest.mark.machinery
def test_a_repeat_below_one_is_refused_naming_the_option(pytester) -> None:
    pytester.makepyfile(test_m="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--export-repeat=0")
    assert result.ret != 0
    assert "--export-repeat must be at least 1" in result.stderr.str()
