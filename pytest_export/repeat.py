"""``--export-repeat=K``: a (case, column)'s checks run K times from fresh seeds; a verdict that changes is *unstable*.

One run is one draw. A model whose export reads a clock, a counter or other hidden state at trace time,
or a check whose drawn shapes find a failure only under some seeds, can pass today and fail tomorrow with
nothing changed: a single green run would be a false pass. Each run takes its own seed (the engine seeds
torch before every program it runs and hypothesis' draws from it) and its own EngineSession without
reuse, so the result cache is neither read nor written and no mode's runs are shared: a served or
shared result would only repeat the first run's verdict instead of checking again.

The record keeps one run's outcome (the first that did not pass, so an unstable result shows its
failure), ``Outcome.repeats`` every run's status in order, and a note per run; the verdict
(``results.verdicts.verdict_of``) is ``unstable`` where those statuses differ.
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from exportcore.case import EngineOptions
    from exportcore.outcome import Outcome

__all__ = ["repeat_seed", "repeated"]

#: A run's seed moves by this odd constant (2**32 / golden ratio): neighbouring runs share no low bits.
_STEP = 0x9E3779B1


def repeat_seed(base: int, run: int) -> int:
    """Return run ``run``'s seed (0-based) from the case's ``base`` seed: run 0 keeps the case's own."""
    return (base + run * _STEP) & 0x7FFFFFFF


def _base_seed(options: EngineOptions) -> int:
    if options.seed is not None:
        return options.seed
    # exportcore.check.run_check's default: the first run is the run a session without repeats makes
    return zlib.crc32((options.case_id or "").encode("utf-8", "surrogatepass")) & 0x7FFFFFFF


def repeated(options: EngineOptions, times: int, run_once: Callable[[EngineOptions], Outcome]) -> Outcome:
    """Return the outcome of ``times`` runs of ``run_once`` (each with its own seed), with every run's status in
    ``repeats``. A skip (no device, no runtime) is not repeated: nothing ran that could change."""
    base = _base_seed(options)
    outcomes: list[Outcome] = []
    seeds: list[int] = []
    for run in range(times):
        seeds.append(repeat_seed(base, run))
        outcomes.append(run_once(dataclasses.replace(options, seed=seeds[-1])))
        if outcomes[-1].status == "skipped":
            return outcomes[-1]
    chosen = next((o for o in outcomes if o.status != "passed"), outcomes[0])
    chosen.repeats = [o.status for o in outcomes]
    chosen.notes.extend(f"--export-repeat run {i + 1} of {times} (seed {seed}): {run_text(o)}"
                        for i, (seed, o) in enumerate(zip(seeds, outcomes)))
    return chosen


def run_text(outcome: Outcome) -> str:
    """One run's verdict in a line: ``passed``, ``failed: [numerics] numerics: ...`` (its headline's first line)."""
    failure = outcome.failure
    if failure is None:
        return outcome.status
    line = (failure.headline(at=False).splitlines() or [""])[0]
    return f"{outcome.status}: {line[:197] + '...' if len(line) > 200 else line}"
