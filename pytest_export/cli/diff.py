"""``python -m pytest_export diff``: load two reports, print the grouped diff, write -o files.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

from pytest_export.results.diff import diff_reports
from pytest_export.results.numerics_growth import BUCKETS, FLOOR, bucket_argument
from pytest_export.rendering.diff import DIFF_FORMATS, render_diff, render_text
from pytest_export.results.report import ReportError, atomic_write, load_report

__all__ = ["add_parser", "run", "run_diff"]


def add_parser(sub: Any) -> None:
    """Register the ``diff`` subcommand."""
    parser = sub.add_parser(
        "diff",
        help="what changed between two JSON reports (e.g. before and after a torch upgrade)",
        description="List, per (case, mode), what changed between two runs: regressions, fixes, changed "
        "findings, changed ranges and other changes (failure stage/category, op counts, export time).",
        epilog="exit status: 0 no regression; 1 something exportable in OLD is not in NEW (or, with "
        "--fail-on-numerics-growth, an error grew past the bucket); 2 unreadable input, bad output path or an "
        "output naming an input",
    )
    parser.add_argument("old", metavar="OLD.json", help="the earlier report (e.g. on the current torch)")
    parser.add_argument("new", metavar="NEW.json", help="the later report (e.g. on the candidate torch)")
    parser.add_argument("-o", "--output", action="append", default=[], metavar="PATH",
                      help="also write the diff here; format from the extension (.html, .md, .json); repeatable")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every entry of every group")
    parser.add_argument("--fail-on-numerics-growth", metavar="FACTOR", default=None, type=bucket_argument,
                        help="exit 1 when a program's worst error (as a fraction of its tolerance) grew by FACTOR or "
                        f"more, both runs passing or not; FACTOR is a bucket: {', '.join(f'{b:g}' for b in BUCKETS)} "
                        f"(moves where both sides are below {FLOOR:g} of the tolerance are noise)")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return its exit status."""
    return run_diff(args.old, args.new, args.output, verbose=args.verbose, growth=args.fail_on_numerics_growth)


def _format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    suffix = {".markdown": ".md", ".htm": ".html"}.get(suffix, suffix)
    if suffix not in DIFF_FORMATS:
        raise ValueError(f"diff output {path!r}: unknown format {suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(DIFF_FORMATS)}")
    return suffix


def run_diff(old: str, new: str, outputs: Sequence[str], *, verbose: bool = False,
             growth: float | None = None) -> int:
    """Diff two report files; return 0 (no regression), 1 (a regression, or an error grown past the bucket
    ``growth``) or 2 (bad input/output)."""
    from pytest_export.cli.paths import clashing_paths

    problem = clashing_paths(list(outputs), [("OLD report", old), ("NEW report", new)])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        formats = [(path, _format(path)) for path in outputs]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        before, after = load_report(old), load_report(new)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = diff_reports(before, after, old_name=old, new_name=new, growth_threshold=growth)
    for path, fmt in formats:
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, render_diff(result, fmt))
        except OSError as exc:
            print(f"error: cannot write {path}: {exc}", file=sys.stderr)
            return 2
    print(render_text(result, verbose=verbose))
    for side, report in (("OLD", before), ("NEW", after)):
        if not report.complete:
            # a merge with missing shards says so in stop_reason: not every incomplete report was interrupted
            why = report.stop_reason or "its session was interrupted"
            print(f"warning: {side} report is incomplete ({why})", file=sys.stderr)
    return 1 if result.regressed or result.numerics_failed else 0
