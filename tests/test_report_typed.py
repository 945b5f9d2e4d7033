"""The report is one typed Report, encoded and decoded by the codec; summary and runtimes are derived, never read."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from report_factory import make_record, sample_records

from exportcore.outcome import Outcome
from pytest_export.rendering.formats import render, write_report
from pytest_export.results.gate import GateResult, Scope, compare
from pytest_export.results.merge import merge_reports
from pytest_export.results.report import Report, ReportError, build_report, load_report, report_document, summarize
from pytest_export.results.runtimes import runtime_tables
from pytest_export.results.schema import GateDoc, GateEntry

ROOT = Path(__file__).resolve().parents[1]
#: Reports written by earlier releases (the zoo's shard reports in the docs), read as they are.
OLD_REPORTS = sorted((ROOT / "docs" / "zoo").glob("*.json"))


def _report() -> Report:
    scope = Scope(files={"tests/test_a.py", "tests/test_b.py"}, modes={"strict", "non_strict"},
                  deselected=set(), not_run={("tests/test_c.py::test_c", "strict")}, shard=[1, 2])
    baseline = build_report([make_record("tests/test_a.py::test_branch", "strict")])
    gate = compare(baseline, sample_records(), scope, name="base.json")
    return build_report(sample_records(), environment={"torch": "2.14.1"}, scope=scope, gate=gate.to_doc(),
                        complete=False, stop_reason="interrupted")


def test_a_report_round_trips_through_its_json_file_as_a_report(tmp_path):
    report = _report()
    assert isinstance(report.scope, Scope) and isinstance(report.gate, GateDoc)
    assert isinstance(report.gate.regressions[0], GateEntry)
    write_report(report, tmp_path / "r.json")
    loaded = load_report(tmp_path / "r.json")
    assert isinstance(loaded, Report)
    assert loaded == report


def test_the_file_keeps_its_keys_and_the_derived_sections_come_from_the_records(tmp_path):
    report = _report()
    doc = json.loads(render(report, ".json"))
    assert sorted(doc) == ["complete", "environment", "gate", "records", "runtimes", "schema", "scope",
                           "stop_reason", "summary", "version"]
    assert doc["summary"] == summarize(report.records)
    assert doc["runtimes"] == runtime_tables(report.records)
    assert doc["scope"]["shard"] == [1, 2] and doc["gate"]["regressions"][0]["after"] == "failed"
    assert not hasattr(report, "summary") and not hasattr(report, "runtimes")  # derived, not stored


def test_a_stored_summary_is_ignored_on_load(tmp_path):
    doc = report_document(_report())
    doc["summary"] = {"total": 999, "verdicts": {"passed": 999}}  # stale or hand-edited: never believed
    doc["runtimes"] = "not even a table"
    loaded = Report.from_dict(json.loads(json.dumps(doc)), "r.json")
    assert loaded["summary"]["total"] == len(sample_records())
    assert summarize(loaded.records)["verdicts"] == summarize(sample_records())["verdicts"]


def test_a_report_written_the_old_way_still_loads(tmp_path):
    # As pytest-export wrote it when the report was a dict: "summary" and "runtimes" stored, a scope
    # without "shard", no "stop_reason", "gate" null.
    records = sample_records()
    doc = {
        "schema": "pytest-export-report", "version": 1, "complete": True,
        "environment": {"torch": "2.14.1"},
        "scope": {"files": ["tests/test_a.py"], "modes": None, "deselected": None, "not_run": [], "filtered": False,
                  "tests": None, "ran": None},
        "summary": {"total": len(records), "cases": 3, "modes": ["non_strict", "strict", "training"],
                    "verdicts": {"passed": 4}, "categories": {}, "stages": {}, "by_mode": {}},
        "gate": None, "records": [r.to_dict() for r in records], "runtimes": {},
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    report = load_report(path)
    assert report.stop_reason == "" and report.gate is None and report.scope.shard is None
    assert report.scope.files == {"tests/test_a.py"} and len(report.records) == len(records)
    assert report["summary"] == summarize(records)  # computed again, whatever the file said


def test_the_gates_scope_is_the_reports_and_its_json_is_sorted_lists_in_a_fixed_order():
    # One type for the gate and the report: what the gate read is what the file keeps, written as it always was.
    report = _report()
    assert json.dumps(report.to_dict()["scope"]) == (
        '{"files": ["tests/test_a.py", "tests/test_b.py"], "modes": ["non_strict", "strict"], "deselected": [], '
        '"tests": null, "ran": null, "not_run": [["tests/test_c.py::test_c", "strict"]], "shard": [1, 2], '
        '"filtered": false}')
    assert Scope.from_dict(json.loads(json.dumps(report.to_dict()["scope"]))) == report.scope
    with pytest.raises(TypeError, match=r"outcome\.checks: set is not JSON data"):  # a set only where the type says
        Outcome("c", "strict", checks={"accept"}).to_dict()  # type: ignore[arg-type]


def test_a_null_scope_reads_as_nothing_known():
    doc = report_document(build_report(sample_records()))
    doc["scope"] = None
    report = Report.from_dict(json.loads(json.dumps(doc)))
    assert report.scope == Scope()


@pytest.mark.parametrize("path", OLD_REPORTS, ids=lambda p: p.name)
def test_the_reports_in_the_docs_written_by_earlier_releases_still_load(path):
    report = load_report(path)
    stored = json.loads(path.read_text())
    assert len(report.records) == len(stored["records"])
    assert report.scope.shard == stored["scope"]["shard"]
    assert summarize(report.records)["verdicts"] == stored["summary"]["verdicts"]


def test_a_record_off_the_vocabulary_in_a_report_file_is_refused_naming_the_field(tmp_path):
    doc = report_document(build_report(sample_records()))
    i = next(i for i, r in enumerate(doc["records"]) if r["outcome"]["failure"])
    doc["records"][i]["outcome"]["failure"]["stage"] = "linking"
    with pytest.raises(ReportError, match=rf"^bad\.json: records\[{i}\]\.outcome\.failure\.stage must be one of"):
        Report.from_dict(json.loads(json.dumps(doc)), "bad.json")
    doc = report_document(build_report(sample_records()))
    doc["records"][0]["verdict"] = "green"
    with pytest.raises(ReportError, match=r"^bad\.json: records\[0\]\.verdict must be one of"):
        Report.from_dict(doc, "bad.json")


def test_an_unknown_section_is_refused_naming_it():
    doc = report_document(build_report(sample_records()))
    doc["sumary"] = {}
    with pytest.raises(ReportError, match=r"^bad\.json: unknown field\(s\) \['sumary'\]$"):
        Report.from_dict(doc, "bad.json")


def test_a_gate_verdict_off_the_vocabulary_is_refused():
    doc = report_document(_report())
    doc["gate"]["regressions"][0]["before"] = "fine"
    with pytest.raises(ReportError, match=r"gate\.regressions\[0\]\.before must be one of"):
        Report.from_dict(doc, "bad.json")


def test_a_merge_section_round_trips_and_is_absent_when_nothing_was_merged(tmp_path):
    rec = make_record("tests/test_a.py::test_mlp", "strict")
    plain = build_report([rec])
    merged = merge_reports([("1.json", plain), ("2.json", build_report([make_record(rec.case, "strict", "failed")]))])
    assert "merge" not in report_document(plain)
    write_report(merged.report, tmp_path / "m.json")
    loaded = load_report(tmp_path / "m.json")
    assert loaded.merge is not None and loaded.merge.conflicts[0].verdicts == {"1.json": ["passed"], "2.json": ["failed"]}
    assert loaded == merged.report


def test_section_reads_by_json_name_still_work_for_scripts_written_against_the_dict():
    report = _report()
    assert report["records"] is report.records
    assert report["gate"]["regressions"][0]["case"] == report.gate.regressions[0].case
    assert report["scope"]["shard"] == [1, 2] and report["complete"] is False
    assert report.get("merge") is None and report.get("nothing", 3) == 3
    with pytest.raises(KeyError):
        report["nothing"]


def test_a_gate_given_as_its_json_form_is_decoded_and_checked():
    gate = GateResult(baseline="b.json").to_dict()
    assert build_report([], gate=gate).gate == GateDoc(baseline="b.json")
    bad = copy.deepcopy(gate)
    bad["failed"] = "no"
    with pytest.raises(ValueError, match=r"gate\.failed must be bool"):
        build_report([], gate=bad)
