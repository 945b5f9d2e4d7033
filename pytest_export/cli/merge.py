"""``python -m pytest_export merge a.json b.json -o report.html [--baseline base.json]``: shard reports -> one.

exit status: 0 merged and gate passed; 1 gate regression; 2 unreadable input, bad output
path, an output naming an input, a report given twice, a missing shard (unless --allow-missing-shards)
or conflicting records (unless --allow-conflicts).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pytest_export.cli.paths import clashing_paths, repeated_inputs
from pytest_export.rendering.formats import report_format, write_report
from pytest_export.results.gate import summary_lines
from pytest_export.results.merge import MergeError, merge_reports
from pytest_export.results.numerics_growth import bucket_argument
from pytest_export.results.report import ReportError, load_report, summarize

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register the ``merge`` subcommand."""
    merge = sub.add_parser(
        "merge",
        help="merge shard JSON reports into one report and one gate decision",
        description="Merge JSON reports written by `pytest --export-report=X.json` on several machines.",
        epilog="exit status: 0 merged (gate passed); 1 gate regression; 2 unreadable input, bad output path "
        "or conflicting records, a report given twice (or two reports of one shard), a shard's report missing "
        "(unless --allow-missing-shards), an output that names an input",
    )
    merge.add_argument("reports", nargs="+", metavar="REPORT.json", help="shard reports to merge")
    merge.add_argument(
        "-o", "--output", action="append", required=True, metavar="PATH",
        help="write the merged report here; format from the extension (.json, .html, .md); repeatable",
    )
    merge.add_argument("--baseline", metavar="PATH", help="gate the merged records against this JSON report")
    merge.add_argument(
        "--allow-conflicts", action="store_true",
        help="keep going when shards disagree on a (case, mode) verdict (the failing one is kept)",
    )
    merge.add_argument(
        "--shards", type=int, metavar="N",
        help="the run was split into N shards; without it (or each shard's --export-shard=I/N) a baseline key "
        "in no report is missing and fails the gate",
    )
    merge.add_argument(
        "--allow-missing-shards", action="store_true",
        help="merge even when a shard's report is absent (each shard's --export-shard=I/N, or --shards, says "
        "which); the merged report is marked incomplete and the gate counts that shard's keys as missing",
    )
    merge.add_argument(
        "--strict", action="store_true",
        help="with --baseline: also fail on an improvement or a known failure failing another way, as "
        "--export-baseline-strict does in a session",
    )
    merge.add_argument(
        "--numerics-growth", metavar="FACTOR", default=None, type=bucket_argument,
        help="with --baseline: also fail when a program's worst error grew by FACTOR (1.5, 2 or 10) or more, "
        "as --export-baseline-numerics-growth does in a session",
    )
    merge.add_argument("-v", "--verbose", action="store_true", help="list deselected and new keys too")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return its exit status."""
    inputs = [("shard report", path) for path in args.reports]
    problem = repeated_inputs(args.reports) or clashing_paths(
        args.output, inputs + ([("baseline", args.baseline)] if args.baseline else []))
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    for path in args.output:
        try:
            report_format(path)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        reports = [(path, load_report(path)) for path in args.reports]
        baseline = (args.baseline, load_report(args.baseline)) if args.baseline else None
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if (args.strict or args.numerics_growth is not None) and not args.baseline:
        print(f"error: {'--strict' if args.strict else '--numerics-growth'} needs --baseline", file=sys.stderr)
        return 2
    if args.shards is not None and args.shards < 1:
        print(f"error: --shards must be at least 1, got {args.shards}", file=sys.stderr)
        return 2
    try:
        result = merge_reports(reports, baseline=baseline, shards=args.shards,
                               allow_missing=args.allow_missing_shards, strict=args.strict,
                               growth_threshold=args.numerics_growth)
    except MergeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for d in result.duplicates:
        print(f"warning: duplicate record {d.case} [{d.mode}] in {', '.join(d.sources)} (kept one)",
              file=sys.stderr)
    for c in result.conflicts:
        seen = ", ".join(f"{src}: {'/'.join(v)}" for src, v in c.verdicts.items())
        print(f"error: conflicting records for {c.case} [{c.mode}]: {seen}", file=sys.stderr)
    if result.conflicts and not args.allow_conflicts:
        print(f"error: {len(result.conflicts)} conflict(s); nothing written (use --allow-conflicts to keep "
              "the failing record)", file=sys.stderr)
        return 2
    for path in args.output:
        try:
            write_report(result.report, path)
        except OSError as exc:
            print(f"error: cannot write {path}: {exc}", file=sys.stderr)
            return 2
    summary = summarize(result.report.records)
    counts = ", ".join(f"{n} {v}" for v, n in summary["verdicts"].items()) or "no records"
    print(f"merged {len(reports)} report(s): {summary['total']} records ({counts}) -> {', '.join(args.output)}")
    if result.missing_shards and result.gate is not None and result.gate.missing:
        print(f"error: {len(result.gate.missing)} baseline key(s) {result.missing_shards}", file=sys.stderr)
    # Say why the merge is incomplete: a shard's session that stopped early, and a shard whose report
    # is absent, are different faults (the second is no interruption: rerun that shard).
    for stopped in result.stopped:
        print(f"warning: shard report {stopped}: its session stopped early; the merged report is incomplete",
              file=sys.stderr)
    if result.absent_shards:
        print(f"warning: {result.absent_shards}: merged without it (--allow-missing-shards); the merged report is "
              "incomplete", file=sys.stderr)
    if result.gate is not None:
        print("\n".join(summary_lines(result.gate, verbose=args.verbose)))
        return 1 if result.gate.failed else 0
    return 0
