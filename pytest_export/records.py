"""Per-(case, mode) records: what crosses xdist workers and lands in reports.

A record is a plain dict (JSON builtins only)::

    {
      "test": "tests/test_m.py::test_mlp[strict]",   # pytest node id
      "case": "tests/test_m.py::test_mlp",           # node id without the mode id part
      "mode": "strict",
      "verdict": "passed" | "failed" | "xfailed" | "xpassed" | "error"
                 | "timeout" | "crashed" | "skipped",
      "expect": {"reason": str, "category": str | None} | None,
      "duration": float,                              # seconds, whole test
      "outcome": Outcome.to_dict() | None,            # None only if no outcome could be made
      "source": "marker" | "fixture",                 # optional (default "marker"): export_check
                                                      # records are per call, not per pytest test
    }

The gate key is (case, mode). "passed" is the only verdict that counts as exportable.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["RECORDS", "SELECTED", "VERDICTS", "item_case_id", "record_key", "split_mode"]

VERDICTS = ("passed", "failed", "xfailed", "xpassed", "error", "timeout", "crashed", "skipped")


#: Controller-side list of records, in arrival order (the reporter sorts them).
RECORDS = pytest.StashKey[list]()
#: Controller-side set of (case, mode) keys selected for this run (after -k / -m).
SELECTED = pytest.StashKey[set]()


def record_key(record: dict[str, Any]) -> tuple[str, str]:
    """Return the (case, mode) key a record is gated on."""
    return (record["case"], record["mode"])


def split_mode(nodeid: str, mode: str) -> str:
    """Return the case id of ``nodeid``: the node id without its trailing mode id.

    The plugin parametrizes the mode last, so its id is the last part of the parametrization
    id. Only that part goes: ``test[v1-strict-strict]`` is case ``test[v1-strict]`` in
    ``strict``, distinct from ``test[v1-strict]`` (case ``test[v1]``). Prefer item_case_id
    where an item is at hand.
    """
    if nodeid.endswith(f"[{mode}]"):
        return nodeid[: -len(mode) - 2]
    if nodeid.endswith(f"-{mode}]") and "[" in nodeid:
        return nodeid[: -len(mode) - 2] + "]"
    return nodeid


def item_case_id(item: pytest.Item, mode: str) -> str:
    """Return the case id of an exportable test item: its node id without the mode's parameter id."""
    callspec = getattr(item, "callspec", None)
    ids: list[str] | None = getattr(callspec, "_idlist", None)
    if callspec is None or not ids or ids[-1] == mode:
        return split_mode(item.nodeid, mode)
    # Another plugin parametrized after the mode: drop the mode's own id, wherever it sits.
    rest = list(ids)
    if mode in rest:
        del rest[len(rest) - 1 - rest[::-1].index(mode)]
    base = item.nodeid[: -len(item.name)] + getattr(item, "originalname", item.name)
    return f"{base}[{'-'.join(rest)}]" if rest else base
