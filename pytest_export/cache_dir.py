"""The plugin's engine session, and what it keeps under pytest's cache dir: the result cache, and hypothesis' storage.

One exportcore.EngineSession per pytest process (made in pytest_configure, start_session): every engine
call of the process passes it, so a case's modes share proven work and its targets the kept export.

The result cache (exportcore.reuse.result_cache) lives under ``config.cache`` so that ``--cache-clear``
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
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_export.session_state import plugin_session

if TYPE_CHECKING:
    from exportcore.reuse.result_cache import ResultCache
    from exportcore.reuse.session import EngineSession

__all__ = ["start_session", "engine_session", "session_cache", "keep_hypothesis_storage"]

#: The folder under pytest's cache dir (``.pytest_cache/d/pytest-export-results``).
FOLDER = "pytest-export-results"


def start_session(config: pytest.Config) -> None:
    """Make the process's engine session (its result cache is opened at the first engine call); it keeps
    inference exports for targets from the start when the run adds targets to every case."""
    from exportcore.reuse.session import EngineSession

    state = plugin_session(config)
    state.engine = EngineSession(reuse=state.options.reuse, keep_exports=bool(state.options.targets))


def engine_session(config: pytest.Config, cache_mode: str = "off") -> EngineSession:
    """Return the process's engine session, its disk store opened on first use (``cache_mode`` on, read or write)."""
    state = plugin_session(config)
    session = state.engine
    if session is None:
        raise RuntimeError("pytest-export's engine session is asked for before pytest_configure made it")
    if session.reuse and session.disk is None and not state.result_cache_opened:
        session.use_cache(session_cache(config, cache_mode))
    return session


def end_session(config: pytest.Config) -> None:
    """Drop what the session keeps (the inference exports kept for targets hold model weights)."""
    session = plugin_session(config).engine
    if session is not None:
        session.exports.enable(False)


def session_cache(config: pytest.Config, mode: str) -> ResultCache | None:
    """Return the session's ResultCache (made on first use), or None when ``mode`` is off."""
    if mode == "off":
        return None
    state = plugin_session(config)
    if not state.result_cache_opened:
        from exportcore.reuse.result_cache import ResultCache

        state.result_cache_opened = True
        cache = getattr(config, "cache", None)
        if cache is not None:
            try:
                state.result_cache = ResultCache(cache.mkdir(FOLDER), mode)
            except OSError as error:
                # A restored CI cache can be damaged (a file where the folder belongs, no write
                # permission): the cache only ever saves work, so this run checks everything in full.
                warnings.warn(pytest.PytestWarning(
                    f"pytest-export: the result cache is off for this run: {error}"), stacklevel=1)
    return state.result_cache


def keep_hypothesis_storage(config: pytest.Config) -> None:
    """Point hypothesis' storage at pytest's cache dir, once, where the project has not chosen one."""
    state = plugin_session(config)
    if state.hypothesis_home_set:
        return
    state.hypothesis_home_set = True
    cache = getattr(config, "cache", None)
    if cache is None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or (Path.cwd() / ".hypothesis").exists():
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    try:
        home = cache.mkdir("hypothesis")
    except OSError:  # a damaged cache dir: hypothesis keeps its own default, nothing else changes
        return
    set_hypothesis_home_dir(str(home))
