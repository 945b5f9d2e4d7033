"""The result cache of a session: exportcore.result_cache under pytest's cache dir.

Under ``config.cache`` so that ``--cache-clear`` empties it, ``-p no:cacheprovider`` turns it
off, and a CI cache step that restores ``.pytest_cache`` restores it. xdist workers of one
run share the directory (entries are written atomically), which is how a mode checked on one
worker serves the same program on another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from exportcore.result_cache import ResultCache

__all__ = ["session_cache"]

_CACHE = pytest.StashKey["ResultCache | None"]()
#: The folder under pytest's cache dir (``.pytest_cache/d/pytest-export-results``).
FOLDER = "pytest-export-results"


def session_cache(config: pytest.Config, mode: str) -> ResultCache | None:
    """Return the session's ResultCache (made on first use), or None when ``mode`` is off."""
    if mode == "off":
        return None
    if _CACHE not in config.stash:
        from exportcore.result_cache import ResultCache

        cache = getattr(config, "cache", None)
        config.stash[_CACHE] = ResultCache(cache.mkdir(FOLDER), mode) if cache is not None else None
    return config.stash[_CACHE]
