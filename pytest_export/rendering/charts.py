"""Charts of the HTML report, as data for its template: inline SVG bars (no script) and the per-stage timing table."""

from __future__ import annotations

from typing import Any, Iterable

from exportcore.outcome import STAGES
from pytest_export.results.records import Record, failure_of
from pytest_export.results.report import Report
from pytest_export.results.verdicts import FAILING

__all__ = ["categories_chart", "ops_chart", "stage_sorted", "stage_table"]

_ROW, _LABEL_W, _WIDTH = 26, 330, 900  # SVG geometry: bar row height, label column, chart width
_TOP_OPS = 25
#: Verdicts whose failure was declared (expect= or pytest's xfail): amber, not alarm-red.
_EXPECTED = ("xfailed",)


def stage_sorted(items: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Return (stage, value) pairs in pipeline order, unknown stages last."""
    order = {s: i for i, s in enumerate(STAGES)}
    return sorted(items, key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def _short(label: str) -> str:
    return label if len(label) <= 44 else label[:42] + "…"


def _bar(i: int, label: str) -> dict[str, Any]:
    y = i * _ROW + 4
    return {"label": label, "short": _short(label), "label_x": _LABEL_W - 8, "text_y": y + 17, "rect_y": y + 3,
            "height": _ROW - 8}


def _svg(bars: list[dict[str, Any]]) -> dict[str, Any]:
    return {"width": _WIDTH, "height": _ROW * len(bars) + 8, "bars": bars}


def ops_chart(report: Report) -> dict[str, Any] | None:
    """Return the op histogram of every exported graph, top ops first (None when no graph was exported)."""
    ops: dict[str, int] = {}
    for r in report.records:
        graph = r.outcome.graph if r.outcome is not None else None
        for op, n in (graph.op_histogram if graph is not None else {}).items():
            ops[op] = ops.get(op, 0) + n
    top = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:_TOP_OPS]
    if not top:
        return None
    high = max(float(v) for _, v in top) or 1
    bars = []
    for i, (label, n) in enumerate(top):
        w = max(2.0, (_WIDTH - _LABEL_W - 70) * float(n) / high)
        bars.append({**_bar(i, label), "value": f"{float(n):g}", "x": _LABEL_W, "w": f"{w:.1f}",
                     "end_x": f"{_LABEL_W + w + 6:.1f}"})
    return {**_svg(bars), "shown": len(top), "total": len(ops)}


def _split_categories(records: list[Record]) -> list[tuple[str, int, int]]:
    counts: dict[str, list[int]] = {}
    for r in records:
        failure = failure_of(r)
        if not failure or r.verdict not in (*_EXPECTED, *FAILING):
            continue
        pair = counts.setdefault(failure.category, [0, 0])
        pair[0 if r.verdict in FAILING else 1] += 1
    return sorted(((k, u, x) for k, (u, x) in counts.items()), key=lambda t: (-(t[1] + t[2]), t[0]))


def categories_chart(report: Report) -> dict[str, Any] | None:
    """Return the failure-category bars: unexpected failures red, declared (expected) ones amber (None if none)."""
    data = _split_categories(report.records)
    if not data:
        return None
    scale = (_WIDTH - _LABEL_W - 150) / (max(u + x for _, u, x in data) or 1)
    bars = []
    for i, (label, unexpected, expected) in enumerate(data):
        x, rects = float(_LABEL_W), []
        for n, cls in ((unexpected, "bad"), (expected, "expected")):
            if n:
                w = max(2.0, n * scale)
                rects.append((cls, f"{x:.1f}", f"{w:.1f}"))
                x += w
        words = ", ".join(w for w in (f"{unexpected} unexpected" if unexpected else "",
                                      f"{expected} expected" if expected else "") if w)
        bars.append({**_bar(i, label), "unexpected": unexpected, "expected": expected, "rects": rects,
                     "words": words, "end_x": f"{x + 6:.1f}"})
    return _svg(bars)


def stage_table(report: Report) -> list[tuple[str, str, str, str, int]]:
    """Return per stage (stage, total s, mean s, max s, records), in pipeline order."""
    stages: dict[str, list[float]] = {}
    for r in report.records:
        for stage, secs in (r.outcome.timings if r.outcome is not None else {}).items():
            stages.setdefault(stage, []).append(secs)
    return [(s, f"{sum(v):.2f}", f"{sum(v) / len(v):.3f}", f"{max(v):.3f}", len(v))
            for s, v in stage_sorted(stages.items())]
