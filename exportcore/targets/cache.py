"""The inference exports a session keeps for the targets of a case, so a target does not repeat its mode's export.

The key (export_key) is the case (case id, export mode, device), the part of the run's proof a capture
is a function of (exportcore.reuse.proof.BeforeCapture.capture_key: the model's tensors and Python state
and the example inputs, by value) and the dynamic-shape spec as parsed (exportcore.shapes.ShapeSpec: what
it declares, not how it is written). A fresh model built with other weights, another flag, other inputs
or another bound misses; the same spec written as a dict or a tuple, or with its Dims built again, hits.
On a hit the program's own graph code and tensors are fingerprinted again, so an entry that a run or a
lowering changed since it was stored is dropped rather than served.

Entries are kept only while the session keeps exports (the plugin turns that on when a target column
is asked for), at most ``MAX_ENTRIES`` of them: an exported program holds its model's weights.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exportcore.shapes.spec import ShapeSpec

__all__ = ["KeptExports", "MAX_ENTRIES", "export_key"]

MAX_ENTRIES = 4


def export_key(case_id: str, mode: str, device: str, capture_key: str, spec: ShapeSpec | None) -> tuple:
    """The key a kept export is stored and found under: the case's column, what its capture is a function of
    (``capture_key``: exportcore.reuse.proof.BeforeCapture.capture_key) and what ``spec`` declares."""
    return case_id, mode, device, capture_key, _declared(spec)


def _declared(spec: ShapeSpec | None) -> tuple | None:
    """What a parsed spec declares, by value: each root's name, kind and bounds, each tensor axis's root and
    size in it (``2*d + 1``), and whether its dims are unbacked (a ShapesSpec); None: no spec."""
    if spec is None:
        return None
    roots = tuple(sorted((root.name, root.kind, root.min, root.max) for root in spec.roots.values()))
    axes = tuple(sorted((slot.path, tuple((axis.key, axis.root, axis.expr) for axis in slot.axes))
                        for slot in spec.tensors))
    return roots, axes, spec.runtime_asserts


class KeptExports:
    """One session's kept inference exports, by key; ``hits``/``misses`` count its lookups."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled
        self._entries: OrderedDict[tuple, tuple[Any, str]] = OrderedDict()
        self.hits = self.misses = 0

    def enable(self, on: bool = True) -> None:
        """Keep (or stop keeping, and drop) inference exports for targets."""
        self.enabled = on
        if not on:
            self._entries.clear()

    def lookup(self, key: tuple | None) -> Any:
        """Return the kept export for ``key`` if its state is unchanged since it was stored, else None."""
        entry = self._entries.get(key) if key is not None else None
        if entry is not None and _program_state_digest(entry[0]) != entry[1]:
            del self._entries[key]
            entry = None
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return entry[0]

    def store(self, key: tuple | None, ep: Any) -> None:
        """Keep ``ep`` under ``key`` (when enabled), evicting the oldest entry past the limit."""
        if not self.enabled or key is None:
            return
        self._entries[key] = (ep, _program_state_digest(ep))
        self._entries.move_to_end(key)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)


def _program_state_digest(ep: Any) -> str:
    h = hashlib.blake2b(digest_size=20)
    h.update(ep.graph_module.code.encode("utf-8", "surrogatepass"))  # a lowering that rewrote the graph in place
    _tensors(h, dict(ep.state_dict))
    _tensors(h, {k: v for k, v in ep.constants.items() if hasattr(v, "shape")})
    return h.hexdigest()


def _tensors(h: Any, tensors: dict[str, Any]) -> None:
    for name in sorted(tensors):
        h.update(name.encode("utf-8", "surrogatepass"))
        _tensor(h, tensors[name])


def _tensor(h: Any, t: Any) -> None:
    import torch

    h.update(f"{tuple(t.shape)}{t.dtype}{t.device}{t.requires_grad}".encode("utf-8", "surrogatepass"))
    if t.is_sparse or t.is_meta or not hasattr(t, "untyped_storage"):
        return
    try:
        flat = t.detach().cpu().contiguous().reshape(-1)
        if flat.numel():
            h.update(flat.view(torch.uint8).numpy().tobytes() if flat.dtype != torch.bool else flat.numpy().tobytes())
    except (RuntimeError, TypeError, ValueError):
        # A tensor whose bytes cannot be read here (quantized, a subclass): only this very tensor matches.
        h.update(f"opaque:{id(t)}".encode("utf-8", "surrogatepass"))
