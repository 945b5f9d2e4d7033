"""Where proven walks are kept: one Store protocol, in memory (this session) and on disk (later sessions).

A walk that passed donates what its reusable steps found (a Donation) under its proof
(exportcore.reuse.proof); a later walk with an equal proof takes it instead of running those steps
(exportcore.reuse.donations). The memory store keeps a few donations of this session, between modes of
a case (a mode never takes its own), and the programs a mode decomposed and round-tripped for the
case's other modes (exportcore.reuse.shared_programs). The disk store keeps donations in a ResultCache
(exportcore.reuse.result_cache: its files and format), under every part of the proof; an entry
names the code the walk ran beyond the examples and the environment variables it read, and is
served only while they are unchanged (Donation.holds).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from exportcore.outcome import ExampleStats, Finding, GraphStats, ProgramError
    from exportcore.reuse.code_witnesses import Witness
    from exportcore.reuse.proof import Proof
    from exportcore.reuse.result_cache import ResultCache

__all__ = ["Built", "Donation", "Store", "MemoryStore", "DiskStore", "MEMO_SIZE"]

MEMO_SIZE = 8


@dataclass
class Donation:
    """What the reusable steps of one walk contributed, per step name."""

    mode: str
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    graph: GraphStats | None = None  # set when decompose ran (the core-ATen graph's statistics)
    examples: ExampleStats | None = None  # set when the drawn shapes ran
    origin: str | None = None  # a donation from the disk store: when and where it ran
    #: functions the walk ran only beyond the examples, and the environment variables it read there
    #: (by name: a digest of the value, None when unset): the donation holds only while each is unchanged
    witnesses: list[Witness] | None = None
    environ: dict[str, str | None] = field(default_factory=dict)
    #: each program's measured error on the examples and drawn shapes (Outcome.numerics)
    numerics: list[ProgramError] = field(default_factory=list)
    #: the donor's record of what it ran after the examples (a memory donation): the taker's whole outcome rests on it
    ran: Any = None

    def label(self) -> str:
        """Return what ``outcome.reused_from`` names: the mode, or the cache entry's mode and run."""
        return self.mode if self.origin is None else f"cache: {self.mode}, {self.origin}"

    def holds(self, model: Any) -> bool:
        """Whether the code and environment the donor's results rest on beyond the examples are still as they were."""
        if not self.witnesses and not self.environ:
            return True
        from exportcore.reuse.code_witnesses import hold
        from exportcore.reuse.environ_reads import unchanged

        try:
            return hold(self.witnesses or [], model) and unchanged(self.environ)
        except Exception:  # noqa: BLE001 - a witness that cannot be read again proves nothing: run in full
            return False


@dataclass
class Built:
    """What one walk built that is a function of its program alone (exportcore.reuse.shared_programs)."""

    owner: Any  # a weak reference to the donating Run
    case_id: str
    mode: str
    device: str
    values: tuple[str, ...]  # the program's structure, the model's tensors and its constants (Proof.program_values)
    decomposed: Any = None  # the decomposed ExportedProgram, its weights dropped
    round_trip: bool | None = None  # save/load gave back the same program (None: not round-tripped)
    #: the user's code the decomposition ran (exportcore.stages.decompose): a taker's witnesses too
    ran: Any = None


class Store(Protocol):
    """Donations by proof."""

    def get(self, proof: Proof) -> Donation | None:
        """Return the donation stored under an equal proof, or None."""

    def put(self, proof: Proof, donation: Donation) -> None:
        """Keep ``donation`` under ``proof`` (a proof with a None part is not kept)."""


class MemoryStore:
    """This session's donations (the last MEMO_SIZE) and the programs the case running now built."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[Proof, Donation]] = OrderedDict()
        #: the decomposed program and save/load answer of the walk last seen (exportcore.reuse.shared_programs)
        self.built: Built | None = None

    def get(self, proof: Proof) -> Donation | None:
        key = proof.memory_key
        kept = self._entries.get(key) if key is not None else None
        if kept is None:
            return None
        earlier, donation = kept
        if earlier.mode == proof.mode or earlier.factory_object is not proof.factory_object:
            return None
        if proof.memory_values is None or earlier.memory_values != proof.memory_values:
            return None
        self._entries.move_to_end(key)  # type: ignore[arg-type]
        return donation

    def put(self, proof: Proof, donation: Donation) -> None:
        key = proof.memory_key
        if key is None or proof.memory_values is None:
            return
        self._entries[key] = (proof, donation)
        self._entries.move_to_end(key)
        while len(self._entries) > MEMO_SIZE:
            self._entries.popitem(last=False)

    def enter_case(self, case_id: str | None) -> None:
        """A check of ``case_id`` starts: the programs of another case need not outlive its walk."""
        if self.built is not None and self.built.case_id != case_id:
            self.built = None


class DiskStore:
    """Donations in a ResultCache's files, under every part of the proof (reads and writes as its mode says)."""

    def __init__(self, cache: ResultCache) -> None:
        self.cache = cache

    @property
    def writes(self) -> bool:
        return self.cache.writes

    def get(self, proof: Proof) -> Donation | None:
        key = proof.disk_key
        entry = self.cache.get(key) if key is not None and self.cache.reads else None
        if entry is None:
            return None
        return Donation(mode=entry.mode, findings=entry.findings, notes=entry.notes, graph=entry.graph,
                        examples=entry.examples, origin=entry.run, witnesses=entry.witnesses, environ=entry.environ,
                        numerics=entry.numerics)

    def put(self, proof: Proof, donation: Donation) -> None:
        key = proof.disk_key
        if key is None or donation.witnesses is None or not self.cache.writes:
            return
        from exportcore.reuse.result_cache import FORMAT, Entry, run_label

        self.cache.put(key, Entry(format=FORMAT, identity=key, mode=donation.mode, run=run_label(),
                                  findings=donation.findings, notes=donation.notes, graph=donation.graph,
                                  examples=donation.examples, witnesses=donation.witnesses,
                                  environ=donation.environ, numerics=donation.numerics))
