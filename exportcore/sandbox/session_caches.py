"""The caches an engine session keeps for the readers deep in a walk, and the slot they find them through.

The proof's readers (the code recorder's hooks, the source reader, the code digests, the native
libraries a target generated, which targets are available, the first export's warm-up) keep what
they learnt for the next check of the same session (exportcore.reuse.session.EngineSession.caches).
They run too deep in a walk to be handed the session, and some on threads a model started: they
find the caches of the check running on their thread through ``active()``; outside any check they
get fresh ones, which keep nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import types
import weakref
from typing import Any, Iterator

__all__ = ["SessionCaches", "active"]


class SessionCaches:
    """What one engine session's readers keep between its checks."""

    def __init__(self) -> None:
        #: exportcore.reuse.code_origins: (file, line) -> (mtime, source block), and each file's mtime last read
        self.sources: dict[tuple[str, int], tuple[int, str]] = {}
        self.stamps: dict[str, int] = {}
        #: exportcore.sandbox.python_state.code_digest, by the code object, for as long as it lives
        self.code_digests: weakref.WeakKeyDictionary[types.CodeType, str] = weakref.WeakKeyDictionary()
        #: exportcore.reuse.traced_code: the code kept from dynamo (by id, the code held so its id is not reused)
        self.unseen: dict[int, types.CodeType] = {}
        #: exportcore.reuse.program_code: [fingerprint, digest, what the ids belong to] of the last table described
        self.decompositions: list[Any] = []
        #: exportcore.reuse.eager_code: the recording now running, if any (one at a time)
        self.recording: list[Any] = []
        #: exportcore.reuse.native_code: libraries a target compiled from a program and mapped (by path)
        self.generated: set[str] = set()
        #: exportcore.targets.unavailable: why a target cannot run here (None: it can), probed once
        self.missing: dict[str, str | None] = {}
        #: exportcore.sandbox.deadline.warm_up ran in this session
        self.warm = False

    @contextlib.contextmanager
    def activated(self) -> Iterator[SessionCaches]:
        """Make these the caches ``active()`` returns on this thread (and in contexts copied from it)."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


def active() -> SessionCaches:
    """Return the caches of the check running here, or fresh ones (keeping nothing) outside any check."""
    caches = _ACTIVE.get()
    return caches if caches is not None else SessionCaches()


# Not state: the slot through which a context finds its session's caches (a ContextVar's value is per context).
_ACTIVE: contextvars.ContextVar[SessionCaches | None] = contextvars.ContextVar("exportcore_session", default=None)
