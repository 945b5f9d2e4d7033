"""The environment variables a model's Python reads while it runs: part of what proves a later session the same.

A forward may take a switch from the environment (``os.environ.get("CHUNK_ROWS", "512")``, a
kernel choice, a debug flag), and a helper may read it only at shapes the examples never reach.
Change the variable and a cold run checks the other behaviour; a warm run must not serve the old
verdict. So while an exportcore.reuse.eager_code.CodeRecord runs, every read of ``os.environ`` or
``os.environb`` by the threads it records (``environ[name]``, ``get``, ``os.getenv``, ``os.getenvb``,
``name in environ``: all go through the mapping's ``__getitem__``) is kept by name, with a digest of
the value or None for a variable that is not set; a bytes read under the name and value
``os.environ`` decodes it to, so both spellings are one variable. Not the value itself: it may be a
token, and the cache is a folder CI uploads.

Reads by machinery (an import, dynamo compiling) and by torch's own Python are left out, as the
record leaves out their code: torch reads its settings once per process and keeps them (the first
``torch.cuda`` query of a session reads ``PYTORCH_NVML_BASED_CUDA_CHECK``, later ones do not), and
they are torch's, as its version is. Reads torch makes in C++ (``getenv`` below Python) are not
seen either.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from types import FrameType
from typing import Callable, Iterator

__all__ = ["reading", "value_digest", "unchanged"]

_ENVIRON = type(os.environ)


def value_digest(value: str | None) -> str | None:
    """What an entry keeps of a variable's value: a digest, or None when it is not set."""
    if value is None:
        return None
    return hashlib.blake2b(value.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()


@contextlib.contextmanager
def reading(reads: dict[str, str | None], ignored: Callable[[FrameType], bool]) -> Iterator[None]:
    """Inside the block, reads of ``os.environ`` go into ``reads`` (first value seen).

    ``ignored(frame)`` is asked, on the reading thread, about the frame that read (``os.getenv``'s own,
    for a read through it): True leaves the read out (another thread's, torch's).
    """
    original = _ENVIRON.__getitem__
    environ = os.environ
    environb = getattr(os, "environb", None)  # (not on Windows)

    def getitem(self: os._Environ[str], key: str) -> str:
        try:
            value = original(self, key)
        except KeyError:
            _keep(self, key, None)
            raise
        _keep(self, key, value)
        return value

    def _keep(mapping: object, key: str | bytes, value: str | bytes | None) -> None:
        if mapping is environb and isinstance(key, bytes):
            key, value = os.fsdecode(key), os.fsdecode(value) if value is not None else None
        elif mapping is not environ or not isinstance(key, str):
            return
        if key not in reads and not ignored(sys._getframe(2)):
            reads[key] = value_digest(value)  # type: ignore[arg-type]

    _ENVIRON.__getitem__ = getitem  # type: ignore[method-assign]
    try:
        yield
    finally:
        _ENVIRON.__getitem__ = original  # type: ignore[method-assign]


def unchanged(reads: dict[str, str | None]) -> bool:
    """Whether every variable in ``reads`` has, in this process, the value (or absence) it had when read."""
    return all(value_digest(os.environ.get(name)) == digest for name, digest in reads.items())
