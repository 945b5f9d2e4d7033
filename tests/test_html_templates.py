"""The HTML templates (exportdb/html: page shell, stylesheet, docs; pytest_export/rendering: reports): loaded lazily,
escape hostile text on every page that uses them."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest
from report_factory import make_record

import exportdb.docs
from exportdb import get
from pytest_export.results.diff import diff_reports
from pytest_export.rendering.diff import render_diff
from pytest_export.results.report import build_report

EVIL = "<script>alert('x')</script>\" onmouseover=\"alert(1)\" &amp; 'q'"


class Page(HTMLParser):
    """Every tag, attribute and piece of text of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def assert_shown_as_text(html: str) -> None:
    page = Page(html)
    assert "script" not in page.tags
    assert not any(name.startswith("on") for name, _ in page.attrs)
    assert EVIL in "".join(page.text)  # shown as written: escaped once, not dropped or double-escaped


def test_importing_the_packages_loads_no_template_engine() -> None:
    code = ("import sys, pytest_export, pytest_export.plugin, pytest_export.rendering.html, pytest_export.rendering.diff, "
            "exportdb, exportdb.docs, exportdb.html; "
            "print(sorted(m for m in ('jinja2', 'markupsafe', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_one_stylesheet_and_the_templates_ship_inside_the_packages() -> None:
    catalog = resources.files("exportdb.html")
    shared = {p.name for p in catalog.joinpath("templates").iterdir()}
    assert {"base.html.j2", "exportdb_index.html.j2", "exportdb_category.html.j2"} <= shared
    assert catalog.joinpath("style.css").is_file()
    reports = {p.name for p in resources.files("pytest_export.rendering").joinpath("templates").iterdir()}
    assert {"report.html.j2", "diff.html.j2"} <= reports
    assert not {n for n in shared if n.startswith(("report", "diff"))}  # the catalog keeps no report template
    assert not {n for n in reports if n.startswith(("base", "exportdb"))}  # one page shell, the catalog's


def test_the_diff_page_shows_hostile_case_names_and_messages_as_text() -> None:
    old = build_report([make_record(f"tests/t.py::test_x[{EVIL}]", "strict")])
    new = build_report([make_record(f"tests/t.py::test_x[{EVIL}]", "strict", "failed", message=EVIL)])
    html = render_diff(diff_reports(old, new, old_name=EVIL), ".html")
    assert_shown_as_text(html)
    assert "Regressions (exportable before, not now): 1" in "".join(Page(html).text)


def test_the_docs_show_a_hostile_case_description_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = get("if_on_tensor_value")
    evil = dataclasses.replace(base, name=f"evil{EVIL}", description=f"{EVIL} and `{EVIL}`", rewrite=None)
    monkeypatch.setattr(exportdb.docs, "all_cases", lambda: [evil])
    exportdb.docs.render(tmp_path)
    page = (tmp_path / f"{base.category}.html").read_text(encoding="utf-8")
    assert_shown_as_text(page)
    assert "<code>&lt;script&gt;" in page  # the backticked part is code, its content still text
    assert_shown_as_text((tmp_path / "index.html").read_text(encoding="utf-8"))
