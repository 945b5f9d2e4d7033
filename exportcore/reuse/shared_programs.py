"""Programs shared between a case's modes: a capture proven to be another mode's program takes its
decomposed program and its save/load answer instead of building them again.

The stores (exportcore.reuse.stores) let an inference mode take another inference mode's whole walk. A training mode
cannot take one: its checks run the programs in train() against train-mode eager, with gradients.
But decompose and save/load are functions of the program alone. When a mode's capture is proven
the same program as the one another mode of the same case decomposed and round-tripped, the walk
checks that mode's decomposed program, bound to its own model's tensors, its own way, instead of
decomposing again; and when that round trip gave back the very program it was given, it does not
round-trip again: its "reloaded" program is a fresh ``.module()`` of its own capture. A model
without dropout or batch norm (most decoders and vision transformers) captures the same program in
training and in eval.

"The same program" is the proof's program part (exportcore.reuse.proof.Proof.program_values): the
canonical structure (exportcore.reuse.identity.structure: graph, signature, ranges, which weight each
input reads), the model's parameters and buffers and the program's constants by value. The entry
keeps no tensor of the donor: its decomposed program is kept without weights and rebound to the
taker's own, by name. One entry per session, in its memory store (exportcore.reuse.stores.MemoryStore),
for the walk last seen and only while the same case runs: check() drops it when another case starts.
"""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from exportcore.reuse.stores import Built

if TYPE_CHECKING:
    from exportcore.reuse.context import ReuseRun
    from exportcore.reuse.eager_code import CodeRecord

__all__ = ["keep", "take"]


def keep(run: ReuseRun, label: str, program: Any, ran: CodeRecord | None = None) -> None:
    """Offer what ``run.ep`` gave to later modes: ``"decomposed"`` (an ExportedProgram, with the code
    its decomposition ran) or ``"round_trip"`` (a bool)."""
    memory = run.session.memory
    if memory.built is None or memory.built.owner() is not run:
        values = _values(run)
        if values is None:
            return
        memory.built = Built(weakref.ref(run), run.outcome.case_id, run.mode.name, run.device, values)
    setattr(memory.built, label, _weightless(program, run.ep) if label == "decomposed" else program)
    if label == "decomposed":
        memory.built.ran = ran


def take(run: ReuseRun, label: str) -> tuple[Any, str] | None:
    """Return (``label``'s program or answer, the mode that built it) when another mode built it from this program.

    The decomposed program comes back bound to ``run``'s own tensors.
    """
    memory = run.session.memory
    entry = memory.built
    if entry is None or not run.session.reuse or run.ep is None or run.target is not None:
        return None
    if entry.case_id != run.outcome.case_id:
        memory.built = None  # another case: its programs need not outlive its walk
        return None
    kept = getattr(entry, label)
    if entry.owner() is run or entry.mode == run.mode.name or entry.device != run.device or kept is None or kept is False:
        return None
    try:
        if _values(run) != entry.values:
            return None
        program = _rebound(kept, run.ep) if label == "decomposed" else kept
    except Exception:  # noqa: BLE001 - not known to be the same: build our own, as without sharing
        return None
    if program is not None and label == "decomposed" and entry.ran is not None and run.code_records is not None:
        run.code_records[1].merge(entry.ran)  # what built it is what this walk's results rest on too
    return (program, entry.mode) if program is not None else None


def _values(run: ReuseRun) -> tuple[str, ...] | None:
    from exportcore.reuse.prove import proof_of

    try:
        proof = proof_of(run)  # None without reuse, for a target, before capture
    except Exception:  # noqa: BLE001 - a program we cannot describe is never shared
        return None
    return proof.program_values if proof is not None else None


def _weightless(decomposed: Any, ep: Any) -> Any:
    # A shallow copy sharing the graph, without the weights and without the constants the capture
    # holds (a non-persistent buffer may be a cache a run writes): the taker's own go in by name,
    # and the entry never keeps a model alive. A constant the decomposition made is kept: it is a
    # function of the program, the same for every mode that captured it.
    bare = copy.copy(decomposed)
    bare._state_dict = dict.fromkeys(decomposed.state_dict)
    bare._constants = {name: None if name in ep.constants else value for name, value in decomposed.constants.items()}
    return bare


def _rebound(bare: Any, ep: Any) -> Any:
    """Return ``bare`` bound to ``ep``'s tensors by name, or None when one of its names is not ``ep``'s."""
    if not set(bare.state_dict) <= set(ep.state_dict):
        return None
    if any(value is None and name not in ep.constants for name, value in bare.constants.items()):
        return None
    program = copy.copy(bare)
    program._state_dict = {name: ep.state_dict[name] for name in bare.state_dict}
    program._constants = {name: ep.constants[name] if value is None else value for name, value in bare.constants.items()}
    return program
