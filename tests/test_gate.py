"""The baseline gate on plain records: regressions, improvements, and absent keys sorted by why."""

from __future__ import annotations

import pytest
from report_factory import make_record

from pytest_export.results.gate import Scope, compare, summary_lines, updated_baseline
from pytest_export.results.report import build_report

A = "tests/test_a.py::test_mlp"
B = "tests/test_b.py::test_conv"


def baseline(*records):
    return build_report(records)


def keys(entries):
    return [(e.case, e.mode) for e in entries]


def test_passed_then_failed_is_a_regression_with_its_headline():
    result = compare(baseline(make_record(A, "strict")), [make_record(A, "strict", "failed")], Scope())
    assert result.failed
    [entry] = result.regressions
    assert (entry.case, entry.mode, entry.before, entry.after) == (A, "strict", "passed", "failed")
    assert entry.headline.startswith("[capture] data-dependent: torch._dynamo.exc.UserError")
    assert entry.headline.endswith("at tests/test_a.py:12")


@pytest.mark.parametrize("now", ["failed", "xfailed", "error", "timeout", "crashed"])
def test_every_non_exportable_verdict_regresses_even_expected_failures(now):
    result = compare(baseline(make_record(A, "strict")), [make_record(A, "strict", now)], Scope())
    assert keys(result.regressions) == [(A, "strict")]


@pytest.mark.parametrize("before", ["failed", "xfailed", "error"])
def test_not_passed_then_passed_is_an_improvement(before):
    result = compare(baseline(make_record(A, "strict", before)), [make_record(A, "strict")], Scope())
    assert not result.failed
    assert keys(result.improvements) == [(A, "strict")]


def test_xpassed_counts_as_exportable():
    result = compare(baseline(make_record(A, "strict", "xfailed")), [make_record(A, "strict", "xpassed")], Scope())
    assert keys(result.improvements) == [(A, "strict")]
    result = compare(baseline(make_record(A, "strict")), [make_record(A, "strict", "xpassed")], Scope())
    assert not result.failed


def test_unchanged_keys_are_not_listed_and_new_keys_are():
    base = baseline(make_record(A, "strict"), make_record(A, "training", "failed"))
    now = [make_record(A, "strict"), make_record(A, "training", "failed"), make_record(B, "strict", "failed")]
    result = compare(base, now, Scope())
    assert not result.failed and not result.improvements
    assert keys(result.new) == [(B, "strict")]


def test_skipped_now_is_a_warning_not_a_regression():
    result = compare(baseline(make_record(A, "strict")), [make_record(A, "strict", "skipped")], Scope())
    assert not result.failed and keys(result.skipped) == [(A, "strict")]


def test_one_failing_record_of_several_for_a_key_fails_the_key():
    now = [make_record(A, "strict"), make_record(A, "strict", "failed")]
    assert compare(baseline(make_record(A, "strict")), now, Scope()).failed


class TestAbsentKeys:
    base = baseline(make_record(A, "strict"), make_record(A, "training"), make_record(B, "strict"))
    ran = [make_record(B, "strict")]

    def bucket(self, scope):
        result = compare(self.base, self.ran, scope)
        assert not result.failed
        return {name: keys(getattr(result, name)) for name in ("deselected", "vanished", "not_run") if getattr(result, name)}

    def test_file_not_collected_is_deselected(self):
        scope = Scope(files={"tests/test_b.py"}, deselected=set())
        assert self.bucket(scope) == {"deselected": [(A, "strict"), (A, "training")]}

    def test_deselected_with_k_is_deselected(self):
        scope = Scope(files={"tests/test_a.py", "tests/test_b.py"}, deselected={f"{A}[strict]", f"{A}[training]"})
        assert self.bucket(scope) == {"deselected": [(A, "strict"), (A, "training")]}

    def test_collected_file_without_the_test_is_vanished(self):
        scope = Scope(files={"tests/test_a.py", "tests/test_b.py"}, deselected=set())
        assert self.bucket(scope) == {"vanished": [(A, "strict"), (A, "training")]}

    def test_mode_not_run_is_deselected(self):
        scope = Scope(files={"tests/test_a.py", "tests/test_b.py"}, deselected=set(), modes={"strict"})
        assert self.bucket(scope) == {"deselected": [(A, "training")], "vanished": [(A, "strict")]}

    def test_selected_but_not_run_is_not_run(self):
        scope = Scope(files={"tests/test_a.py", "tests/test_b.py"}, deselected=set(), not_run={(A, "strict")})
        assert self.bucket(scope) == {"not_run": [(A, "strict")], "vanished": [(A, "training")]}

    def test_unknown_deselection_with_k_is_assumed_deselected(self):
        scope = Scope(files={"tests/test_a.py", "tests/test_b.py"}, deselected=None, filtered=True)
        assert self.bucket(scope) == {"deselected": [(A, "strict"), (A, "training")]}


def test_summary_lines_list_regressions_first():
    base = baseline(make_record(A, "strict"), make_record(B, "strict", "failed"), make_record(A, "training"))
    now = [make_record(A, "strict", "failed"), make_record(B, "strict")]
    result = compare(base, now, Scope(files={"tests/test_a.py", "tests/test_b.py"}, deselected=set()), "base.json")
    lines = summary_lines(result)
    assert lines[0] == "export gate FAILED vs base.json: 1 regression, 1 improvement, 1 vanished"
    assert lines[1].startswith(f"  REGRESSION {A} [strict]: passed -> failed: [capture] data-dependent")
    assert lines[2] == f"  improvement {B} [strict]: failed -> passed"
    assert lines[3].startswith(f"  vanished {A} [training]: passed: collected file has no such test")


def test_updated_baseline_keeps_unchecked_keys_and_drops_vanished():
    base = baseline(make_record(A, "strict"), make_record(A, "training"), make_record(B, "strict"),
                    make_record(B, "training"))
    now = build_report([make_record(B, "strict", "failed"), make_record(B, "training", "skipped")])
    scope = Scope(files={"tests/test_b.py"}, deselected=set())
    result = compare(base, now["records"], scope)
    new = updated_baseline(base, now, result)
    verdicts = {(r.case, r.mode): r.verdict for r in new["records"]}
    # test_a.py was not collected: its keys stay; B training was skipped: its baseline stays; B strict is now failed.
    assert verdicts == {(A, "strict"): "passed", (A, "training"): "passed", (B, "strict"): "failed",
                        (B, "training"): "passed"}
    assert compare(new, now["records"], scope).regressions == []


def test_scope_json_round_trip():
    scope = Scope(files={"a.py"}, modes={"strict"}, deselected={"a.py::t[strict]"}, not_run={("a.py::t", "strict")},
                  filtered=True)
    assert Scope.from_dict(scope.to_dict()) == scope
    assert Scope.from_dict({}) == Scope()
