"""``python -m pytest_export explain REPORT.json [CASE[MODE]]``: re-run one failing case with --export-explain.

The report records each case's pytest node id and the session's rootdir, so the case is
re-run exactly as CI ran it, through pytest (its fixtures, conftest and marker included),
with the full explanation switched on. Pure glue: pytest runs in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Any

from pytest_export.rendering.failure_text import dim_lines
from pytest_export.rendering.rescue import rescue_of, rescue_phrase
from pytest_export.results.records import Record, failure_of
from pytest_export.results.report import ReportError, load_report
from pytest_export.rendering.style import PROBLEMS

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register the ``explain`` subcommand."""
    parser = sub.add_parser(
        "explain",
        help="re-run one failing case of a report with --export-explain and print the full story",
        description="Re-run one failing (case, mode) of a JSON report through pytest with --export-explain: "
        "verdict, verified dynamic_shapes fix, failing submodule, every issue draft_export finds.",
        epilog="exit status: 0 the case passes now; 1 it still fails; 2 unreadable report or no such case",
    )
    parser.add_argument("report", metavar="REPORT.json", help="a JSON report written by --export-report")
    parser.add_argument("case", nargs="?", metavar="CASE[MODE]",
                        help="the case to explain: a node id, a case id with [mode], or a case id "
                        "(default: the first failing record)")
    parser.add_argument("--rootdir", metavar="DIR", help="run pytest here (default: the report's rootdir, else .)")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return its exit status."""
    try:
        report = load_report(args.report)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failing = [r for r in report.records if r.verdict in PROBLEMS]
    record = _pick(report.records, failing, args.case)
    if record is None:
        what = f"no record matches {args.case!r}" if args.case else "no failing record"
        print(f"error: {args.report}: {what}", file=sys.stderr)
        if failing:
            print("failing records:\n" + "\n".join(f"  {r.test}" for r in failing), file=sys.stderr)
        return 2
    rootdir = args.rootdir or report.environment.get("rootdir") or os.getcwd()
    if not os.path.isdir(rootdir):
        print(f"error: rootdir {rootdir!r} of the report does not exist here; pass --rootdir", file=sys.stderr)
        return 2
    failure = failure_of(record)
    print(f"explaining {record.test} (recorded: {record.verdict}"
          + (f", [{failure.stage}] {failure.category}" if failure else "") + ")")
    if not args.case and len(failing) > 1:
        print(f"  (first of {len(failing)} failing records; name another as CASE[MODE])")
    for line in _recorded(record):
        print(line)
    command = [sys.executable, "-m", "pytest", record.test, "--export-explain", "-p", "no:cacheprovider",
               "-q", "-rN", "--no-header"]
    print(f"  $ (cd {rootdir} && python {' '.join(command[1:])})", flush=True)
    code = subprocess.call(command, cwd=rootdir)
    if code == 0 and record.verdict != "passed":
        print(f"note: {record.test} passes here: the recorded {record.verdict} did not reproduce "
              "(another torch, another machine, or it was fixed)")
    if code == 4 or code == 5:
        print(f"error: pytest could not find {record.test} under {rootdir}", file=sys.stderr)
        return 2
    return 0 if code == 0 else 1


def _recorded(record: Record) -> list[str]:
    """What the report holds beyond the failure: the dynamism ledger, one line per dim, and the option rescue."""
    outcome = record.outcome
    lines = []
    if outcome is not None and outcome.dims:
        lines += ["  recorded dynamism (declared -> what the program took):"] + [f"  {line}" for line in dim_lines(outcome)]
    elif outcome is not None and outcome.declared:
        lines.append("  recorded dynamism: not recorded in this report")
    rescue = rescue_of(outcome)
    if rescue is not None:
        lines.append(f"  recorded option rescue: {rescue_phrase(rescue)}")
        lines += [f"    {line}" for line in rescue.code.splitlines()]
        lines += [f"    {option}: {reason}" for option, reason in rescue.reasons.items()]
    return lines


def _pick(records: list[Record], failing: list[Record], wanted: str | None) -> Record | None:
    if not wanted:
        return failing[0] if failing else None
    for pool in (failing, records):
        for test in (lambda r: r.test == wanted, lambda r: f"{r.case}[{r.mode}]" == wanted,
                     lambda r: r.case == wanted, lambda r: r.test.endswith(wanted)):
            hits = [r for r in pool if test(r)]
            if hits:
                return hits[0]
    return None
