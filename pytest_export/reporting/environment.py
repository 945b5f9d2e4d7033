"""The environment block of a report: versions, modes, seed, workers, timing. Never imports torch."""

from __future__ import annotations

import platform
import sys
import time
from collections import Counter
from typing import Any

import pytest

from pytest_export import __version__
from pytest_export.rendering.failure_text import exportdb_docs
from pytest_export.results.records import Record
from pytest_export.session_state import plugin_session

__all__ = ["add_to_environment", "environment", "run_modes"]


def add_to_environment(config: pytest.Config, name: str, value: Any) -> None:
    """Put ``name: value`` in this session's report environment (a falsy ``value`` is left out).

    What another part of the plugin adds (the zoo: the versions of the libraries that built its
    models), so the reporting imports none of them.
    """
    plugin_session(config).environment[name] = value


def _options(config: pytest.Config) -> Any:
    return plugin_session(config).resolved


def run_modes(config: pytest.Config, records: list[Record]) -> set[str] | None:
    """Return the modes this run ran (None: unknown)."""
    options = _options(config)
    if options is not None:
        return set(options.modes or options.known_modes) | set(options.targets) | {r.mode for r in records}
    return None


def environment(config: pytest.Config, records: list[Record], duration: float) -> dict[str, Any]:
    """Return the environment block of a report (never imports torch just for this)."""
    torch_versions = Counter(r.outcome.torch_version for r in records if r.outcome is not None)
    torch_versions.pop("", None)
    if torch_versions:
        torch_version = str(torch_versions.most_common(1)[0][0])
    elif "torch" in sys.modules:
        torch_version = str(getattr(sys.modules["torch"], "__version__", "unknown"))
    else:
        torch_version = "not loaded"
    options = _options(config)
    profile = config.getoption("hypothesis_profile", default=None)
    if profile is None and "hypothesis" in sys.modules:
        profile = getattr(sys.modules["hypothesis"].settings, "_current_profile", None)
    seed = getattr(options, "seed", None)
    if seed is None:
        seed = config.getoption("hypothesis_seed", default=None)
    return {
        "torch": torch_version,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pytest": pytest.__version__,
        "pytest_export": __version__,
        "modes": sorted(run_modes(config, records) or {r.mode for r in records}),
        "seed": seed,
        "hypothesis_profile": profile or "default",
        "workers": config.getoption("numprocesses", default=None),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(time.time() - duration)),
        "duration_s": round(duration, 2),
        "rootdir": str(config.rootpath),  # where `python -m pytest_export explain` re-runs a case
        "exportdb_docs": exportdb_docs(config.rootpath),  # failures link to their ExportDB case when built
        **{name: value for name, value in plugin_session(config).environment.items() if value},
    }
