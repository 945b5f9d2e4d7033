"""The garbage collector during a check: it traverses only what the check made, and frees the check's cycles at its end.

Importing torch leaves some 340 thousand long-lived objects (modules, functions, operator tables),
and a capture or a decomposition keeps enough new objects alive to start CPython's full
collection about once per check; every full collection traverses every object in the process.
On benchmarks/default_cost.py's loop that was 17 full collections and about 4 s of 40 s (the bare
export loop pays them as well). So a check freezes what existed before it (``gc.freeze()``): the
collections during the check traverse only the check's own objects. At its end one collection
frees the check's own cycles (exported programs and graph modules are cyclic and hold the model's
weights: before, they waited for a full collection somewhere in the next case, next to its own
model), and the older objects go back to the oldest generation (``gc.unfreeze()``).

Garbage older than a check is not traversed during it, so it must not wait for ever: a check
starts with one full collection when the models earlier checks were given that are still alive
hold ``WATCH_BYTES`` of weights between them (a model in a reference cycle, a hook holding a
bound method, lingers until one; the models that survive it are alive on purpose and are not
asked about again), and at least every ``FULL_EVERY`` checks. A full collection traverses the
whole heap (about 0.5 s after a few hundred exports), so that count is what a catalog of small
cases pays for: at 8, a session over the ExportDB catalog spent 35.6 s of its 96 s in full
collections, at 64 (and the weights rule above) 6.1 s of 67 s, with the same peak memory
(benchmarks/RESULTS.md, 27 Nov 2026). Collecting after every failure instead cost more still: a
failing test's model is alive on purpose (pytest keeps the last exception's traceback).

Left alone: a process whose garbage collector is disabled, or that froze objects itself (a
fork server): unfreezing would hand back objects frozen on purpose.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import weakref
from typing import Any, Iterator

__all__ = ["HeapBook", "FULL_EVERY", "WATCH_BYTES"]

#: At most this many checks run between two full collections (bounds how long older cyclic garbage waits).
FULL_EVERY = 64
#: Earlier checks' models still alive with this many bytes of parameters and buffers between them never
#: wait past the next check.
WATCH_BYTES = 16 * 2**20


class HeapBook:
    """One engine session's bookkeeping of the collector (exportcore.reuse.session.EngineSession.heap)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # re-entrant: a finalizer run by a collection may start a check
        self.depth = 0  # checks running (a check inside a check: explain verifies a fix with check())
        self.froze = False  # the outermost check froze the heap and owes it a collection and an unfreeze
        self.since_full = 0  # checks since this book last ran a full collection
        #: (model, its weight bytes) of earlier checks, not yet known to be alive on purpose
        self.models: list[tuple[weakref.ref, int]] = []

    @contextlib.contextmanager
    def own_cycles(self, model: Any) -> Iterator[None]:
        """Run a check of ``model`` with the older heap frozen, and collect its own cycles when it is done."""
        self._enter(model)
        try:
            yield
        finally:
            self._leave(model)

    def _enter(self, model: Any) -> None:
        with self.lock:
            self.depth += 1
            if self.depth > 1 or not gc.isenabled() or gc.get_freeze_count():
                return
            self.models[:] = [(ref, size) for ref, size in self.models if ref() is not None]
            lingering = sum(size for ref, size in self.models if ref() is not model)
            if self.since_full >= FULL_EVERY or lingering >= WATCH_BYTES:
                gc.collect()
                self.since_full = 0
                # the survivors are alive on purpose
                self.models[:] = [(ref, size) for ref, size in self.models if ref() is model]
            gc.freeze()
            self.froze = True

    def _leave(self, model: Any) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth or not self.froze:
                return
            self.froze = False
            try:
                gc.collect()  # only the check's own objects: the older ones are still frozen
            finally:
                gc.unfreeze()
            self.since_full += 1
            size = _weight_bytes(model)
            if size and not any(ref() is model for ref, _ in self.models):
                try:
                    self.models.append((weakref.ref(model), size))
                except TypeError:  # not weak-referenceable: nothing to watch
                    pass


def _weight_bytes(model: Any) -> int:
    """Return the bytes of ``model``'s parameters and buffers (0 for a plain callable)."""
    try:
        tensors = [*model.parameters(), *model.buffers()]
        return sum(t.numel() * t.element_size() for t in tensors)
    except Exception:  # noqa: BLE001 - not a module, or one whose tensors cannot be sized: nothing to watch
        return 0
