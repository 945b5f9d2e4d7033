"""Shared settings for the examples."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_export_outcome(item, case, outcome):
    """TEMPORARY: torch.__version__ is a str subclass that execnet cannot send between xdist workers."""
    outcome.torch_version = str(outcome.torch_version)
