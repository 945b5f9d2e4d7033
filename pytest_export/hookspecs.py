"""Hooks other plugins implement to extend pytest-export.

Put implementations in a ``conftest.py`` or a plugin module. Example: add an ``aoti`` mode,
run it yourself, and flag large graphs in every mode::

    # conftest.py
    import dataclasses

    from exportcore.check import run_check

    def pytest_export_modes(config):
        return ["mine"]

    def pytest_export_run(item, case, column, engine_options, engine_session):
        if column.name != "mine":
            return None  # not mine: let pytest-export run it
        options = dataclasses.replace(engine_options, mode="non_strict")
        outcome = run_check(case, options, engine_session)
        outcome.mode = column.label
        ...  # compile it your way, set outcome.status / outcome.failure
        return outcome

    def pytest_export_outcome(item, case, outcome):
        if outcome.graph and outcome.graph.node_count > 500:
            outcome.notes.append("graph has more than 500 nodes")

A mode the engine itself can run needs no hook: ``exportcore.register_mode(Mode(...))``
when a ``conftest.py`` is imported makes it known to the plugin too. Extra modes from
``pytest_export_modes`` (in a root ``conftest.py`` or an installed plugin) are valid in
``modes=``, ``expect=`` and ``--export-modes``; a test marked without ``modes=`` runs
every known mode. A mode that no ``pytest_export_run`` implementation claims goes to
the engine, which reports it as an error. An extra check is a ``pytest_export_outcome``
implementation that sets ``outcome.status = "failed"`` and ``outcome.failure``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from exportcore.case import Case, EngineOptions
    from exportcore.columns import Column
    from exportcore.outcome import Outcome
    from exportcore.reuse.session import EngineSession

hookspec = pytest.hookspec


@hookspec
def pytest_export_modes(config: pytest.Config) -> list[str]:
    """Return extra export mode names this plugin provides (results of all plugins are joined)."""


@hookspec(firstresult=True)
def pytest_export_case(item: pytest.Item, case: Case, mode: str) -> Case | None:
    """Return a replacement for the case a test returned before it is exported, or None."""


@hookspec(firstresult=True)
def pytest_export_run(item: pytest.Item, case: Case, column: Column, engine_options: EngineOptions,
                      engine_session: EngineSession, mode: str, options: dict[str, Any]) -> Outcome | None:
    """Run ``case`` in ``column`` and return its Outcome, or None to let the engine run it.

    ``column`` (exportcore.columns.Column): the mode or target and its device; ``column.label`` is the
    result key (``strict``, ``aoti-cuda``). ``engine_options`` (exportcore.EngineOptions): what
    pytest-export would run, ``exportcore.check.run_check(case, engine_options, engine_session)``; for a
    target its ``mode`` is the export mode the target starts from. ``engine_session``: the process's
    exportcore.EngineSession. Take only the arguments you use.

    ``mode`` (``column.label``) and ``options`` (check_case's keyword arguments, the session among
    them, and ``export_mode`` for a column whose export mode differs from its label) are the older,
    untyped spelling of the same, kept for implementations written against it.
    """


@hookspec
def pytest_export_outcome(item: pytest.Item, case: Case | None, outcome: Outcome) -> None:
    """Inspect or change an Outcome in place before its verdict is decided and recorded.

    ``case`` is None when the test never produced a case (it raised, or returned the wrong thing).
    """
