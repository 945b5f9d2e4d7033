"""What a session keeps: one PluginSession per pytest process, reached through plugin_session(config).

Every part of the plugin that keeps something for the session keeps it here (the options, the engine
session, the records, what was shown once, ...), so one object says what a session holds. What one item
gathers while it runs stays on the item (ITEM_RECORDS, ITEM_PENDING). Light on purpose: the plugin
imports it in every session; the types named below load only for a type checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from exportcore.reuse.result_cache import ResultCache
    from exportcore.reuse.session import EngineSession
    from pytest_export.options import RunOptions
    from pytest_export.results.journal import Journal
    from pytest_export.results.records import Record

__all__ = ["ITEM_PENDING", "ITEM_RECORDS", "PluginSession", "distributed", "plugin_session"]


@dataclass
class PluginSession:
    """pytest-export's state for one pytest process (the controller's, a worker's or a serial run's)."""

    #: The resolved --export-* options (pytest_configure); None before that.
    resolved: RunOptions | None = None
    #: The process's engine session: every engine call passes it (pytest_export.cache_dir).
    engine: EngineSession | None = None
    #: The result cache under pytest's cache dir, once asked for (None: off, or not usable).
    result_cache: ResultCache | None = None
    result_cache_opened: bool = False
    #: Hypothesis' storage was pointed at pytest's cache dir (or left where the project keeps it).
    hypothesis_home_set: bool = False
    #: Controller side: the records, in arrival order (the reporter sorts them).
    records: list[Record] = field(default_factory=list)
    #: Controller side: the (case, mode) keys selected for this run (after -k / -m), the workers' joined.
    selected: set[tuple[str, str]] = field(default_factory=set)
    #: (case id, failure text without its first line) -> the mode whose report showed it in full (settle).
    shown_failures: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Finding kinds already shown in the warnings summary (without -v, one of each: runner.warn_findings).
    shown_kinds: set[str] = field(default_factory=set)
    #: The baseline's known failures by (case, mode), read at the first failure (reporting.known_failures).
    known_failures: dict[tuple[str, str], Any] | None = None
    known_failures_read: bool = False
    #: The journals the process running the tests notes export_check cases in (reporting.journal).
    inflight: list[Journal] = field(default_factory=list)
    #: Entries other parts add to a report's environment block (reporting.environment): name -> JSON value.
    environment: dict[str, Any] = field(default_factory=dict)
    #: The zoo's resolved options (pytest_export.zoo.options.ZooOptions; the zoo sits above this module).
    zoo: Any = None

    @property
    def options(self) -> RunOptions:
        """The resolved options; only read after pytest_configure resolved them."""
        if self.resolved is None:
            raise RuntimeError("pytest-export's options were read before pytest_configure resolved them")
        return self.resolved


_SESSION = pytest.StashKey[PluginSession]()

#: Records produced while an item ran (pytest_export.results.records.Record); attached to its report in
#: pytest_runtest_makereport.
ITEM_RECORDS = pytest.StashKey[list]()
#: A marker test's results awaiting pytest's last word (pytest_export.settle.Pending): its record is
#: made, verdict settled, in pytest_runtest_makereport.
ITEM_PENDING = pytest.StashKey[list]()


def plugin_session(config: pytest.Config) -> PluginSession:
    """Return the process's PluginSession, made at the first ask (the zoo's pytest_configure may come first)."""
    session = config.stash.get(_SESSION, None)
    if session is None:
        session = config.stash[_SESSION] = PluginSession()
    return session


def distributed(config: pytest.Config) -> bool:
    """Return whether xdist runs this session's tests in workers (decided before xdist configures)."""
    return bool(config.getoption("numprocesses", None) or config.getoption("tx", None))
