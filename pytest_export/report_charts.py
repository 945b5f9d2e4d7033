"""Charts of the HTML report: inline SVG bars (no script) and the per-stage timing table."""

from __future__ import annotations

from html import escape
from typing import Any, Iterable

from exportcore.outcome import STAGES
from pytest_export.sanitize import shown_text

__all__ = ["categories_section", "charts_section", "stage_sorted"]


def _e(value: Any) -> str:
    return escape(shown_text(value), quote=True)


def stage_sorted(items: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Return (stage, value) pairs in pipeline order, unknown stages last."""
    order = {s: i for i, s in enumerate(STAGES)}
    return sorted(items, key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def _bar_svg(data: list[tuple[str, float]], unit: str = "") -> str:
    if not data:
        return '<p class="muted">Nothing to chart.</p>'
    top = max(v for _, v in data) or 1
    row, label_w, width = 26, 330, 900
    parts = [f'<svg class="chart" viewBox="0 0 {width} {row * len(data) + 8}" role="img" '
             f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">']
    for i, (label, value) in enumerate(data):
        y = i * row + 4
        w = max(2.0, (width - label_w - 70) * value / top)
        short = label if len(label) <= 44 else label[:42] + "…"
        parts.append(f'<g><title>{_e(label)}: {value:g}{unit}</title>'
                     f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{_e(short)}</text>'
                     f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" rx="3"/>'
                     f'<text x="{label_w + w + 6:.1f}" y="{y + 17}">{value:g}{_e(unit)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


#: Verdicts whose failure was declared (expect= or pytest's xfail): amber, not alarm-red.
_EXPECTED = ("xfailed",)
_UNEXPECTED = ("failed", "error", "timeout", "crashed")


def _split_categories(records: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    counts: dict[str, list[int]] = {}
    for r in records:
        failure = (r.get("outcome") or {}).get("failure")
        if not failure or r["verdict"] not in _EXPECTED + _UNEXPECTED:
            continue
        pair = counts.setdefault(str(failure.get("category", "?")), [0, 0])
        pair[0 if r["verdict"] in _UNEXPECTED else 1] += 1
    return sorted(((k, u, x) for k, (u, x) in counts.items()), key=lambda t: (-(t[1] + t[2]), t[0]))


def _stacked_svg(data: list[tuple[str, int, int]]) -> str:
    top = max(u + x for _, u, x in data) or 1
    row, label_w, width = 26, 330, 900
    scale = (width - label_w - 150) / top
    parts = [f'<svg class="chart cats" viewBox="0 0 {width} {row * len(data) + 8}" role="img" '
             f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">']
    for i, (label, unexpected, expected) in enumerate(data):
        y = i * row + 4
        short = label if len(label) <= 44 else label[:42] + "…"
        parts.append(f'<g><title>{_e(label)}: {unexpected} unexpected, {expected} expected</title>'
                     f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{_e(short)}</text>')
        x = float(label_w)
        for n, cls in ((unexpected, "bad"), (expected, "expected")):
            if n:
                w = max(2.0, n * scale)
                parts.append(f'<rect class="{cls}" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" rx="3"/>')
                x += w
        words = ", ".join(w for w in (f"{unexpected} unexpected" if unexpected else "",
                                      f"{expected} expected" if expected else "") if w)
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 17}">{_e(words)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def categories_section(report: dict[str, Any]) -> str:
    """Return the failure-category chart: unexpected failures red, declared (expected) ones amber."""
    data = _split_categories(report["records"])
    if not data:
        return ""
    return ('<h2 id="categories">Failure categories <small class="muted">(red: unexpected; amber: expected '
            "failures, xfailed as declared)</small></h2>" + _stacked_svg(data))


def charts_section(report: dict[str, Any]) -> str:
    """Return the op histogram and the time-per-stage table."""
    records = report["records"]
    ops: dict[str, int] = {}
    stages: dict[str, list[float]] = {}
    for r in records:
        o = r.get("outcome") or {}
        for op, n in ((o.get("graph") or {}).get("op_histogram") or {}).items():
            ops[op] = ops.get(op, 0) + int(n)
        for stage, secs in (o.get("timings") or {}).items():
            stages.setdefault(stage, []).append(float(secs))
    top_ops = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:25]
    out = []
    if top_ops:  # no graph was exported: no section rather than an empty one
        out.append(f'<h2 id="ops">Op histogram (all exported graphs, top {len(top_ops)} of {len(ops)})</h2>')
        out.append(_bar_svg([(k, float(v)) for k, v in top_ops]))
    out.append('<h2 id="timings">Time per stage</h2>')
    if stages:
        rows = "".join(
            f"<tr><td>{_e(s)}</td><td>{sum(v):.2f}</td><td>{sum(v) / len(v):.3f}</td><td>{max(v):.3f}</td>"
            f"<td>{len(v)}</td></tr>" for s, v in stage_sorted(stages.items()))
        out.append('<table class="num"><tr><th>stage</th><th>total s</th><th>mean s</th><th>max s</th>'
                   f"<th>records</th></tr>{rows}</table>")
    else:
        out.append('<p class="muted">No timings recorded.</p>')
    return "\n".join(out)
