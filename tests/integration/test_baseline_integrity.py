"""The baseline says one thing per (case, mode), and a known failure is known as recorded.

A key recorded twice (both sides of a merge conflict kept) is a usage error naming both lines:
the gate and the known-failure lookup would each pick one, and a regression could pass. A known
failure that now fails another way (capture -> numerics: it exports, and the program is wrong) is
a *changed* known failure: shown in the terminal, the reports and the gate, and failing the session
under --export-baseline-strict.
"""

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


class DataDependent(torch.nn.Module):
    def forward(self, x):
        return x + 1 if x.sum() > 0 else x - 1


class Wrong(torch.nn.Module):
    # Exports cleanly (both modes trace with the compiler) and the program disagrees with eager.
    def forward(self, x):
        if torch.compiler.is_compiling():
            return x + 1
        return x * 2


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=1)
def test_good():
    return {good}(), (torch.ones(2),)


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=1)
def test_bad():
    return {bad}(), (torch.full((2,), 3.0),)
"""


def suite(good: str = "Good", bad: str = "DataDependent") -> str:
    return SUITE.format(good=good, bad=bad)


def run(pytester, *args: str):
    return pytester.runpytest("-p", "no:cacheprovider", "-rx", *args)


def _entry_line(text: str, case: str, nth: int) -> int:
    # The line of the nth entry's opening brace for ``case`` (the file is written one field a line).
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines) if line.strip() == f'"case": "{case}",']
    return hits[nth]  # the brace is the line above: 0-based index i is 1-based line i


@pytest.mark.parametrize("order", ["failed_last", "failed_first"])
def test_a_key_recorded_twice_is_a_usage_error_naming_the_key_and_both_lines(pytester, order) -> None:
    pytester.makepyfile(test_m=suite())
    assert run(pytester, "--export-baseline=b.json", "--export-baseline-update").ret == 0
    doc = json.loads((pytester.path / "b.json").read_text())
    bad, good = doc["entries"]
    # A merge conflict resolved by keeping both sides: main says test_good passes, the branch says it fails.
    broken = {**good, "verdict": "failed", "stage": "capture", "category": "data-dependent"}
    doc["entries"] = [bad, good, broken] if order == "failed_last" else [bad, broken, good]
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    (pytester.path / "b.json").write_text(text)
    first, second = (_entry_line(text, "test_m.py::test_good", n) for n in (0, 1))
    said = ["'passed'", "'failed [[]capture[]] data-dependent'"]
    said = " and ".join(said if order == "failed_last" else said[::-1])

    pytester.makepyfile(test_m=suite(good="DataDependent"))  # a real regression the duplicate would hide
    for extra in ((), ("--export-baseline-update",)):
        result = run(pytester, "--export-baseline=b.json", *extra)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        result.stderr.fnmatch_lines([
            f"*--export-baseline: b.json: (case 'test_m.py::test_good', mode 'non_strict') is recorded twice, "
            f"at line {first} and line {second} ({said}); a baseline holds one entry per (case, mode)*",
        ])
        assert (pytester.path / "b.json").read_text() == text  # the update refuses too: never written over


def test_a_field_named_twice_in_one_entry_is_a_usage_error_naming_its_line(pytester) -> None:
    pytester.makepyfile(test_m=suite())
    assert run(pytester, "--export-baseline=b.json", "--export-baseline-update").ret == 0
    text = (pytester.path / "b.json").read_text()
    # Both sides of a one-line conflict kept: the category line twice.
    text = text.replace('"category": "data-dependent",', '"category": "data-dependent",\n   "category": "guard",')
    (pytester.path / "b.json").write_text(text)
    line = text.splitlines().index('   "category": "guard",') + 1  # the repeat's own line
    result = run(pytester, "--export-baseline=b.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--export-baseline: b.json: line {line}: an entry names the field "
                                 "'category' twice*"])


SHARED = """
import torch


class DataDependent(torch.nn.Module):
    def forward(self, x):
        return x + 1 if x.sum() > 0 else x - 1


