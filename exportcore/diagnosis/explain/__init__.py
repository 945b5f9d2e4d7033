"""Explain a failing case: a verified dynamic_shapes fix, the failing submodule, every issue at once.

Called by check() for failing cases only, after the verdict is final: nothing here can
change a verdict, and a passing case never reaches this package. ``depth`` is "fix" (the
corrected spec, on by default) or "full" (also the submodule search and draft_export, the
``--export-explain`` option).
"""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Callable

from exportcore.outcome import Explanation

if TYPE_CHECKING:
    from exportcore.diagnosis.explain.context import FailedRun as Run
    from exportcore.diagnosis.explain.context import Recheck

__all__ = ["explain", "DEPTHS"]

DEPTHS = ("off", "fix", "full")
#: Capture failures worth a submodule search (a dynamic-shape failure is the spec's, not a module's).
_LOCAL_STAGES = ("capture",)


def explain(run: Run, depth: str, recheck: Recheck, timeout: float | None = None) -> Explanation | None:
    """Return what could be worked out about the run's failure, or None when there is nothing.

    ``recheck`` is exportcore.check.run_check, used to check the case again (a corrected spec, an option).
    """
    from exportcore.diagnosis.explain.fix import corrected_spec, wants_fix

    if depth == "off" or run.outcome.status != "failed" or run.outcome.failure is None:
        return None
    from exportcore.diagnosis.explain.context import reset

    explanation = Explanation()
    try:
        reset(run)  # a failure may have stopped mid-step (a training step, a probe): start from the snapshot
    except Exception as exc:  # noqa: BLE001 - an explanation must never cost the verdict
        explanation.notes.append(f"not explained: the model could not be reset ({type(exc).__name__}: {exc})")
        return explanation
    from exportcore.diagnosis.explain.example_size import diagnose
    from exportcore.sandbox.warning_filters import torch_warnings

    diagnose(run)
    # One budget for every step, the case's time limit: a rescue whose re-checks each run to the limit
    # (an option that makes one capture's symbolic reasoning explode) cost a zoo row many limits.
    budget = _Budget(timeout)
    with torch_warnings():  # re-exports and draft_export are torch's work too: -W error must not break them
        if wants_fix(run):
            _step(explanation, "fix", budget, lambda: _set_fix(explanation, corrected_spec(run, recheck)))
        from exportcore.diagnosis.explain.rescue import option_rescue, wants_rescue

        if wants_rescue(run):
            _step(explanation, "rescue", budget, lambda: _set_rescue(explanation, option_rescue(run, recheck)))
        if depth == "full":
            failure = run.outcome.failure
            if failure.stage in _LOCAL_STAGES and failure.category != "torch.dynamic-shape":
                _step(explanation, "submodules", budget, lambda: _submodules(run, explanation, failure.category))
            if failure.stage in ("capture", "constraints"):
                _step(explanation, "draft", budget, lambda: _draft(run, explanation))
    empty = not (explanation.fix or explanation.rescue or explanation.submodules or explanation.issues
                 or explanation.notes)
    return None if empty else explanation


def _set_fix(explanation: Explanation, fix: object) -> None:
    explanation.fix = fix  # type: ignore[assignment]


def _set_rescue(explanation: Explanation, rescue: object) -> None:
    explanation.rescue = rescue  # type: ignore[assignment]


def _submodules(run: Run, explanation: Explanation, category: str) -> None:
    from exportcore.diagnosis.explain.submodules import failing_submodules

    found, notes = failing_submodules(run, category)
    explanation.submodules = found
    explanation.notes += notes


def _draft(run: Run, explanation: Explanation) -> None:
    from exportcore.diagnosis.explain.draft import available, draft_issues

    if not available():
        explanation.notes.append("draft_export is not available in this torch")
        return
    issues, notes = draft_issues(run)
    explanation.issues = issues
    explanation.notes += notes


class _Budget:
    """The seconds an explanation may still spend: the case's time limit, shared by its steps (None: no limit)."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.end = None if timeout is None else time.monotonic() + timeout

    def left(self) -> float | None:
        return None if self.end is None else self.end - time.monotonic()


def _step(explanation: Explanation, name: str, budget: _Budget, work: Callable[[], None]) -> None:
    from exportcore.sandbox.deadline import CaseTimeout, deadline

    start = time.perf_counter()
    left = budget.left()
    if left is not None and left <= 0.05:
        explanation.notes.append(f"{name}: not tried, the case's time limit ({budget.timeout:g} s) was spent")
        return
    try:
        with deadline(left):
            work()
    except CaseTimeout:
        explanation.notes.append(f"{name}: stopped at the case's time limit ({budget.timeout:g} s)")
    except Exception as exc:  # noqa: BLE001 - an explanation must never cost the verdict
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
        explanation.notes.append(f"{name}: could not be worked out ({type(exc).__name__}: {exc}{where})")
    explanation.timings[name] = round(time.perf_counter() - start, 3)
