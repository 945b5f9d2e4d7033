"""Columns: what a result is keyed by besides its case, a mode or a target on a device.

A column is a mode (``strict``, ``non_strict``, ``training``, a registered one) or a target
(``aoti``, ``onnx``, ``executorch``), run on a device. Its label is the result key reports,
records, node ids and ``expect=`` use: ``strict``, ``aoti``, ``strict-cuda`` (a cpu column
carries no device suffix). Code passes Column values; a label is parsed (Column.parse) only
where a string comes in from outside: a report, a node id, a command line. No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from exportcore.devices import DEVICES
from exportcore.targets import TARGETS

__all__ = ["Column"]


@dataclass(frozen=True)
class Column:
    """A mode or a target (``name``) on a device; ``label`` is its result key."""

    name: str
    device: str = "cpu"

    @classmethod
    def parse(cls, label: str) -> Column:
        """Return the column a label names; a suffix that is no device other than cpu stays part of the name."""
        base, sep, device = label.rpartition("-")
        if sep and device in DEVICES and device != "cpu":
            return cls(base, device)
        return cls(label)

    @property
    def label(self) -> str:
        """The result key: ``strict``, ``aoti``, ``strict-cuda``."""
        return self.name if self.device == "cpu" else f"{self.name}-{self.device}"

    @property
    def is_target(self) -> bool:
        """Whether the column is a target's (its runtime runs the checks) rather than a mode's."""
        return self.name in TARGETS

    @property
    def target(self) -> str | None:
        """The target's name, or None for a mode's column."""
        return self.name if self.is_target else None

    def keywords(self) -> dict[str, Any]:
        """exportcore.check's ``target=`` and ``device=`` for this column, where they differ from the defaults."""
        return {**({"target": self.name} if self.is_target else {}),
                **({"device": self.device} if self.device != "cpu" else {})}

    def __str__(self) -> str:
        return self.label
