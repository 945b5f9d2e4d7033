"""Outcome: the JSON schema every worker, report and baseline relies on."""

from __future__ import annotations

import json

import pytest

from exportcore.outcome import (
    SCHEMA_VERSION,
    Counterexample,
    ExampleStats,
    Failure,
    Finding,
    GraphStats,
    Outcome,
    SchemaError,
    SourceLocation,
)


def _full() -> Outcome:
    return Outcome(
        case_id="tests/test_m.py::test_mlp",
        mode="strict",
        status="failed",
        failure=Failure(
            stage="guards", category="guards", exc_type="GuardRejected", message="in-spec shape rejected",
            detail="declared b: [2, 8]", hint="declare it static", source=SourceLocation("m.py", 12, "forward", "x.view(4)"),
            exportdb_case="auto_dim_specializes", traceback="Traceback ...",
        ),
        checks=["accept", "numerics"],
        timings={"capture": 0.5, "eager": 0.01},
        graph=GraphStats(node_count=7, op_histogram={"aten.mm.default": 2}, code="def forward(...)"),
        declared={"b": "[2, 8]"},
        range_constraints={"s0": "[2, 8]"},
        findings=[Finding("size01_accepted", "warning", "size 1 accepted", input="args[0]")],
        examples=ExampleStats(tried=5, discarded=1, accepted=4, rejected=3, note=""),
        counterexample=Counterexample(shapes={"args[0]": [3, 4]}, message="m", reproduce="check(...)"),
        notes=["decompose (training): ..."],
        torch_version="2.14.1",
    )


def test_a_full_outcome_round_trips_exactly_through_json():
    out = _full()
    text = out.to_json()
    assert json.loads(text)["schema"] == SCHEMA_VERSION
    assert Outcome.from_json(text) == out
    assert Outcome.from_dict(json.loads(text)).to_dict() == out.to_dict()


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.update(schema=99), "schema 99"),
        (lambda d: d.update(status="great"), "outcome.status"),
        (lambda d: d.update(surprise=1), "unknown field"),
        (lambda d: d["failure"].update(stage=3), "outcome.failure.stage"),
        (lambda d: d.update(timings={"eager": "fast"}), "outcome.timings"),
        (lambda d: d["graph"].update(op_histogram={"mm": 1.5}), "outcome.graph.op_histogram"),
        (lambda d: d["counterexample"].update(shapes={"args[0]": ["3"]}), "outcome.counterexample.shapes"),
        (lambda d: d["findings"][0].update(input=5), "outcome.findings[0].input"),
        (lambda d: d.pop("case_id"), "missing field"),
    ],
)
def test_invalid_documents_raise_schema_error_naming_the_field(mutate, needle):
    data = _full().to_dict()
    mutate(data)
    with pytest.raises(SchemaError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        Outcome.from_dict(data)


def test_not_json_is_a_schema_error():
    with pytest.raises(SchemaError, match="not valid JSON"):
        Outcome.from_json("{truncated")
