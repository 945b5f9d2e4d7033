"""How far each program's numeric error moved between two runs of one (case, mode), bucketed.

A record keeps, per program compared (exported, decomposed, reloaded, a target), its worst error as a
fraction of the tolerance budget (exportcore.outcome.ProgramError.worst_fraction): below 1 passes. A
torch upgrade that moves it from 0.1 to 0.9 still passes, and is the warning a user wants before it
fails. ``diff`` and the baseline gate report every move of at least ``BUCKETS[0]``, bucketed, even when
both runs pass; ``--export-baseline-numerics-growth`` / ``diff --fail-on-numerics-growth`` fail on
growth past a bucket.

Tiny errors are noise, not growth: a move where both sides are below ``FLOOR`` of the budget is not
reported, and the smaller side counts as at least ``FLOOR`` (0 -> 1e-9 is no move at all; 0 -> 0.05 is
5x). Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from exportcore.outcome import Outcome, ProgramError

__all__ = ["BUCKETS", "FLOOR", "Move", "moves", "parse_bucket", "worst_errors", "headroom", "fraction_text",
           "failing_growth"]

#: The factors a move is bucketed by, smallest first; a failing threshold must be one of them.
BUCKETS = (1.5, 2.0, 10.0)
#: Fractions of the budget below this are rounding noise: neither side of a move counts as smaller.
FLOOR = 0.01
#: What a leaf that differs with no finite budget measures as (ProgramError: the largest float).
_UNBOUNDED = sys.float_info.max / 2


@dataclass
class Move:
    """One program of one (case, mode) whose worst error moved by at least the smallest bucket."""

    case: str
    mode: str
    program: str
    before: float  # worst_fraction in the old run (or the baseline)
    after: float  # worst_fraction now
    factor: float  # the larger over the smaller, each at least FLOOR
    bucket: float  # the largest of BUCKETS the factor reaches
    grew: bool  # True: the error grew; False: it shrank
    where: str = ""  # the leaf of the worst error now ("output[0]")

    def text(self) -> str:
        """Return ``exported: worst 0.1× -> 0.3× of tolerance (3.0×, ≥2×) at output[0]``."""
        where = f" at {self.where}" if self.where else ""
        direction = "grew" if self.grew else "shrank"
        factor = "∞" if math.isinf(self.factor) or self.factor > 1e30 else f"{self.factor:.1f}"
        return (f"{self.program}: worst {fraction_text(self.before)} -> {fraction_text(self.after)} of tolerance "
                f"({direction} {factor}×, ≥{_bucket_text(self.bucket)}×){where}")


def _bucket_text(bucket: float) -> str:
    return f"{bucket:g}"


def fraction_text(fraction: float) -> str:
    """Return a worst fraction as a reader reads it: ``0.12×``, ``3.4×``, ``∞×`` (no finite budget)."""
    if math.isinf(fraction) or fraction >= _UNBOUNDED:
        return "∞×"
    return f"{fraction:.2g}×" if fraction < 10 else f"{fraction:.3g}×"


def parse_bucket(value: str) -> float:
    """Return the bucket a ``--...-numerics-growth`` value names; raise ValueError naming the choices."""
    try:
        factor = float(value)
    except ValueError:
        factor = math.nan
    if factor not in BUCKETS:
        raise ValueError(f"numerics growth {value!r}: use one of the buckets {', '.join(map(_bucket_text, BUCKETS))}")
    return factor


def bucket_argument(value: str) -> float:
    """``parse_bucket`` for an option parser (argparse, pytest's addoption): its error is a usage error."""
    import argparse

    try:
        return parse_bucket(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def worst_errors(outcome: Outcome | None) -> dict[str, ProgramError]:
    """Return program -> its error record (the worst one where a program is listed twice)."""
    out: dict[str, ProgramError] = {}
    for e in outcome.numerics if outcome is not None else []:
        if e.program not in out or e.worst_fraction > out[e.program].worst_fraction:
            out[e.program] = e
    return out


def headroom(outcome: Outcome | None) -> str:
    """Return the worst program's line: ``worst 0.12× of tolerance (exported, output[0])``; "" when unmeasured."""
    errors = list(worst_errors(outcome).values())
    if not errors:
        return ""
    e = max(errors, key=lambda x: x.worst_fraction)
    at = ", ".join(part for part in (e.program, e.where) if part)
    forgiven = " (forgiven as rounding)" if e.forgiven else ""
    return f"worst {fraction_text(e.worst_fraction)} of tolerance ({at}){forgiven}"


def moves(case: str, mode: str, old: Outcome | None, new: Outcome | None) -> list[Move]:
    """Return each program measured in both runs whose worst fraction moved by a bucket, by program name."""
    a, b = worst_errors(old), worst_errors(new)
    out = []
    for program in sorted(a.keys() & b.keys()):
        before, after = a[program].worst_fraction, b[program].worst_fraction
        if max(before, after) < FLOOR:
            continue
        lo, hi = sorted((max(before, FLOOR), max(after, FLOOR)))
        factor = hi / lo
        reached = [x for x in BUCKETS if factor >= x * (1 - 1e-9)]  # 0.15 / 0.1 is 1.4999999999999998
        if reached:
            out.append(Move(case, mode, program, before, after, factor, reached[-1], after > before,
                            b[program].where))
    return out


def failing_growth(found: list[Move], threshold: float | None) -> list[Move]:
    """Return the moves that fail under ``threshold`` (a bucket): growth reaching it. None fails none."""
    if threshold is None:
        return []
    return [m for m in found if m.grew and m.bucket >= threshold]
