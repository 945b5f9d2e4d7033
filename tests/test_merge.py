"""Merging shard reports: union, duplicates, conflicts, one gate decision, the CLI's exit status."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from report_factory import make_record, sample_records

from pytest_export.__main__ import main
from pytest_export.results.gate import Scope
from pytest_export.results.merge import merge_reports
from pytest_export.rendering.formats import write_report
from pytest_export.results.report import build_report, load_report, report_document
from pytest_export.results.schema import MergeEntry

A = "tests/test_a.py::test_mlp"
B = "tests/test_b.py::test_conv[4]"


def content(report):
    """Return what must agree between runs: everything but environment, timings and durations."""
    out = {k: v for k, v in report_document(report).items() if k not in ("environment", "scope")}
    out["records"] = []
    for r in report.records:
        r = dataclasses.replace(r, duration=0.0)
        if r.outcome:
            r.outcome = dataclasses.replace(r.outcome, timings={})
        out["records"].append(r)
    return out


def shard(records, files):
    return build_report(records, scope=Scope(files=set(files), deselected=set(), not_run=set()),
                        environment={"host": str(files)})


def test_merging_file_shards_equals_the_unsharded_report():
    records = sample_records()
    whole = shard(records, {"tests/test_a.py", "tests/test_b.py"})
    a = shard([r for r in records if r.case.startswith("tests/test_a.py")], {"tests/test_a.py"})
    b = shard([r for r in records if r.case.startswith("tests/test_b.py")], {"tests/test_b.py"})
    merged = merge_reports([("b.json", b), ("a.json", a)])
    assert not merged.duplicates and not merged.conflicts
    assert content(merged.report) == content(whole)
    assert merged.report.scope == whole.scope
    assert [e["source"] for e in merged.report.environment["merged_from"]] == ["b.json", "a.json"]


def test_same_verdict_twice_is_a_duplicate_kept_once():
    rec = make_record(A, "strict")
    merged = merge_reports([("1.json", build_report([rec])), ("2.json", build_report([dataclasses.replace(rec, duration=9.0)]))])
    assert [(d.case, d.mode, d.sources) for d in merged.duplicates] == [(A, "strict", ["1.json", "2.json"])]
    assert len(merged.report.records) == 1 and merged.report.records[0].duration == 0.5


def test_different_verdicts_conflict_and_the_failing_record_is_kept():
    merged = merge_reports([("1.json", build_report([make_record(A, "strict")])),
                            ("2.json", build_report([make_record(A, "strict", "failed")]))])
    assert merged.conflicts == [MergeEntry(case=A, mode="strict", sources=["1.json", "2.json"],
                                           verdicts={"1.json": ["passed"], "2.json": ["failed"]})]
    assert [r.verdict for r in merged.report.records] == ["failed"]


def test_merge_gates_the_union_and_knows_what_each_shard_collected():
    base = build_report([make_record(A, "strict"), make_record(B, "strict"), make_record(B, "training")])
    a = shard([make_record(A, "strict", "failed")], {"tests/test_a.py"})
    b = shard([make_record(B, "strict")], {"tests/test_b.py"})
    merged = merge_reports([("a.json", a), ("b.json", b)], baseline=("base.json", base), shards=2)
    gate = merged.report.gate
    assert gate.failed and [(e.case, e.mode) for e in gate.regressions] == [(A, "strict")]
    # test_b.py was collected by shard b and has no training record: vanished, not silently ignored.
    assert [(e.case, e.mode) for e in gate.vanished] == [(B, "training")]


def test_a_test_deselected_in_one_shard_and_run_in_another_is_not_deselected():
    a = build_report([make_record(A, "strict")],
                     scope=Scope(files={"tests/test_a.py"}, deselected={f"{B[:-3]}[4-strict]"}).to_dict())
    b = build_report([make_record(B, "strict")],
                     scope=Scope(files={"tests/test_b.py"}, deselected={f"{A}[strict]"}).to_dict())
    merged = merge_reports([("a", a), ("b", b)])
    assert merged.report.scope.deselected == set()


def test_incomplete_shard_makes_the_merge_incomplete():
    a = build_report([make_record(A, "strict")], complete=False, stop_reason="interrupted")
    merged = merge_reports([("a.json", a), ("b.json", build_report([make_record(B, "strict")]))])
    assert merged.report.complete is False and "a.json: interrupted" in merged.report.stop_reason


@pytest.fixture
def files(tmp_path):
    base = build_report([make_record(A, "strict"), make_record(B, "strict", "failed")])
    paths = {}
    for name, records in {
        "base": base.records,
        "ok_a": [make_record(A, "strict")],
        "ok_b": [make_record(B, "strict")],
        "bad_a": [make_record(A, "strict", "failed")],
    }.items():
        paths[name] = tmp_path / f"{name}.json"
        write_report(build_report(records), paths[name])
    return tmp_path, {k: str(v) for k, v in paths.items()}


def test_cli_writes_every_output_and_exits_0_on_an_improvement(files, capsys):
    tmp, p = files
    outs = [str(tmp / "m.json"), str(tmp / "m.html"), str(tmp / "m.md")]
    code = main(["merge", p["ok_a"], p["ok_b"], "--baseline", p["base"], *sum((["-o", o] for o in outs), [])])
    out = capsys.readouterr().out
    assert code == 0
    assert "merged 2 report(s): 2 records (2 passed)" in out
    assert "export gate passed vs" in out and f"improvement {B} [strict]: failed -> passed" in out
    assert load_report(outs[0])["gate"]["improvements"][0]["case"] == B
    assert "<table class=\"matrix\">" in (tmp / "m.html").read_text()
    assert (tmp / "m.md").read_text().startswith("## pytest-export")


def test_cli_exits_1_on_a_regression(files, capsys):
    tmp, p = files
    assert main(["merge", p["bad_a"], p["ok_b"], "--baseline", p["base"], "-o", str(tmp / "m.json")]) == 1
    assert f"REGRESSION {A} [strict]: passed -> failed" in capsys.readouterr().out


def test_cli_exits_2_on_a_conflict_unless_allowed(files, capsys):
    tmp, p = files
    out = tmp / "m.json"
    assert main(["merge", p["ok_a"], p["bad_a"], "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"conflicting records for {A} [strict]" in err and not out.exists()
    assert main(["merge", p["ok_a"], p["bad_a"], "--allow-conflicts", "-o", str(out)]) == 0
    assert [r.verdict for r in load_report(out)["records"]] == ["failed"]


def test_cli_warns_on_duplicates(files, capsys):
    tmp, p = files
    again = tmp / "ok_a_again.json"  # another report (no shard declared) that holds the same record
    again.write_bytes((tmp / "ok_a.json").read_bytes())
    assert main(["merge", p["ok_a"], str(again), "-o", str(tmp / "m.json")]) == 0
    assert f"warning: duplicate record {A} [strict]" in capsys.readouterr().err


@pytest.mark.parametrize("problem", ["corrupt", "missing", "bad_output", "deep", "fifo", "dev_zero", "directory"])
def test_cli_exits_2_with_a_clear_message_on_bad_input(files, capsys, problem):
    import os

    tmp, p = files
    (tmp / "corrupt.json").write_text(json.dumps({"schema": "other"}))
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    os.mkfifo(tmp / "fifo.json")
    (tmp / "dir.json").mkdir()
    inputs = {"corrupt": "corrupt.json", "missing": "nope.json", "deep": "deep.json", "fifo": "fifo.json",
              "directory": "dir.json"}
    if problem == "bad_output":
        args = [p["ok_a"], "-o", str(tmp / "m.txt")]
    elif problem == "dev_zero":
        args = [p["ok_a"], "/dev/zero", "-o", str(tmp / "m.json")]
    else:
        args = [p["ok_a"], str(tmp / inputs[problem]), "-o", str(tmp / "m.json")]
    assert main(["merge", *args]) == 2
    err = capsys.readouterr().err
    assert {"corrupt": "corrupt.json: not an export report", "missing": "nope.json: file does not exist",
            "bad_output": "unknown format '.txt'", "deep": "deep.json: not an export report (JSON nested too deeply)",
            "fifo": "fifo.json: cannot be read (not a regular file)",
            "dev_zero": "/dev/zero: cannot be read (not a regular file)",
            "directory": "dir.json: cannot be read (it is a directory)"}[problem] in err
    assert not (tmp / "m.json").exists()


def test_python_dash_m_entry_point(files):
    tmp, p = files
    proc = subprocess.run([sys.executable, "-m", "pytest_export", "merge", p["ok_a"], "-o", str(tmp / "x.md")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "x.md").exists()


def _sharded(records, index, count):
    scope = Scope(files={nodeid_file(r.test) for r in records}, deselected=set()).to_dict()
    return build_report(records, scope={**scope, "shard": [index, count]})


def nodeid_file(nodeid):
    return nodeid.split("::", 1)[0]


BASE3 = [make_record(A, "strict"), make_record(B, "strict"), make_record("tests/test_c.py::test_c", "strict")]


def _two_of_three(tmp, declared):
    """Shards 1 and 2 of 3 wrote their reports; shard 3 crashed before writing its own."""
    base = tmp / "base3.json"
    write_report(build_report(BASE3), base)
    paths = []
    for i, record in enumerate(BASE3[:2], start=1):
        report = _sharded([record], i, 3) if declared == "shard_scopes" else shard([record], {nodeid_file(record.test)})
        paths.append(str(tmp / f"s{i}.json"))
        write_report(report, paths[-1])
    return base, paths, (["--shards", "3"] if declared == "cli_count" else [])


@pytest.mark.parametrize("declared", ["shard_scopes", "cli_count"])
def test_a_known_missing_shard_is_an_error_and_nothing_is_written(files, capsys, declared):
    tmp, _ = files
    base, paths, extra = _two_of_three(tmp, declared)
    for gate in (["--baseline", str(base)], []):  # without a baseline the merge must not claim the whole run
        assert main(["merge", *paths, *gate, "-o", str(tmp / "m.json"), *extra]) == 2
        err = capsys.readouterr().err
        why = {"shard_scopes": "shard 3 of 3 is missing", "cli_count": "2 of 3 shard reports given"}[declared]
        assert f"error: {why}: the merge would not be the whole run" in err and "--allow-missing-shards" in err
        assert not (tmp / "m.json").exists()


@pytest.mark.parametrize("declared", ["shard_scopes", "cli_count", "unknown"])
def test_an_allowed_missing_shard_fails_the_gate_with_its_keys_missing(files, capsys, declared):
    tmp, _ = files
    base, paths, extra = _two_of_three(tmp, declared)
    allow = [] if declared == "unknown" else ["--allow-missing-shards"]  # unknown: nothing proves a shard absent
    code = main(["merge", *paths, "--baseline", str(base), "-o", str(tmp / "m.json"), *extra, *allow])
    out, err = capsys.readouterr()
    assert code == 1
    assert "MISSING tests/test_c.py::test_c [strict]: passed: in no shard report" in out
    why = {"shard_scopes": "shard 3 of 3 is missing", "cli_count": "2 of 3 shard reports given",
           "unknown": "the number of shards is unknown"}[declared]
    assert why in out and "1 baseline key(s)" in err
    merged = load_report(tmp / "m.json")
    assert merged.gate.failed and [e.case for e in merged.gate.missing] == ["tests/test_c.py::test_c"]
    if declared != "unknown":
        assert merged.complete is False and why in merged.stop_reason
        # and without a baseline: written, but never "complete"
        assert main(["merge", *paths, "-o", str(tmp / "n.json"), *extra, *allow]) == 0
        assert load_report(tmp / "n.json").complete is False


def test_one_shard_given_twice_is_an_error(files, capsys):
    tmp, _ = files
    base = tmp / "base2.json"
    write_report(build_report(BASE3[:2]), base)
    s1 = tmp / "s1.json"
    write_report(_sharded(BASE3[:1], 1, 2), s1)
    (tmp / "s1-copy.json").write_bytes(s1.read_bytes())
    (tmp / "s1-link.json").symlink_to(s1)
    cases = {
        (str(s1), str(s1)): "report " + str(s1) + " given twice",
        (str(s1), str(tmp / "s1-link.json")): "(one file) given twice",
        (str(s1), str(tmp / "s1-copy.json")): "are each shard 1 of 2: one shard's report given twice",
    }
    for pair, message in cases.items():
        assert main(["merge", *pair, "--baseline", str(base), "-o", str(tmp / "m.json")]) == 2
        assert message in capsys.readouterr().err
        assert not (tmp / "m.json").exists()


def test_an_output_that_names_an_input_is_refused_and_the_input_kept(files, capsys):
    tmp, p = files
    base = tmp / "base.json"
    write_report(build_report([make_record(A, "strict")]), base)
    regressed = tmp / "new.json"
    write_report(build_report([make_record(A, "strict", "failed")]), regressed)
    (tmp / "alias.json").symlink_to(base)
    before = {path: path.read_bytes() for path in (base, regressed)}
    attempts = [
        (["merge", str(regressed), "-o", str(base), "--baseline", str(base)], "is the baseline"),
        (["merge", str(regressed), "-o", str(tmp / "alias.json"), "--baseline", str(base)],
         "(the same file as " + str(base) + ") is the baseline"),
        (["merge", str(regressed), "-o", str(regressed)], "is the shard report"),
        (["merge", str(regressed), "-o", str(tmp / "x.md"), "-o", str(tmp / "." / "x.md")], "is given twice"),
    ]
    for argv, message in attempts:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err
    assert {path: path.read_bytes() for path in before} == before
    assert not (tmp / "x.md").exists()


def test_outputs_in_a_missing_directory_are_created(files):
    tmp, p = files
    out = tmp / "reports" / "deep" / "x.html"
    assert main(["merge", p["ok_a"], "-o", str(out), "-o", str(tmp / "reports" / "x.json")]) == 0
    assert out.is_file() and load_report(tmp / "reports" / "x.json")["records"]


def test_every_shard_present_passes_and_a_contradicting_count_is_an_error(files, capsys):
    tmp, _ = files
    base = tmp / "base3.json"
    write_report(build_report(BASE3), base)
    paths = []
    for i, record in enumerate(BASE3, start=1):
        paths.append(str(tmp / f"s{i}.json"))
        write_report(_sharded([record], i, 3), paths[-1])
    assert main(["merge", *paths, "--baseline", str(base), "-o", str(tmp / "m.json")]) == 0
    assert main(["merge", *paths, "--shards", "4", "-o", str(tmp / "m.json")]) == 2
    assert "the reports disagree on the number of shards" in capsys.readouterr().err
