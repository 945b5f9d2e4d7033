"""pytest_export.results.records: the one record type, its constructor and codec, and the helpers every reader shares."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from report_factory import make_record

from exportcore.codec import SchemaError
from exportcore.outcome import Counterexample, DimOutcome, Failure, Outcome, SourceLocation
from pytest_export.results.records import Expectation, Record, failure_of, ordered_modes, record_key, worst


def _record(verdict: str, failure: Failure | None = None, mode: str = "strict") -> Record:
    outcome = Outcome(case_id="t.py::c", mode=mode, status="failed" if failure else "passed", failure=failure)
    return Record.make(f"t.py::c[{mode}]", "t.py::c", mode, verdict, outcome)


def test_a_records_headline_is_the_failures_own():
    failure = Failure(stage="capture", category="data-dependent", exc_type="UserError", message="branch on x",
                      source=SourceLocation("m.py", 12, "forward", "if x.sum() > 0:"))
    record = _record("failed", failure)
    assert failure_of(record) == failure
    assert failure_of(record).headline() == "[capture] data-dependent: UserError: branch on x at m.py:12"
    assert failure_of(record).headline(at=False) == "[capture] data-dependent: UserError: branch on x"
    assert failure_of(_record("passed")) is None
    assert failure_of(Record.make("t", "c", "strict", "error", None)) is None


def test_the_worst_record_speaks_for_its_key():
    passed, xpassed = _record("passed"), _record("xpassed")
    failed, crashed = _record("failed"), _record("crashed")
    assert worst([passed, failed, crashed]) is failed
    assert worst([xpassed, passed]) is xpassed  # both exported: the first stands
    assert worst([passed, _record("skipped")]).verdict == "skipped"  # not run is not exported
    assert record_key(failed) == ("t.py::c", "strict")


def test_known_modes_come_first_in_their_order_then_the_others_sorted():
    assert ordered_modes(["zeta", "training", "strict", "aoti", "strict"], ("strict", "non_strict", "training")) == [
        "strict", "training", "aoti", "zeta",
    ]


def test_a_record_round_trips_through_json_exactly():
    record = make_record("tests/t.py::test_x[4]", "training", "xfailed")  # failure, findings, counterexample
    data = json.loads(json.dumps(record.to_dict()))
    assert sorted(data) == ["case", "duration", "expect", "mode", "outcome", "source", "test", "verdict"]
    assert data["expect"] == {"reason": "data-dependent control flow", "category": "data-dependent"}
    assert Record.from_dict(data) == record
    assert Record.from_dict(data).to_dict() == data


def test_a_bad_verdict_is_refused_naming_the_field():
    data = make_record().to_dict()
    data["verdict"] = "great"
    with pytest.raises(SchemaError, match=r"records\[2\]\.verdict must be one of .*got 'great'"):
        Record.from_dict(data, "records[2]")
    with pytest.raises(SchemaError, match="verdict must be one of"):
        Record.make("t", "c", "strict", "great", None)


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d["outcome"]["failure"].update(stage=3), "records[3].outcome.failure.stage must be str, got int"),
    (lambda d: d.update(duration="1s"), "records[3].duration must be float, got str"),
    (lambda d: d.update(expect={"reason": 1}), "records[3].expect.reason must be str, got int"),
    (lambda d: d.update(expect="xfail"), "records[3].expect must be an object or null, got str"),
    (lambda d: d.update(source="elsewhere"), "records[3].source must be one of ('marker', 'fixture')"),
    (lambda d: d.pop("test"), "records[3]: missing field(s) ['test']"),
    (lambda d: d.update(extra=1), "records[3]: unknown field(s) ['extra']"),
    (lambda d: d["outcome"].update(schema=2), "records[3].outcome: schema 2 is not supported (expected 1)"),
])
def test_a_wrong_record_names_the_field_path(mutate, message):
    data = make_record(verdict="failed").to_dict()
    mutate(data)
    with pytest.raises(SchemaError) as info:
        Record.from_dict(data, "records[3]")
    assert message in str(info.value)


def test_optional_fields_default_as_older_records_left_them_out():
    record = Record.from_dict({"test": "t", "case": "c", "mode": "strict", "verdict": "passed", "duration": 1})
    assert (record.expect, record.outcome, record.source, record.duration) == (None, None, "marker", 1.0)


def test_make_leaves_every_text_encodable_and_narrows_builtin_subclasses():
    class Version(str):  # torch.__version__ is a str subclass execnet cannot send
        pass

    outcome = Outcome(case_id="c", mode="strict", status="failed", torch_version=Version("2.14.1"),
                      failure=Failure(stage="capture", category="other", exc_type="E", message="bad \udcff byte"))
    record = Record.make("t", "c", "strict", "failed", outcome, expect=Expectation("why"), duration=0.1234567891)
    assert type(record.outcome.torch_version) is str
    assert record.outcome.failure.message == "bad \\udcff byte"
    assert record.duration == 0.123457
    json.dumps(record.to_dict()).encode("utf-8")


def _odd_outcome() -> Outcome:
    # What the codec's encoder cleans: a str subclass, a lone surrogate, tuples, an int timing, a non-str key.
    class Version(str):
        pass

    return Outcome(case_id="c", mode="strict", status="failed", torch_version=Version("2.14.1"), checks=("accept",),
                   timings={"eager": 1, Version("k\udcff"): 2.5}, dims=(DimOutcome("b", "[2, 4]", "dynamic"),),
                   counterexample=Counterexample({"args[0]": (1, 3)}), graph={"node_count": 3},  # type: ignore[arg-type]
                   failure=Failure(stage="capture", category="other", exc_type="E", message="bad \udcff byte",
                                   source=SourceLocation("m.py", 3)))


def _round_trip(*args, **kwargs) -> Record:
    # What Record.make was before it built the record directly: an encode and a decode.
    test, case, mode, verdict, outcome = args
    return Record.from_dict(Record(test=test, case=case, mode=mode, verdict=verdict, outcome=outcome,
                                   duration=round(kwargs.pop("duration", 0.0), 6), **kwargs).to_dict())


@pytest.mark.parametrize("break_it", [
    None,
    lambda o: setattr(o.failure, "stage", "compile"),  # off the vocabulary: an error record naming the field
    lambda o: setattr(o.failure.source, "line", "3"),
    lambda o: setattr(o.failure.source, "file", Path("m.py")),  # no JSON data
    lambda o: setattr(o, "checks", "accept"),
    lambda o: o.timings.update(x="1"),
    lambda o: setattr(o, "graph", {"nodes": 3}),
])
def test_make_gives_the_record_an_encode_and_a_decode_would(break_it):
    # Built from the typed values in one walk (codec.checked), the record is the round trip's, error records too.
    made, trip = _odd_outcome(), _odd_outcome()
    if break_it is not None:
        break_it(made), break_it(trip)
    record = Record.make("t", "c", "strict", "failed", made, expect=Expectation("why"), duration=0.1234567891)
    try:
        expected = _round_trip("t", "c", "strict", "failed", trip, expect=Expectation("why"), duration=0.1234567891)
    except (SchemaError, TypeError) as exc:
        assert break_it is not None and record.verdict == "error"
        assert f"the outcome is not a valid result: {exc} (" in record.outcome.failure.message
    else:
        assert break_it is None and record == expected
        assert type(record.outcome.torch_version) is str and type(record.outcome.checks) is list


def test_a_record_shares_nothing_with_the_outcome_its_caller_keeps():
    # export_check hands record.outcome to the test and the caller keeps its own: an edit to either after
    # make must not reach the other (nor the report, written from the record at the session's end).
    outcome = make_record(verdict="failed").outcome
    record = Record.make("t", "c", "strict", "failed", outcome)
    kept = record.to_dict()
    outcome.failure.message = "changed"
    outcome.checks.append("later")
    outcome.timings["later"] = 1.0
    outcome.findings[0].message = "changed"
    outcome.counterexample.shapes["args[0]"].append(9)
    assert record.to_dict() == kept
    record.outcome.notes.append("the test's own note")
    assert outcome.notes == []


def test_reading_records_imports_neither_pytest_nor_torch():
    code = ("import sys, pytest_export.results.records, pytest_export.results.report, pytest_export.results.gate, "
            "pytest_export.results.merge, pytest_export.results.diff, pytest_export.results.journal; "
            "bad = {'pytest', 'torch'} & set(sys.modules); assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
