"""The report formats: one table, file extension -> renderer, and the one way a report is written.

``write_report(report, path)`` renders the report in the format ``path``'s extension names and
writes it atomically. A renderer is ``render_X(report: Report) -> str``; it reads the typed report
only, computes what it shows from the records (``summarize``, the runtimes tables) and imports
neither pytest nor torch. The HTML and Markdown renderers are imported on first use only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from pytest_export.results.report import Report, atomic_write, report_document

__all__ = ["FORMATS", "render", "report_format", "write_report"]

#: The report formats, by file extension (``.htm`` and ``.markdown`` are read as ``.html`` and ``.md``).
FORMATS = (".json", ".html", ".md")


def report_format(path: str | os.PathLike[str]) -> str:
    """Return the report format (".json", ".html", ".md") of ``path``; ValueError if unknown."""
    suffix = Path(path).suffix.lower()
    if suffix == ".markdown":
        return ".md"
    if suffix == ".htm":
        return ".html"
    if suffix not in FORMATS:
        raise ValueError(
            f"report path {os.fspath(path)!r}: unknown format {suffix or '(no extension)'!r}; "
            f"use one of {', '.join(FORMATS)}"
        )
    return suffix


def _render_json(report: Report) -> str:
    return json.dumps(report_document(report), indent=1, sort_keys=True) + "\n"


def _renderers() -> dict[str, Callable[[Report], str]]:
    """The format -> renderer table (a new format: its renderer here, its extension in FORMATS)."""
    # Imported here: the HTML/Markdown renderers are only needed when such a report is asked for.
    from pytest_export.rendering.html import render_html
    from pytest_export.rendering.markdown import render_markdown

    return {".json": _render_json, ".html": render_html, ".md": render_markdown}


def render(report: Report, fmt: str) -> str:
    """Return ``report`` rendered as ``fmt`` (".json", ".html" or ".md")."""
    renderers = _renderers()
    if fmt not in renderers:
        raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    return renderers[fmt](report)


def write_report(report: Report, path: str | os.PathLike[str]) -> None:
    """Render ``report`` in the format named by ``path``'s extension and write it atomically.

    Missing directories are created, as pytest's --junitxml and the --export-report option do.
    """
    text = render(report, report_format(path))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