def test_first(export_check):
    export_check(torch.nn.ReLU(), (torch.ones(2),), case_id="shared", checks=["numerics"], examples=1)


def test_second(export_check):
    export_check(DataDependent(), (torch.ones(2),), case_id="shared", checks=["numerics"], examples=1)
"""


def test_the_update_writes_one_entry_per_key_the_one_the_gate_reads(pytester) -> None:
    # Two tests under one key (an error of its own) leave two records; the gate reads the worse one,
    # and so must the entry the update writes (it used to keep whichever came first).
    pytester.makepyfile(test_m=SHARED)
    run(pytester, "--export-baseline=b.json", "--export-baseline-update")
    entries = json.loads((pytester.path / "b.json").read_text())["entries"]
    assert [(e["case"], e["mode"], e["verdict"]) for e in entries] == [("shared", "non_strict", "error")]


def test_a_known_failure_that_fails_differently_is_a_change(pytester) -> None:
    pytester.makepyfile(test_m=suite())
    assert run(pytester, "--export-baseline=b.json", "--export-baseline-update").ret == 0
    recorded = (pytester.path / "b.json").read_bytes()
    pytester.makepyfile(test_m=suite(bad="Wrong"))  # it exports now, and the program is wrong

    reports = ("--export-report=r.json", "--export-report=r.md", "--export-report=r.html")
    changed = run(pytester, "--export-baseline=b.json", *reports)
    assert changed.ret == 0  # reported, not failing: one option away
    changed.assert_outcomes(passed=1, xfailed=1)
    was, now = "failed [[]capture[]] data-dependent", "failed [[]numerics[]] numerics"
    changed.stdout.fnmatch_lines([
        "*export gate passed vs b.json: 0 regressions, 0 improvements, 1 changed*",
        f"  changed test_m.py::test_bad [[]non_strict[]]: failed -> xfailed: recorded {was}, now {now}",
        "*a changed known failure does not fail the gate; --export-baseline-strict fails on it*",
        f"XFAIL test_m.py::test_bad[[]non_strict[]] - non_strict: known failure in baseline b.json changed: "
        f"recorded {was}, now {now} (--export-baseline-strict fails on it*",
    ])
    gate = json.loads((pytester.path / "r.json").read_text())["gate"]
    assert not gate["failed"]
    assert [(e["case"], e["why"]) for e in gate["changed"]] == [
        ("test_m.py::test_bad", "recorded failed [capture] data-dependent, now failed [numerics] numerics")]
    md = (pytester.path / "r.md").read_text()
    assert "1 changed" in md and "**Changed** `test_m.py::test_bad`" in md
    assert r"recorded failed \[capture\] data-dependent, now failed \[numerics\] numerics" in md  # escaped
    html = (pytester.path / "r.html").read_text()
    assert "Changed known failures" in html and "now failed [numerics] numerics" in html

    strict = run(pytester, "--export-baseline=b.json", "--export-baseline-strict")
    assert strict.ret == 1
    strict.assert_outcomes(passed=1, failed=1)  # no longer known: its own failure report shows
    strict.stdout.fnmatch_lines([
        "*export failed in non_strict: stage numerics*",
        "*export gate FAILED vs b.json: 0 regressions, 0 improvements, 1 changed*",
        f"  CHANGED test_m.py::test_bad [[]non_strict[]]: failed -> failed: recorded {was}, now {now}",
        "*--export-baseline-strict: changed known failures fail until --export-baseline-update records them*",
    ])
    assert (pytester.path / "b.json").read_bytes() == recorded  # only the update writes it

    assert run(pytester, "--export-baseline=b.json", "--export-baseline-update").ret == 0
    entry = json.loads((pytester.path / "b.json").read_text())["entries"][0]
    assert (entry["stage"], entry["category"]) == ("numerics", "numerics")
    again = run(pytester, "--export-baseline=b.json", "--export-baseline-strict")
    assert again.ret == 0
    again.stdout.fnmatch_lines(["*export gate passed vs b.json: 0 regressions, 0 improvements"])
