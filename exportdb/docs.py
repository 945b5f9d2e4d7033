"""Render ExportDB as a static, browsable HTML reference (no torch, no network, no JS).

``index.html`` lists the categories and indexes every case by tag and by mode;
``<category>.html`` holds one entry per case: description, tags, expected result per mode,
rewrite link and the case's code.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from pathlib import Path

from exportdb.registry import CATEGORIES, MODES, TAGS, ExportCase, Fails, Pass, all_cases, get

__all__ = ["render"]

_CSS = """
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#fafbfc}
header{background:#1d2330;color:#fff;padding:14px 28px}
header a{color:#9cc3ff;margin-right:18px;text-decoration:none}
main{max-width:1100px;margin:0 auto;padding:8px 28px 60px}
h1{font-size:24px;margin:6px 0}h2{border-bottom:1px solid #d8dde6;padding-bottom:4px;margin-top:34px}
a{color:#0b5cd5}code,pre{font:13px/1.45 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f1f3f7;border:1px solid #dde2ea;border-radius:6px;padding:10px 12px;overflow:auto}
.case{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:4px 18px 10px;margin:18px 0}
.case h3{margin:12px 0 4px;font-size:18px}
.tag{display:inline-block;background:#e8eefb;color:#23427a;border-radius:10px;padding:0 8px;margin:0 4px 4px 0;
font-size:12px;text-decoration:none}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #dde2ea;padding:3px 10px;text-align:left}
th{background:#f1f3f7}.pass{color:#11703a;font-weight:600}.fail{color:#b42318;font-weight:600}
.skip{color:#7a8394}.cols{columns:3 240px}.cols li{break-inside:avoid}.muted{color:#5b6475}
"""


def render(output: str | Path) -> Path:
    """Write the reference into ``output`` (created if needed) and return the index page's path."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    cases = all_cases()
    rewritten_by: dict[str, list[str]] = defaultdict(list)
    for c in cases:
        if c.rewrite:
            rewritten_by[c.rewrite].append(c.name)
    for category in CATEGORIES:
        members = [c for c in cases if c.category == category]
        body = "".join(_entry(c, rewritten_by[c.name]) for c in members)
        intro = f"<p class=muted>{len(members)} cases declared in <code>exportdb/cases/{category}.py</code>.</p>"
        _write(out / f"{category}.html", _title(category), f"<h1>{_title(category)}</h1>{intro}{body}")
    index = out / "index.html"
    _write(index, "ExportDB", _index(cases))
    return index


def _index(cases: list[ExportCase]) -> str:
    n_fail = sum(1 for c in cases if c.failing_modes())
    parts = [
        "<h1>ExportDB</h1>",
        f"<p>{len(cases)} small programs in {len(CATEGORIES)} categories, each showing how "
        "<code>torch.export</code> treats one Python or PyTorch feature in each mode "
        f"({', '.join(MODES)}). {n_fail} of them fail in at least one mode and link to the "
        "case that shows the supported rewrite. Every expectation is checked against the "
        "installed torch by <code>pytest --pyargs exportdb</code>.</p>",
        "<h2 id=\"categories\">By category</h2><ul class=cols>",
    ]
    for category in CATEGORIES:
        count = sum(1 for c in cases if c.category == category)
        parts.append(f'<li><a href="{category}.html">{_title(category)}</a> <span class=muted>({count})</span></li>')
    parts.append("</ul><h2 id=\"tags\">By tag</h2>")
    for tag, meaning in TAGS.items():
        tagged = [c for c in cases if tag in c.tags]
        if not tagged:
            continue
        links = ", ".join(_link(c) for c in tagged)
        parts.append(f'<h3 id="tag-{_e(tag)}">{_e(tag)} <span class=muted>({len(tagged)})</span></h3>'
                     f"<p class=muted>{_e(meaning)}</p><p>{links}</p>")
    parts.append("<h2 id=\"modes\">By mode</h2>")
    for mode in MODES:
        failing = [c for c in cases if mode in c.failing_modes()]
        passing = [c for c in cases if mode in c.modes and mode not in c.failing_modes()]
        rows = "".join(
            f"<tr><td>{_link(c)}</td><td class=fail>{_e(str(c.expect[mode]))}</td>"
            f"<td>{_link_name(c.rewrite)}</td></tr>"
            for c in failing
        )
        parts.append(
            f'<h3 id="mode-{mode}">{mode}</h3><p>{len(passing)} pass, {len(failing)} fail.</p>'
            f"<table><tr><th>fails in {mode}</th><th>expected</th><th>rewrite</th></tr>{rows}</table>"
            f"<details><summary>{len(passing)} cases that pass in {mode}</summary><p>"
            + ", ".join(_link(c) for c in passing) + "</p></details>"
        )
    return "".join(parts)


def _entry(case: ExportCase, rewritten_by: list[str]) -> str:
    tags = "".join(f'<a class=tag href="index.html#tag-{_e(t)}">{_e(t)}</a>' for t in case.tags)
    rows = "".join(f"<tr><th>{m}</th>{_result(case, m)}</tr>" for m in MODES)
    description = "".join(f"<p>{_inline(p)}</p>" for p in case.description.split("\n\n"))
    extra = ""
    if case.findings:
        kinds = ", ".join(f"<code>{_e(k)}</code>" for k in case.findings)
        extra += f"<p><b>Reported as finding:</b> {kinds} (in every mode that passes)</p>"
    if case.rewrite:
        extra += f"<p><b>Supported rewrite:</b> {_link_name(case.rewrite)}</p>"
    if rewritten_by:
        extra += "<p><b>Rewrite of:</b> " + ", ".join(_link_name(n) for n in rewritten_by) + "</p>"
    return (
        f'<section class=case id="{_e(case.name)}"><h3><a href="#{_e(case.name)}">{_e(case.name)}</a></h3>'
        f"<div>{tags}</div>{description}<table>{rows}</table>{extra}"
        f"<pre><code>{_e(case.source())}</code></pre>"
        f"<p class=muted>Declared at <code>{_e(case.location())}</code>; check it against your torch with "
        f"<code>pytest --pyargs exportdb -k test_{_e(case.name)}</code></p></section>"
    )


def _result(case: ExportCase, mode: str) -> str:
    if mode not in case.modes:
        return "<td class=skip>not run</td>"
    exp = case.expect[mode]
    history = f"<br><small>{_e(case.history(mode))}</small>" if case.history(mode) else ""
    if isinstance(exp, Fails):
        stage = f" at {_e(exp.stage)}" if exp.stage else ""
        return f"<td class=fail>fails: {_e(exp.category)}{stage}{history}</td>"
    if not isinstance(exp, Pass):
        return f"<td class=skip>{_e(str(exp))}{history}</td>"
    return f"<td class=pass>passes{history}</td>"


def _link(case: ExportCase) -> str:
    return f'<a href="{case.category}.html#{_e(case.name)}">{_e(case.name)}</a>'


def _link_name(name: str | None) -> str:
    return _link(get(name)) if name else ""


def _title(category: str) -> str:
    return category.replace("_", " ").capitalize()


def _inline(text: str) -> str:
    # Descriptions mark code with backticks; escape first so user text can never inject markup.
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(text))


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _write(path: Path, title: str, body: str) -> None:
    nav = "".join(f'<a href="index.html#{a}">{a.capitalize()}</a>' for a in ("categories", "tags", "modes"))
    page = (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)} · ExportDB</title>"
        f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{_CSS}</style></head>"
        f"<body><header><a href=index.html><b>ExportDB</b></a>{nav}</header><main>{body}</main></body></html>"
    )
    path.write_text(page, encoding="utf-8")
