"""Say what changed: the first part of the whole proof (exportcore.reuse.whole) that differs from the last stored one.

A warm run that re-checks a (case, mode) should say why (``code: models.resnet:Net.forward``,
``weights``, ``torch 2.14.1 → 2.15.0``), or a user cannot tell an edit from a cache that was not
restored. So each whole store also writes a small index file per (case, mode) in the cache
folder with the parts it was stored under; the next walk compares its own parts with them in a
fixed order and names the first that differs. The index holds digests, and the environment as
text (versions and the machine: what the key names in the clear anyway), never a value itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exportcore.reuse.code_witnesses import Witness
    from exportcore.reuse.result_cache import ResultCache

__all__ = ["changed", "remember", "first_failing", "PART_NAMES"]

#: the parts in the order they are compared, and how a change to each is named
PART_NAMES = {
    "environment": "environment", "native": "native code", "config": "torch config",
    "registries": "registered kernels, decompositions or pytree nodes", "mode": "mode",
    "spec": "spec", "options": "options", "weights": "weights", "attributes": "attributes", "inputs": "inputs",
    "factory": "inputs factory",
}


def changed(cache: ResultCache, case_id: str, mode: str, parts: dict[str, str | None]) -> str | None:
    """The first part that differs from the last stored walk of (case, mode); None: none stored, or none differs."""
    try:
        before = json.loads(_index(cache, case_id, mode).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(before, dict):
        return None
    for name, label in PART_NAMES.items():
        old, new = before.get(name), parts.get(name)
        if old == new:
            continue
        if name == "environment" and isinstance(old, str) and isinstance(new, str):
            return _environment_change(old, new)
        return label if new is not None else f"{label} (cannot be proven)"
    return None


def remember(cache: ResultCache, case_id: str, mode: str, parts: dict[str, str | None]) -> None:
    """Keep the parts (case, mode) was last stored under; a folder that cannot be written is skipped."""
    file = _index(cache, case_id, mode)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(parts, out, sort_keys=True)
            os.replace(tmp, file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


def first_failing(kept: list[Witness], environ: dict[str, str | None], model: Any) -> str | None:
    """What no longer holds of a stored walk's code and environment reads, named; None: all of it holds."""
    from exportcore.reuse.code_witnesses import failing
    from exportcore.reuse.environ_reads import value_digest

    for name, digest in sorted(environ.items()):
        if value_digest(os.environ.get(name)) != digest:
            return f"environment variable {name}"
    try:
        witness = failing(kept, model)
    except Exception:  # noqa: BLE001 - a witness that cannot be read again proves nothing
        return "code (cannot be read again)"
    if witness is None:
        return None
    names = sorted(path.rsplit(":", 1)[1] for path in witness.paths if path.startswith("global:"))
    classes = sorted(f"{path.split(':')[1].rsplit('.', 1)[-1]}.{path.rsplit(':', 1)[1]}"
                     for path in witness.paths if path.startswith("class:"))
    name = (names or classes or [f"line {witness.line}"])[0]
    return f"code: {witness.module}:{name}"


def _environment_change(old: str, new: str) -> str:
    """``torch 2.14.1 → 2.15.0``: the first of the environment's parts that differs."""
    for before, after in zip(old.split("; "), new.split("; ")):
        if before != after:
            word, _, rest = before.partition(" ")
            if after.startswith(word + " "):
                return f"{word} {rest} → {after[len(word) + 1:]}"
            return f"{before} → {after}"
    return "environment"


def _index(cache: ResultCache, case_id: str, mode: str) -> Path:
    name = hashlib.blake2b(f"{case_id}\0{mode}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return cache.path / "index" / name[:2] / f"{name}.json"
