"""Zoo specs: ``torchvision:GLOB``, ``timm:GLOB``, ``hf:GLOB`` (``hf:TYPE@AutoClass``), ``package.module:factory``,
and ``!GLOB`` to leave models out; expanded to entries in a stable order, then built one at a time."""

from __future__ import annotations

import fnmatch
import importlib
from typing import Callable, Iterable

from exportcore.zoo.common import ZooCase, ZooEntry, ZooSkip, ZooSpecError

__all__ = ["KINDS", "PACKAGES", "build", "expand", "package_versions", "parse_spec"]

KINDS = ("torchvision", "timm", "hf")
#: The distribution each kind builds its models with: its version is part of what a zoo result means.
PACKAGES = {"torchvision": "torchvision", "timm": "timm", "hf": "transformers"}


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
    from exportcore.zoo.offline import no_network

    builder = _builder(entry.kind)
    tried: list[str] = []
    try:
        with no_network(tried):
            case = builder(entry, max_params)
    except Exception as exc:
        refusal = _refusal_behind(exc)
        if refusal is None:
            # Only a failure the refused connection caused is a download: a builder that swallowed the
            # refusal and then failed otherwise has a real error, and it is the model's, shown as such.
            if tried:
                exc.add_note(f"(building it also tried to reach {tried[0]}, refused: zoo models are built "
                             "offline; that attempt did not cause this error)")
            raise
        # Libraries wrap the refusal (urllib's URLError, requests' ConnectionError): name where it went.
        why = str(exc) if exc is refusal else f"tried to reach {tried[0] if tried else refusal}"
        raise ZooSkip(f"{entry.zoo_id}: building it {why} (a download); zoo models are built offline with "
                      "random weights, so this one is skipped") from None
    case.network_attempts = tried
    return case


def _refusal_behind(exc: BaseException) -> BaseException | None:
    """Return the NetworkAttempt that caused ``exc`` (itself, or one it was raised from), else None.

    Followed: ``raise ... from`` (``__cause__``), an exception a library keeps as its ``reason`` or
    among its args (urllib's URLError, urllib3's MaxRetryError, requests' ConnectionError), and the
    implicit context of an OSError, the family libraries translate a refused connection into inside
    their handler. Not followed: the context of any other error, which was only raised while the
    refusal was being handled (a builder that caught it and then failed on something else).
    """
    from exportcore.zoo.offline import NetworkAttempt

    todo, seen = [exc], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, NetworkAttempt):
            return current
        linked = [current.__cause__, getattr(current, "reason", None), *getattr(current, "args", ())]
        if isinstance(current, OSError) and not current.__suppress_context__:
            linked.append(current.__context__)
        todo.extend(e for e in linked if isinstance(e, BaseException))
    return None


def package_versions(specs: Iterable[str]) -> dict[str, str]:
    """Return distribution -> installed version of the zoo libraries the specs build models with.

    Read from the installed metadata, so no zoo package is imported for it; "not installed" where
    missing. A table that does not say which timm built its models cannot be reproduced.
    """
    from importlib import metadata

    kinds = {parse_spec(s)[0] for s in specs if not parse_spec(s)[2]}
    out = {}
    for kind in KINDS:
        if kind in kinds:
            try:
                out[PACKAGES[kind]] = metadata.version(PACKAGES[kind])
            except metadata.PackageNotFoundError:
                out[PACKAGES[kind]] = "not installed"
    return out


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
