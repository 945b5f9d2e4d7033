"""python -m exportdb: the list command and the generated HTML reference."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from exportdb import all_cases, registry
from exportdb.__main__ import main
from exportdb.docs import render


def test_list_prints_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert f"{len(all_cases())} case(s)" in out
    assert re.search(r"if_on_tensor_value\s+control_flow\s+FAIL data-dependent", out)


def test_list_filters_by_tag_and_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--tag", "python.context-manager", "--mode", "strict"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines()[1:-1]]
    assert lines and all(registry.get(line.split()[0]).tags for line in lines)
    assert {line.split()[0] for line in lines} == {c.name for c in registry.by_tag("python.context-manager")}
    assert "lock_context_manager" in out and "non_strict" not in out.splitlines()[0]


def test_list_failing_in_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--mode", "training", "--failing"]) == 0
    names = {line.split()[0] for line in capsys.readouterr().out.splitlines()[1:-1]}
    assert names == {c.name for c in all_cases() if "training" in c.failing_modes()}
    assert "lock_context_manager" not in names  # fails only in strict


def test_unknown_tag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["list", "--tag", "no-such-tag"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(tmp_path_factory.mktemp("docs")).parent


def test_docs_index_by_category_tag_and_mode(docs: Path) -> None:
    index = (docs / "index.html").read_text()
    for category in registry.CATEGORIES:
        assert f'href="{category}.html"' in index
    for tag in ("torch.cond", "data-dependent", "python.builtin"):
        assert f'id="tag-{tag}"' in index
    for mode in registry.MODES:
        assert f'id="mode-{mode}"' in index


def test_docs_every_case_has_an_entry_with_code_and_expectations(docs: Path) -> None:
    for c in all_cases():
        page = (docs / f"{c.category}.html").read_text()
        start = page.index(f'<section class="case" id="{c.name}">')
        entry = page[start:page.index("</section>", start)]
        assert "<pre><code>def _():" in entry
        assert entry.count("<tr><th>") == 3  # one expectation row per mode
        if c.rewrite:
            assert f'href="{registry.get(c.rewrite).category}.html#{c.rewrite}"' in entry


def test_docs_links_resolve(docs: Path) -> None:
    ids: dict[str, set[str]] = {}
    for page in docs.glob("*.html"):
        ids[page.name] = set(re.findall(r'id="([^"]+)"', page.read_text()))
    for page in docs.glob("*.html"):
        for target, anchor in re.findall(r'href="([\w.]+\.html)#([^"]+)"', page.read_text()):
            assert target in ids, (page.name, target)
            assert anchor in ids[target], (page.name, target, anchor)


def test_docs_escape_code_and_text(docs: Path) -> None:
    page = (docs / "data_dependent.html").read_text()
    assert "x[x &gt; 0]" in page  # from code and description, never raw markup
    assert "<code>x[x &gt; 0]</code>" in page


def test_docs_command_writes_index(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "exportdb", "docs", "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "index.html").is_file()
    assert "wrote" in proc.stdout


def test_docs_pages_are_balanced_html(docs: Path) -> None:
    from html.parser import HTMLParser

    class Balance(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag in ("section", "pre", "code", "table", "tr", "p", "ul", "details", "h1", "h2", "h3"):
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            if tag in ("section", "pre", "code", "table", "tr", "p", "ul", "details", "h1", "h2", "h3"):
                assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
                self.stack.pop()

    for page in docs.glob("*.html"):
        parser = Balance()
        parser.feed(page.read_text())
        assert parser.stack == [], (page.name, parser.stack)
