"""Where hypothesis keeps its files while the engine draws shapes: not in the user's working directory.

Hypothesis writes a ``.hypothesis/`` folder into the current directory as soon as it draws (a cache
of the constants in the caller's modules, even with no example database). A script or a notebook
that calls ``exportcore.check()``, or a unittest suite using the mixin, should not find one
afterwards. While the engine draws, hypothesis' storage goes to a per-user cache folder, unless
someone chose a place (``HYPOTHESIS_STORAGE_DIRECTORY``, ``set_hypothesis_home_dir``: the pytest
plugin points it under pytest's cache) or the project already has a ``.hypothesis/`` folder; after
the draws, the choice is handed back untouched, so the user's own hypothesis tests in the same
process still find their example database where they expect it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

__all__ = ["outside_working_dir"]


@contextlib.contextmanager
def outside_working_dir() -> Iterator[None]:
    """Keep hypothesis' files under the user's cache folder for the duration, where nobody chose a place."""
    from hypothesis import configuration

    # a module global (no name mangling outside a class): None until someone sets a home
    chosen = getattr(configuration, "__hypothesis_home_directory", None)
    if chosen is not None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or Path(".hypothesis").exists():
        yield
        return
    configuration.set_hypothesis_home_dir(_cache_home() / "exportcore" / "hypothesis")
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(None)


def _cache_home() -> Path:
    home = os.environ.get("XDG_CACHE_HOME")
    return Path(home) if home else Path.home() / ".cache"
