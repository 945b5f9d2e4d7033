"""Zoo specs: ``torchvision:GLOB``, ``timm:GLOB``, ``hf:GLOB`` (``hf:TYPE@AutoClass``), ``package.module:factory``,
and ``!GLOB`` to leave models out; expanded to entries in a stable order, then built one at a time."""

from __future__ import annotations

import fnmatch
import importlib
from typing import Callable, Iterable

from exportcore.zoo.common import ZooCase, ZooEntry, ZooSkip, ZooSpecError

__all__ = ["KINDS", "build", "expand", "parse_spec"]

KINDS = ("torchvision", "timm", "hf")


def parse_spec(text: str) -> tuple[str, str, bool]:
    """Return (kind, pattern, excluded) of one spec; raise ZooSpecError naming it when it cannot be read."""
    raw = text.strip()
    excluded = raw.startswith("!")
    body = raw[1:].strip() if excluded else raw
    if not body:
        raise ZooSpecError(f"zoo spec {text!r} is empty; expected torchvision:GLOB, timm:GLOB, hf:GLOB, "
                           "package.module:factory or !GLOB")
    kind, sep, pattern = body.partition(":")
    if excluded:
        # "!timm:*vit*" leaves out timm's ViTs, "!*vit*" every model whose id matches
        return (kind, pattern, True) if sep and kind in KINDS else ("", body, True)
    if not sep or not pattern:
        raise ZooSpecError(f"zoo spec {text!r}: expected KIND:GLOB (KIND one of {', '.join(KINDS)}) or "
                           "package.module:factory")
    if kind in KINDS:
        return kind, pattern, False
    if not all(part.isidentifier() for part in kind.split(".")) or not pattern.isidentifier():
        raise ZooSpecError(f"zoo spec {text!r}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}, or "
                           "package.module:factory naming a function that returns a model")
    return "factory", body, False


def expand(specs: Iterable[str]) -> list[ZooEntry]:
    """Return the entries the specs name, in spec order then name order, without duplicates or exclusions."""
    parsed = [parse_spec(s) for s in specs]
    entries: dict[str, ZooEntry] = {}
    for (kind, pattern, excluded), text in zip(parsed, specs):
        if excluded:
            continue
        found = _lister(kind)(pattern)
        if not found:
            raise ZooSpecError(f"zoo spec {text!r} names no model")
        for entry in found:
            entries.setdefault(entry.zoo_id, entry)
    drops = [(kind, pattern) for kind, pattern, excluded in parsed if excluded]
    return [e for e in entries.values() if not any(_matches(e, kind, pattern) for kind, pattern in drops)]


def build(entry: ZooEntry, max_params: int | None = None) -> ZooCase:
    """Build ``entry`` offline with random weights and infer its inputs; raise ZooSkip where it cannot be."""
    from exportcore.zoo.offline import NetworkAttempt, no_network

    builder = _builder(entry.kind)
    tried: list[str] = []
    try:
        with no_network(tried):
            case = builder(entry, max_params)
    except Exception as exc:
        if not tried and not isinstance(exc, NetworkAttempt):
            raise
        # Libraries wrap the refusal (urllib's URLError, requests' ConnectionError): the attempt decides.
        why = str(exc) if isinstance(exc, NetworkAttempt) else f"tried to reach {tried[0]}"
        raise ZooSkip(f"{entry.zoo_id}: building it {why} (a download); zoo models are built offline with "
                      "random weights, so this one is skipped") from None
    return case


def _matches(entry: ZooEntry, kind: str, pattern: str) -> bool:
    if kind:
        return entry.kind == kind and fnmatch.fnmatchcase(entry.name, pattern)
    return fnmatch.fnmatchcase(entry.zoo_id, pattern) or fnmatch.fnmatchcase(entry.name, pattern)


def _module(kind: str):  # type: ignore[no-untyped-def]
    name = {"torchvision": "vision", "timm": "timm_zoo", "hf": "hf", "factory": "factory"}[kind]
    return importlib.import_module(f"exportcore.zoo.{name}")


def _lister(kind: str) -> Callable[[str], list[ZooEntry]]:
    return _module(kind).list_entries  # type: ignore[no-any-return]


def _builder(kind: str) -> Callable[[ZooEntry, int | None], ZooCase]:
    return _module(kind).build  # type: ignore[no-any-return]
