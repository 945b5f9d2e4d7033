"""One walk's reuse: take a proven walk's results for the reusable steps, or donate this walk's.

Strict and non-strict export often capture the same program. Everything after capture that only
runs the programs (decompose, save/load, numerics on the examples and on drawn shapes, reject,
size 0/1, dtype: the steps marked ``reusable`` in exportcore.pipeline) then gives the same answers,
so a mode whose proof (exportcore.reuse.proof) equals a stored walk's takes that walk's findings and
notes for those steps instead of running them; the steps that read the mode's own program structure
(state, specialization) still run. The outcome says so (``reused_from``). Only a walk that passed
donates: a failing mode keeps its own diagnosis and explanation. The session's stores are asked in
order, memory first (exportcore.reuse.stores).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING

from exportcore.reuse.prove import proof_of
from exportcore.reuse.stores import Donation

if TYPE_CHECKING:
    from exportcore.reuse.context import ReuseRun
    from exportcore.reuse.proof import Proof

__all__ = ["Reuse"]


class Reuse:
    """The reuse bookkeeping of one walk, opened at its first reusable step."""

    def __init__(self, run: ReuseRun) -> None:
        self.run = run
        self.opened = False
        self.proof: Proof | None = None
        self.given: Donation | None = None  # what a store served this walk
        self.donation: Donation | None = None  # what this walk's own reusable steps found

    def served(self, name: str) -> bool:
        """At reusable step ``name``: whether a stored walk answers it (its findings and notes are then taken)."""
        if not self.opened:
            self._open()
        if self.given is None:
            return False
        run = self.run
        run.outcome.findings.extend(copy.deepcopy(self.given.findings.get(name, [])))
        run.outcome.notes.extend(self.given.notes.get(name, []))
        return True

    def ran(self, name: str, findings: int, notes: int) -> None:
        """Reusable step ``name`` ran: what it added to the outcome after ``findings``/``notes`` is donated."""
        if self.donation is not None:
            # copies: the plugin may still rewrite this outcome's findings after the walk
            self.donation.findings[name] = copy.deepcopy(self.run.outcome.findings[findings:])
            self.donation.notes[name] = list(self.run.outcome.notes[notes:])

    def finish(self) -> None:
        """The walk is over: a walk that passed and took nothing donates to every store."""
        run, donation = self.run, self.donation
        if donation is None or self.given is not None or run.outcome.status != "passed":
            return
        if "decompose" in donation.findings:
            donation.graph = copy.deepcopy(run.outcome.graph)
        if "drawn shapes" in donation.findings:
            donation.examples = copy.deepcopy(run.outcome.examples)
        # measured by the numerics and drawn-shape steps, both reusable: a taker's programs are these
        donation.numerics = copy.deepcopy(run.outcome.numerics)
        donation.ran = run.code_records[1] if run.code_records is not None else None
        run.session.memory.put(self.proof, donation)  # type: ignore[arg-type]
        disk = run.session.disk
        if disk is not None and disk.writes and run.code_records is not None:
            beyond = _beyond_the_examples(run, donation)
            if beyond is not None:
                disk.put(self.proof, beyond)  # type: ignore[arg-type]

    def _open(self) -> None:
        # the first step after the mode's own program is built: is it a stored walk's program?
        self.opened = True
        run = self.run
        self.proof = proof_of(run)
        if self.proof is None or self.proof.memory_key is None:
            return
        for store in (run.session.memory, run.session.disk):
            given = store.get(self.proof) if store is not None else None
            if given is not None and given.holds(run.model):
                self.given = given
                _take(run, given)
                return
        self.donation = Donation(mode=run.mode.name)


def _beyond_the_examples(run: ReuseRun, donation: Donation) -> Donation | None:
    """``donation`` with what the walk ran only beyond the examples (None: that cannot be named)."""
    from exportcore.reuse.code_witnesses import witnesses

    examples, later = run.code_records  # type: ignore[misc]
    try:
        beyond = witnesses(later, examples, run.model)
    except Exception:  # noqa: BLE001 - what ran beyond the examples cannot be named: store nothing
        return None
    # the examples' reads are in the proof already (eager's code)
    environ = {name: value for name, value in later.environ.items() if name not in examples.environ}
    return dataclasses.replace(donation, witnesses=beyond, environ=environ)


def _take(run: ReuseRun, given: Donation) -> None:
    from exportcore.reuse.whole import taken

    taken(run, given)
    run.outcome.reused_from = given.label()
    if given.graph is not None:
        run.outcome.graph = copy.deepcopy(given.graph)
    if given.examples is not None:
        run.outcome.examples = copy.deepcopy(given.examples)
    run.outcome.numerics = copy.deepcopy(given.numerics)
    # a disk entry may come from an earlier session or another xdist worker of this one
    where = given.mode if given.origin is None else f"{given.mode}, in another process ({given.origin})"
    run.outcome.notes.append(
        f"reused from {given.label()}: this mode captured the same program (graph, ranges, constants; model "
        "state and inputs by value), so decompose, save/load and the checks that run the programs ran once, in "
        f"{where}"
    )
