"""The result cache audits itself: a share of the results it served is checked again in full.

The proof that serves a result is wide (the code eager ran, what it read, the environment, native
libraries, versions): wide enough that a hole in it would serve a stale verdict nobody notices.
``--export-cache-audit=FRACTION`` re-runs that share of served results with the cache and the
reuse between modes turned off, and compares what decides a verdict: the status, the failing
stage and category, the finding kinds. A difference is an ``internal`` failure of the result,
naming the pair, both outcomes and where the served one came from, so a stale entry is found by
the tool, not by a user. The share is chosen by the result's key (case, mode): every shard and
worker of a CI matrix audits the same results; 1.0 audits every served result (a nightly job).
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from exportcore.outcome import Outcome

__all__ = ["audited", "selected"]


def selected(case_id: str, mode: str, fraction: float) -> bool:
    """Whether the result (case, mode) is in the audited share: the same answer in every process."""
    if fraction <= 0:
        return False
    if fraction >= 1:
        return True
    point = zlib.crc32(f"{case_id}\0{mode}".encode("utf-8", "surrogatepass")) / 2**32
    return point < fraction


def audited(outcome: Outcome, fraction: float, recompute: Callable[[], Outcome]) -> Outcome:
    """Return ``outcome``, or an internal failure where a served result differs from its full recomputation."""
    source = outcome.reused_from or ""
    if not source.startswith("cache:") or not selected(outcome.case_id, outcome.mode, fraction):
        return outcome
    fresh = recompute()
    if _deciding(fresh) == _deciding(outcome):
        outcome.notes.append(f"cache audit: checked again in full, the same ({_text(fresh)})")
        return outcome
    from exportcore.outcome import Failure

    fresh.status = "failed"
    fresh.failure = Failure(
        stage="run", category="internal", exc_type="CacheAuditMismatch",
        message=(f"the result cache served {_text(outcome)} ({source}) where checking again in full gives "
                 f"{_text(fresh)}"),
        hint="a stale cache entry: the proof missed a change. Report it with both outcomes; --export-cache=off "
             "(or --cache-clear) checks everything in full meanwhile",
    )
    return fresh


def _deciding(outcome: Outcome) -> tuple[Any, ...]:
    failure = outcome.failure
    return (outcome.status, failure.stage if failure else None, failure.category if failure else None,
            tuple(sorted({f.kind for f in outcome.findings})))


def _text(outcome: Outcome) -> str:
    failure = outcome.failure
    where = f" at {failure.stage} ({failure.category})" if failure is not None else ""
    kinds = sorted({f.kind for f in outcome.findings})
    return f"{outcome.status}{where}" + (f", findings {', '.join(kinds)}" if kinds else "")
