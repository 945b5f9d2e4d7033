"""HTML report: parsed and checked for the matrix, failure details, escaping and self-containment."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from report_factory import make_record, sample_records

from exportcore.outcome import Finding, ShapeRow
from pytest_export.results.report import build_report
from pytest_export.rendering.html import record_anchor, render_html

VOID = {"meta", "br", "hr", "img", "input", "link", "rect", "source", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag: str | None = None):
        for c in self.children:
            if isinstance(c, Node):
                if tag is None or c.tag == tag:
                    yield c
                yield from c.iter(tag)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"unbalanced </{tag}>"
        self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    assert builder.cur is builder.root, f"unclosed <{builder.cur.tag}>"
    return builder.root


def by_id(root: Node) -> dict[str, Node]:
    return {n.attrs["id"]: n for n in root.iter() if "id" in n.attrs}


@pytest.fixture(scope="module")
def page() -> Node:
    report = build_report(sample_records(), environment={"python": "3.11", "torch": "2.14.1"})
    return parse(render_html(report))


def test_page_is_self_contained(page):
    tags = {n.tag for n in page.iter()}
    assert "script" not in tags and "link" not in tags and "iframe" not in tags
    for node in page.iter():
        for name in ("src", "href"):
            value = node.attrs.get(name, "")
            assert not value or value.startswith("#"), f"<{node.tag} {name}={value!r}> leaves the page"
    assert any(n.tag == "style" for n in page.iter())


def test_matrix_has_one_row_per_case_and_a_column_per_mode(page):
    matrix = next(t for t in page.iter("table") if "matrix" in t.classes())
    header = [th.text() for th in next(matrix.iter("thead")).iter("th")]
    assert header == ["case", "strict", "non_strict", "training"]
    rows = {next(r.iter("th")).text(): [td.text() for td in r.iter("td")] for r in next(matrix.iter("tbody")).iter("tr")}
    assert rows["tests/test_a.py::test_mlp"] == ["passed"] * 3
    assert rows["tests/test_a.py::test_branch"] == ["FAILEDcapture⚑ 1 finding", "xfailcapture⚑ 1 finding", "—"]
    assert rows["tests/test_b.py::test_conv[4]"] == ["passed", "ERROReager⚑ 1 finding", "—"]
    # Rows with problems come first; verdicts are written, not only colored.
    assert list(rows)[-1] == "tests/test_a.py::test_mlp"


def test_every_matrix_cell_links_to_that_records_details(page):
    ids = by_id(page)
    matrix = next(t for t in page.iter("table") if "matrix" in t.classes())
    links = [a.attrs["href"][1:] for a in matrix.iter("a")]
    assert len(links) == 7
    for anchor in links:
        assert anchor in ids
    failed = ids[record_anchor("tests/test_a.py::test_branch", "strict")]
    assert failed.tag == "article" and "FAILED" in failed.text()


def test_failure_detail_shows_what_broke_where_and_what_to_try(page):
    article = by_id(page)[record_anchor("tests/test_a.py::test_branch", "strict")]
    text = article.text()
    for expected in (
        "[capture] data-dependent: torch._dynamo.exc.UserError: Could not guard on data-dependent expression",
        "use torch.cond or torch._check",  # hint
        "tests/test_a.py:12", "if x.sum() > 0:",  # user source line
        "cond_predicate",  # nearest ExportDB case
        "[1, 64]", "VR[2, 64]",  # declared vs exported ranges
        "args[0]", "1×3",  # counterexample shape
        "batch specialized to 4",  # finding
        "capture 0.400s",  # timings
    ):
        assert expected in text, expected
    summaries = [d for d in article.iter("details")]
    assert any("Exported graph code" in d.text() and "torch.ops.aten.linear" in d.text() for d in summaries)
    assert any("torch traceback" in d.text() for d in summaries)


def test_failures_are_listed_before_the_matrix(page):
    order = [n.attrs["id"] for n in page.iter("h2") if "id" in n.attrs]
    assert order.index("failures") < order.index("matrix")
    index = next(t for t in page.iter("table") if "index" in t.classes())
    assert [a.attrs["href"][1:] for a in index.iter("a")] == [
        record_anchor("tests/test_a.py::test_branch", "strict"),
        record_anchor("tests/test_b.py::test_conv[4]", "non_strict"),
    ]


def _category_bars(root: Node) -> dict[str, list[str]]:
    svg = next(root.iter("svg"))
    return {next(g.iter("text")).text(): [r.attrs["class"] for r in g.iter("rect")] for g in svg.iter("g")}


def test_category_chart_is_inline_svg(page):
    # data-dependent: one unexpected failure (red) and one expected (amber); input: one error.
    assert _category_bars(page) == {"data-dependent": ["bad", "expected"], "input": ["bad"]}


def test_expected_failures_alone_are_not_alarm_red():
    records = [make_record("tests/t.py::test_a", "strict", "xfailed"), make_record("tests/t.py::test_b", "strict")]
    root = parse(render_html(build_report(records)))
    assert _category_bars(root) == {"data-dependent": ["expected"]}
    assert "1 expected" in next(root.iter("svg")).text()


def _after(node: Node, tag: str) -> Node:
    siblings = [c for c in node.parent.children if isinstance(c, Node)]
    return next(n for n in siblings[siblings.index(node) + 1:] if n.tag == tag)


def test_stage_timings_and_op_histogram_are_shown(page):
    ids = by_id(page)
    ops = _after(ids["ops"], "svg").text()
    assert "aten.linear.default" in ops and "14" in ops  # 7 records x 2 linear nodes
    timings = [[td.text() for td in tr.iter("td")] for tr in _after(ids["timings"], "table").iter("tr")][1:]
    assert [row[0] for row in timings] == ["eager", "capture", "decompose", "numerics"]  # pipeline order
    assert timings[1][1:] == ["2.80", "0.400", "0.400", "7"]


EVIL = "<script>alert('x')</script>"


@pytest.mark.parametrize("where", ["case", "message", "hint", "environment", "code"])
def test_user_and_exception_text_is_escaped(where):
    case = f"tests/test_x.py::test_evil[{EVIL}]" if where == "case" else "tests/test_x.py::test_evil"
    record = make_record(case, "strict", "failed", message=EVIL if where == "message" else "boom")
    failure = record.outcome.failure
    if where == "hint":
        failure.hint = EVIL
    if where == "code":
        record.outcome.graph.code = EVIL
        failure.source.code = EVIL
    env = {"python": EVIL} if where == "environment" else {}
    html = render_html(build_report([record], environment=env))
    root = parse(html)
    assert not any(n.tag in ("script", "img") for n in root.iter())
    assert EVIL in root.text()
    assert "<script>" not in html


def test_quotes_in_attributes_are_escaped():
    record = make_record("tests/test_x.py::test_q", "strict", "failed", message='x" onmouseover="alert(1)')
    root = parse(render_html(build_report([record])))
    assert not any("onmouseover" in n.attrs for n in root.iter())


def test_incomplete_report_is_marked():
    report = build_report(sample_records(), complete=False, stop_reason="interrupted (KeyboardInterrupt)")
    root = parse(render_html(report))
    banner = next(n for n in root.iter("p") if "banner" in n.classes())
    assert "Incomplete run" in banner.text() and "KeyboardInterrupt" in banner.text()


def test_gate_regressions_are_shown_first_and_link_to_details():
    records = sample_records()
    gate = {"baseline": "base.json", "failed": True, "regressions": [
        {"case": "tests/test_a.py::test_branch", "mode": "strict", "test": "x", "before": "passed",
         "after": "failed", "headline": "[capture] data-dependent", "why": ""}]}
    root = parse(render_html(build_report(records, gate=gate)))
    section = by_id(root)["gate"]
    assert "Gate FAILED vs base.json" in section.text()
    assert next(section.iter("a")).attrs["href"] == "#" + record_anchor("tests/test_a.py::test_branch", "strict")


def test_long_graph_code_is_capped():
    record = make_record()
    record.outcome.graph.code = "x = 1\n" * 100_000
    html = render_html(build_report([record]))
    assert len(html) < 100_000 and "more characters cut" in html


def test_empty_report_renders():
    root = parse(render_html(build_report([])))
    assert "No unexpected failures" in root.text()


def test_control_characters_and_lone_surrogates_never_reach_the_page():
    message = "open caf\udce9.bin: \x1b[31mred\x1b[0m \x00\x07 done"
    record = make_record("tests/test_x.py::test_ctl", "strict", "failed", message=message)
    record.outcome.failure.traceback = "frame\x1b[1m bold\x1b[0m\n\x08back"
    html = render_html(build_report([record]))
    html.encode("utf-8")  # writable
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", html)
    assert "open caf\\udce9.bin: red \\x00\\x07 done" in parse(html).text()
    assert "frame bold\n\\x08back" in html


def test_all_results_lists_every_record_and_failures_link_to_their_details(page):
    ids = by_id(page)
    heading = ids["records"]
    assert heading.text() == "All results (7)"
    rows = [n for n in heading.parent.children
            if isinstance(n, Node) and "rec" in n.classes()]
    assert len(rows) == 7
    short = [r for r in rows if r.tag == "div"]
    assert sorted(next(r.iter("a")).attrs["href"][1:] for r in short) == sorted([
        record_anchor("tests/test_a.py::test_branch", "strict"),
        record_anchor("tests/test_a.py::test_branch", "non_strict"),  # the expected failure too
        record_anchor("tests/test_b.py::test_conv[4]", "non_strict"),
    ])


def test_findings_have_a_section_with_their_case_and_a_card():
    records = sample_records()
    records[1].outcome.findings = [
        Finding(kind="size01_accepted", severity="warning", message="size 1 accepted for batch", input="args[0]")]
    root = parse(render_html(build_report(records)))
    section = by_id(root)["findings"]
    assert section.text() == "Findings (4)"
    table = _after(section, "table")
    rows = [[td.text() for td in tr.iter("td")] for tr in table.iter("tr")][1:]
    assert ["tests/test_a.py::test_mlp [non_strict]", "warning", "size01_accepted", "args[0]",
            "size 1 accepted for batch"] in rows
    link = next(a for a in table.iter("a") if "test_mlp" in a.text())
    assert link.attrs["href"] == "#" + record_anchor("tests/test_a.py::test_mlp", "non_strict")
    card = next(a for a in root.iter("a") if "card" in a.classes() and "findings" in a.text())
    assert card.attrs["href"] == "#findings" and "4" in card.text()


def test_a_long_message_repeated_across_records_is_shown_once():
    long = "Constraints violated (batch)! " + "x" * 800
    records = [make_record(f"tests/t.py::test_{i}", "strict", "failed", message=long) for i in range(5)]
    root = parse(render_html(build_report(records)))
    full = [d for d in root.iter("details") if next(d.iter("summary")).text() == "Full message"]
    assert len(full) == 1
    same = [p for p in root.iter("p") if p.text().startswith("Full message: same as")]
    assert len(same) == 4
    assert all(next(p.iter("a")).attrs["href"] == "#" + record_anchor("tests/t.py::test_0", "strict") for p in same)


def test_no_op_histogram_section_without_exported_graphs():
    record = make_record("tests/t.py::test_a", "strict", "error", stage="eager", category="eager")
    record.outcome.graph = None
    root = parse(render_html(build_report([record])))
    assert "ops" not in by_id(root)
    assert "Op histogram" not in root.text()


def test_exportdb_case_links_to_its_docs_page_when_the_docs_are_built(tmp_path):
    record = make_record("tests/t.py::test_a", "strict", "failed")
    record.outcome.failure.exportdb_case = "reshape_specializes_dim"
    plain = parse(render_html(build_report([record])))
    assert not any("reshape_specializes_dim" in a.attrs.get("href", "") for a in plain.iter("a"))
    root = parse(render_html(build_report([record], environment={"exportdb_docs": str(tmp_path)})))
    link = next(a for a in root.iter("a") if a.text() == "reshape_specializes_dim")
    assert link.attrs["href"] == f"{tmp_path.as_uri()}/constraints.html#reshape_specializes_dim"


HOSTILE = "<script>alert('x')</script>\" onmouseover=\"alert(1)\" &amp; 'q'"


def test_hostile_text_in_every_section_is_shown_as_text():
    from exportcore.outcome import Counterexample, DraftIssue, Explanation, SpecFix, SubmoduleFailure
    from pytest_export.results.records import Expectation

    record = make_record(f"tests/t.py::test_x[{HOSTILE}]", f"strict{HOSTILE}", "failed", message=HOSTILE,
                         category=HOSTILE, expect=Expectation(HOSTILE, HOSTILE))
    o = record.outcome
    o.explanation = Explanation(
        fix=SpecFix(status="verified", dynamic_shapes=HOSTILE, origin=HOSTILE),
        submodules=[SubmoduleFailure(path=HOSTILE, module_type=HOSTILE, category=HOSTILE, message=HOSTILE)],
        issues=[DraftIssue(kind=HOSTILE, message=HOSTILE, location=HOSTILE, code=HOSTILE, suggestion=HOSTILE)])
    # Stage, finding kind, severity and verdicts are closed words (exportcore.vocab): the codec refuses others.
    o.findings = [Finding(kind="specialized", severity="warning", message=HOSTILE, input=HOSTILE)]
    o.declared, o.notes = {HOSTILE: HOSTILE}, [HOSTILE]
    o.counterexample = Counterexample(shapes={HOSTILE: [1]}, message=HOSTILE, reproduce=HOSTILE)
    o.graph.op_histogram = {HOSTILE: 1}
    o.shape_table = [ShapeRow(HOSTILE, HOSTILE, {HOSTILE: "accepted"})]  # a cell itself is a closed word
    gate = {"baseline": HOSTILE, "failed": True, "regressions": [
        {"case": record.case, "mode": record.mode, "before": "passed", "after": "failed", "headline": HOSTILE}]}
    html = render_html(build_report([record], environment={HOSTILE: HOSTILE}, gate=gate))
    root = parse(html)
    assert not any(n.tag == "script" for n in root.iter())
    assert not any(name.startswith("on") for n in root.iter() for name in n.attrs)
    # Shown as written (escaped once, never dropped) in the header, gate, index, matrix tip, findings,
    # runtimes, charts, details (meta, explanation, ranges, counterexample, notes) and all results.
    assert root.text().count(HOSTILE) >= 50
    tip = next(a for t in root.iter("table") if "matrix" in t.classes() for a in t.iter("a"))
    assert tip.attrs["title"] == HOSTILE


def test_skip_reasons_are_visible_not_only_in_a_tooltip():
    from exportcore.outcome import Failure
    from report_factory import make_record

    records = [make_record(f"tests/t.py::test_{c}", "onnx", "skipped") for c in "ab"]
    for r in records:
        r.outcome.failure = Failure(stage="lower", category="target.unavailable", exc_type="TargetUnavailable",
                                    message="onnx: onnxruntime not installed (pip install onnxruntime)")
    html = render_html(build_report(records))
    section = html.split('<h2 id="skipped">Skipped (2)</h2>')[1].split("<h2")[0]
    assert "<td>onnx: onnxruntime not installed (pip install onnxruntime)</td><td>2</td>" in section
