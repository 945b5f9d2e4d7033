"""Screenshot an HTML export report with headless Chromium, to look at it (not run in CI).

Usage::

    python tools/render_html.py report.html out.png [--width 1400] [--height 2000]
    python tools/render_html.py --sample out.png     # render a synthetic report first

Needs Debian's chromium (``apt-get install -y chromium``). The page is loaded from a
file:// URL with networking disabled, which also proves the report needs no network.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_browser() -> str:
    """Return the path of a Chromium-family browser, or exit with how to install one."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no chromium found: apt-get install -y chromium")


def screenshot(html: Path, png: Path, width: int = 1400, height: int = 2000) -> None:
    """Render ``html`` to ``png`` at the given window size."""
    with tempfile.TemporaryDirectory(prefix="render-html-") as profile:
        cmd = [
            find_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={png.resolve()}",
            f"--window-size={width},{height}", html.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not png.exists():
        sys.exit(f"chromium failed ({proc.returncode}):\n{proc.stderr[-2000:]}")


def _sample(path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from report_factory import sample_records

    from pytest_export.rendering.formats import write_report
    from pytest_export.results.report import build_report

    write_report(build_report(sample_records(), environment={"python": sys.version.split()[0]}), path)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and write the screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=Path, help="report.html to render")
    parser.add_argument("png", type=Path, help="screenshot to write")
    parser.add_argument("--sample", action="store_true", help="render a synthetic report instead of HTML")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=2000)
    args = parser.parse_args(argv)
    html = args.html
    if args.sample:
        html = Path(tempfile.mkdtemp(prefix="render-html-")) / "sample.html"
        _sample(html)
    elif html is None:
        parser.error("give report.html or --sample")
    screenshot(html, args.png, args.width, args.height)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
