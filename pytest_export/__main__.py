"""Command line: ``python -m pytest_export merge a.json b.json -o report.html [--baseline base.json]``
and ``python -m pytest_export recover reports/export.json`` (a killed session's report from its journal)
and ``python -m pytest_export diff OLD.json NEW.json [-o diff.html -o diff.md]``.

merge exit status: 0 merged and gate passed; 1 gate regression; 2 unreadable input, bad output
path, an output naming an input, a report given twice, a missing shard (unless --allow-missing-shards)
or conflicting records (unless --allow-conflicts).
recover exit status: 0 a report recovered, or nothing to recover; 2 a journal whose session is still
running, an unreadable journal or one of an unknown format version, or an unwritable report.
diff exit status: 0 no regression, 1 a regression, 2 unreadable input, bad output path or an output
naming an input.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from pytest_export.gate import summary_lines
from pytest_export.investigate import add_parser as add_explain_parser
from pytest_export.investigate import explain_command
from pytest_export.merge import MergeError, merge_reports
from pytest_export.report import ReportError, load_report, report_format, write_report

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_export", description="pytest-export tools")
    sub = parser.add_subparsers(dest="command", required=True)
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
    merge.add_argument("-v", "--verbose", action="store_true", help="list deselected and new keys too")
    recover = sub.add_parser(
        "recover",
        help="write the report of a killed pytest session from its journal (REPORT.journal)",
        description="A session killed before writing its reports (segfault, OOM killer) leaves REPORT.journal "
        "next to each --export-report path; this writes REPORT from it, marked incomplete, the test that was "
        "running recorded as crashed.",
        epilog="exit status: 0 a report recovered (the report says the run is incomplete) or nothing to recover; "
        "2 the journal's session is still running, an unreadable journal or one of an unknown format version, "
        "or an unwritable report",
    )
    recover.add_argument("reports", nargs="+", metavar="REPORT", help="report paths (or their .journal files)")
    recover.add_argument("--watch", type=int, metavar="PID", help=argparse.SUPPRESS)
    add_explain_parser(sub)
    _add_diff(sub)
    return parser


def _add_diff(sub: argparse._SubParsersAction) -> None:
    diff = sub.add_parser(
        "diff",
        help="what changed between two JSON reports (e.g. before and after a torch upgrade)",
        description="List, per (case, mode), what changed between two runs: regressions, fixes, changed "
        "findings, changed ranges and other changes (failure stage/category, op counts, export time).",
        epilog="exit status: 0 no regression; 1 something exportable in OLD is not in NEW; 2 unreadable input, "
        "bad output path or an output naming an input",
    )
    diff.add_argument("old", metavar="OLD.json", help="the earlier report (e.g. on the current torch)")
    diff.add_argument("new", metavar="NEW.json", help="the later report (e.g. on the candidate torch)")
    diff.add_argument("-o", "--output", action="append", default=[], metavar="PATH",
                      help="also write the diff here; format from the extension (.html, .md, .json); repeatable")
    diff.add_argument("-v", "--verbose", action="store_true", help="list every entry of every group")


def _merge(args: argparse.Namespace) -> int:
    from pytest_export.cli_paths import clashing_paths, repeated_inputs

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
    if args.shards is not None and args.shards < 1:
        print(f"error: --shards must be at least 1, got {args.shards}", file=sys.stderr)
        return 2
    try:
        result = merge_reports(reports, baseline=baseline, shards=args.shards,
                               allow_missing=args.allow_missing_shards)
    except MergeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for d in result.duplicates:
        print(f"warning: duplicate record {d['case']} [{d['mode']}] in {', '.join(d['sources'])} (kept one)",
              file=sys.stderr)
    for c in result.conflicts:
        seen = ", ".join(f"{src}: {'/'.join(v)}" for src, v in c["verdicts"].items())
        print(f"error: conflicting records for {c['case']} [{c['mode']}]: {seen}", file=sys.stderr)
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
    summary = result.report["summary"]
    counts = ", ".join(f"{n} {v}" for v, n in summary["verdicts"].items()) or "no records"
    print(f"merged {len(reports)} report(s): {summary['total']} records ({counts}) -> {', '.join(args.output)}")
    if result.missing_shards and result.gate is not None and result.gate.missing:
        print(f"error: {len(result.gate.missing)} baseline key(s) {result.missing_shards}", file=sys.stderr)
    if not result.report["complete"]:
        print("warning: at least one shard report is incomplete (its session was interrupted)", file=sys.stderr)
    if result.gate is not None:
        print("\n".join(summary_lines(result.gate, verbose=args.verbose)))
        return 1 if result.gate.failed else 0
    return 0


def _recover(args: argparse.Namespace) -> int:
    from pytest_export.journal import journal_path, read_journal, recover_to, session_alive

    if args.watch is not None:
        _watch(args.watch)
    status = 0
    for name in args.reports:
        report_path = Path(name[: -len(".journal")] if name.endswith(".journal") else name)
        journal = journal_path(report_path)
        if not journal.exists():
            if args.watch is None:
                print(f"{report_path}: no journal ({journal}): nothing to recover")
            continue
        try:
            pid = session_alive(journal, read_journal(journal).header)
            # A live session's journal is its only record so far: recovering (deleting) it would
            # leave that session's crash, if it comes, with an empty report.
            report = None if pid is not None else recover_to(journal, report_path)
        except (OSError, ValueError) as exc:  # an unreadable journal, an unknown format, an unwritable report
            print(f"error: {journal}: cannot be recovered ({exc})", file=sys.stderr)
            status = 2
            continue
        if pid is not None:
            print(f"error: {journal}: its session (pid {pid}) is still running; it writes {report_path} itself "
                  "when it ends (or its journal is recovered when it dies): nothing done", file=sys.stderr)
            status = 2
        elif report is not None:
            crashed = sum(r.verdict == "crashed" for r in report["records"])
            print(f"pytest-export: recovered {report_path} from its journal: {len(report['records'])} records "
                  f"({crashed} crashed), incomplete: {report['stop_reason']}", file=sys.stderr)
    return status


def _watch(parent: int) -> None:
    """Return once the pytest session ``parent`` ends (it closes our stdin, or dies)."""
    import select
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the session's to handle (it writes the reports)
    while os.getppid() == parent:
        ready, _, _ = select.select([sys.stdin], [], [], 0.5)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            return


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status."""
    args = _parser().parse_args(argv)
    if args.command == "merge":
        return _merge(args)
    if args.command == "recover":
        return _recover(args)
    if args.command == "explain":
        return explain_command(args)
    if args.command == "diff":
        from pytest_export.diff_cli import run_diff

        return run_diff(args.old, args.new, args.output, verbose=args.verbose)
    raise AssertionError(args.command)  # argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
