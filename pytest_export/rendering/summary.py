"""The terminal summary: a matrix of cases by modes and targets, failure categories, findings, the slowest exports on request.

Pure computation over records (pytest_export.results.records); returns lines to print.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from pytest_export.results.records import Record, failure_of, ordered_modes
from pytest_export.rendering.counts import COLUMN_ORDER, columns_phrase, row_label
from pytest_export.rendering.dims import ledger_text
from pytest_export.rendering.findings import unchecked

__all__ = ["MARKS", "summary_lines"]

MARKS = {
    "passed": ".",
    "failed": "F",
    "xfailed": "x",
    "xpassed": "X",
    "unstable": "U",
    "error": "E",
    "timeout": "T",
    "crashed": "C",
    "skipped": "s",
}
_NOT_RUN = "-"
_SLOWEST = 5
#: Above this many cases the matrix shows only rows that need attention.
MAX_ROWS = 30
_QUIET = {".", "x", "s", _NOT_RUN}


def summary_lines(records: Iterable[Record], mode_order: Sequence[str] = (), *,
                  max_rows: int | None = MAX_ROWS, slowest: int = 0, verbose: bool = False) -> list[str]:
    """Return the summary lines for these records (empty if there are none).

    Past ``max_rows`` cases, rows whose every cell passed or xfailed as expected are folded
    into one count line (None: show every row). ``slowest``: list that many slowest exports
    (``--export-slowest``, like pytest's ``--durations``; 0: none). ``verbose`` (-v): say also when
    results were shared between modes within the session, which a default run keeps quiet about.
    """
    records = list(records)
    if not records:
        return []
    # the reports' column order (modes, then targets), whatever order the session listed them in
    modes = ordered_modes((r.mode for r in records), list(dict.fromkeys((*COLUMN_ORDER, *mode_order))))
    cells: dict[str, dict[str, str]] = {}
    for r in records:
        row = cells.setdefault(row_label(r.case, r.test, r.source), {})
        mark = MARKS.get(r.verdict, "?")
        # Several records for one cell (export_check called twice) show the worst.
        row[r.mode] = _worst(row.get(r.mode), mark)
    cases = sorted(cells)
    folded = 0
    if max_rows is not None and len(cases) > max_rows:
        shown = [c for c in cases if set(cells[c].values()) - _QUIET]
        folded = len(cases) - len(shown)
        cases = shown
    width = max([len(c) for c in cases] + [len("case")])
    lines = [" " * width + "  " + " ".join(modes)]
    for case in cases:
        marks = " ".join(cells[case].get(m, _NOT_RUN).center(len(m)) for m in modes)
        lines.append(f"{case.ljust(width)}  {marks}")
    if folded:
        lines.append(f"(+{folded} cases that passed or failed as expected in every mode; -v shows them)")
    seen = {r.verdict for r in records}
    # unstable exists only under --export-repeat: a run without it keeps its legend short
    legend = [f"{mark} {verdict}" for verdict, mark in MARKS.items() if verdict != "unstable" or verdict in seen]
    legend.append(f"{_NOT_RUN} not run")
    lines.append("legend: " + "  ".join(legend))
    lines.append("results: " + ", ".join(f"{n} {v}" for v, n in _count(r.verdict for r in records))
                 + f" ({len(records)} from {columns_phrase(len(cells), modes)}" + _fixture_note(records) + ")")
    bare = [r for r in records if r.verdict == "passed" and unchecked(r)]
    if bare:
        lines.append(f"unchecked: {len(bare)} passed without checking any drawn shape (the example inputs only):")
        lines.extend(f"  {r.test} [{r.mode}]: {unchecked(r)}" for r in bare[:_SLOWEST])
        if len(bare) > _SLOWEST:
            lines.append(f"  (+{len(bare) - _SLOWEST} more; see the report's findings)")
    skipped = _count(reason for r in records if r.verdict == "skipped" and (reason := _skip_reason(r)))
    if skipped:
        lines.append("skipped: " + "; ".join(f"{reason} ({n})" for reason, n in skipped[:_SLOWEST])
                     + (f"; +{len(skipped) - _SLOWEST} more reasons in the report" if len(skipped) > _SLOWEST else ""))
    # A reader scanning for trouble must not read a known failure as one: the two are counted apart.
    for label, expected in (("failure categories", False), ("expected failures by category", True)):
        categories = _count(
            failure.category
            for r in records
            if r.verdict not in ("passed", "skipped") and (r.verdict == "xfailed") == expected
            and (failure := failure_of(r))
        )
        if categories:
            lines.append(f"{label}: " + ", ".join(f"{cat} {n}" for cat, n in categories))
    findings = _count(f.kind for r in records if r.outcome is not None for f in r.outcome.findings)
    if findings:
        lines.append("findings: " + ", ".join(f"{kind} {n}" for kind, n in findings)
                     + " (the first of each kind in the warnings summary; every one with -v and in the report)")
    lines.extend(_dims_lines(records, verbose))
    lines.extend(_reuse_lines(records, verbose))
    if slowest > 0:
        ranked = sorted(records, key=lambda r: (-r.duration, r.test))[:slowest]
        lines.append(f"slowest exports ({len(ranked)}):")
        lines.extend(f"  {r.duration:7.2f}s  {r.test}" for r in ranked)
    from pytest_export.rendering.zoo_rates import rate_lines

    return [*rate_lines(records, mode_order), *lines]  # a zoo run leads with its pass rates


def _dims_lines(records: list[Record], verbose: bool) -> list[str]:
    """What each declared dynamic dim became: with -v every result's; without, a count of those not dynamic."""
    dims = [(r, d) for r in records if r.outcome is not None for d in r.outcome.dims]
    if not dims:
        return []
    # "unknown": no program to read (a capture that failed for another reason, a runtime not installed)
    off = [(r, d) for r, d in dims if d.kind not in ("dynamic", "unknown")]
    if not verbose:
        if not off:
            return []
        kinds = _count(d.kind for _, d in off)
        return ["dynamic dims: " + ", ".join(f"{n} {kind}" for kind, n in kinds)
                + f" of {len(dims)} declared (-v lists each)"]
    dynamic = sum(1 for _, d in dims if d.kind == "dynamic")
    lines = [f"dynamic dims ({len(dims)} declared, {dynamic} dynamic as declared):"]
    lines.extend(f"  {r.test}: {ledger_text(r)}" for r in records if ledger_text(r))
    return lines


def _reuse_lines(records: list[Record], verbose: bool) -> list[str]:
    """Say how many results were served whole, took their after-capture checks from earlier work, or were
    checked in full again and why (the first proof part that changed); empty if there is nothing to say.

    A warm run that is fast should say why, and one that is slow (a CI cache that was not
    restored, a model edited) should show it served nothing and what changed: the counts are how a
    user sees it. Sharing between the modes of one session is routine (most models capture one
    program in strict and non-strict), so a default run names it only next to the cache's counts.
    """
    results = [(r, r.outcome) for r in records if r.outcome is not None and r.outcome.status != "skipped"]
    sources = [o.reused_from for _, o in results if o.reused_from]
    whole = sum(1 for source in sources if source.startswith(_WHOLE))
    cached = sum(1 for source in sources if source.startswith("cache:")) - whole
    shared = len(sources) - cached - whole
    rechecked = [(r, o) for r, o in results if o.rechecked_because]
    if not (whole or cached or rechecked or shared and verbose):
        return []
    parts = ([f"{whole} served whole from the result cache"] if whole else []) + (
        [f"{cached} from the result cache"] if cached else []) + (
        [f"{shared} from another mode's identical program"] if shared else [])
    if not whole and not rechecked:
        those = "it" if len(sources) == 1 else "those"
        return [f"reused: {' and '.join(parts)}, of {len(results)} results: {those} captured and ran eager, and "
                "took the checks after capture instead of running them (--export-no-reuse runs them all)"]
    line = f"reused: {', '.join(parts) or 'nothing'}, of {len(results)} results"
    if whole:
        line += " (served whole: neither eager nor the capture ran; the others captured and ran eager)"
    if rechecked:
        reasons = _count(o.rechecked_because for _, o in rechecked)  # type: ignore[misc]
        named = ", ".join(reason + (f" ×{n}" if n > 1 else "") for reason, n in reasons[:3])
        line += f"; {len(rechecked)} re-checked in full, changed: {named}" + (", ..." if len(reasons) > 3 else "")
    lines = [line]
    if verbose:
        lines.extend(f"  {r.test} [{o.mode}]: re-checked, changed: {o.rechecked_because}" for r, o in rechecked)
    return lines


#: how reused_from names an outcome served whole (exportcore.reuse.whole.LABEL)
_WHOLE = "cache: whole,"


def _skip_reason(record: Record) -> str:
    failure = failure_of(record)
    return failure.message if failure is not None else ""


def _fixture_note(records: list[Record]) -> str:
    # Verdicts count (case, mode) results; pytest counts tests. export_check makes them differ.
    fixture = [r for r in records if r.source == "fixture"]
    if not fixture:
        return ""
    tests = len({r.test for r in fixture})
    return (f"; pytest counts tests: {len(fixture)} of these results come from export_check calls in {tests} "
            f"test{'s' if tests != 1 else ''}, which it counts once each")


def _count(values: Iterable[str]) -> list[tuple[str, int]]:
    return sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0]))


_SEVERITY = {mark: i for i, mark in enumerate("CTEFUXxs.")}  # worst first


def _worst(old: str | None, new: str) -> str:
    if old is None:
        return new
    return old if _SEVERITY.get(old, 0) <= _SEVERITY.get(new, 0) else new
