"""The report and gate options, and whether a session asks for either.

Apart from pytest_export.reporting.plugin (which does the work) so that a session asking for no report
loads none of the report, gate and record modules.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["add_options", "reporting_wanted"]


def add_options(parser: pytest.Parser, group: Any) -> None:
    """Register --export-report, --export-baseline, --export-baseline-update and their ini twins."""
    group.addoption(
        "--export-report", action="append", dest="export_report", default=[], metavar="PATH",
        help="write an export report to PATH; format from the extension: .json, .html, .md (repeatable)",
    )
    group.addoption(
        "--export-baseline", dest="export_baseline", default=None, metavar="PATH",
        help="fail the session when a (case, mode) that passed in this earlier JSON report does not pass now",
    )
    group.addoption(
        "--export-baseline-update", dest="export_baseline_update", action="store_true", default=False,
        help="write this run's results to the --export-baseline file instead of failing on regressions",
    )
    group.addoption(
        "--export-baseline-strict", dest="export_baseline_strict", action="store_true", default=False,
        help="also fail when a (case, mode) the baseline records as failing now passes, until "
        "--export-baseline-update records it (keeps the baseline tight)",
    )
    group.addoption(
        "--export-baseline-numerics-growth", dest="export_baseline_numerics_growth", default=None, metavar="FACTOR",
        type=_growth_bucket,
        help="also fail when a program's worst error (as a fraction of its tolerance) grew by FACTOR or more "
        "against the baseline's, even if both pass; FACTOR is a bucket: 1.5, 2 or 10 (without it, growth of 1.5x "
        "or more is a warning)",
    )
    group.addoption(
        "--export-shard", dest="export_shard", default=None, metavar="I/N",
        help="this run is shard I of N (recorded in the report, so `python -m pytest_export merge` notices a "
        "missing shard); read from pytest-split's --group/--splits when given",
    )
    parser.addini("export_report", "export report paths (format from the extension)", type="paths", default=[])
    parser.addini("export_baseline", "baseline JSON report for the export gate", default="")


def _growth_bucket(value: str) -> float:
    from pytest_export.results.numerics_growth import bucket_argument  # not at the plugin's import

    return bucket_argument(value)


def reporting_wanted(config: pytest.Config) -> bool:
    """Return whether any report, baseline or shard option is set (then ReportingPlugin validates them)."""
    return bool(
        config.getoption("export_report") or config.getini("export_report")
        or config.getoption("export_baseline") or config.getini("export_baseline")
        or config.getoption("export_baseline_update") or config.getoption("export_shard", default=None) is not None
        # options of the gate alone: ReportingPlugin refuses them without a baseline rather than ignore them
        or config.getoption("export_baseline_strict", default=False)
        or config.getoption("export_baseline_numerics_growth", default=None) is not None
    )
