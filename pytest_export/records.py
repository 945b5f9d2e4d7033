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
    }

The gate key is (case, mode). "passed" is the only verdict that counts as exportable.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

__all__ = ["Record", "RECORDS", "SELECTED", "VERDICTS", "record_key", "split_mode"]

VERDICTS = ("passed", "failed", "xfailed", "xpassed", "error", "timeout", "crashed", "skipped")


class Record(TypedDict):
    test: str
    case: str
    mode: str
    verdict: str
    expect: dict[str, Any] | None
    duration: float
    outcome: dict[str, Any] | None


#: Controller-side list of records, in arrival order (the reporter sorts them).
RECORDS = pytest.StashKey[list]()
#: Controller-side set of (case, mode) keys selected for this run (after -k / -m).
SELECTED = pytest.StashKey[set]()


def record_key(record: dict[str, Any]) -> tuple[str, str]:
    """Return the (case, mode) key a record is gated on."""
    return (record["case"], record["mode"])


def split_mode(nodeid: str, mode: str) -> str:
    """Return the case id of ``nodeid``: its parametrization id with the mode part removed."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return nodeid
    base, _, params = nodeid[:-1].partition("[")
    parts = params.split("-")
    width = len(mode.split("-"))  # a device key spans two id parts: "strict-cuda"
    for start in range(len(parts) - width, -1, -1):
        if "-".join(parts[start:start + width]) == mode:
            parts = parts[:start] + parts[start + width:]
            break
    return f"{base}[{'-'.join(parts)}]" if parts else base
