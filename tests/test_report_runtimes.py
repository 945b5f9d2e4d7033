"""The shapes × runtimes tables: rows merged per case from the target records, columns in order."""

from __future__ import annotations

from exportcore.outcome import Outcome, ShapeRow
from pytest_export.results.records import Record
from pytest_export.rendering.markdown import render_markdown
from pytest_export.rendering.runtimes import runtime_tables, runtimes_html
from pytest_export.results.report import build_report


def record(mode: str, rows: list[dict[str, str]], case: str = "t.py::test_m") -> Record:
    typed = [ShapeRow(r["shapes"], r["kind"], {k: v for k, v in r.items() if k not in ("shapes", "kind")}) for r in rows]
    return Record.make(f"{case}[{mode}]", case, mode, "passed", Outcome(case, mode, shape_table=typed), duration=0.1)


ONNX = [{"shapes": "args[0]=[4, 4]", "kind": "example", ".module()": "accepted", "onnx": "accepted"},
        {"shapes": "args[0]=[67, 4]", "kind": "out of range (above_max:b)", ".module()": "rejected",
         "onnx": "accepted"}]
AOTI = [{"shapes": "args[0]=[67, 4]", "kind": "out of range (above_max:b)", ".module()": "rejected",
         "aoti": "rejected"},
        {"shapes": "args[0]=[9, 4]", "kind": "in range", ".module()": "accepted", "aoti": "accepted"}]


def test_rows_of_every_target_of_a_case_merge_by_shape():
    tables = runtime_tables([record("onnx", ONNX), record("aoti", AOTI), record("non_strict", [])])
    table = tables["t.py::test_m"]
    assert table["columns"] == [".module()", "aoti", "onnx"]
    assert [r["kind"] for r in table["rows"]] == ["example", "in range", "out of range (above_max:b)"]
    above = table["rows"][-1]
    assert (above[".module()"], above["aoti"], above["onnx"]) == ("rejected", "rejected", "accepted")
    assert "aoti" not in table["rows"][0]  # not tried there: shown as a dash


def test_devices_get_their_own_table_and_cases_without_targets_none():
    tables = runtime_tables([record("onnx", ONNX), record("onnx-cuda", ONNX), record("strict", [], "t.py::test_x")])
    assert sorted(tables) == ["t.py::test_m", "t.py::test_m [cuda]"]


def test_html_and_markdown_show_the_table_and_mark_an_accepted_out_of_range_shape():
    tables = runtime_tables([record("onnx", ONNX)])
    html = runtimes_html(tables)
    assert "Shapes × runtimes" in html and '<td class="v-failed">accepted</td>' in html
    assert runtimes_html({}) == ""
    md = render_markdown(build_report([record("onnx", ONNX)]))
    assert "| `args[0]=[67, 4]` | out of range (above_max:b) | rejected | ❌ **accepted** |" in md
    assert "| `args[0]=[4, 4]` | example | accepted | accepted |" in md  # right cells stay plain
    assert "❌ marks a broken cell" in md and "– : not tried" in md
