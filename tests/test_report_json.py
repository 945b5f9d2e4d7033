"""JSON reports: schema, round trip, validation errors naming file and field, atomic writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from report_factory import make_record, sample_records

from exportcore.outcome import Outcome
from pytest_export.rendering.formats import render, report_format, write_report
from pytest_export.results.report import ReportError, atomic_write, build_report, load_report


def test_json_round_trip_keeps_every_record_and_outcome(tmp_path):
    records = sample_records()
    report = build_report(reversed(records), environment={"python": "3.11"})
    path = tmp_path / "r.json"
    write_report(report, path)
    loaded = load_report(path)
    assert loaded == report
    assert loaded["schema"] == "pytest-export-report" and loaded["version"] == 1 and loaded["complete"] is True
    keys = [(r.case, r.mode) for r in loaded["records"]]
    assert keys == sorted(keys) and len(keys) == len(records)
    document = json.loads(path.read_text())
    for r, data in zip(loaded["records"], document["records"]):
        assert Outcome.from_dict(data["outcome"]).to_dict() == data["outcome"] == r.outcome.to_dict()


def test_summary_counts_verdicts_categories_and_modes():
    summary = build_report(sample_records())["summary"]
    assert summary["total"] == 7 and summary["cases"] == 3
    assert summary["verdicts"] == {"passed": 4, "failed": 1, "xfailed": 1, "error": 1}
    assert summary["categories"] == {"data-dependent": 2, "input": 1}
    assert summary["by_mode"]["strict"] == {"failed": 1, "passed": 2}


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda d: d.update(schema="something-else"), ["'schema'", "something-else"]),
        (lambda d: d.update(version=99), ["version 99", "not supported"]),
        (lambda d: d.update(records={}), ["'records'", "list"]),
        (lambda d: d["records"][0].pop("mode"), ["records[0]", "'mode'"]),
        (lambda d: d["records"][1].update(verdict="great"), ["records[1].verdict", "great"]),
        (lambda d: d["records"][0].update(duration="1s"), ["records[0].duration"]),
        (lambda d: d["records"][0]["outcome"].update(status="meh"), ["records[0].outcome", "status"]),
        (lambda d: d["records"][0]["outcome"]["graph"].update(node_count="7"), ["records[0].outcome", "node_count"]),
    ],
)
def test_invalid_report_names_file_and_field(tmp_path, mutate, words):
    data = json.loads(render(build_report(sample_records()), ".json"))
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReportError) as info:
        load_report(path)
    assert str(path) in str(info.value)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    ("content", "words"),
    [("{not json", "not valid JSON"), ("[1, 2]", "top level is list"), (b"\xff\xfe", "cannot be read")],
)
def test_corrupt_files_are_report_errors(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ReportError, match=words):
        load_report(path)


def test_missing_file_is_a_report_error(tmp_path):
    with pytest.raises(ReportError, match="does not exist"):
        load_report(tmp_path / "nope.json")


def test_report_error_is_a_value_error():
    assert issubclass(ReportError, ValueError)


def test_format_from_extension():
    assert report_format("a/b.JSON") == ".json"
    assert report_format("r.htm") == ".html"
    assert report_format("r.markdown") == ".md"
    with pytest.raises(ValueError, match=r"r\.txt.*\.json, \.html, \.md"):
        report_format("r.txt")


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    atomic_write(path, "new content")
    assert path.read_text() == "new content"
    assert os.listdir(tmp_path) == ["r.json"]
    assert path.stat().st_mode & 0o777 != 0o600  # readable by CI uploaders, not mkstemp's private mode


def test_failed_render_keeps_the_old_file(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    report = build_report([make_record()])
    report["environment"]["bad"] = object()  # not JSON-serializable: rendering fails
    with pytest.raises(TypeError):
        write_report(report, path)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]


def test_report_modules_import_neither_torch_nor_pytest():
    code = (
        "import sys; import pytest_export.results.report, pytest_export.rendering.formats, "
        "pytest_export.rendering.html, pytest_export.rendering.markdown, pytest_export.results.gate, "
        "pytest_export.results.merge, pytest_export.__main__; "
        "print(sorted(m for m in ('torch', 'pytest', '_pytest') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_interrupted_write_keeps_the_old_file_and_cleans_up(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old")

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_report(build_report(sample_records()), path)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]
