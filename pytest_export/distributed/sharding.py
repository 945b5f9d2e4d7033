"""``--export-shard=K/N`` selects this shard's tests: whole cases, balanced by their recorded durations.

A case's modes stay on one shard (strict and non-strict often capture one program, and the later mode
takes the earlier one's runs from the engine session's memory store: exportcore.reuse.donations). Cases
are weighed by the durations a previous report or baseline recorded
(``--export-durations=report.json``); a case it does not know weighs the median of those it knows, or,
with no durations at all, its number of items (equal counts). The largest cases are placed first, each
on the lightest shard so far (ties: the lower shard, then the case id), so every shard computes the same
assignment from the same collection and file. With pytest-split's ``--splits/--group`` pytest-split
selects; the shard is only recorded, as before.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

__all__ = ["assign", "case_of", "durations_from", "select_shard"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("export", "pytest-export (torch.export checks)")
    group.addoption("--export-durations", dest="export_durations", default=None, metavar="PATH",
                    help="balance --export-shard by the case durations in this earlier JSON report or baseline "
                    "(default: equal numbers of cases)")


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: balance what actually runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    raw = config.getoption("export_shard", default=None)
    if raw is None or config.getoption("splits", default=None) is not None:
        return  # no shard, or pytest-split's --splits/--group select (never twice)
    from pytest_export.reporting.paths import parse_shard

    shard = parse_shard(config)
    if shard is None:
        return
    kept = select_shard(items, shard, _durations(config))
    if len(kept) != len(items):
        keep = {id(item) for item in kept}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in keep])
        items[:] = kept


def case_of(item: pytest.Item) -> str:
    """Return the unit an item is sharded with: its case for an exportable test, else its own node id."""
    from pytest_export.marker import item_mode

    mode = item_mode(item)
    if mode is None:
        return item.nodeid
    from pytest_export.marker import item_case_id

    return item_case_id(item, mode)


def select_shard(items: list[pytest.Item], shard: tuple[int, int], durations: dict[str, float]) -> list[pytest.Item]:
    """Return the items of shard ``shard`` = (K, N), K 1-based, in their collected order."""
    counts: dict[str, int] = {}
    for item in items:
        case = case_of(item)
        counts[case] = counts.get(case, 0) + 1
    chosen = assign(counts, shard[1], durations)
    return [item for item in items if chosen[case_of(item)] == shard[0] - 1]


def assign(counts: dict[str, int], shards: int, durations: dict[str, float]) -> dict[str, int]:
    """Return each case's shard (0-based): largest first onto the lightest shard so far."""
    known = [durations[c] for c in counts if c in durations]
    typical = statistics.median(known) if known else None
    weight = {c: durations.get(c, typical) if typical is not None else float(n) for c, n in counts.items()}
    loads = [0.0] * shards
    chosen: dict[str, int] = {}
    for case in sorted(counts, key=lambda c: (-weight[c], c)):
        target = min(range(shards), key=lambda s: (loads[s], s))
        chosen[case] = target
        loads[target] += weight[case]
    return chosen


def durations_from(path: Path) -> dict[str, float]:
    """Return each case's total duration (all its modes) recorded in a JSON report or baseline."""
    from pytest_export.results.report import ReportError, load_report

    try:
        report = load_report(path)
    except ReportError as exc:
        raise pytest.UsageError(f"--export-durations: {exc}") from None
    totals: dict[str, float] = {}
    for record in report.records:
        totals[record.case] = totals.get(record.case, 0.0) + max(0.0, float(record.duration or 0.0))
    # A baseline records no timings: every case 0, which says nothing; fall back to counts.
    return totals if any(totals.values()) else {}


def _durations(config: pytest.Config) -> dict[str, float]:
    raw = config.getoption("export_durations", default=None)
    if not raw:
        return {}
    path = Path(config.invocation_params.dir) / raw
    if not path.is_file():
        raise pytest.UsageError(f"--export-durations {raw}: no such file (a JSON report of an earlier run)")
    return durations_from(path)
