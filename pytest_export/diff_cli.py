"""``python -m pytest_export diff``: load two reports, print the grouped diff, write -o files.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from pytest_export.diff import diff_reports
from pytest_export.diff_render import DIFF_FORMATS, render_diff, render_text
from pytest_export.report import ReportError, atomic_write, load_report

__all__ = ["run_diff"]


def _format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    suffix = {".markdown": ".md", ".htm": ".html"}.get(suffix, suffix)
    if suffix not in DIFF_FORMATS:
        raise ValueError(f"diff output {path!r}: unknown format {suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(DIFF_FORMATS)}")
    return suffix


def run_diff(old: str, new: str, outputs: Sequence[str], *, verbose: bool = False) -> int:
    """Diff two report files; return 0 (no regression), 1 (a regression) or 2 (bad input/output)."""
    from pytest_export.cli_paths import clashing_paths

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
    result = diff_reports(before, after, old_name=old, new_name=new)
    for path, fmt in formats:
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, render_diff(result, fmt))
        except OSError as exc:
            print(f"error: cannot write {path}: {exc}", file=sys.stderr)
            return 2
    print(render_text(result, verbose=verbose))
    for side, report in (("OLD", before), ("NEW", after)):
        if not report["complete"]:
            print(f"warning: {side} report is incomplete (its session was interrupted)", file=sys.stderr)
    return 1 if result.regressed else 0
