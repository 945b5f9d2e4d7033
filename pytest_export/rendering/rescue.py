"""The option rescue in one phrase, for the places a reader scans: Markdown and HTML rows, the zoo table, ``explain``.

The failure text tells the whole story (pytest_export.rendering.story.rescue_lines); a row in a
table has room for the verdict of the rescue only: ``rescued by backed_size_oblivious (verified)``
or ``no option rescues (tried backed_size_oblivious, ...)``. A record whose explanation holds no
rescue says nothing: the rescue was not tried (not a dynamic-shape failure) or not recorded.
Pure: no pytest, no torch.
"""

from __future__ import annotations

from typing import Any

from exportcore.outcome import OptionRescue, Outcome

__all__ = ["rescue_of", "rescue_phrase", "rescue_row"]


def rescue_of(outcome: Outcome | None) -> OptionRescue | None:
    """The record's option rescue, or None when none was tried (or the report predates it)."""
    explanation = outcome.explanation if outcome is not None else None
    return explanation.rescue if explanation is not None else None


def rescue_phrase(rescue: OptionRescue, *, tried: bool = True) -> str:
    """``rescued by X (verified)`` or ``no option rescues`` (``tried``: with the options retried)."""
    if rescue.status == "verified":
        return f"rescued by {rescue.option} (verified)"
    return "no option rescues" + (f" (tried {', '.join(rescue.tried)})" if tried and rescue.tried else "")


def rescue_row(outcome: Outcome | None) -> list[tuple[str, str, Any]]:
    """The HTML report's (label, kind, data) row: drawn like a fix (status, cost, the code to write)."""
    rescue = rescue_of(outcome)
    if rescue is None:
        return []
    status = rescue_phrase(rescue)
    if rescue.status == "verified" and rescue.findings:
        status += f"; the re-check still reports {', '.join(rescue.findings)}"
    elif rescue.reasons:
        status += ": " + "; ".join(f"{option} {reason}" for option, reason in rescue.reasons.items())
    return [("option rescue", "fix", {"status": status, "origin": "export option re-checked with every check",
                                      "cost": f"{rescue.seconds:.1f} s", "dynamic_shapes": rescue.code,
                                      "findings": ""})]
