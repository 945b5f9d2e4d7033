"""Render a report as one self-contained HTML page (inline CSS and SVG, no script, no network).

This module turns the report into plain data; ``exportdb/html/templates/report.html.j2`` draws it,
escaping every value (shared template set and stylesheet, see exportdb.html).
Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from pytest_export.explain import exportdb_page
from pytest_export.report_charts import categories_chart, ops_chart, stage_sorted, stage_table
from pytest_export.report_findings import finding_rows, findings_badge, findings_section
from pytest_export.report_overview import anchors as _anchors, cap, cards, gate_banner, header, record_anchor
from pytest_export.report_runtimes import runtime_tables, runtimes_section
from pytest_export.report_style import EXPORTABLE, MODE_ORDER, PROBLEMS, VERDICT_LABEL, render_page
from pytest_export.sanitize import shown_text
from pytest_export.story import explanation_rows

__all__ = ["render_html", "record_anchor"]

_CODE_LIMIT = 40_000  # characters of graph code / tracebacks per record
_SAME_MIN = 300  # a long text seen before on the page is linked, not repeated
_TOP_OPS = 20  # ops listed per record


@dataclass
class _Page:
    """What every section of one page shares: where ExportDB docs are, long texts already shown."""

    docs: str | None = None
    seen: dict[str, tuple[str, str]] = field(default_factory=dict)  # text digest -> (anchor, "case [mode]")


def _failure(record: dict[str, Any]) -> dict[str, Any] | None:
    return (record.get("outcome") or {}).get("failure")


def _meta(record: dict[str, Any], docs: str | None) -> list[tuple[str, str, Any]]:
    """Return the (label, kind, data) rows of a record's failure and expectation; rows with nothing to show left out."""
    f = _failure(record)
    expect = record.get("expect") or {}
    rows: list[tuple[str, str, Any]] = []
    if f:
        rows += [(label, "text", f[key]) for label, key in (("stage", "stage"), ("category", "category"))
                 if shown_text(f[key])]
        rows.append(("exception", "code", f["exc_type"]))
        if f.get("hint"):
            rows.append(("fix hint", "hint", f["hint"]))
        src = f.get("source")
        if src:
            rows.append(("user source", "source", {"file": src["file"], "line": src["line"],
                                                   "function": src.get("function"), "code": src.get("code")}))
        if f.get("exportdb_case"):
            name = f["exportdb_case"]
            rows.append(("ExportDB case", "exportdb", {"name": name, "href": exportdb_page(name, docs)}))
        rows += explanation_rows(record.get("outcome") or {}, f.get("exportdb_case"))
    if expect and (shown_text(expect.get("reason", "")) or expect.get("category")):
        rows.append(("expected failure", "expected", {"reason": expect.get("reason", ""),
                                                      "category": expect.get("category")}))
    return rows


def _long_text(title: str, text: str, record: dict[str, Any], anchor: str, page: _Page) -> dict[str, Any]:
    # The same torch message or traceback often fails many cases: show it once, link the rest.
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    if len(text) >= _SAME_MIN and digest in page.seen:
        first, label = page.seen[digest]
        return {"title": title, "same": first, "label": label}
    page.seen.setdefault(digest, (anchor, f'{record["case"]} [{record["mode"]}]'))
    return {"title": title, "same": None, "text": cap(text, _CODE_LIMIT)}


