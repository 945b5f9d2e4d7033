"""The proof that two walks are the same walk: named parts, taken once per run, held on the Run.

A mode takes another walk's results (exportcore.reuse.stores) only when every part of the proof is equal:

- before capture, what the capture and eager's reference are functions of: the ``options`` that decide
  what is checked (and the settings the process runs under), the model's ``values`` (parameters and
  buffers by value) and ``attributes`` (its modules' Python state), the example ``inputs`` by value,
  eager's ``answer`` on them; with a disk store also the ``eager_code`` eager ran, the inputs= ``factory``
  and the ``environment`` (torch, the engine, libraries, Python, the machine, native code);
- after capture, what the program is: its canonical ``structure``, the ``code`` outside torch only the
  steps after capture run (a decomposition a project put in torch's table, pytree nodes) and its lifted
  ``constants`` by value.

The parts are taken by exportcore.reuse.prove, once per run (``run.before_capture``, ``run.proof``).
A part that cannot be taken (a tensor subclass, a program we cannot describe) is None, and a key with a
None part is None: nothing is served on a guess. ``before_capture`` alone is what the targets' kept
exports key on (and what a gate that skips capture would rest on).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BeforeCapture", "Proof"]


@dataclass(frozen=True)
class BeforeCapture:
    """The parts of the proof that exist before the program is captured."""

    options: str | None
    values: str | None
    attributes: str | None
    inputs: str | None
    answer: str | None
    #: with a disk store only (None without one: such a proof is never written to or read from disk)
    eager_code: str | None = None
    factory: str | None = None
    environment: str | None = None

    @property
    def capture_key(self) -> tuple[str, ...] | None:
        """What a capture in one mode is a function of besides the mode: the model and the examples, by value."""
        parts = (self.values, self.attributes, self.inputs)
        return None if None in parts else parts  # type: ignore[return-value]


@dataclass(frozen=True)
class Proof:
    """The whole proof of one walk, once its program is captured."""

    before_capture: BeforeCapture
    structure: str | None
    code: str | None
    constants: str | None
    #: the walk's mode: a store never serves a mode its own memory entry
    mode: str
    #: the user's inputs= object: the memory store compares it by identity (kept alive so its id is not reused)
    factory_object: Any = field(default=None, compare=False)

    @property
    def memory_key(self) -> str | None:
        """The cheap half: options, structure and code (None: this walk may not share)."""
        before = self.before_capture
        return _key("memory", before.options, self.structure, self.code)

    @property
    def memory_values(self) -> tuple[str, ...] | None:
        """The by-value half, checked on a key match: model, constants, inputs, eager's answer."""
        before = self.before_capture
        parts = (before.values, self.constants, before.inputs, before.answer, before.attributes)
        return None if None in parts else parts  # type: ignore[return-value]

    @property
    def program_values(self) -> tuple[str, ...] | None:
        """What a program alone depends on besides its structure: the model's tensors and the program's constants."""
        parts = (self.structure, self.before_capture.values, self.constants)
        return None if None in parts else parts  # type: ignore[return-value]

    @property
    def disk_key(self) -> str | None:
        """Every part, across processes (None: not written, not read)."""
        before = self.before_capture
        values = self.memory_values
        if values is None:
            return None
        return _key("disk", self.memory_key, *values, before.eager_code, before.environment, before.factory)


def _key(kind: str, *parts: str | None) -> str | None:
    if None in parts:
        return None
    return f"{kind} " + hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
