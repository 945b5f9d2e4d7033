"""unittest.TestCase support: ``self.assertExportable(...)`` in suites written HF transformers' way.

Under pytest the mixin runs each mode through the ``export_check`` fixture, so every (case, mode)
becomes a record in the session's reports and gate exactly as a marker test's would, and the
baseline's known failures are known here too: a failure ``--export-baseline`` records (at its stage
and category) is an expected failure and its record ``xfailed``, and ``--export-baseline-update``
records every failure of the run as known, so adopting the baseline is one run for a unittest suite
as for marker tests. Under plain ``python -m unittest`` there is no session to record into: the same
engine runs (torch's own log output and graph prints kept out, as under pytest) and the same failure
text is raised, nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import pytest

if TYPE_CHECKING:
    from exportcore.outcome import Outcome

__all__ = ["ExportableMixin"]

# unittest leaves out the frames of a module that sets this (as its own assert methods' are): a
# failing assertExportable points at the test's line, not at this file.
__unittest = True


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
        __tracebackhide__ = True  # pytest's counterpart of __unittest above
        if dynamic_shapes is not None:
            options["dynamic_shapes"] = dynamic_shapes
        if self._pytest_export_check is None:  # plain unittest: the modes of this case share one engine session
            from exportcore.reuse.session import EngineSession

            options["session"] = EngineSession()
        outcomes = [self._check_one(model, args, kwargs, mode, options) for mode in self._modes(modes)]
        bad = [o for o in outcomes if o.status != "passed"]
        known = self._known_failures(bad)
        unknown = [o for o in bad if id(o) not in known]
        if unknown:
            from pytest_export.rendering.failure_text import failure_text

            # The verified fix is pasted here, not into the marker (refused on a TestCase method).
            full = self._wants_traceback()
            texts = [failure_text(o, show_traceback=full, fix_into="self.assertExportable(...)",
                                  under_pytest=self._pytest_export_item is not None) for o in unknown]
            text = "\n\n".join(texts if full else _shown_once(unknown, texts))
            if known:  # one test, several modes: say why the others' failures are not reported above
                text += "\n\n" + "\n".join(f"also failing, as known: {o.mode}: {known[id(o)]}"
                                             for o in bad if id(o) in known)
            raise self.failureException(f"{msg}\n{text}" if msg else text)  # type: ignore[attr-defined]
        if known:
            from pytest_export.runner import expected_failure

            # Every failure is known: the test is XFAIL with the baseline's reasons, as a marker test's is.
            raise expected_failure("; ".join(f"{o.mode}: {known[id(o)]}" for o in bad))
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

    def _known_failures(self, bad: list[Outcome]) -> dict[int, str]:
        """Return id(outcome) -> why it is a known failure (the baseline, or the update run), for ``bad``.

        Their records become ``xfailed``, as a marker test's known failure is. As for a marker test,
        ``--runxfail`` and pytest's own xfail marker set the baseline aside.
        """
        item = self._pytest_export_item
        if item is None or not bad or item.config.getoption("runxfail", False) or item.get_closest_marker("xfail"):
            return {}
        from pytest_export.reporting.known_failures import known_failure
        from pytest_export.results.verdicts import verdict_of
        from pytest_export.session_state import ITEM_RECORDS

        known: dict[int, str] = {}
        records = item.stash.get(ITEM_RECORDS, [])
        for outcome in bad:
            # export_check returned the outcome its record holds: that record is this failure's.
            record = next((r for r in records if r.outcome is outcome), None)
            if record is None:
                continue
            reason = known_failure(item, record.case, record.mode, outcome)
            if reason is not None:
                known[id(outcome)] = reason
                # The record is final as made; the gate reads it so (a known failure, as verdicts decide it).
                record.verdict = verdict_of(outcome, known=True)
        return known

    def _wants_traceback(self) -> bool:
        item = self._pytest_export_item
        if item is None:
            return False
        from pytest_export.runner import wants_traceback

        return wants_traceback(item.config)

    def _modes(self, wanted: Sequence[str] | None) -> list[str]:
        item = self._pytest_export_item
        if item is None:
            from exportcore.modes import MODES

            known = tuple(MODES)
            unknown = [m for m in wanted or () if m not in known]
            if unknown:
                raise ValueError(f"assertExportable(): unknown mode {unknown[0]!r}; known: {', '.join(known)}")
            return list(wanted) if wanted is not None else list(known)
        from pytest_export.session_state import plugin_session

        run_options = plugin_session(item.config).options
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

        from pytest_export.torch_logs import torch_logs_hidden

        # torch prints a failed export's partial FX graph and logs guard warnings to stderr: under plain
        # unittest they would land between the test lines, once per failing case; the failure text says it.
        with torch_logs_hidden():
            return exportcore.check(model, args, kwargs, mode=mode, **options)


def _shown_once(outcomes: list[Outcome], texts: list[str]) -> list[str]:
    """Each mode's failure text, a mode that fails exactly as an earlier one shortened to a reference.

    A data-dependent branch fails the same way in every mode: dozens of lines each time. As for a
    marker test (pytest_export.settle.refer_to_earlier), the first mode shows it in full.
    """
    first: dict[str, str] = {}
    out = []
    for outcome, text in zip(outcomes, texts):
        head, _, body = text.partition("\n")
        earlier = first.setdefault(body, outcome.mode)
        if earlier == outcome.mode:
            out.append(text)
            continue
        lines = body.splitlines()
        kept = [head, *lines[:1], *[line for line in lines[1:2] if line.startswith("  at ")]]
        kept.append(f"  same failure as {earlier}: shown in full above")
        out.append("\n".join(kept))
    return out

