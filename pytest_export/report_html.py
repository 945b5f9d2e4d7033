"""Render a report as one self-contained HTML page (inline CSS and SVG, no script, no network).

Every string that came from a user or an exception goes through ``html.escape``.
Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from html import escape
from typing import Any, Iterable

from pytest_export.explain import exportdb_page
from pytest_export.report_charts import categories_section, charts_section, stage_sorted
from pytest_export.report_findings import finding_rows, findings_badge, findings_html
from pytest_export.report_overview import anchors as _anchors, cards as _cards, gate_banner as _gate, header as _header
from pytest_export.report_overview import record_anchor
from pytest_export.report_runtimes import runtime_tables, runtimes_html
from pytest_export.report_style import CSS, EXPORTABLE, MODE_ORDER, PROBLEMS, VERDICT_LABEL
from pytest_export.sanitize import shown_text
from pytest_export.story import explanation_html

__all__ = ["render_html", "record_anchor"]

_CODE_LIMIT = 40_000  # characters of graph code / tracebacks per record
_SAME_MIN = 300  # a long text seen before on the page is linked, not repeated


@dataclass
class _Page:
    """What every section of one page shares: where ExportDB docs are, long texts already shown."""

    docs: str | None = None
    seen: dict[str, tuple[str, str]] = field(default_factory=dict)  # text digest -> (anchor, "case [mode]")


def _e(value: Any) -> str:
    return escape(shown_text(value), quote=True)


def _cap(text: str, limit: int = _CODE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters cut)"


def _badge(verdict: str) -> str:
    return f'<span class="badge v-{_e(verdict)}">{_e(VERDICT_LABEL.get(verdict, verdict))}</span>'


def _failure(record: dict[str, Any]) -> dict[str, Any] | None:
    return (record.get("outcome") or {}).get("failure")


def _modes(records: Iterable[dict[str, Any]]) -> list[str]:
    found = {r["mode"] for r in records}
    return [m for m in MODE_ORDER if m in found] + sorted(found - set(MODE_ORDER))


def _meta(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in rows if v)
    return f'<dl class="meta">{body}</dl>' if body else ""


def _kv_table(title: str, data: dict[str, Any], head: tuple[str, str]) -> str:
    if not data:
        return ""
    rows = "".join(f"<tr><td><code>{_e(k)}</code></td><td><code>{_e(v)}</code></td></tr>" for k, v in data.items())
    return (f'<div><h4>{_e(title)}</h4><table class="kv"><tr><th>{_e(head[0])}</th><th>{_e(head[1])}</th></tr>'
            f"{rows}</table></div>")


def _exportdb(name: str, docs: str | None) -> str:
    href = exportdb_page(name, docs)
    code = f"<code>{_e(name)}</code>"
    return f'<a href="{_e(href)}">{code}</a>' if href else code


def _failure_meta(record: dict[str, Any], docs: str | None = None) -> str:
    f = _failure(record)
    expect = record.get("expect") or {}
    rows: list[tuple[str, str]] = []
    if f:
        src = f.get("source")
        where = ""
        if src:
            where = f"<code>{_e(src['file'])}:{_e(src['line'])}</code>"
            if src.get("function"):
                where += f" in <code>{_e(src['function'])}</code>"
            if src.get("code"):
                where += f'<pre class="src">{_e(src["code"])}</pre>'
        rows += [
            ("stage", _e(f["stage"])), ("category", _e(f["category"])),
            ("exception", f"<code>{_e(f['exc_type'])}</code>"),
            ("fix hint", f'<span class="hint">{_e(f["hint"])}</span>' if f.get("hint") else ""),
            ("user source", where),
            ("ExportDB case", _exportdb(f["exportdb_case"], docs) if f.get("exportdb_case") else ""),
        ]
        rows += explanation_html(record.get("outcome") or {}, f.get("exportdb_case"))
    if expect:
        rows.append(("expected failure", _e(expect.get("reason", "")) +
                     (f" (category <code>{_e(expect['category'])}</code>)" if expect.get("category") else "")))
    return _meta(rows)


def _long_text(title: str, text: str, record: dict[str, Any], anchor: str, page: _Page) -> str:
    # The same torch message or traceback often fails many cases: show it once, link the rest.
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    if len(text) >= _SAME_MIN and digest in page.seen:
        first, label = page.seen[digest]
        return f'<p class="muted">{_e(title)}: same as <a href="#{first}">{_e(label)}</a></p>'
    page.seen.setdefault(digest, (anchor, f'{record["case"]} [{record["mode"]}]'))
    return f"<details><summary>{_e(title)}</summary><pre>{_e(_cap(text))}</pre></details>"


def _record_body(record: dict[str, Any], anchor: str, page: _Page) -> str:
    o = record.get("outcome") or {}
    out = [_failure_meta(record, page.docs)]
    declared, exported = o.get("declared") or {}, o.get("range_constraints") or {}
    if declared or exported:
        out.append('<div class="two">' + _kv_table("Declared ranges", declared, ("dim", "declared")) +
                   _kv_table("Exported range constraints", exported, ("dim", "exported")) + "</div>")
    ce = o.get("counterexample")
    if ce:
        shapes = {k: "×".join(map(str, v)) or "scalar" for k, v in (ce.get("shapes") or {}).items()}
        out.append(_kv_table("Counterexample (shrunk)", shapes, ("input", "shape")))
        if ce.get("message"):
            out.append(f"<p>{_e(ce['message'])}</p>")
        if ce.get("reproduce"):
            out.append(f"<details open><summary>Reproduce</summary><pre>{_e(_cap(ce['reproduce']))}</pre></details>")
    findings = o.get("findings") or []
    if findings:
        items = "".join(f'<li><span class="sev-{_e(x["severity"])}">{_e(x["severity"])}</span> '
                        f'<code>{_e(x["kind"])}</code>{" " + _e(x["input"]) if x.get("input") else ""}: '
                        f'{_e(x["message"])}</li>' for x in findings)
        out.append(f"<h4>Findings</h4><ul>{items}</ul>")
    ex = o.get("examples") or {}
    if ex.get("tried") or ex.get("note"):
        out.append(f'<p class="muted">Drawn shapes: {ex.get("tried", 0)} tried, {ex.get("discarded", 0)} discarded, '
                   f'{ex.get("accepted", 0)} accepted, {ex.get("rejected", 0)} rejected. {_e(ex.get("note", ""))}</p>')
    if o.get("notes"):
        out.append("<ul class=muted>" + "".join(f"<li>{_e(n)}</li>" for n in o["notes"]) + "</ul>")
    f = _failure(record)
    if f and f.get("detail") and f["detail"].strip() != f["message"].strip():
        out.append(_long_text("Full message", f["detail"], record, anchor, page))
    if f and f.get("traceback"):
        out.append(_long_text("torch traceback", f["traceback"], record, anchor, page))
    timings = o.get("timings") or {}
    if timings:
        cells = " · ".join(f"{_e(k)} {float(v):.3f}s" for k, v in stage_sorted(timings.items()))
        out.append(f'<p class="muted">Timings: {cells} · test {float(record.get("duration", 0)):.2f}s</p>')
    graph = o.get("graph") or {}
    if graph.get("op_histogram"):
        ops = sorted(graph["op_histogram"].items(), key=lambda kv: (-kv[1], kv[0]))
        out.append(f'<p class="muted">Graph: {graph.get("node_count", 0)} nodes; ops: ' +
                   ", ".join(f"<code>{_e(k)}</code>×{int(v)}" for k, v in ops[:20]) +
                   (" …" if len(ops) > 20 else "") + "</p>")
    if graph.get("code"):
        out.append(f"<details><summary>Exported graph code</summary><pre>{_e(_cap(graph['code']))}</pre></details>")
    return "\n".join(x for x in out if x)


def _title(record: dict[str, Any]) -> str:
    return (f'{_badge(record["verdict"])} <code class="case">{_e(record["case"])}</code> '
            f'<span class="mode">[{_e(record["mode"])}]</span>')


def _headline(record: dict[str, Any]) -> str:
    f = _failure(record)
    if not f and record["verdict"] == "xpassed":
        reason = (record.get("expect") or {}).get("reason", "")
        return f"exported although expected to fail ({reason}): remove the expectation"
    if not f:
        return record["verdict"]
    return f"[{f['stage']}] {f['category']}: {f['exc_type']}: {f['message']}"


def _failure_index(records: list[dict[str, Any]], anchors: list[str]) -> str:
    bad = [(r, a) for r, a in zip(records, anchors) if r["verdict"] in PROBLEMS]
    out = [f'<h2 id="failures">Failures ({len(bad)})</h2>']
    if not bad:
        return out[0] + '<p class="muted">No unexpected failures.</p>'
    rows = "".join(
        f'<tr><td>{_badge(r["verdict"])}</td><td><a href="#{a}"><code>{_e(r["case"])}</code></a> '
        f'[{_e(r["mode"])}]</td><td class="hl">{_e(_cap(_headline(r), 400))}</td></tr>' for r, a in bad)
    out.append(f'<table class="index"><tr><th></th><th>case [mode]</th><th>what broke</th></tr>{rows}</table>')
    return "\n".join(out)


def _details(records: list[dict[str, Any]], anchors: list[str], page: _Page) -> str:
    bad = [(r, a) for r, a in zip(records, anchors) if r["verdict"] in PROBLEMS]
    xfail = [(r, a) for r, a in zip(records, anchors) if r["verdict"] == "xfailed"]
    out = [f'<h2 id="details">Failure details ({len(bad)})</h2>'] if bad else []
    for r, a in bad:
        out.append(f'<article class="fail v-border-{_e(r["verdict"])}" id="{a}"><h3>{_title(r)}</h3>'
                   f'<p class="headline">{_e(_headline(r))}</p>{_record_body(r, a, page)}'
                   f'<p class="test muted">test <code>{_e(r["test"])}</code></p></article>')
    if xfail:
        out.append(f'<details class="xfails" id="xfailed"><summary><h2 style="display:inline">Expected failures '
                   f"({len(xfail)})</h2></summary>")
        for r, a in xfail:
            out.append(f'<article class="fail v-border-xfailed" id="{a}"><h3>{_title(r)}</h3>'
                       f'<p class="headline">{_e(_headline(r))}</p>{_record_body(r, a, page)}</article>')
        out.append("</details>")
    return "\n".join(out)


def _matrix(records: list[dict[str, Any]], anchors: list[str]) -> str:
    modes = _modes(records)
    cells: dict[str, dict[str, tuple[dict[str, Any], str, int]]] = {}
    for r, a in zip(records, anchors):
        row = cells.setdefault(r["case"], {})
        prev = row.get(r["mode"])
        if prev is None or (prev[0]["verdict"] in EXPORTABLE and r["verdict"] not in EXPORTABLE):
            row[r["mode"]] = (r, a, (prev[2] if prev else 0) + 1)
        else:
            row[r["mode"]] = (prev[0], prev[1], prev[2] + 1)
    # Rows with problems first: that is what the reader came for.
    def rank(case: str) -> tuple[int, str]:
        return (0 if any(c[0]["verdict"] in PROBLEMS for c in cells[case].values()) else 1, case)

    head = "".join(f"<th>{_e(m)}</th>" for m in modes)
    rows = []
    for case in sorted(cells, key=rank):
        tds = []
        for m in modes:
            if m not in cells[case]:
                tds.append('<td class="cell none">—</td>')
                continue
            r, a, n = cells[case][m]
            f = _failure(r)
            label = VERDICT_LABEL.get(r["verdict"], r["verdict"])
            sub = f"<small>{_e(f['stage'])}</small>" if f and r["verdict"] not in EXPORTABLE else ""
            more = f"<small>×{n}</small>" if n > 1 else ""
            tip = _e(f["message"][:300]) if f else ""
            tds.append(f'<td class="cell v-{_e(r["verdict"])}"><a href="#{a}" title="{tip}">'
                       f"{_e(label)}{sub}{more}{findings_badge(r)}</a></td>")
        rows.append(f'<tr><th class="case"><code>{_e(case)}</code></th>{"".join(tds)}</tr>')
    return (f'<h2 id="matrix">Cases × modes</h2><table class="matrix"><thead><tr><th>case</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _all_records(records: list[dict[str, Any]], anchors: list[str], page: _Page) -> str:
    out = [f'<h2 id="records">All results ({len(records)})</h2>']
    for r, a in zip(records, anchors):
        o = r.get("outcome") or {}
        nodes = (o.get("graph") or {}).get("node_count")
        extra = f" · {nodes} nodes" if nodes else ""
        when = f'<span class="muted">{float(r.get("duration", 0)):.2f}s{extra}</span>'
        if r["verdict"] in PROBLEMS or r["verdict"] == "xfailed":
            # Its details are above; one line here, so this list has every result.
            out.append(f'<div class="rec">{_title(r)} {when} <a href="#{a}">details</a></div>')
            continue
        out.append(f'<details class="rec" id="{a}"><summary>{_title(r)} {when}</summary>'
                   f"{_record_body(r, a, page)}</details>")
    return "\n".join(out)


def render_html(report: dict[str, Any]) -> str:
    """Return the report as a standalone HTML document."""
    records = report["records"]
    anchors = _anchors(records)
    summary = report.get("summary") or {}
    title = f"pytest-export: {summary.get('verdicts', {}).get('passed', 0)}/{summary.get('total', 0)} passed"
    docs = (report.get("environment") or {}).get("exportdb_docs")
    page = _Page(docs=docs if isinstance(docs, str) else None)
    body = [
        _header(report), _cards(summary, len(finding_rows(records))), _gate(report.get("gate")),
        _failure_index(records, anchors), _matrix(records, anchors), findings_html(records, anchors),
        runtimes_html(report.get("runtimes") or runtime_tables(records)),
        categories_section(report), _details(records, anchors, page), charts_section(report),
        _all_records(records, anchors, page),
    ]
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body><main>\n"
            + "\n".join(b for b in body if b) + "\n</main></body></html>\n")
