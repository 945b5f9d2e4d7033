"""The time limit of one test's case: --export-timeout, else a share of pytest-timeout's limit for the item."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_export.options import RunOptions

__all__ = ["PYTEST_TIMEOUT_SHARE", "time_limit", "pytest_timeout_share"]


def time_limit(item: pytest.Item, options: RunOptions) -> float | None:
    """Return the time limit of one test's case: --export-timeout, else pytest-timeout's share, else None."""
    return options.timeout if options.timeout is not None else pytest_timeout_share(item)


#: Share of a pytest-timeout limit given to the export, so it ends first and records its stage.
PYTEST_TIMEOUT_SHARE = 0.9


def pytest_timeout_share(item: pytest.Item) -> float | None:
    """Return the engine time limit derived from pytest-timeout's limit for this item, if any."""
    if not item.config.pluginmanager.hasplugin("timeout"):
        return None
    marker = item.get_closest_marker("timeout")
    raw: Any = None
    if marker is not None:
        raw = marker.args[0] if marker.args else marker.kwargs.get("timeout")
    if raw is None:
        raw = item.config.getoption("timeout", None)
    if raw is None:
        raw = item.config.getini("timeout")
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        return None
    return seconds * PYTEST_TIMEOUT_SHARE if seconds > 0 else None
