"""What a session gathers, kept on ``config.stash``, and whether it runs distributed.

The plugin fills the stash keys (and distributed.xdist_workers joins the workers' selections); reporting
reads them. Light on purpose: the plugin imports it in every session.
"""

from __future__ import annotations

import pytest

__all__ = ["ITEM_PENDING", "ITEM_RECORDS", "RECORDS", "SELECTED", "distributed"]

#: Controller-side list of records, in arrival order (the reporter sorts them).
RECORDS = pytest.StashKey[list]()
#: Controller-side set of (case, mode) keys selected for this run (after -k / -m).
SELECTED = pytest.StashKey[set]()
#: Records produced while an item ran (pytest_export.results.records.Record); attached to its report in
#: pytest_runtest_makereport.
ITEM_RECORDS = pytest.StashKey[list]()
#: A marker test's results awaiting pytest's last word (pytest_export.settle.Pending): its record is
#: made, verdict settled, in pytest_runtest_makereport.
ITEM_PENDING = pytest.StashKey[list]()


def distributed(config: pytest.Config) -> bool:
    """Return whether xdist runs this session's tests in workers (decided before xdist configures)."""
    return bool(config.getoption("numprocesses", None) or config.getoption("tx", None))
