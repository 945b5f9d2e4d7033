"""The docs: a short README front page, the pages under docs/, no broken relative link, a strict mkdocs build.

Issue 22's acceptance: README <= 16 KB, >= 5 docs pages, every relative link (file and #anchor)
resolves, ``mkdocs build --strict`` passes. Anchors are computed as mkdocs' default ``toc``
extension makes them, so a link that resolves here resolves on the site.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

# The docs as the newest torch prints them (.ci/run's oldest-torch step leaves them out).
pytestmark = pytest.mark.machinery

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1", re.S)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def slugify(heading: str) -> str:
    """Return the anchor mkdocs (Python-Markdown's toc) gives a heading written in Markdown."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = text.replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(markdown: str) -> set[str]:
    """Return every heading anchor of a page (a repeated heading gets ``_1``, ``_2``, as toc does)."""
    seen: set[str] = set()
    for match in _HEADING.finditer(_FENCE.sub("", markdown)):
        slug = base = slugify(match.group(2))
        n = 0
        while slug in seen:
            n += 1
            slug = f"{base}_{n}"
        seen.add(slug)
    return seen


def relative_links(markdown: str) -> list[str]:
    """Return the link targets of a page that point into the repository (not a URL, not in code)."""
    prose = _CODE_SPAN.sub("code", _FENCE.sub("", markdown))
    return [t for t in _LINK.findall(prose) if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]


def broken_links(page: Path) -> list[str]:
    """Return ``page``'s relative links whose file, or #anchor in a Markdown file, does not exist."""
    broken = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: {file.name} has no heading with the anchor #{anchor}")
    return broken


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def test_readme_is_a_front_page_of_at_most_16_kb() -> None:
    size = len(README.read_bytes())
    assert size <= 16 * 1024, f"README.md is {size} bytes; move detail to docs/ (limit 16384)"


def test_readme_starts_with_the_two_commands() -> None:
    """.ci/run takes the test command from the README's first bash block (grep -F 'pip install -e ".[test]"')."""
    first = re.search(r"^```bash\n(.*?)^```$", README.read_text(encoding="utf-8"), re.S | re.M)
    assert first is not None, "README.md has no ```bash block"
    commands = first.group(1).splitlines()
    assert len(commands) == 2, commands
    assert commands[0].startswith('pip install -e ".[examples]" && python -m pytest examples/'), commands[0]
    assert commands[1] == 'pip install -e ".[test]" && python -m pytest -n auto', commands[1]


def test_docs_has_at_least_five_pages_and_mkdocs_lists_each() -> None:
    found = pages()
    assert len(found) >= 5, [p.name for p in found]
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [p.name for p in found if f": {p.name}" not in nav] == []


@pytest.mark.parametrize("page", [README, *pages()], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_file_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## The `diff` command: usage\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-diff-command-usage) [ok](#here) `[in code](gone.md)`\n\n## Here\n\n"
        "[no file](gone.md) [no anchor](other.md#usage) [web](https://example.org/x.md)\n"
        "```\n[in a block](gone.md)\n```\n",
        encoding="utf-8",
    )
    broken = broken_links(page)
    assert [b.split(":")[0] for b in broken] == ["gone.md", "other.md#usage"], broken


def test_slugs_are_those_mkdocs_makes() -> None:
    assert slugify("Comparing two runs: `python -m pytest_export diff`") == "comparing-two-runs-python-m-pytest_export-diff"
    assert slugify("Why does export specialize my dimension to 0 or 1 — and what is the `size01_accepted` warning?") == (
        "why-does-export-specialize-my-dimension-to-0-or-1-and-what-is-the-size01_accepted-warning")
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a_1"}


def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    missing = [m for m in ("mkdocs", "material") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: pip install -e '.[docs]' (the test extra has it too)")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        # NO_MKDOCS_2_WARNING: mkdocs-material prints a banner about its successor on every build otherwise.
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_architecture_names_every_module() -> None:
    """A reader of ARCHITECTURE.md meets every module of the engine and the plugin by its file name."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "ARCHITECTURE.md").read_text()
    missing = [str(p.relative_to(root)) for package in ("exportcore", "pytest_export")
               for p in sorted((root / package).rglob("*.py"))
               if p.name != "__init__.py" and not re.search(rf"\b{re.escape(p.stem)}(\.py)?\b", text)]
    assert missing == [], f"ARCHITECTURE.md does not name: {missing}"
