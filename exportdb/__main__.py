"""Command line: ``python -m exportdb list [--tag T] [--mode M] [--failing]`` and ``docs -o DIR``."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from exportdb.registry import CATEGORIES, MODES, TAGS, ExportCase, Fails, Skip, all_cases


def main(argv: Sequence[str] | None = None) -> int:
    """Run the exportdb command line and return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m exportdb", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="print the catalog, one case per line")
    ls.add_argument("--tag", choices=sorted(TAGS), metavar="TAG", help="only cases with this tag")
    ls.add_argument("--mode", choices=MODES, help="show the expectation for this mode only")
    ls.add_argument("--category", choices=CATEGORIES, help="only cases of this category")
    ls.add_argument("--failing", action="store_true", help="only cases expected to fail (in --mode, if given)")
    docs = sub.add_parser("docs", help="render the browsable HTML reference")
    docs.add_argument("-o", "--output", required=True, help="directory to write index.html and pages into")
    sub.add_parser("tags", help="print the tag taxonomy")
    args = parser.parse_args(argv)
    if args.command == "list":
        return _list(args.tag, args.mode, args.category, args.failing)
    if args.command == "tags":
        for tag, meaning in TAGS.items():
            print(f"{tag:24s} {meaning}")
        return 0
    from exportdb.docs import render

    index = render(args.output)
    print(f"wrote {index}")
    return 0


def _list(tag: str | None, mode: str | None, category: str | None, failing: bool) -> int:
    cases = [
        c for c in all_cases()
        if (tag is None or tag in c.tags)
        and (category is None or c.category == category)
        and (mode is None or mode in c.modes)
        and (not failing or (c.failing_modes() if mode is None else mode in c.failing_modes()))
    ]
    modes = (mode,) if mode else MODES
    width = max((len(c.name) for c in cases), default=10)
    print(f"{'case':{width}s}  {'category':16s}  " + "  ".join(f"{m:28s}" for m in modes) + "  rewrite")
    for c in cases:
        cells = "  ".join(f"{_cell(c, m):28s}" for m in modes)
        print(f"{c.name:{width}s}  {c.category:16s}  {cells}  {c.rewrite or ''}".rstrip())
    print(f"{len(cases)} case(s)")
    return 0


def _cell(case: ExportCase, mode: str) -> str:
    if mode not in case.modes:
        return "-"
    exp = case.expect[mode]
    changed = "*" if case.history(mode) else ""  # the expectation differs on other torch versions
    if isinstance(exp, Skip):
        return "n/a" + changed
    return (f"FAIL {exp.category}" if isinstance(exp, Fails) else "pass") + changed


if __name__ == "__main__":
    sys.exit(main())
