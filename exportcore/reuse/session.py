"""The engine's session: the stores a check's results are reused from, and every per-process cache of the engine.

One EngineSession is what checks share: the memory store (a mode proven to have captured another
mode's program takes that mode's results, exportcore.reuse.stores), the disk store (the result cache of
earlier sessions), the inference exports kept for the targets of a case (exportcore.targets.cache), the
garbage collector's bookkeeping (exportcore.sandbox.heap) and the caches the proof's readers keep
(exportcore.sandbox.session_caches: source blocks, code digests, the decomposition table's digest, the
native libraries a target generated, which targets are available, the first export's warm-up).
Nothing of it is module state: ``exportcore.check(..., session=s)`` for every call that may share;
without one, a check runs in a private session and shares nothing.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Iterator

from exportcore.reuse.stores import DiskStore, MemoryStore
from exportcore.sandbox.heap import HeapBook
from exportcore.sandbox.session_caches import SessionCaches
from exportcore.targets.cache import KeptExports

if TYPE_CHECKING:
    from exportcore.reuse.result_cache import ResultCache

__all__ = ["EngineSession"]


class EngineSession:
    """What checks share: ``cache`` (a ResultCache: the disk store), ``reuse`` (False: no store is read or
    written, every mode does all its work), ``keep_exports`` (keep a mode's inference export for the
    targets of the same case from the start; a target's first check turns it on too)."""

    def __init__(self, cache: ResultCache | None = None, *, reuse: bool = True, keep_exports: bool = False) -> None:
        self.reuse = reuse
        self.memory = MemoryStore()
        self.disk: DiskStore | None = None
        self.use_cache(cache)
        self.exports = KeptExports(keep_exports)
        self.heap = HeapBook()
        self.caches = SessionCaches()

    def use_cache(self, cache: ResultCache | None) -> None:
        """Keep donations in ``cache`` from now on (None: in memory only); a session without reuse keeps none."""
        self.disk = DiskStore(cache) if cache is not None and self.reuse else None

    @property
    def cache(self) -> ResultCache | None:
        """The disk store's ResultCache (None without one)."""
        return self.disk.cache if self.disk is not None else None

    def __repr__(self) -> str:
        return f"EngineSession(cache={self.cache!r}, reuse={self.reuse}, keep_exports={self.exports.enabled})"

    @contextlib.contextmanager
    def activated(self) -> Iterator[EngineSession]:
        """Make this session's caches the ones the readers on this thread find (exportcore.sandbox.session_caches)."""
        with self.caches.activated():
            yield self
