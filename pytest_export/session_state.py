"""What the controller gathers over a session, kept on ``config.stash``.

The plugin fills both (and xdist_support joins the workers' selections); reporting reads them.
"""

from __future__ import annotations

import pytest

__all__ = ["RECORDS", "SELECTED"]

#: Controller-side list of records, in arrival order (the reporter sorts them).
RECORDS = pytest.StashKey[list]()
#: Controller-side set of (case, mode) keys selected for this run (after -k / -m).
SELECTED = pytest.StashKey[set]()
