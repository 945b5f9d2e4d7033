"""``python -m pytest_export ledger build|diff``: the exportability ledger and its drift page.

``ledger build [REPORT.json...] --torch X --out DIR [--notes FILE] [--pages DOCS] [--check]``
writes DIR/torch-X.jsonl from the reports (dates kept from the file it replaces, read whole first,
then replaced by a complete new file), then renders the pages from every version in DIR. With no
reports it only renders (``--check``: compares instead, exit 1 when a page differs).
``ledger diff OLD NEW [-o drift.md] [--only GLOB]``: OLD and NEW are ledger files (torch-X.jsonl) or
plugin JSON reports (a user's own suite: built into a ledger in memory). Exit statuses: 0 done (diff:
nothing started failing and no model went missing), 1 a regression (diff) or a stale page (--check),
2 unreadable input or an output that would overwrite an input. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_export.cli.paths import clashing_paths, repeated_inputs
from pytest_export.ledger.build import build_version, release_of, report_torch
from pytest_export.ledger.drift import drift
from pytest_export.ledger.drift_page import render_drift
from pytest_export.ledger.pages import render_pages
from pytest_export.ledger.rows import LedgerError
from pytest_export.ledger.store import VersionLedger, file_name, read_ledger, read_version, write_version
from pytest_export.results.report import ReportError, atomic_write, load_report

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register the ``ledger`` subcommand and its ``build`` and ``diff``."""
    parser = sub.add_parser("ledger", help="one record per (model, mode, torch version); its pages and drift",
                            description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="ledger_command", required=True)
    build = actions.add_parser("build", help="build a torch version's ledger from reports; render the pages",
                               epilog="exit status: 0 written; 1 --check found a stale page; 2 bad input or output")
    build.add_argument("reports", nargs="*", metavar="REPORT.json", help="plugin JSON reports of one torch version")
    build.add_argument("--torch", help="the torch release the reports ran on (2.15.0); needed with reports")
    build.add_argument("--out", required=True, type=Path, metavar="DIR", help="the ledger directory")
    build.add_argument("--notes", action="append", default=[], type=Path, metavar="FILE",
                       help="lines the header keeps and the pages show (one per line; repeatable)")
    build.add_argument("--pages", type=Path, metavar="DOCS", help="render zoo.md and zoo/<family>.md here")
    build.add_argument("--check", action="store_true", help="compare the pages with DOCS instead of writing them")
    diff = actions.add_parser("diff", help="a drift page: what moved between two ledgers or reports",
                              epilog="exit status: 0 no regression; 1 started failing or missing models; 2 bad input")
    diff.add_argument("old", metavar="OLD", help="ledger file (torch-X.jsonl) or JSON report")
    diff.add_argument("new", metavar="NEW", help="ledger file (torch-X.jsonl) or JSON report")
    diff.add_argument("-o", "--output", metavar="PATH.md", help="write the page here (else print it)")
    diff.add_argument("--only", action="append", default=[], metavar="GLOB", help="compare only these case ids")
    diff.add_argument("--covers", default="", metavar="TEXT", help="a sentence on what the two sides hold")


def run(args: argparse.Namespace) -> int:
    """Run ``ledger build`` or ``ledger diff``; return the exit status."""
    try:
        if args.ledger_command == "build":
            return _build(args)
        return _diff(args)
    except (LedgerError, ReportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _build(args: argparse.Namespace) -> int:
    reports: list[str] = list(args.reports)
    args.torch = release_of(args.torch) if args.torch else args.torch  # 2.15.0+cu132 names release 2.15.0
    problem = repeated_inputs(reports)
    if reports and not args.torch:
        problem = "ledger build: --torch names the torch release the reports ran on (e.g. --torch 2.15.0)"
    target = args.out / file_name(args.torch) if args.torch else None
    pages = render_targets(args.pages, read_ledger(args.out)) if args.pages else []
    outputs = [str(p) for p in ([target] if target and reports else []) + pages]
    problem = problem or clashing_paths(outputs, [("report", r) for r in reports]
                                        + [("notes file", str(n)) for n in args.notes])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if reports:
        previous = read_version(target) if target is not None and target.exists() else None
        loaded = [(Path(r).name, load_report(r)) for r in reports]
        notes = [line for n in args.notes for line in _read_notes(n)]
        version = build_version(loaded, args.torch, previous, notes)
        print(f"ledger: {write_version(args.out, version)}: {len(version.rows)} records")
    if args.pages is None:
        return 0
    return _pages(args.pages, args.out, check=args.check)


def render_targets(docs: Path, ledger: dict[str, VersionLedger]) -> list[Path]:
    """The page files rendering would write under ``docs`` (for the clash check before anything is written)."""
    return [docs / name for name in render_pages(ledger)] if ledger else [docs / "zoo.md"]


def _pages(docs: Path, folder: Path, *, check: bool) -> int:
    ledger = read_ledger(folder)
    if not ledger:
        raise LedgerError(f"{folder}: no torch-VERSION.jsonl file to render pages from")
    stale = []
    for name, text in render_pages(ledger).items():
        path = docs / name
        if check:
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        print(f"page: {path}")
    if stale:
        print(f"stale: {', '.join(stale)} differ from what {folder} renders; run `ledger build --out {folder} "
              f"--pages {docs}`", file=sys.stderr)
        return 1
    return 0


def _read_notes(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [line.removeprefix("- ") for line in lines if line.strip()]  # a bullet in the file, one on the page
    except (OSError, UnicodeDecodeError) as exc:
        raise LedgerError(f"--notes {path}: cannot read it ({exc})") from None


def side(path: str) -> tuple[VersionLedger, str]:
    """One side of a diff: a ledger file, or a JSON report built into a ledger; with its label."""
    if path.endswith(".jsonl"):
        version = read_version(Path(path))
        return version, f"torch {version.torch}"
    report = load_report(path)
    torch = release_of(report_torch(report)) or "unknown"
    return build_version([(Path(path).name, report)], torch, None), f"{Path(path).name} (torch {torch})"


def _diff(args: argparse.Namespace) -> int:
    problem = clashing_paths([args.output] if args.output else [], [("OLD", args.old), ("NEW", args.new)])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    (old, old_label), (new, new_label) = side(args.old), side(args.new)
    result = drift(old, new, old_label, new_label, args.only)
    page = render_drift(result, args.covers)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(args.output, page)
        print(f"drift: {args.output}: {len(result.started_failing)} started failing, "
              f"{len(result.started_passing)} started passing, {len(result.new_models)} new, "
              f"{len(result.missing_models)} missing")
    else:
        print(page, end="")
    return 1 if result.regressed else 0


