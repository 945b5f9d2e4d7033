"""Render a report as one self-contained HTML page (inline CSS and SVG, no script, no network).

This module turns the report into plain data; ``templates/report.html.j2`` draws it, escaping every
value (on exportdb/html's page shell and stylesheet, see exportdb.html).
Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from exportcore.outcome import Failure, Outcome
from pytest_export.rendering.failure_text import exportdb_page
from pytest_export.results.numerics_growth import headroom, worst_errors
from pytest_export.results.records import Record, failure_of, ordered_modes
from pytest_export.results.report import Report, summarize
from pytest_export.rendering.counts import row_label
from pytest_export.rendering.dims import case_ledger
from pytest_export.rendering.rescue import rescue_row
from pytest_export.rendering.charts import categories_chart, ops_chart, stage_sorted, stage_table
from pytest_export.rendering.findings import finding_rows, findings_badge, findings_section, unchecked
from pytest_export.rendering.overview import anchors as _anchors, cap, cards, gate_banner, header, record_anchor
from pytest_export.rendering.runtimes import runtime_tables, runtimes_section
from pytest_export.rendering.style import EXPORTABLE, MODE_ORDER, PROBLEMS, VERDICT_LABEL, render_page
from pytest_export.results.sanitize import shown_text
from pytest_export.rendering.story import explanation_rows

__all__ = ["render_html", "record_anchor"]

_CODE_LIMIT = 40_000  # characters of graph code / tracebacks per record
_SAME_MIN = 300  # a long text seen before on the page is linked, not repeated
_TOP_OPS = 20  # ops listed per record


@dataclass
class _Page:
    """What every section of one page shares: where ExportDB docs are, long texts already shown."""

    docs: str | None = None
    seen: dict[str, tuple[str, str]] = field(default_factory=dict)  # text digest -> (anchor, "case [mode]")


def _meta(record: Record, docs: str | None) -> list[tuple[str, str, Any]]:
    """Return the (label, kind, data) rows of a record's failure and expectation; rows with nothing to show left out."""
    f = failure_of(record)
    expect = record.expect
    rows: list[tuple[str, str, Any]] = []
    if f:
        rows += [(label, "text", text) for label, text in (("stage", f.stage), ("category", f.category))
                 if shown_text(text)]
        rows.append(("exception", "code", f.exc_type))
        if f.hint:
            rows.append(("fix hint", "hint", f.hint))
        if f.source:
            rows.append(("user source", "source", f.source))
        if f.exportdb_case:
            name = f.exportdb_case
            rows.append(("ExportDB case", "exportdb", {"name": name, "href": exportdb_page(name, docs)}))
        rows += explanation_rows(record.outcome, f.exportdb_case)
        rows += rescue_row(record.outcome)
    if expect and (shown_text(expect.reason) or expect.category):
        rows.append(("expected failure", "expected", expect))
    return rows


def _long_text(title: str, text: str, record: Record, anchor: str, page: _Page) -> dict[str, Any]:
    # The same torch message or traceback often fails many cases: show it once, link the rest.
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    if len(text) >= _SAME_MIN and digest in page.seen:
        first, label = page.seen[digest]
        return {"title": title, "same": first, "label": label}
    page.seen.setdefault(digest, (anchor, f"{record.case} [{record.mode}]"))
    return {"title": title, "same": None, "text": cap(text, _CODE_LIMIT)}


#: What a record without an outcome shows: no ranges, graph, findings or timings.
_NO_OUTCOME = Outcome(case_id="", mode="")


def _body(record: Record, anchor: str, page: _Page) -> dict[str, Any]:
    """Return what a record's details show, in page order (long texts repeated on the page become links)."""
    o = record.outcome or _NO_OUTCOME
    ce: dict[str, Any] | None = None
    if o.counterexample is not None:
        c = o.counterexample
        ce = {"shapes": [(k, "×".join(map(str, v)) or "scalar") for k, v in c.shapes.items()],
              "message": c.message, "reproduce": cap(c.reproduce, _CODE_LIMIT) if c.reproduce else ""}
    ex = o.examples
    drawn = None
    if ex.tried or ex.note:
        drawn = {"tried": ex.tried, "discarded": ex.discarded, "accepted": ex.accepted, "rejected": ex.rejected,
                 "note": ex.note}
    f = o.failure
    long = []
    if f and f.detail and f.detail.strip() != f.message.strip():
        long.append(_long_text("Full message", f.detail, record, anchor, page))
    if f and f.traceback:
        long.append(_long_text("torch traceback", f.traceback, record, anchor, page))
    timings = [(k, f"{v:.3f}") for k, v in stage_sorted(o.timings.items())]
    graph = o.graph
    ops = sorted(graph.op_histogram.items(), key=lambda kv: (-kv[1], kv[0])) if graph else []
    return {
        "meta": _meta(record, page.docs),
        "declared": list(o.declared.items()),
        "exported": list(o.range_constraints.items()),
        "counterexample": ce,
        "findings": o.findings,
        "examples": drawn,
        "notes": o.notes,
        "long": long,
        "timings": timings,
        "duration": f"{record.duration:.2f}",
        "ops": ops[:_TOP_OPS] if ops else None,
        "more_ops": len(ops) > _TOP_OPS,
        "node_count": graph.node_count if graph else 0,
        "code": cap(graph.code, _CODE_LIMIT) if graph and graph.code else "",
    }


