"""The dynamism ledger as text: one compact cell per case (``batch 2..8 ✓ · seq 2..64 → 2..32``).

Every record carries, per declared dynamic dim, what its program made of it
(exportcore.checks.dynamism). A case's modes usually agree; where they do not, the cell names the
mode of each differing ledger, so a reader sees which mode narrowed what.
"""

from __future__ import annotations

from typing import Sequence

from pytest_export.results.records import Record

__all__ = ["ledger_text", "case_ledger", "declared_unrecorded"]


def ledger_text(record: Record) -> str:
    """``batch 2..8 ✓ · seq 2..64 → 2..32`` for one record ("" without declared dims)."""
    dims = record.outcome.dims if record.outcome is not None else []
    return " · ".join(d.short() for d in dims)


def case_ledger(records: Sequence[Record], missing: str = "") -> str:
    """One cell for a case's records: the ledger once where every mode agrees, else each mode's.

    ``missing``: what a record says that declared dynamic dims but carries no ledger (a report made
    before the ledger was recorded); left out when "".
    """
    texts = {r.mode: ledger_text(r) or (missing if declared_unrecorded(r) else "") for r in records}
    texts = {mode: text for mode, text in texts.items() if text}
    if not texts:
        return ""
    if len(set(texts.values())) == 1:
        return next(iter(texts.values()))
    return "; ".join(f"{mode}: {text}" for mode, text in texts.items())


def declared_unrecorded(record: Record) -> bool:
    """Whether the record declared dynamic dims but holds no ledger of them."""
    outcome = record.outcome
    return outcome is not None and bool(outcome.declared) and not outcome.dims
