"""Render a report diff (pytest_export.results.diff) as terminal text, Markdown or a self-contained HTML page.

The HTML page is ``templates/diff.html.j2`` (on exportdb/html's page shell and stylesheet).

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from pytest_export.results.diff import GROUPS, DiffResult
from pytest_export.rendering.style import render_page

__all__ = ["DIFF_FORMATS", "header", "render_text", "render_diff"]

DIFF_FORMATS = (".html", ".md", ".json")
MAX_TEXT = 300

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def header(result: DiffResult) -> str:
    """Return the one-line title: both torch versions and both sources."""
    old, new = result.old, result.new
    return f"export diff: torch {old['torch']} ({old['source']}) -> torch {new['torch']} ({new['source']})"


def _totals(result: DiffResult) -> str:
    counts = result.counts()
    shown = ", ".join(f"{n} {g}" for g, n in counts.items() if n) or "no differences"
    return f"{shown}; {result.unchanged} unchanged"


def render_text(result: DiffResult, *, verbose: bool = False) -> str:
    """Return the terminal summary; ``verbose`` lists unchanged-verdict groups in full too."""
    lines = [header(result), _totals(result)]
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
    lines.append("\nresult: " + ("REGRESSED" if result.regressed else "no regression"))
    return "\n".join(lines)


def _md(value: Any) -> str:
    s = " ".join(str(value).split())
    s = s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", s).replace("&", "&amp;")


def _render_md(result: DiffResult) -> str:
    out = [f"## {_md(header(result))}", "", _md(_totals(result)), ""]
    out.append("**result: " + ("REGRESSED" if result.regressed else "no regression") + "**")
    for group, title in GROUPS.items():
        entries = result.group(group)
        if not entries:
            continue
        out += ["", f"### {_md(title)}: {len(entries)}", "", "| case | mode | before | after | what changed |",
                "|---|---|---|---|---|"]
        for e in entries:
            cells = [e.case, e.mode, e.before or "-", e.after or "-", "; ".join(e.changes)]
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return "\n".join(out) + "\n"


def _render_html(result: DiffResult) -> str:
    groups = [(group, title, result.group(group)) for group, title in GROUPS.items() if result.group(group)]
    return render_page("diff.html.j2", header=header(result), totals=_totals(result), regressed=result.regressed,
                  groups=groups)


def _render_json(result: DiffResult) -> str:
    return json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n"


_RENDERERS: dict[str, Callable[[DiffResult], str]] = {".html": _render_html, ".md": _render_md, ".json": _render_json}


def render_diff(result: DiffResult, fmt: str) -> str:
    """Return ``result`` rendered as ``fmt`` (".html", ".md" or ".json")."""
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown diff format {fmt!r}; use one of {', '.join(DIFF_FORMATS)}")
    return _RENDERERS[fmt](result)
