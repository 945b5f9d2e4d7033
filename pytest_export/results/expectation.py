"""An expected failure in one mode (the marker's ``expect=``, or pytest's own xfail).

Its own module, free of the engine's types: the marker parses it at collection in every
session, and records carry it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Expectation"]


@dataclass(frozen=True)
class Expectation:
    """An expected failure in one mode: the marker's ``expect=``, or pytest's own xfail."""

    reason: str
    category: str | None = None
