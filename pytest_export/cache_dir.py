"""What the plugin keeps under pytest's cache dir: the result cache, and hypothesis' storage.

The result cache (exportcore.result_cache) lives under ``config.cache`` so that ``--cache-clear``
empties it, ``-p no:cacheprovider`` turns it off, and a CI cache step that restores
``.pytest_cache`` restores it. xdist workers of one run share the directory (entries are written
atomically), which is how a mode checked on one worker serves the same program on another.

Hypothesis writes a ``.hypothesis/`` folder into the current directory when it draws (its
constants cache, even with no example database). A project that does not use hypothesis itself
should not find one after running pytest-export, so the drawn shapes keep it under pytest's cache
too, unless the project already has one or chose a place (HYPOTHESIS_STORAGE_DIRECTORY).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from exportcore.result_cache import ResultCache

__all__ = ["session_cache", "keep_hypothesis_storage"]

_CACHE = pytest.StashKey["ResultCache | None"]()
_HYPOTHESIS = pytest.StashKey[bool]()
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


def keep_hypothesis_storage(config: pytest.Config) -> None:
    """Point hypothesis' storage at pytest's cache dir, once, where the project has not chosen one."""
    if config.stash.get(_HYPOTHESIS, False):
        return
    config.stash[_HYPOTHESIS] = True
    cache = getattr(config, "cache", None)
    if cache is None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or (Path.cwd() / ".hypothesis").exists():
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(str(cache.mkdir("hypothesis")))
