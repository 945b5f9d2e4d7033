"""Look of the reports: the words and marks shown for each verdict, and how an HTML page is rendered.

The report pages' templates are ``templates/`` here; every page's shell (``base.html.j2``) and the one
stylesheet are exportdb/html's (shared with the ExportDB docs).
"""

from __future__ import annotations

from typing import Any

from pytest_export.rendering.counts import COLUMN_ORDER
from pytest_export.results.sanitize import shown_text
from pytest_export.results.verdicts import EXPORTABLE, PROBLEMS

__all__ = ["EXPORTABLE", "MODE_ORDER", "PROBLEMS", "VERDICT_LABEL", "VERDICT_MARK", "render_page"]

#: Columns of the matrix in this order (modes, then targets); others follow alphabetically.
MODE_ORDER = COLUMN_ORDER

#: Cell text: the verdict is always written out, color only reinforces it.
VERDICT_LABEL = {
    "passed": "passed",
    "failed": "FAILED",
    "xfailed": "xfail",
    "xpassed": "XPASS",
    "unstable": "UNSTABLE",
    "error": "ERROR",
    "timeout": "TIMEOUT",
    "crashed": "CRASHED",
    "skipped": "skipped",
}

#: Markdown marks (GitHub renders emoji in step summaries).
VERDICT_MARK = {
    "passed": "✅",
    "failed": "❌",
    "xfailed": "➖",
    "xpassed": "❗",
    "unstable": "🎲",
    "error": "💥",
    "timeout": "⏱️",
    "crashed": "💀",
    "skipped": "⏭️",
}


def render_page(template: str, **context: Any) -> str:
    """Render one of the report templates (``templates/``) with every printed value made page-safe by shown_text."""
    from exportdb.html import render  # jinja2 loads here, on the first page, not when pytest_export is imported

    return render(template, shown=_shown, template_package=__package__, **context)


def _shown(value: Any) -> str:
    # Printable text has no control, escape or surrogate character: shown_text would return it as is.
    if type(value) is str and value.isprintable():
        return value
    return shown_text(value)
