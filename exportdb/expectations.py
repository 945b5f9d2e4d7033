"""What a case expects of a mode: passes, fails with a category, is skipped, or changed at a torch release.

Kept apart from the registry so that an expectation can be read (and resolved against the
installed torch) without the case machinery; importing it never imports torch.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from dataclasses import dataclass
from typing import Union

__all__ = ["PASS", "Pass", "Fails", "Skip", "Changed", "Expectation", "installed_torch", "parse_version"]


@dataclass(frozen=True)
class Pass:
    """The mode exports and every check holds."""

    def __str__(self) -> str:
        return "passes"


PASS = Pass()


@dataclass(frozen=True)
class Fails:
    """The mode fails with a classified ``category`` (an ExportDB tag or engine category).

    The category is what the dogfood suite verifies (through the marker's expect=); ``stage``
    documents where the failure happens and ``why`` overrides the xfail reason.
    """

    category: str
    stage: str | None = None
    why: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.category, str) or not self.category:
            raise TypeError("Fails.category must be a non-empty str")

    def __str__(self) -> str:
        where = f" at {self.stage}" if self.stage else ""
        return f"fails: {self.category}{where}"


@dataclass(frozen=True)
class Skip:
    """The case cannot run on this torch at all (e.g. it uses an API added later): its tests skip."""

    why: str

    def __str__(self) -> str:
        return f"not applicable: {self.why}"


Expectation = Union[Pass, Fails, Skip]

_VERSION = re.compile(r"^(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int]:
    """Return (major, minor) of a torch version such as "2.12" or "2.15.0+cu132"; ValueError otherwise."""
    m = _VERSION.match(str(text))
    if not m:
        raise ValueError(f"not a torch version: {text!r} (expected e.g. '2.12')")
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class Changed:
    """The mode's outcome changed at torch ``at``: ``before`` on older torch, ``after`` from ``at`` on.

    Chain a later change by making ``after`` another Changed:
    ``Changed(Fails("data-dependent"), at="2.10", after=PASS)``.
    """

    before: Expectation
    at: str
    after: Union[Expectation, "Changed"]

    def __post_init__(self) -> None:
        if not isinstance(self.before, (Pass, Fails, Skip)):
            raise TypeError(f"Changed.before must be PASS, Fails(...) or Skip(...), got {self.before!r}")
        if not isinstance(self.after, (Pass, Fails, Skip, Changed)):
            raise TypeError(f"Changed.after must be PASS, Fails(...), Skip(...) or Changed(...), got {self.after!r}")
        at = parse_version(self.at)
        if isinstance(self.after, Changed) and parse_version(self.after.at) <= at:
            raise ValueError(f"Changed: versions must increase, got {self.at} then {self.after.at}")

    def resolve(self, version: tuple[int, int] | None) -> Expectation:
        """Return the expectation for torch ``version`` (None: unknown, the newest one applies)."""
        if version is not None and version < parse_version(self.at):
            return self.before
        return self.after.resolve(version) if isinstance(self.after, Changed) else self.after

    def since(self, version: tuple[int, int] | None) -> str:
        """Return the version range in which ``resolve(version)`` holds, e.g. "torch >= 2.12"."""
        if version is not None and version < parse_version(self.at):
            return f"torch < {self.at}"
        if isinstance(self.after, Changed):
            inner = self.after.since(version)
            return f"{self.at} <= torch < {self.after.at}" if inner.startswith("torch <") else inner
        return f"torch >= {self.at}"

    def __str__(self) -> str:
        return f"{self.before} before torch {self.at}, then {self.after}"


def installed_torch() -> tuple[int, int] | None:
    """Return the installed torch's (major, minor) without importing it; None when torch is absent."""
    loaded = sys.modules.get("torch")
    version = getattr(loaded, "__version__", None)
    if version is None:
        try:
            version = importlib.metadata.version("torch")
        except importlib.metadata.PackageNotFoundError:
            return None
    try:
        return parse_version(str(version))
    except ValueError:
        return None