def _body(record: dict[str, Any], anchor: str, page: _Page) -> dict[str, Any]:
    """Return what a record's details show, in page order (long texts repeated on the page become links)."""
    o = record.get("outcome") or {}
    ce = o.get("counterexample") or None
    if ce:
        ce = {"shapes": [(k, "×".join(map(str, v)) or "scalar") for k, v in (ce.get("shapes") or {}).items()],
              "message": ce.get("message"),
              "reproduce": cap(ce["reproduce"], _CODE_LIMIT) if ce.get("reproduce") else ""}
    ex = o.get("examples") or {}
    drawn = None
    if ex.get("tried") or ex.get("note"):
        drawn = {k: ex.get(k, 0) for k in ("tried", "discarded", "accepted", "rejected")}
        drawn["note"] = ex.get("note", "")
    f = _failure(record)
    long = []
    if f and f.get("detail") and f["detail"].strip() != f["message"].strip():
        long.append(_long_text("Full message", f["detail"], record, anchor, page))
    if f and f.get("traceback"):
        long.append(_long_text("torch traceback", f["traceback"], record, anchor, page))
    timings = [(k, f"{float(v):.3f}") for k, v in stage_sorted((o.get("timings") or {}).items())]
    graph = o.get("graph") or {}
    ops = sorted((graph.get("op_histogram") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "meta": _meta(record, page.docs),
        "declared": list((o.get("declared") or {}).items()),
        "exported": list((o.get("range_constraints") or {}).items()),
        "counterexample": ce,
        "findings": o.get("findings") or [],
        "examples": drawn,
        "notes": o.get("notes") or [],
        "long": long,
        "timings": timings,
        "duration": f"{float(record.get('duration', 0)):.2f}",
        "ops": [(k, int(v)) for k, v in ops[:_TOP_OPS]] if ops else None,
        "more_ops": len(ops) > _TOP_OPS,
        "node_count": graph.get("node_count", 0),
        "code": cap(graph["code"], _CODE_LIMIT) if graph.get("code") else "",
    }


def _headline(record: dict[str, Any]) -> str:
    f = _failure(record)
    if not f and record["verdict"] == "xpassed":
        reason = (record.get("expect") or {}).get("reason", "")
        return f"exported although expected to fail ({reason}): remove the expectation"
    if not f:
        return record["verdict"]
    return f"[{f['stage']}] {f['category']}: {f['exc_type']}: {f['message']}"


def _view(record: dict[str, Any], anchor: str) -> dict[str, Any]:
    nodes = ((record.get("outcome") or {}).get("graph") or {}).get("node_count")
    headline = _headline(record)
    return {"r": record, "anchor": anchor, "label": VERDICT_LABEL.get(record["verdict"], record["verdict"]),
            "headline": headline, "index_line": cap(headline, 400), "problem": record["verdict"] in PROBLEMS,
            "when": f"{float(record.get('duration', 0)):.2f}s" + (f" · {nodes} nodes" if nodes else "")}


def _matrix(views: list[dict[str, Any]]) -> dict[str, Any]:
    found = {v["r"]["mode"] for v in views}
    modes = [m for m in MODE_ORDER if m in found] + sorted(found - set(MODE_ORDER))
    cells: dict[str, dict[str, tuple[dict[str, Any], int]]] = {}
    for v in views:
        row = cells.setdefault(v["r"]["case"], {})
        prev = row.get(v["r"]["mode"])
        # One cell per (case, mode): the worst of its records, with how many there are.
        if prev is None or (prev[0]["r"]["verdict"] in EXPORTABLE and v["r"]["verdict"] not in EXPORTABLE):
            row[v["r"]["mode"]] = (v, (prev[1] if prev else 0) + 1)
        else:
            row[v["r"]["mode"]] = (prev[0], prev[1] + 1)

    def rank(case: str) -> tuple[int, str]:  # rows with problems first: that is what the reader came for
        return (0 if any(c[0]["r"]["verdict"] in PROBLEMS for c in cells[case].values()) else 1, case)

    rows = []
    for case in sorted(cells, key=rank):
        row = []
        for m in modes:
            if m not in cells[case]:
                row.append(None)
                continue
            v, n = cells[case][m]
            f = _failure(v["r"])
            row.append({"v": v, "n": n, "tip": f["message"][:300] if f else "", "badge": findings_badge(v["r"]),
                        "stage": f["stage"] if f and v["r"]["verdict"] not in EXPORTABLE else None})
        rows.append((case, row))
    return {"modes": modes, "rows": rows}


def render_html(report: dict[str, Any]) -> str:
    """Return the report as a standalone HTML document."""
    records = report["records"]
    anchors = _anchors(records)
    summary = report.get("summary") or {}
    docs = (report.get("environment") or {}).get("exportdb_docs")
    page = _Page(docs=docs if isinstance(docs, str) else None)
    views = [_view(r, a) for r, a in zip(records, anchors)]
    bad = [v for v in views if v["problem"]]
    xfail = [v for v in views if v["r"]["verdict"] == "xfailed"]
    rest = [v for v in views if not v["problem"] and v["r"]["verdict"] != "xfailed"]
    for v in bad + xfail + rest:  # page order, so that a repeated long text links back to its first showing
        v["body"] = _body(v["r"], v["anchor"], page)
    return render_page(
        "report.html.j2",
        title=f"pytest-export: {summary.get('verdicts', {}).get('passed', 0)}/{summary.get('total', 0)} passed",
        header=header(report), cards=cards(summary, len(finding_rows(records))), gate=gate_banner(report.get("gate")),
        bad=bad, matrix=_matrix(views), findings=findings_section(records, anchors),
        runtimes=runtimes_section(report.get("runtimes") or runtime_tables(records)),
        categories=categories_chart(report), xfail=xfail, ops=ops_chart(report), stages=stage_table(report),
        views=views,
    )
