"""Fuzz the JSON report loader: only ReportError escapes, and whatever it accepts can be used."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from report_factory import sample_records

from pytest_export.results.gate import Scope, compare, updated_baseline
from pytest_export.rendering.formats import render
from pytest_export.results.report import ReportError, build_report, load_report, validate_report

# derandomize: the same examples every run, so a failure here is never a flake.
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)

REPORT = build_report(sample_records(), environment={"torch": "2.14.1"}, scope={"files": ["tests/test_a.py"]})
#: Its JSON document (what the fuzzers mutate): records encoded, as on disk.
VALID = json.loads(render(REPORT, ".json"))


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Return the path of every value inside ``node`` (most of them deep inside the records)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(data: st.DataObject, doc: Any) -> Any:
    """Return ``doc`` with one value somewhere in it replaced by random JSON, or one key dropped."""
    paths = _paths(doc)
    if not paths:
        return data.draw(JSON, label="whole document")
    doc = copy.deepcopy(doc)
    *parent_path, key = data.draw(st.sampled_from(paths), label="path")
    parent = doc
    for step in parent_path:
        parent = parent[step]
    if isinstance(parent, dict) and data.draw(st.booleans(), label="drop"):
        del parent[key]
    else:
        parent[key] = data.draw(JSON, label="value")
    return doc


def _usable(report: dict[str, Any]) -> None:
    """What the plugin and the merge CLI do with a report they loaded must not crash."""
    for fmt in (".json", ".md", ".html"):
        assert isinstance(render(report, fmt), str)
    scope = Scope.from_dict(report.get("scope"))
    result = compare(report, sample_records(), scope, name="baseline")
    updated_baseline(report, REPORT, result)


@FUZZ
@given(st.data())
def test_mutated_report_is_valid_or_rejected_with_report_error_naming_the_file(data):
    doc = _mutate(data, VALID)
    for _ in range(data.draw(st.integers(0, 2), label="more mutations")):
        doc = _mutate(data, doc)
    try:
        validate_report(doc, "fuzz.json")
    except ReportError as exc:
        assert str(exc).startswith("fuzz.json")


# No shrinking: it would spend a minute minimizing every distinct crash; the explicit cases below are minimal.
@settings(FUZZ, phases=[Phase.explicit, Phase.generate])
@given(st.data())
def test_a_report_the_loader_accepts_can_be_rendered_and_gated(data):
    doc = _mutate(data, VALID)
    try:
        report = validate_report(doc, "fuzz.json")
    except ReportError:
        return
    _usable(report)


def _set(path: tuple, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(VALID)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


OUTCOME = ("records", 3, "outcome")


@pytest.mark.parametrize("path, value", [
    pytest.param((*OUTCOME, "timings"), [None]),
    pytest.param((*OUTCOME, "timings", "eager"), {}),
    pytest.param((*OUTCOME, "declared"), [None]),
    pytest.param((*OUTCOME, "notes"), 3),
    pytest.param((*OUTCOME, "graph", "op_histogram", "aten.linear.default"), {}),
    pytest.param((*OUTCOME, "counterexample"), {"shapes": [None]}),
    pytest.param(("scope", "not_run"), [1]),
    pytest.param(("scope", "not_run"), [["case", "mode", "extra"]]),
    pytest.param(("scope", "files"), 5),
    pytest.param(("scope", "modes"), [None]),
    pytest.param(("scope", "filtered"), "yes"),
    pytest.param(("gate",), {"regressions": [1], "failed": True}),
    pytest.param(("gate",), {"regressions": [{"case": "c", "mode": "strict", "headline": ["x"]}], "failed": True}),
    pytest.param(("gate",), {"vanished": {"case": "c"}}),
])
def test_wrong_container_types_are_rejected_by_the_loader(path, value):
    doc = _set(path, value)
    try:
        report = validate_report(doc, "bad.json")
    except ReportError as exc:
        assert str(exc).startswith("bad.json")
        return
    _usable(report)


@pytest.mark.parametrize("path, value, message", [
    (("scope", "files"), 5, "bad.json: scope.files must be a list or null, got int"),
    (("scope", "deselected"), ["a", 1], "bad.json: scope.deselected[1] must be str, got int"),
    (("scope", "not_run"), [1], "bad.json: scope.not_run[0] must be a list, got int"),
    (("scope", "not_run"), [["case"]], "bad.json: scope.not_run must be a list of [case, mode] string pairs"),
    (("scope", "shard"), [3, 2], "bad.json: scope.shard must be [index, count] with 1 <= index <= count, got [3, 2]"),
    (("scope", "tests"), "a::b", "bad.json: scope.tests must be a list or null, got str"),
    (("scope", "filtered"), "yes", "bad.json: scope.filtered must be bool, got str"),
    (("gate",), {"failed": 1}, "bad.json: gate.failed must be bool, got int"),
    (("gate",), {"regressions": [1]}, "bad.json: gate.regressions[0] must be an object, got int"),
    (("gate",), {"new": [{"case": "c"}]}, "bad.json: gate.new[0]: missing field(s) ['mode']"),
    (("gate",), {"new": [{"case": "c", "mode": 3}]}, "bad.json: gate.new[0].mode must be str, got int"),
    (("gate",), {"vanished": [{"case": "c", "mode": "m", "why": {}}]},
     "bad.json: gate.vanished[0].why must be str or null"),
])
def test_wrong_scope_or_gate_field_is_a_report_error_naming_it(path, value, message):
    with pytest.raises(ReportError) as exc:
        validate_report(_set(path, value), "bad.json")
    assert message in str(exc.value)


def test_scope_and_gate_as_the_plugin_writes_them_are_accepted():
    scope = Scope(files={"t.py"}, modes={"strict"}, deselected=None, not_run={("c", "strict")}, filtered=True)
    gate = compare(REPORT, sample_records()[:2], scope, name="base.json")
    doc = dict(VALID, scope=scope.to_dict(), gate=gate.to_dict())
    report = validate_report(json.loads(json.dumps(doc)), "ok.json")
    assert report["gate"]["baseline"] == "base.json"
    _usable(report)


@FUZZ
@given(JSON)
def test_random_json_is_rejected_with_report_error(doc):
    try:
        report = validate_report(doc, "fuzz.json")
    except ReportError:
        return
    _usable(report)


_TMP = Path(tempfile.mkdtemp(prefix="fuzz-report-"))


@FUZZ
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_random_bytes_on_disk_are_rejected_with_report_error(blob):
    path = _TMP / "report.json"
    path.write_bytes(blob)
    try:
        load_report(path)
    except ReportError as exc:
        assert str(path) in str(exc)
    # (No other outcome is possible: random bytes are never a valid report.)


TEXT = json.dumps(VALID, indent=1)


@FUZZ
@given(st.integers(0, len(TEXT) - 1))
def test_every_truncation_of_a_report_is_rejected_with_report_error(cut):
    path = _TMP / "truncated.json"
    path.write_text(TEXT[:cut])
    try:
        load_report(path, "truncated.json")
    except ReportError as exc:
        assert str(exc).startswith("truncated.json: ")
    else:
        raise AssertionError(f"a report cut at {cut} of {len(TEXT)} characters was accepted")


def test_the_unmutated_report_round_trips():
    path = _TMP / "valid.json"
    path.write_text(TEXT)
    assert [r.to_dict() for r in load_report(path)["records"]] == VALID["records"]
