"""Render a report diff (pytest_export.results.diff) as terminal text, Markdown or a self-contained HTML page.

The HTML page is ``templates/diff.html.j2`` (on exportdb/html's page shell and stylesheet).

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from pytest_export.results.diff import GROUPS, DiffResult
from pytest_export.results.numerics_growth import BUCKETS, FLOOR, Move, fraction_text
from pytest_export.rendering.style import render_page

__all__ = ["DIFF_FORMATS", "NUMERICS_TITLE", "header", "render_text", "render_diff", "numerics_warning"]

DIFF_FORMATS = (".html", ".md", ".json")
MAX_TEXT = 300

NUMERICS_TITLE = (f"Numerics movement (worst error as a fraction of the tolerance, moves of ≥{BUCKETS[0]:g}×; "
                  f"below {FLOOR:g} of the tolerance is noise)")

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def header(result: DiffResult) -> str:
    """Return the one-line title: both torch versions and both sources."""
    old, new = result.old, result.new
    return f"export diff: torch {old['torch']} ({old['source']}) -> torch {new['torch']} ({new['source']})"


def _totals(result: DiffResult) -> str:
    counts = result.counts()
    shown = ", ".join(f"{n} {g}" for g, n in counts.items() if n) or "no differences"
    moved = f"; {len(result.numerics)} numerics moved (verdicts may be unchanged)" if result.numerics else ""
    return f"{shown}; {result.unchanged} unchanged{moved}"


def numerics_warning(result: DiffResult) -> str:
    """Return the one-line warning about grown errors ("" when none grew), failing under the threshold or not."""
    grown = result.grown
    if not grown:
        return ""
    buckets = ", ".join(f"{sum(m.bucket == b for m in grown)} ≥{b:g}×" for b in BUCKETS
                        if any(m.bucket == b for m in grown))
    word = "FAILED" if result.numerics_failed else "warning"
    limit = f" (--fail-on-numerics-growth={result.growth_threshold:g})" if result.numerics_failed else ""
    return f"{word}: numerics grew for {len(grown)} (case, mode, program): {buckets}{limit}"


def _verdict(result: DiffResult) -> str:
    if result.regressed:
        return "REGRESSED"
    return "NUMERICS GREW" if result.numerics_failed else "no regression"


def _numerics_text(result: DiffResult, verbose: bool) -> list[str]:
    if not result.numerics:
        return []
    lines = [f"\n{NUMERICS_TITLE}: {len(result.numerics)}"]
    shown = result.numerics if verbose else result.numerics[:20]
    lines += [f"  {m.case} [{m.mode}] {m.text()}" for m in shown]
    if len(shown) < len(result.numerics):
        lines.append(f"  ... {len(result.numerics) - len(shown)} more (-v lists all)")
    return lines


def render_text(result: DiffResult, *, verbose: bool = False) -> str:
    """Return the terminal summary; ``verbose`` lists unchanged-verdict groups in full too."""
    lines = [header(result), _totals(result)]
    if numerics_warning(result):
        lines.append(numerics_warning(result))
    for group, title in GROUPS.items():
        entries = result.group(group)
        if not entries:
            continue
        lines.append(f"\n{title}: {len(entries)}")
        full = verbose or group in ("regressions", "fixes")
        for e in entries if full else entries[:20]:
            lines.append(f"  {e.case} [{e.mode}]")
            lines.extend(f"      {c}" for c in e.changes)
        if not full and len(entries) > 20:
            lines.append(f"  ... {len(entries) - 20} more (-v lists all, -o diff.html shows all)")
    lines += _numerics_text(result, verbose)
    lines.append("\nresult: " + _verdict(result))
    return "\n".join(lines)


def _md(value: Any) -> str:
    s = " ".join(str(value).split())
    s = s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", s).replace("&", "&amp;")


def _render_md(result: DiffResult) -> str:
    out = [f"## {_md(header(result))}", "", _md(_totals(result)), ""]
    out.append("**result: " + _verdict(result) + "**")
    if numerics_warning(result):
        out += ["", _md(numerics_warning(result))]
    for group, title in GROUPS.items():
        entries = result.group(group)
        if not entries:
            continue
        out += ["", f"### {_md(title)}: {len(entries)}", "", "| case | mode | before | after | what changed |",
                "|---|---|---|---|---|"]
        for e in entries:
            cells = [e.case, e.mode, e.before or "-", e.after or "-", "; ".join(e.changes)]
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
    if result.numerics:
        out += ["", f"### {_md(NUMERICS_TITLE)}: {len(result.numerics)}", "",
                "| case | mode | program | before | after | move |", "|---|---|---|---|---|---|"]
        out += ["| " + " | ".join(_md(c) for c in _move_cells(m)) + " |" for m in result.numerics]
    return "\n".join(out) + "\n"


def _move_cells(m: Move) -> list[str]:
    direction = "grew" if m.grew else "shrank"
    return [m.case, m.mode, m.program, fraction_text(m.before), fraction_text(m.after) + (f" at {m.where}" if m.where
            else ""), f"{direction} ≥{m.bucket:g}× ({m.factor:.1f}×)"]


def _render_html(result: DiffResult) -> str:
    groups = [(group, title, result.group(group)) for group, title in GROUPS.items() if result.group(group)]
    return render_page("diff.html.j2", header=header(result), totals=_totals(result), verdict=_verdict(result),
                       groups=groups, warning=numerics_warning(result), numerics_title=NUMERICS_TITLE,
                       moves=[(m.grew, _move_cells(m)) for m in result.numerics])


def _render_json(result: DiffResult) -> str:
    return json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n"


_RENDERERS: dict[str, Callable[[DiffResult], str]] = {".html": _render_html, ".md": _render_md, ".json": _render_json}


def render_diff(result: DiffResult, fmt: str) -> str:
    """Return ``result`` rendered as ``fmt`` (".html", ".md" or ".json")."""
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown diff format {fmt!r}; use one of {', '.join(DIFF_FORMATS)}")
    return _RENDERERS[fmt](result)
