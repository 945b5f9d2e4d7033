"""Failures the baseline already records are known: the test reports an expected failure, the gate decides.

Read in every process that runs tests (xdist workers too: each reads the file once), so that a
known failure is an xfail wherever it runs. ``--export-baseline-update`` records every failure of
the run as known, so adopting the plugin on a suite with unexportable models is one green run and
one commit.

A failure is known as recorded (verdict, stage, category): the same key failing another way now is
reported as changed (results.baseline.known_failure_reason), and the lookup reads each key through
the record the gate reads (gate.records_by_key), so the two never disagree.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_export.results.report import Report
from pytest_export.session_state import plugin_session

if TYPE_CHECKING:
    from exportcore.outcome import Outcome

__all__ = ["baseline_path", "known_failure", "read_baseline_records"]

def baseline_path(config: pytest.Config) -> Path | None:
    """Return the --export-baseline (or ini export_baseline) file, absolute, or None."""
    cli = config.getoption("export_baseline", None)
    if cli:
        return Path(os.path.abspath(Path(config.invocation_params.dir) / cli))
    ini = config.getini("export_baseline")
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return Path(os.path.abspath(base / ini))
    return None


def read_baseline_records(path: Path, name: str) -> Report:
    """Return a baseline as a report (its ``records``): a baseline file or an older full report."""
    from pytest_export.results.report import load_report

    return load_report(path, name)


def known_failure(item: pytest.Item, case: str, mode: str, outcome: Outcome | None = None) -> str | None:
    """Return why a failure of (case, mode) is known (the baseline records it, or the run updates it), or None.

    ``outcome``: the failure this run got; one of another stage or category than recorded is reported as
    changed, or not known under --export-baseline-strict.
    """
    config = item.config
    if config.getoption("export_baseline_update", False):
        return "recorded as a known failure by --export-baseline-update"
    session = plugin_session(config)
    if not session.known_failures_read:
        session.known_failures, session.known_failures_read = _load(config), True
    known = session.known_failures
    if not known:
        return None
    from pytest_export.results.baseline import known_failure_reason, outcome_known

    path = baseline_path(config)
    now = outcome_known(outcome.status, outcome) if outcome is not None else None
    return known_failure_reason(known.get((case, mode)), path.name if path else "baseline", now,
                                strict=bool(config.getoption("export_baseline_strict", False)))


def _load(config: pytest.Config) -> dict[tuple[str, str], Any] | None:
    path = baseline_path(config)
    if path is None or not path.exists():
        return None
    from pytest_export.results.gate import records_by_key
    from pytest_export.results.report import ReportError

    try:
        records = read_baseline_records(path, path.name).records
    except ReportError:
        return None  # the reporting plugin refuses the session with the reason
    return dict(records_by_key(records))
