"""unittest.TestCase support: ``self.assertExportable(...)`` in suites written HF transformers' way.

Under pytest the mixin runs each mode through the ``export_check`` fixture, so every (case, mode)
becomes a record in the session's reports and gate exactly as a marker test's would. Under plain
``python -m unittest`` there is no session to record into: the same engine runs and the same
failure text is raised, nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import pytest

if TYPE_CHECKING:
    from exportcore.outcome import Outcome

__all__ = ["ExportableMixin"]


class ExportableMixin:
    """Mix into a ``unittest.TestCase`` to get ``assertExportable`` and ``recordExportOutcome``."""

    _pytest_export_check: Callable[..., Outcome] | None = None
    _pytest_export_item: pytest.Item | None = None

    @pytest.fixture(autouse=True)
    def _pytest_export_bind(self, request: pytest.FixtureRequest) -> Any:
        # pytest runs autouse fixtures of a TestCase around each test method: the one way a
        # unittest method can reach its pytest item (and so the session's records).
        self._pytest_export_check = request.getfixturevalue("export_check")
        self._pytest_export_item = request.node
        yield
        self._pytest_export_check = None
        self._pytest_export_item = None

    def assertExportable(self, model: Any, args: tuple, kwargs: dict[str, Any] | None = None, *,
                         dynamic_shapes: Any = None, modes: Sequence[str] | None = None,
                         msg: str | None = None, **options: Any) -> list[Outcome]:
        """Check ``model`` in each mode; return the outcomes, or fail with the plugin's failure text.

        ``modes``: default every mode the session runs (``--export-modes`` narrows it as for a
        marker). ``options``: those of the ``export_check`` fixture (checks, rtol, atol, examples,
        inputs, case_id).
        """
        if dynamic_shapes is not None:
            options["dynamic_shapes"] = dynamic_shapes
        outcomes = [self._check_one(model, args, kwargs, mode, options) for mode in self._modes(modes)]
        bad = [o for o in outcomes if o.status != "passed"]
        if bad:
            from pytest_export.rendering.failure_text import failure_text

            text = "\n\n".join(failure_text(o) for o in bad)
            raise self.failureException(f"{msg}\n{text}" if msg else text)  # type: ignore[attr-defined]
        return outcomes

    def recordExportOutcome(self, outcome: Outcome) -> None:
        """Record an ``exportcore.check()`` outcome made in this test into the session's reports and gate.

        Under plain unittest (no pytest session) there is nothing to record into: a no-op.
        """
        item = self._pytest_export_item
        if item is None:
            return
        from pytest_export.fixtures import record_outcome

        record_outcome(item, outcome)

    def _modes(self, wanted: Sequence[str] | None) -> list[str]:
        item = self._pytest_export_item
        if item is None:
            from exportcore.modes import MODES

            known = tuple(MODES)
            unknown = [m for m in wanted or () if m not in known]
            if unknown:
                raise ValueError(f"assertExportable(): unknown mode {unknown[0]!r}; known: {', '.join(known)}")
            return list(wanted) if wanted is not None else list(known)
        from pytest_export.options import OPTIONS

        run_options = item.config.stash[OPTIONS]
        if wanted is not None:
            unknown = [m for m in wanted if m not in run_options.known_modes]
            if unknown:
                raise ValueError(f"{item.nodeid}: assertExportable(modes=...): unknown mode {unknown[0]!r}; "
                                 f"known: {', '.join(run_options.known_modes)}")
        return run_options.modes_for(tuple(wanted) if wanted is not None else None)

    def _check_one(self, model: Any, args: tuple, kwargs: dict[str, Any] | None, mode: str,
                   options: dict[str, Any]) -> Outcome:
        if self._pytest_export_check is not None:
            return self._pytest_export_check(model, args, kwargs, mode=mode, **options)
        import exportcore

        return exportcore.check(model, args, kwargs, mode=mode, **options)
