"""Look of the reports: the words and marks shown for each verdict, and how an HTML page is rendered.

The HTML templates and the one stylesheet live in ``exportdb/html`` (shared with the ExportDB docs).
"""

from __future__ import annotations

from typing import Any

from pytest_export.sanitize import shown_text

__all__ = ["EXPORTABLE", "MODE_ORDER", "PROBLEMS", "VERDICT_LABEL", "VERDICT_MARK", "render_page"]

#: Verdicts meaning "the model exported and behaved": xpassed exported too, its test fails only
#: because an expectation is stale.
EXPORTABLE = ("passed", "xpassed")
#: Verdicts shown as failures (xfailed is expected and listed separately).
PROBLEMS = ("failed", "error", "timeout", "crashed", "xpassed")

#: Columns of the matrix in this order; other modes follow alphabetically.
MODE_ORDER = ("strict", "non_strict", "training")

#: Cell text: the verdict is always written out, color only reinforces it.
VERDICT_LABEL = {
    "passed": "passed",
    "failed": "FAILED",
    "xfailed": "xfail",
    "xpassed": "XPASS",
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
    "error": "💥",
    "timeout": "⏱️",
    "crashed": "💀",
    "skipped": "⏭️",
}


def render_page(template: str, **context: Any) -> str:
    """Render one of the shared templates (exportdb/html) with every printed value made page-safe by shown_text."""
    from exportdb.html import render  # jinja2 loads here, on the first page, not when pytest_export is imported

    return render(template, shown=shown_text, **context)


CSS = """
*{box-sizing:border-box}
body{margin:0;background:#f6f8fa;color:#1f2328;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
 "Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:24px;margin:0 0 6px}
h2{font-size:18px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:0 0 6px;overflow-wrap:anywhere}
h4{font-size:13px;margin:10px 0 4px;color:#57606a}
a{color:#0969da;text-decoration:none}
a:hover{text-decoration:underline}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,"DejaVu Sans Mono",Menlo,Consolas,monospace}
code{overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;
 padding:8px 10px;margin:6px 0;max-height:520px;overflow:auto}
pre.src{margin:4px 0 0;padding:4px 8px;background:#fff8c5;border-color:#d4a72c}
.env{color:#57606a;font-size:12.5px;margin:0;display:flex;flex-wrap:wrap;gap:4px 16px}
.env span{overflow-wrap:anywhere}
.muted{color:#57606a;font-size:12.5px}
.banner{border-radius:8px;padding:10px 16px;margin:14px 0;border:1px solid}
.banner h2{border:0;margin:0 0 4px;padding:0}
.banner.warn{background:#fff8c5;border-color:#d4a72c}
.banner.bad{background:#ffebe9;border-color:#cf222e}
.banner.good{background:#dafbe1;border-color:#1a7f37}
.banner ul{margin:4px 0;padding-left:20px}
.banner li{overflow-wrap:anywhere}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{display:flex;flex-direction:column;min-width:150px;flex:1 1 150px;background:#fff;border:1px solid #d0d7de;
 border-radius:8px;padding:10px 16px;color:inherit}
.card:hover{text-decoration:none;border-color:#0969da}
.card .n{font-size:28px;font-weight:650;line-height:1.1}
.card .l{font-weight:600}
.card small{color:#57606a}
.card.v-passed{border-top:4px solid #1a7f37}
.card.v-failed{border-top:4px solid #cf222e}
.card.v-xfailed{border-top:4px solid #9a6700}
.card.v-skipped{border-top:4px solid #8c959f}
table{border-collapse:collapse;background:#fff;margin:6px 0}
td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f6f8fa}
table.matrix{width:100%}
table.matrix th.case{font-weight:normal;background:#fff;max-width:560px}
td.cell{text-align:center;padding:0;width:130px}
td.cell a{display:block;padding:5px 6px;color:inherit;font-weight:600}
td.cell small{display:block;font-weight:normal;font-size:11.5px}
td.none{color:#8c959f}
table.num td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:700;vertical-align:1px}
.v-passed{background:#dafbe1;color:#116329}
.v-failed{background:#ffebe9;color:#a40e26}
.v-error{background:#ffd8d3;color:#86061d}
.v-crashed{background:#ffd8d3;color:#86061d}
.v-timeout{background:#fff1e5;color:#953800}
.v-xfailed{background:#fff8c5;color:#7d4e00}
.v-xpassed{background:#fbefff;color:#6e40c9}
.v-skipped{background:#eaeef2;color:#424a53}
.fail{background:#fff;border:1px solid #d0d7de;border-left:6px solid #cf222e;border-radius:6px;padding:12px 16px;
 margin:12px 0}
.fail:target,.rec:target{outline:3px solid #0969da}
.v-border-xfailed{border-left-color:#d4a72c}
.v-border-xpassed{border-left-color:#8250df}
.v-border-timeout{border-left-color:#bc4c00}
.headline{font-family:ui-monospace,SFMono-Regular,"DejaVu Sans Mono",monospace;font-size:13px;font-weight:600;
 margin:4px 0 8px;overflow-wrap:anywhere}
.hint{background:#ddf4ff;padding:1px 6px;border-radius:4px}
.meta{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 14px;margin:6px 0}
.meta dt{font-weight:600;color:#57606a}
.meta dd{margin:0;overflow-wrap:anywhere;min-width:0}
.two{display:flex;flex-wrap:wrap;gap:0 24px}
.sev-error{color:#a40e26;font-weight:700}
.sev-warning{color:#9a6700;font-weight:700}
details{margin:4px 0}
details.rec{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:6px 12px}
details.rec[open]{padding-bottom:10px}
summary{cursor:pointer;overflow-wrap:anywhere}
svg.chart{width:100%;max-width:980px;height:auto;background:#fff;border:1px solid #d0d7de;border-radius:6px}
svg.chart text{font:13px system-ui,sans-serif;fill:#1f2328}
svg.chart rect{fill:#cf222e}
#ops+svg.chart rect{fill:#0969da}
"""
CSS += """
table.index{width:100%}
table.index td.hl{font-family:ui-monospace,SFMono-Regular,"DejaVu Sans Mono",monospace;font-size:12.5px}
table.index td:first-child{width:1%;white-space:nowrap}
h2 small{font-weight:normal}
svg.chart.cats rect.bad{fill:#cf222e}
svg.chart.cats rect.expected{fill:#d4a72c}
small.fd{display:block;font-weight:600;font-size:11px;color:#9a6700}
.card.v-finding{border-top:4px solid #d4a72c}
div.rec{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:6px 12px;margin:4px 0}
table.index td:nth-child(2){min-width:300px}
table.findings td:nth-child(2),table.findings td:nth-child(3),table.findings td:nth-child(4){white-space:nowrap}
"""