def _headline(record: Record) -> str:
    f = failure_of(record)
    if not f and record.verdict == "xpassed":
        reason = record.expect.reason if record.expect else ""
        return f"exported although expected to fail ({reason}): remove the expectation"
    if not f:
        return record.verdict
    return f.headline(at=False)


def _view(record: Record, anchor: str) -> dict[str, Any]:
    nodes = record.outcome.graph.node_count if record.outcome and record.outcome.graph else None
    headline = _headline(record)
    return {"r": record, "anchor": anchor, "label": VERDICT_LABEL.get(record.verdict, record.verdict),
            "headline": headline, "index_line": cap(headline, 400), "problem": record.verdict in PROBLEMS,
            "when": f"{record.duration:.2f}s" + (f" · {nodes} nodes" if nodes else ""), "headroom": _headroom(record)}


def _headroom(record: Record) -> dict[str, Any] | None:
    """Return how much of its tolerance the worst program used: the line, a bar width (%) and its colour."""
    errors = worst_errors(record.outcome)
    if not errors:
        return None
    worst = max(e.worst_fraction for e in errors.values())
    # green well inside, amber past half the budget (a torch upgrade away from failing), red past it
    colour = "#2e7d32" if worst < 0.5 else "#b26a00" if worst < 1 else "#c62828"
    return {"text": headroom(record.outcome), "width": f"{min(worst, 1.0) * 100:.0f}", "colour": colour}


def _matrix(views: list[dict[str, Any]]) -> dict[str, Any]:
    found = {v["r"].mode for v in views}
    modes = ordered_modes(found, MODE_ORDER)
    cells: dict[str, dict[str, tuple[dict[str, Any], int]]] = {}
    for v in views:
        r: Record = v["r"]
        row = cells.setdefault(row_label(r.case, r.test, r.source), {})
        prev = row.get(r.mode)
        # One cell per (case, mode): the worst of its records, with how many there are.
        if prev is None or (prev[0]["r"].verdict in EXPORTABLE and r.verdict not in EXPORTABLE):
            row[r.mode] = (v, (prev[1] if prev else 0) + 1)
        else:
            row[r.mode] = (prev[0], prev[1] + 1)

    def rank(case: str) -> tuple[int, str]:  # rows with problems first: that is what the reader came for
        return (0 if any(c[0]["r"].verdict in PROBLEMS for c in cells[case].values()) else 1, case)

    rows = []
    for case in sorted(cells, key=rank):
        row = []
        for m in modes:
            if m not in cells[case]:
                row.append(None)
                continue
            v, n = cells[case][m]
            f: Failure | None = failure_of(v["r"])
            bare = v["r"].verdict == "passed" and unchecked(v["r"])  # a pass that ran no drawn shape
            row.append({"v": v, "n": n, "tip": f.message[:300] if f else (bare or "")[:300],
                        "badge": findings_badge(v["r"]),
                        "stage": f.stage if f and v["r"].verdict not in EXPORTABLE else ("no drawn shape checked"
                                                                                          if bare else None)})
        rows.append((case, row, case_ledger([c[0]["r"] for c in cells[case].values()])))
    return {"modes": modes, "rows": rows, "dims": any(r[2] for r in rows)}


def render_html(report: Report) -> str:
    """Return the report as a standalone HTML document."""
    records = report.records
    anchors = _anchors(records)
    summary = summarize(records)
    docs = report.environment.get("exportdb_docs")
    page = _Page(docs=docs if isinstance(docs, str) else None)
    views = [_view(r, a) for r, a in zip(records, anchors)]
    bad = [v for v in views if v["problem"]]
    xfail = [v for v in views if v["r"].verdict == "xfailed"]
    rest = [v for v in views if not v["problem"] and v["r"].verdict != "xfailed"]
    for v in bad + xfail + rest:  # page order, so that a repeated long text links back to its first showing
        v["body"] = _body(v["r"], v["anchor"], page)
    page_html = render_page(
        "report.html.j2",
        title=f"pytest-export: {summary.get('verdicts', {}).get('passed', 0)} of {summary.get('total', 0)} results passed",
        header=header(report), cards=cards(summary, len(finding_rows(records))), gate=gate_banner(report.gate),
        bad=bad, matrix=_matrix(views), findings=findings_section(records, anchors),
        runtimes=runtimes_section(runtime_tables(records)),
        categories=categories_chart(report), xfail=xfail, ops=ops_chart(report), stages=stage_table(report),
        views=views, skipped=_skip_reasons(records),
    )
    from pytest_export.rendering.zoo_rates import rate_html

    zoo = rate_html(records, MODE_ORDER)  # a zoo run leads with its pass rates, ahead of the failures
    return page_html.replace('<h2 id="failures">', zoo + '<h2 id="failures">', 1) if zoo else page_html


def _skip_reasons(records: list[Record]) -> list[tuple[str, int]]:
    """Return each reason a result was skipped (a target's missing package, a device) with its count."""
    counts: dict[str, int] = {}
    for r in records:
        if r.verdict == "skipped":
            failure = r.outcome.failure if r.outcome is not None else None
            reason = failure.message if failure is not None else "skipped"
            counts[reason] = counts.get(reason, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
