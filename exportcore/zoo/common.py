"""The types every zoo kind shares: an entry (listed, not built) and a case (built, inputs inferred)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_MAX_PARAMS", "ZooCase", "ZooEntry", "ZooSkip", "ZooSpecError", "seed_for"]

#: Parameters a zoo model may have by default. Export keeps several copies of the weights alive at once
#: (the snapshot, the exported, decomposed and reloaded programs, gradients in training mode): about
#: 10 x 4 bytes a parameter, so 100M parameters stay near 4 GiB, two xdist workers inside a 24 GiB machine.
DEFAULT_MAX_PARAMS = 100_000_000


class ZooSpecError(ValueError):
    """A zoo spec that cannot be read or names nothing; the message names the spec."""


class ZooSkip(Exception):
    """A zoo model that cannot be checked here (over the budget, would download, needs a missing package)."""


@dataclass(frozen=True)
class ZooEntry:
    """One model a spec names: ``family/name`` is its stable id (``torchvision/resnet18``)."""

    family: str  # torchvision, timm, hf, or the factory's module
    name: str  # the model's name in its library (hf: TYPE or TYPE@AutoClass)
    kind: str  # the spec kind that listed it: torchvision, timm, hf, factory
    group: str = ""  # the library's own sub-family (torchvision: classification, detection, ...)

    @property
    def zoo_id(self) -> str:
        return f"{self.family}/{self.name}"


@dataclass
class ZooCase:
    """A built zoo model: what an exportable test would return, plus why its inputs look as they do."""

    entry: ZooEntry
    model: Any
    args: tuple
    kwargs: dict[str, Any] | None = None
    dynamic_shapes: Any = None
    #: What was inferred and from which metadata (shown in the outcome's notes).
    note: str = ""
    #: Modes this model cannot run and why (e.g. detection models need targets to train).
    unsupported_modes: dict[str, str] = field(default_factory=dict)
    params: int = 0
    #: Addresses the builder tried to reach, refused, while it still built the model (see exportcore.zoo.offline).
    network_attempts: list[str] = field(default_factory=list)


def seed_for(zoo_id: str) -> int:
    """Return the seed a zoo model's weights and inputs are drawn with: the same in every process and mode."""
    return zlib.crc32(zoo_id.encode())
