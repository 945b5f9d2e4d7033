"""The top of the HTML report, as data for its template: environment header, count cards, gate banner.

Also the record anchors every section links to. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_export.results.records import Record, ordered_modes, record_key
from pytest_export.results.report import Report
from pytest_export.results.schema import GateDoc, GateEntry
from pytest_export.rendering.counts import COLUMN_ORDER, columns_phrase, is_target
from pytest_export.rendering.style import PROBLEMS

__all__ = ["anchors", "cap", "cards", "gate_banner", "header", "record_anchor"]

_GATE_COUNTS = ("regressions", "missing", "changed", "improvements", "skipped", "vanished", "not_run", "deselected",
               "new")
_GATE_LISTS = (("regressions", "Regressions"), ("missing", "Missing"), ("changed", "Changed known failures"),
               ("improvements", "Improvements"),
               ("vanished", "Vanished"), ("skipped", "Skipped now"), ("not_run", "Not run"))
_GATE_SHOWN = 200  # entries listed per bucket; the count says how many there are


def cap(text: str, limit: int) -> str:
    """Return ``text`` cut to ``limit`` characters, saying how many were cut."""
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters cut)"


def record_anchor(case: str, mode: str, index: int = 0) -> str:
    """Return the stable HTML id of the ``index``-th record of a (case, mode) key."""
    digest = hashlib.sha1(f"{case}\0{mode}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"r-{digest}" + (f"-{index}" if index else "")


def anchors(records: list[Record]) -> list[str]:
    """Return each record's HTML id, in order (a repeated (case, mode) gets a numbered one)."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for r in records:
        key = record_key(r)
        out.append(record_anchor(*key, seen.get(key, 0)))
        seen[key] = seen.get(key, 0) + 1
    return out


def header(report: Report) -> dict[str, Any]:
    """Return the page header: environment (name, value) pairs and why the run is incomplete (None if it is not)."""
    env = []
    for name, value in report.environment.items():
        if value is None:
            continue
        if name == "modes" and isinstance(value, list):
            # the report's "modes" are its columns; a reader calls the runtimes targets, as the cards do
            ordered = ordered_modes(value, COLUMN_ORDER)
            env += [(label, ", ".join(found)) for label, found in (
                ("modes", [c for c in ordered if not is_target(c)]), ("targets", [c for c in ordered if is_target(c)]))
                if found]
            continue
        if name == "merged_from" and isinstance(value, list):
            value = f"{len(value)} reports: " + ", ".join(str(v.get("source", "?")) for v in value)
        elif isinstance(value, (list, dict)):
            value = json.dumps(value, sort_keys=True)
        env.append((name, cap(str(value), 300)))
    incomplete = None if report.complete else (report.stop_reason or "the session was interrupted")
    return {"env": env, "incomplete": incomplete}


def cards(summary: dict[str, Any], findings: int) -> list[tuple[str, Any, str, str, str]]:
    """Return the count cards as (label, count, subtitle, css class, section linked to)."""
    v = summary.get("verdicts", {})
    problems = sum(v.get(k, 0) for k in PROBLEMS)
    out = [
        ("results", summary.get("total", 0), "from " + columns_phrase(summary.get("cases", 0),
                                                                    summary.get("modes", [])), ""),
        ("passed", v.get("passed", 0), "exported and behaved like eager", "v-passed"),
        ("failing", problems, "failed, error, timeout, crashed, unstable, xpassed", "v-failed" if problems else ""),
        ("expected failures", v.get("xfailed", 0), "xfailed as declared", "v-xfailed"),
        ("skipped", v.get("skipped", 0), "not checked", "v-skipped"),
    ]
    if v.get("unstable"):  # only under --export-repeat: counted with the failing, and apart
        out.insert(3, ("unstable", v["unstable"], "the verdict changed between --export-repeat runs", "v-failed"))
    if findings:
        out.append(("findings", findings, "let through by torch.export", "v-finding"))
    target = {"failing": "failures", "unstable": "failures", "findings": "findings"}
    return [(label, n, sub, cls, target.get(label, "matrix")) for label, n, sub, cls in out]


def gate_banner(gate: GateDoc | None) -> dict[str, Any] | None:
    """Return the gate decision with its regressions and improvements (None without a gate)."""
    if gate is None:
        return None
    counts = ", ".join(f"{len(getattr(gate, b))} {b.replace('_', ' ')}" for b in _GATE_COUNTS
                       if b not in ("missing", "changed") or getattr(gate, b))
    buckets = []
    for bucket, label in _GATE_LISTS:
        entries = getattr(gate, bucket)
        if entries:
            buckets.append((label, len(entries), [_gate_entry(e, bucket == "changed") for e in entries[:_GATE_SHOWN]]))
    return {
        "cls": "bad" if gate.failed else "good",
        "title": f"Gate {'FAILED' if gate.failed else 'passed'} vs {gate.baseline or 'baseline'}",
        "counts": counts,
        "buckets": buckets,
    }


def _gate_entry(e: GateEntry, why_first: bool = False) -> dict[str, Any]:
    # why_first: a changed known failure's why (recorded X, now Y) says more than its headline
    return {
        "anchor": record_anchor(e.case, e.mode) if e.after else None,  # only a record still here has details
        "case": e.case,
        "mode": e.mode,
        "change": f"{e.before} → {e.after}" if e.after else str(e.before),
        "note": (e.why or e.headline or "") if why_first else (e.headline or e.why or ""),
    }
