"""exportcore.codec: dataclass trees to JSON builtins and back, validated from the type hints."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from exportcore.codec import SchemaError, decode, encode, one_of, version
from exportcore.outcome import (
    Counterexample,
    DraftIssue,
    Explanation,
    Failure,
    Finding,
    GraphStats,
    Outcome,
    SourceLocation,
    SpecFix,
    SubmoduleFailure,
 ShapeRow,)


@dataclass
class Leaf:
    name: str
    size: int = 0
    ratio: float = 1.0
    on: bool = False
    note: str | None = None


@dataclass
class Tree:
    stamp: int = field(default=2, metadata=version(2))
    kind: str = field(default="a", metadata=one_of(("a", "b")))
    leaf: Leaf | None = None
    leaves: list[Leaf] = field(default_factory=list)
    sizes: dict[str, list[int]] = field(default_factory=dict)
    extra: Any = None


def _full_outcome() -> Outcome:
    return Outcome(
        case_id="t.py::test_m", mode="strict", status="failed",
        failure=Failure(stage="capture", category="data-dependent", exc_type="UserError", message="branch",
                        detail="branch\nmore", hint="use torch.cond", exportdb_case="cond_predicate",
                        source=SourceLocation("m.py", 3, "forward", "if x.sum() > 0:")),
        checks=["numerics"], timings={"capture": 0.25}, graph=GraphStats(3, {"aten.add.Tensor": 2}, "code"),
        declared={"b": "[2, 64]"}, range_constraints={"s0": "VR[2, 64]"}, range_symbols={"b": "s0"},
        findings=[Finding("specialized", "warning", "b specialized", "args[0]"), Finding("narrowed", "error", "x")],
        counterexample=Counterexample({"args[0]": [1, 3]}, "rejected", "pytest t.py"),
        notes=["decompose skipped"], shape_table=[ShapeRow("args[0]=[4]", "example", {"aoti": "accepted"})],
        explanation=Explanation(
            fix=SpecFix("verified", "dynamic_shapes=None", "solved", ["b: min 2 -> 3"], exports=1, seconds=0.5),
            submodules=[SubmoduleFailure("enc.0", "Linear", "data-dependent", "boom", 2)],
            issues=[DraftIssue("GUARD_ADDED", "guard", "m.py:3", "if x:", "torch._check(x)")],
            timings={"draft": 1.5}, notes=["n"]),
        torch_version="2.14.1", reused_from="t.py::test_m[non_strict]",
    )


def test_a_full_outcome_round_trips_through_json():
    outcome = _full_outcome()
    data = json.loads(json.dumps(encode(outcome)))
    assert data == outcome.to_dict()
    assert decode(Outcome, data, "outcome") == outcome == Outcome.from_json(outcome.to_json())


def test_a_wrong_type_names_the_field_path():
    data = {"records": [None, None, None, {"outcome": _full_outcome().to_dict()}]}
    data["records"][3]["outcome"]["failure"]["stage"] = 3
    with pytest.raises(SchemaError, match=r"^records\[3\]\.outcome\.failure\.stage must be str, got int$"):
        decode(Outcome, data["records"][3]["outcome"], "records[3].outcome")


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d["findings"][1].update(input=5), "outcome.findings[1].input must be str or null, got int"),
    (lambda d: d.update(timings={"capture": "fast"}), "outcome.timings['capture'] must be float, got str"),
    (lambda d: d.update(timings={"capture": True}), "outcome.timings['capture'] must be float, got bool"),
    (lambda d: d["graph"].update(node_count=3.0), "outcome.graph.node_count must be int, got float"),
    (lambda d: d["counterexample"]["shapes"].update(x=["3"]), "outcome.counterexample.shapes['x'][0] must be int"),
    (lambda d: d.update(notes="one"), "outcome.notes must be a list, got str"),
    (lambda d: d.update(failure=[]), "outcome.failure must be an object or null, got list"),
    (lambda d: d["explanation"]["fix"].update(status="maybe"), "outcome.explanation.fix.status must be one of"),
    (lambda d: d.update(status="great"), "outcome.status must be one of"),
    (lambda d: d.update(shape_table=[{"shapes": 1, "kind": "example", "cells": {}}]),
     "outcome.shape_table[0].shapes must be str, got int"),
    (lambda d: d["shape_table"][0]["cells"].update(aoti="fine"), "cells {'aoti': 'fine'} must be among"),
])
def test_every_wrong_field_is_named(mutate, message):
    data = _full_outcome().to_dict()
    mutate(data)
    with pytest.raises(SchemaError) as info:
        Outcome.from_dict(data)
    assert message in str(info.value)


@pytest.mark.parametrize("schema", [None, 0, 2, "1"])
def test_an_unknown_schema_is_refused_before_anything_else(schema):
    data = _full_outcome().to_dict()
    data["renamed_in_v2"] = data.pop("notes")  # what a newer schema might do: the version speaks, not the field
    if schema is None:
        del data["schema"]
    else:
        data["schema"] = schema
    with pytest.raises(SchemaError, match=rf"^outcome: schema {schema!r} is not supported \(expected 1\)$"):
        Outcome.from_dict(data)


def test_ints_widen_to_float_and_bools_are_no_numbers():
    tree = decode(Tree, {"stamp": 2, "leaf": {"name": "x", "ratio": 2}}, "tree")
    assert tree.leaf == Leaf("x", ratio=2.0) and type(tree.leaf.ratio) is float
    with pytest.raises(SchemaError, match=r"tree\.leaf\.size must be int, got bool"):
        decode(Tree, {"stamp": 2, "leaf": {"name": "x", "size": True}}, "tree")
    with pytest.raises(SchemaError, match=r"tree\.leaf\.on must be bool, got int"):
        decode(Tree, {"stamp": 2, "leaf": {"name": "x", "on": 1}}, "tree")


def test_a_generic_tree_round_trips_and_missing_unknown_and_choice_errors_name_the_object():
    tree = Tree(kind="b", leaf=Leaf("a", 1, 0.5, True, "n"), leaves=[Leaf("b")], sizes={"x": [1, 2]}, extra={"k": [1]})
    assert decode(Tree, json.loads(json.dumps(encode(tree))), "tree") == tree
    with pytest.raises(SchemaError, match=r"^tree\.leaves\[0\]: missing field\(s\) \['name'\]$"):
        decode(Tree, {"stamp": 2, "leaves": [{}]}, "tree")
    with pytest.raises(SchemaError, match=r"^tree: unknown field\(s\) \['what'\]$"):
        decode(Tree, {"stamp": 2, "what": 1}, "tree")
    with pytest.raises(SchemaError, match=r"^tree\.kind must be one of \('a', 'b'\), got 'c'$"):
        decode(Tree, {"stamp": 2, "kind": "c"}, "tree")
    with pytest.raises(SchemaError, match=r"^tree\.sizes must have str keys, got int$"):
        decode(Tree, {"stamp": 2, "sizes": {1: []}}, "tree")
    with pytest.raises(SchemaError, match=r"^tree must be an object, got list$"):
        decode(Tree, [], "tree")


def test_encode_narrows_builtin_subclasses_and_refuses_what_json_cannot_hold():
    class Version(str):
        pass

    data = encode(Tree(leaf=Leaf(Version("2.14")), sizes={"x": (1, 2)}))  # type: ignore[dict-item]
    assert type(data["leaf"]["name"]) is str and data["sizes"] == {"x": [1, 2]}
    with pytest.raises(TypeError, match=r"tree\.extra: object is not JSON data"):
        encode(Tree(extra=object()), "tree")


def test_the_codec_imports_neither_torch_nor_pytest():
    code = ("import sys, exportcore.codec, exportcore.outcome; "
            "bad = {'pytest', 'torch'} & set(sys.modules); assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_target_row_written_before_rows_were_typed_still_loads():
    # Reports and baselines of the previous version wrote each row flat: {"shapes", "kind", <column>: <cell>}.
    data = _full_outcome().to_dict()
    data["shape_table"] = [{"shapes": "args[0]=[9, 4]", "kind": "in range", ".module()": "accepted", "onnx": "rejected"}]
    row = Outcome.from_dict(data).shape_table[0]
    assert (row.shapes, row.kind, row.cells) == ("args[0]=[9, 4]", "in range", {".module()": "accepted", "onnx": "rejected"})
    assert Outcome.from_dict(Outcome.from_dict(data).to_dict()).shape_table == [row]
