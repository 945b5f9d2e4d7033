"""Render ExportDB as a static, browsable HTML reference (no torch, no network, no JS).

``index.html`` lists the categories and indexes every case by tag and by mode;
``<category>.html`` holds one entry per case: description, tags, expected result per mode,
rewrite link and the case's code. Pages come from the shared templates (``exportdb/html``),
which escape every value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from exportdb.html import render as render_template
from exportdb.registry import CATEGORIES, MODES, TAGS, ExportCase, Fails, Pass, all_cases, get

__all__ = ["render"]

_CODE = re.compile(r"`([^`]+)`")


def render(output: str | Path) -> Path:
    """Write the reference into ``output`` (created if needed) and return the index page's path."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    cases = all_cases()
    rewritten_by: dict[str, list[ExportCase]] = defaultdict(list)
    for c in cases:
        if c.rewrite:
            rewritten_by[c.rewrite].append(c)
    for category in CATEGORIES:
        entries = [_entry(c, rewritten_by[c.name]) for c in cases if c.category == category]
        page = render_template("exportdb_category.html.j2", title=_title(category), category=category, entries=entries)
        (out / f"{category}.html").write_text(page, encoding="utf-8")
    index = out / "index.html"
    index.write_text(render_template("exportdb_index.html.j2", **_index(cases)), encoding="utf-8")
    return index


def _index(cases: list[ExportCase]) -> dict[str, Any]:
    by_mode = []
    for mode in MODES:
        failing = [(c, str(c.expect[mode]), _case(c.rewrite)) for c in cases if mode in c.failing_modes()]
        passing = [c for c in cases if mode in c.modes and mode not in c.failing_modes()]
        by_mode.append((mode, failing, passing))
    return {
        "title": "ExportDB",
        "total": len(cases),
        "n_fail": sum(1 for c in cases if c.failing_modes()),
        "modes": MODES,
        "categories": [(cat, _title(cat), sum(1 for c in cases if c.category == cat)) for cat in CATEGORIES],
        "tags": [(tag, meaning, tagged) for tag, meaning in TAGS.items()
                 if (tagged := [c for c in cases if tag in c.tags])],
        "by_mode": by_mode,
    }


def _entry(case: ExportCase, rewritten_by: list[ExportCase]) -> dict[str, Any]:
    return {
        "case": case,
        # Descriptions mark code with backticks: split, never substitute into markup.
        "paragraphs": [[(i % 2 == 1, part) for i, part in enumerate(_CODE.split(p)) if part]
                       for p in case.description.split("\n\n")],
        "results": [(m, *_result(case, m)) for m in MODES],
        "rewrite": _case(case.rewrite),
        "rewritten_by": rewritten_by,
        "source": case.source(),
        "location": case.location(),
    }


def _result(case: ExportCase, mode: str) -> tuple[str, str, str]:
    """Return (cell class, text, how it differs on other torch versions) of a case's expectation in ``mode``."""
    if mode not in case.modes:
        return "skip", "not run", ""
    exp = case.expect[mode]
    history = case.history(mode) or ""
    if isinstance(exp, Fails):
        return "fail", f"fails: {exp.category}" + (f" at {exp.stage}" if exp.stage else ""), history
    if not isinstance(exp, Pass):
        return "skip", str(exp), history
    return "pass", "passes", history


def _case(name: str | None) -> ExportCase | None:
    return get(name) if name else None


def _title(category: str) -> str:
    return category.replace("_", " ").capitalize()
