"""Each zoo library's whole registry, as the installed library lists it, and its difference from a known list.

The lists are the libraries' own (``timm.list_models()``, ``torchvision.models.list_models()`` over every
task family, transformers' ``MODEL_MAPPING_NAMES``), listed without building a model. The zoo's committed
lists (docs/zoo/registry-<kind>.txt, one zoo id a line, headed by the library version they were taken
from) are compared with them: a model the installed library has and the list lacks is *unchecked* (new
upstream, never silently absent); one the list has and the library lacks is *missing*.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RegistryDiff", "compare", "installed", "read_list", "render_list"]


def installed(kind: str) -> list[str]:
    """Return every zoo id the installed library of ``kind`` registers (timm, torchvision, hf), sorted."""
    from exportcore.zoo.specs import expand

    return sorted({entry.zoo_id for entry in expand([f"{kind}:*"])})


@dataclass(frozen=True)
class RegistryDiff:
    """How the installed registry differs from a known list."""

    kind: str
    unchecked: tuple[str, ...]  # registered upstream, not in the list: new, not yet checked
    missing: tuple[str, ...]  # in the list, no longer registered

    def __bool__(self) -> bool:
        return bool(self.unchecked or self.missing)

    def text(self, where: str) -> str:
        """Say what differs, naming the models, and how to take the new list."""
        lines = [f"{self.kind}: the installed registry and {where} differ"]
        if self.unchecked:
            lines.append(f"  {len(self.unchecked)} unchecked (new upstream): {', '.join(self.unchecked)}")
        if self.missing:
            lines.append(f"  {len(self.missing)} missing (no longer registered): {', '.join(self.missing)}")
        lines.append(f"  take the installed list: python -m exportcore.zoo.registry {self.kind} > {where}")
        return "\n".join(lines)


def compare(kind: str, known: list[str], now: list[str]) -> RegistryDiff:
    """Return what ``now`` (the installed registry) has that ``known`` lacks, and the other way round."""
    have, listed = set(now), set(known)
    return RegistryDiff(kind, tuple(sorted(have - listed)), tuple(sorted(listed - have)))


def read_list(path: Path) -> tuple[str, list[str]]:
    """Return (the header's library version, the zoo ids) of a committed registry list."""
    version, names = "", []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            version = line.partition("version ")[2].strip() or version
        elif line.strip():
            names.append(line.strip())
    return version, names


def render_list(kind: str) -> str:
    """Return the committed list's text for the installed library of ``kind``."""
    from exportcore.zoo.specs import PACKAGES, package_versions

    version = package_versions([f"{kind}:*"]).get(PACKAGES[kind], "not installed")
    return f"# {kind} registry, {PACKAGES[kind]} version {version}\n" + "".join(f"{n}\n" for n in installed(kind))


if __name__ == "__main__":
    import sys

    print(render_list(sys.argv[1]), end="")
