"""A record's verdict, decided here and nowhere else: what the terminal, reports, JUnit, gate and merge read.

:func:`verdict_of` turns the engine's outcome, what the test expected of it (the marker's ``expect=``)
and whether the baseline knows the failure into the verdict the runner proposes; :func:`after_pytest`
takes pytest's last word on it (its own ``xfail``, a warnings filter, another plugin);
:func:`as_happened` sets the expectation aside again (what a baseline records of a result).
Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exportcore import vocab

if TYPE_CHECKING:
    from exportcore.outcome import Outcome
    from pytest_export.results.expectation import Expectation

__all__ = ["EXPORTABLE", "FAILING", "PROBLEMS", "UNSTABLE", "after_pytest", "as_happened", "verdict_of"]

#: The model exported and behaved (xpassed too: its test fails only because an expectation is stale).
EXPORTABLE = vocab.EXPORTABLE
#: Not exportable, and nobody expected it.
FAILING = ("failed", "error", "timeout", "crashed")
#: A verdict that changed between the runs of --export-repeat: neither exportable nor failing, and never
#: silent (its test fails; the gate counts a key that was exportable as a regression).
UNSTABLE = "unstable"
#: What a reader must look at: an unexpected failure, a verdict that does not hold still, an expectation gone stale.
PROBLEMS = (*FAILING, UNSTABLE, "xpassed")


def verdict_of(outcome: Outcome, expect: Expectation | None = None, known: bool = False) -> str:
    """Return the verdict of ``outcome``: ``expect`` is the test's expected failure, ``known`` whether the
    baseline records this failure (it speaks only where the test expects nothing). Runs of --export-repeat
    whose statuses differ are unstable whatever was expected: an expectation holds of a result, and there is none."""
    if len(set(outcome.repeats)) > 1:
        return UNSTABLE
    status = outcome.status
    if status == "passed":
        return "xpassed" if expect is not None else "passed"
    if status == "skipped":
        return "skipped"
    if status == "failed" and expect is not None:
        got = outcome.failure.category if outcome.failure else None
        return "xfailed" if expect.category is None or expect.category == got else "failed"
    verdict = status if status in FAILING else "error"
    return "xfailed" if known and expect is None else verdict


def after_pytest(proposed: str, *, skipped: bool, passed: bool, xfail: bool, strict_xpass: bool = False) -> str:
    """Return the verdict once pytest has reported the test: skipped, passed, or failed (``strict_xpass``: an
    ``[XPASS(strict)]``), ``xfail`` when its own xfail spoke. An unstable result stays unstable under pytest's xfail
    (the user tolerates the failing test; the record still says what happened)."""
    if skipped:
        return ("unstable" if proposed == UNSTABLE else "xfailed") if xfail else "skipped"
    if passed:
        return "xpassed" if xfail else "passed"
    if strict_xpass:
        return "xpassed"
    return proposed if proposed in PROBLEMS else "failed"


def as_happened(verdict: str, outcome: Outcome | None) -> str:
    """Return ``verdict`` with any expectation set aside: an xfailed result is what the outcome was (a passing
    outcome pytest failed is "failed")."""
    if verdict != "xfailed":
        return verdict
    status = outcome.status if outcome is not None else "failed"
    return status if status != "passed" else "failed"
