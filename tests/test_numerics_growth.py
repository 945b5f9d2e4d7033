"""Numerics movement on plain records: buckets, the noise floor, the baseline's numbers and the gate's decision."""

from __future__ import annotations

import json
import sys

import pytest
from report_factory import make_record

from exportcore.outcome import ProgramError
from pytest_export.results.baseline import baseline_entries, dump_baseline, read_baseline
from pytest_export.results.diff import diff_reports
from pytest_export.results.gate import Scope, compare, summary_lines
from pytest_export.results.numerics_growth import moves, parse_bucket
from pytest_export.results.report import build_report

# Report and file machinery: the same on any torch (the oldest-torch CI step leaves it out).
pytestmark = pytest.mark.machinery

A = "tests/test_a.py::test_mlp"


def measured(verdict: str = "passed", **fractions: float):
    record = make_record(A, "strict", verdict)
    record.outcome.numerics = [ProgramError(program=p, worst_fraction=f, where="output[0]") for p, f in fractions.items()]
    return record


def factor_buckets(before: float, after: float) -> list[tuple[float, bool]]:
    return [(m.bucket, m.grew) for m in moves(A, "strict", measured(exported=before).outcome,
                                               measured(exported=after).outcome)]


@pytest.mark.parametrize("before, after, expected", [
    (0.1, 0.14, []),  # 1.4x: below the smallest bucket
    (0.1, 0.15, [(1.5, True)]),
    (0.1, 0.3, [(2.0, True)]),
    (0.05, 0.9, [(10.0, True)]),
    (0.9, 0.3, [(2.0, False)]),  # shrank
    (0.0, 1e-9, []),  # both below the floor: noise, not infinite growth
    (0.001, 0.009, []),
    (0.0, 0.05, [(2.0, True)]),  # the smaller side counts as the floor (0.01): 5x
    (0.5, sys.float_info.max, [(10.0, True)]),  # a leaf with no finite budget
])
def test_moves_are_bucketed_above_the_floor(before, after, expected):
    assert factor_buckets(before, after) == expected


def test_a_program_measured_in_one_run_only_does_not_move():
    assert moves(A, "strict", measured(exported=0.1).outcome, measured(exported=0.1, aoti=0.9).outcome) == []


@pytest.mark.parametrize("value", ["3", "x", "0", "nan"])
def test_a_threshold_must_be_a_bucket(value):
    with pytest.raises(ValueError, match=rf"numerics growth '{value}': use one of the buckets 1.5, 2, 10"):
        parse_bucket(value)


def test_baseline_stores_the_numbers_and_reads_old_entries_without_them():
    text = dump_baseline(baseline_entries([measured(exported=0.123456, reloaded=0.05)]))
    [entry] = json.loads(text)["entries"]
    assert entry["numerics"] == {"exported": 0.123, "reloaded": 0.05}
    assert dump_baseline(baseline_entries(read_baseline(text, "b.json"))) == text  # stable bytes
    del entry["numerics"]
    [old] = read_baseline(json.dumps({"format": "pytest-export-baseline", "version": 1, "entries": [entry]}), "b.json")
    assert old.outcome.numerics == []


def test_a_bad_numerics_field_names_the_entry_and_the_field():
    entry = {"case": A, "mode": "strict", "test": A, "verdict": "passed", "numerics": {"exported": "big"}}
    doc = json.dumps({"format": "pytest-export-baseline", "version": 1, "entries": [entry]})
    with pytest.raises(ValueError, match=r"b.json: entries\[0\].numerics must map each program"):
        read_baseline(doc, "b.json")


def test_gate_warns_on_growth_and_fails_only_at_or_above_the_threshold():
    base = read_baseline(dump_baseline(baseline_entries([measured(exported=0.1)])), "b.json")
    result = compare(build_report(base), [measured(exported=0.35)], Scope(), name="b.json")
    assert not result.failed and [m.bucket for m in result.numerics] == [2.0]
    assert "  warning: numerics grew for 1 (case, mode, program) against the baseline's worst error:" in \
        summary_lines(result)
    result.growth_threshold = 10.0
    assert not result.failed
    result.growth_threshold = 2.0
    assert result.failed and "NUMERICS GREW" in summary_lines(result)[1]


def test_diff_fails_on_growth_only_with_the_threshold():
    old, new = build_report([measured(exported=0.1)]), build_report([measured(exported=0.35)])
    assert not diff_reports(old, new).numerics_failed
    assert diff_reports(old, new, growth_threshold=2.0).numerics_failed
    assert not diff_reports(old, new, growth_threshold=10.0).numerics_failed


def test_merge_gates_growth_and_strict_as_a_session_would(tmp_path, capsys):
    # Shards merged in CI are gated once, by merge: its gate takes the session's two options too.
    from pytest_export.__main__ import main
    from pytest_export.rendering.formats import write_report

    write_report(build_report([measured(exported=0.1)]), tmp_path / "base.json")
    write_report(build_report([measured(exported=0.35)]), tmp_path / "shard.json")
    merge = ["merge", str(tmp_path / "shard.json"), "--baseline", str(tmp_path / "base.json"), "--shards", "1"]
    assert main([*merge, "-o", str(tmp_path / "m1.json")]) == 0  # a warning only
    assert main([*merge, "-o", str(tmp_path / "m2.json"), "--numerics-growth", "2"]) == 1
    assert main([*merge, "-o", str(tmp_path / "m3.json"), "--numerics-growth", "10"]) == 0
    assert main(["merge", str(tmp_path / "shard.json"), "-o", str(tmp_path / "m4.json"), "--numerics-growth", "2"]) == 2
    assert "--numerics-growth needs --baseline" in capsys.readouterr().err
    write_report(build_report([measured("failed", exported=0.1)]), tmp_path / "known.json")
    write_report(build_report([measured(exported=0.1)]), tmp_path / "fixed.json")
    fixed = ["merge", str(tmp_path / "fixed.json"), "--baseline", str(tmp_path / "known.json"), "--shards", "1"]
    assert main([*fixed, "-o", str(tmp_path / "m5.json")]) == 0
    assert main([*fixed, "-o", str(tmp_path / "m6.json"), "--strict"]) == 1
