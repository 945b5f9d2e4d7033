"""The top of the HTML report: environment header, count cards, gate banner; record anchors.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
import json
from html import escape
from typing import Any

from pytest_export.report_style import PROBLEMS
from pytest_export.sanitize import shown_text

__all__ = ["anchors", "cards", "gate_banner", "header", "record_anchor"]


def _e(value: Any) -> str:
    return escape(shown_text(value), quote=True)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters cut)"


def record_anchor(case: str, mode: str, index: int = 0) -> str:
    """Return the stable HTML id of the ``index``-th record of a (case, mode) key."""
    digest = hashlib.sha1(f"{case}\0{mode}".encode()).hexdigest()[:12]
    return f"r-{digest}" + (f"-{index}" if index else "")


def anchors(records: list[dict[str, Any]]) -> list[str]:
    """Return each record's HTML id, in order (a repeated (case, mode) gets a numbered one)."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for r in records:
        key = (r["case"], r["mode"])
        out.append(record_anchor(*key, seen.get(key, 0)))
        seen[key] = seen.get(key, 0) + 1
    return out


def header(report: dict[str, Any]) -> str:
    """Return the page header: title, environment, and the incomplete-run banner when needed."""
    env = report.get("environment") or {}
    items = []
    for name, value in env.items():
        if value is None:
            continue
        if name == "merged_from" and isinstance(value, list):
            value = f"{len(value)} reports: " + ", ".join(str(v.get("source", "?")) for v in value)
        elif isinstance(value, (list, dict)):
            value = json.dumps(value, sort_keys=True)
        items.append(f"<span><b>{_e(name)}</b> {_e(_cap(str(value), 300))}</span>")
    out = ['<header><h1>pytest-export report</h1>', f'<p class="env">{" ".join(items)}</p>']
    if not report.get("complete", True):
        reason = report.get("stop_reason") or "the session was interrupted"
        out.append(f'<p class="banner warn"><b>Incomplete run:</b> {_e(reason)}. Results below are partial.</p>')
    out.append("</header>")
    return "\n".join(out)


def cards(summary: dict[str, Any], findings: int) -> str:
    """Return the count cards (total, passed, failing, expected failures, skipped, findings)."""
    v = summary.get("verdicts", {})
    problems = sum(v.get(k, 0) for k in PROBLEMS)
    cards = [
        ("total", summary.get("total", 0),
         f"{summary.get('cases', 0)} cases × {len(summary.get('modes', []))} modes", ""),
        ("passed", v.get("passed", 0), "exported and behaved like eager", "v-passed"),
        ("failing", problems, "failed, error, timeout, crashed, xpassed", "v-failed" if problems else ""),
        ("expected failures", v.get("xfailed", 0), "xfailed as declared", "v-xfailed"),
        ("skipped", v.get("skipped", 0), "not checked", "v-skipped"),
    ]
    if findings:
        cards.append(("findings", findings, "let through by torch.export", "v-finding"))
    target = {"failing": "failures", "findings": "findings"}
    body = "".join(
        f'<a class="card {cls}" href="#{target.get(label, "matrix")}">'
        f'<span class="n">{n}</span><span class="l">{_e(label)}</span><small>{_e(sub)}</small></a>'
        for label, n, sub, cls in cards
    )
    return f'<section class="cards">{body}</section>'


def gate_banner(gate: dict[str, Any] | None) -> str:
    """Return the gate decision banner with its regressions and improvements (empty without a gate)."""
    if not gate:
        return ""
    cls = "bad" if gate.get("failed") else "good"
    title = f"Gate {'FAILED' if gate.get('failed') else 'passed'} vs {gate.get('baseline', 'baseline')}"
    out = [f'<section id="gate" class="banner {cls}"><h2>{_e(title)}</h2>']
    counts = ", ".join(f"{len(gate.get(b) or [])} {b.replace('_', ' ')}" for b in
                       ("regressions", "missing", "improvements", "skipped", "vanished", "not_run", "deselected", "new")
                       if b != "missing" or gate.get(b))
    out.append(f"<p>{_e(counts)}</p>")
    for bucket, label in (("regressions", "Regressions"), ("missing", "Missing"), ("improvements", "Improvements"),
                          ("vanished", "Vanished"), ("skipped", "Skipped now"), ("not_run", "Not run")):
        entries = gate.get(bucket) or []
        if not entries:
            continue
        out.append(f"<h3>{_e(label)} ({len(entries)})</h3><ul>")
        for e in entries[:200]:
            change = f"{e.get('before')} → {e.get('after')}" if e.get("after") else str(e.get("before"))
            link = f'<a href="#{record_anchor(e["case"], e["mode"])}">' if e.get("after") else "<span>"
            close = "</a>" if e.get("after") else "</span>"
            note = e.get("headline") or e.get("why") or ""
            out.append(f"<li>{link}<code>{_e(e['case'])}</code> [{_e(e['mode'])}]{close} {_e(change)}"
                       + (f" — {_e(note)}" if note else "") + "</li>")
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)
