"""The parts the ledger's pages share: a result's cell, pass rates per family, mode and torch, causes ranked.

Pure functions of ledger records; the pages (``pages``) put them in order.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from pytest_export.ledger.rows import LedgerRow
from pytest_export.ledger.store import Ledger
from pytest_export.rendering.zoo_rates import ALL, Cell, family_of
from pytest_export.results.records import ordered_modes

__all__ = ["MARK", "cause_table", "cell", "dims_of", "family", "inputs_of", "modes_of", "rate_table", "skip_table"]

MARK = {"passed": "✅", "failed": "❌", "error": "⚠️ error", "timeout": "⏱ timeout", "crashed": "💥 crashed",
        "skipped": "⏭ skipped", "xfailed": "❌ (known)", "xpassed": "✅ (was known failing)"}
ORDER = ("strict", "non_strict", "training")
_EXAMPLES = 3
_PARAMS = re.compile(r"^[\d.]+[KMB]? parameters, ")


def family(row: LedgerRow) -> str:
    """The family a row is counted in: its zoo family, else ``tests`` (a user's own suite)."""
    return family_of(row.case) or "tests"


def model_name(case: str) -> str:
    return case[4:] if family_of(case) else case


def modes_of(rows: Iterable[LedgerRow]) -> list[str]:
    return ordered_modes((r.mode for r in rows), ORDER)


def cell(row: LedgerRow | None) -> str:
    """A result's table cell: its mark, and where and why it failed."""
    if row is None:
        return "–"
    failed = row.verdict not in ("passed", "skipped", "xpassed") and row.stage
    why = f" `{row.stage}` `{row.category}`" if failed else ""
    rescue = f"; {row.rescue}" if failed and row.rescue else ""
    return MARK.get(row.verdict, row.verdict) + why + rescue


def dims_of(rows: Sequence[LedgerRow]) -> str:
    """The dynamism cell: each declared dim as the program took it, from the first mode that recorded any."""
    dims = next((r.dims for r in rows if r.dims), [])
    return ", ".join(dims).replace("|", "\\|") if dims else "not recorded"


def inputs_of(rows: Sequence[LedgerRow]) -> str:
    """The zoo's note on a model's inputs, from the first of its modes that carries one, escaped for a table."""
    return next((r.inputs for r in rows if r.inputs), "").replace("|", "\\|")


def rate_table(ledger: Ledger, families: Sequence[str], link: bool = False) -> list[str]:
    """Pass rates per family x torch version (newest first) x mode; ``all families`` last when several."""
    rows = [r for v in ledger.values() for r in v.rows]
    modes = modes_of(rows)
    out = ["| family | torch | models | " + " | ".join(modes) + " |", "|---|---|---:|" + "---|" * len(modes)]
    names = [*families, ALL] if len(families) > 1 else list(families)
    for name in names:
        for torch, version in ledger.items():
            mine = [r for r in version.rows if name == ALL or family(r) == name]
            if not mine:
                continue
            cells = {m: Cell() for m in modes}
            for r in mine:
                cells[r.mode].add(r.verdict)
            shown = f"[{name}](zoo/{name}.md)" if link and name != ALL else name
            out.append(f"| {shown} | {torch} | {len({r.case for r in mine})} | "
                       + " | ".join(cells[m].text() for m in modes) + " |")
    return out


def cause_table(ledger: Ledger, keep: Iterable[str] | None = None) -> list[str]:
    """Failure categories ranked by their count on the newest torch (then the others), with their ExportDB case."""
    torches = list(ledger)
    wanted = set(keep) if keep is not None else None
    counts: dict[str, Counter[str]] = {}
    cases: dict[str, Counter[str]] = {}
    examples: dict[str, list[str]] = {}
    for torch in torches:
        for r in ledger[torch].rows:
            if not r.category or (wanted is not None and family(r) not in wanted):
                continue
            counts.setdefault(r.category, Counter())[torch] += 1
            if r.exportdb:
                cases.setdefault(r.category, Counter())[r.exportdb] += 1
            seen = examples.setdefault(r.category, [])
            if model_name(r.case) not in seen and len(seen) < _EXAMPLES:
                seen.append(model_name(r.case))
    if not counts:
        return []
    ranked = sorted(counts, key=lambda c: (*(-counts[c][t] for t in torches), c))
    out = ["| category | " + " | ".join(f"torch {t}" for t in torches) + " | ExportDB case | example models |",
           "|---|" + "---:|" * len(torches) + "---|---|"]
    for category in ranked:
        case = cases[category].most_common(1)[0][0] if category in cases else ""
        out.append(f"| `{category}` | " + " | ".join(str(counts[category][t]) for t in torches)
                   + f" | {f'`{case}`' if case else ''} | " + ", ".join(f"`{e}`" for e in examples[category]) + " |")
    return out


def skip_table(ledger: Ledger) -> list[str]:
    """Why results were skipped, per torch version (a size budget's reason without each model's count)."""
    torches = list(ledger)
    counts: dict[str, Counter[str]] = {}
    for torch in torches:
        for r in ledger[torch].rows:
            if r.verdict == "skipped":
                counts.setdefault(_PARAMS.sub("", r.skip) or "skipped", Counter())[torch] += 1
    if not counts:
        return []
    out = ["| why | " + " | ".join(f"torch {t}" for t in torches) + " |", "|---|" + "---:|" * len(torches)]
    ranked = sorted(counts, key=lambda why: (-sum(counts[why].values()), why))
    return out + [f"| {why.replace('|', chr(92) + '|')} | " + " | ".join(str(counts[why][t]) for t in torches) + " |"
                  for why in ranked]
