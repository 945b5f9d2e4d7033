"""Render a report diff (pytest_export.diff) as terminal text, Markdown or a self-contained HTML page.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Callable

from pytest_export.diff import GROUPS, DiffResult

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


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top;font-size:14px}"
    "th{background:#f4f4f4}h2.regressions{color:#b00020}h2.fixes{color:#1b7f3b}ul{margin:0;padding-left:1.2em}"
    ".verdict{font-weight:bold}"
)


def _render_html(result: DiffResult) -> str:
    e = html.escape
    body = [f"<h1>{e(header(result))}</h1>", f"<p>{e(_totals(result))}</p>",
            f"<p class=verdict>result: {'REGRESSED' if result.regressed else 'no regression'}</p>"]
    for group, title in GROUPS.items():
        entries = result.group(group)
        if not entries:
            continue
        body.append(f"<h2 class={group}>{e(title)}: {len(entries)}</h2>")
        body.append("<table><tr><th>case</th><th>mode</th><th>before</th><th>after</th><th>what changed</th></tr>")
        for x in entries:
            changes = "".join(f"<li>{e(c)}</li>" for c in x.changes)
            body.append(f"<tr><td>{e(x.case)}</td><td>{e(x.mode)}</td><td>{e(x.before or '-')}</td>"
                        f"<td>{e(x.after or '-')}</td><td><ul>{changes}</ul></td></tr>")
        body.append("</table>")
    return ("<!doctype html><html><head><meta charset=utf-8><title>" + e(header(result)) + "</title><style>"
            + _CSS + "</style></head><body>" + "\n".join(body) + "</body></html>\n")


def _render_json(result: DiffResult) -> str:
    return json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n"


_RENDERERS: dict[str, Callable[[DiffResult], str]] = {".html": _render_html, ".md": _render_md, ".json": _render_json}


def render_diff(result: DiffResult, fmt: str) -> str:
    """Return ``result`` rendered as ``fmt`` (".html", ".md" or ".json")."""
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown diff format {fmt!r}; use one of {', '.join(DIFF_FORMATS)}")
    return _RENDERERS[fmt](result)
