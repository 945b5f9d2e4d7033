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

The gate key is (case, mode); a verdict in EXPORTABLE counts as exportable. Pure: imports
neither pytest nor torch, so reports, gate, merge and diff read records through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:
    import pytest

__all__ = [
    "EXPORTABLE", "VERDICTS", "failure_headline", "failure_of", "item_case_id", "ordered_modes", "record_key",
    "split_mode", "worst",
]

VERDICTS = ("passed", "failed", "xfailed", "xpassed", "error", "timeout", "crashed", "skipped")
#: Verdicts meaning "the model exported and behaved": xpassed exported too, its test fails only
#: because an expectation is stale.
EXPORTABLE = ("passed", "xpassed")


def record_key(record: dict[str, Any]) -> tuple[str, str]:
    """Return the (case, mode) key a record is gated on."""
    return (record["case"], record["mode"])


def failure_of(record: dict[str, Any]) -> dict[str, Any] | None:
    """Return the failure dict of a record's outcome, or None."""
    return (record.get("outcome") or {}).get("failure")


def failure_headline(failure: dict[str, Any], *, at: bool = True) -> str:
    """Return a failure's one line, as ``Failure.headline()`` writes it (``at``: with its source line)."""
    text = f"[{failure['stage']}] {failure['category']}: {failure['exc_type']}: {failure['message']}"
    source = failure.get("source") if at else None
    if source:
        text += f" at {source['file']}:{source['line']}"
    return text


def worst(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Return the record that speaks for several of one key: the first that did not export, else the first.

    A key is only as good as its worst record (export_check called twice, a merged report):
    the gate must not pass on the luckier one.
    """
    return next((r for r in records if r["verdict"] not in EXPORTABLE), records[0])


def ordered_modes(modes: Iterable[str], order: Sequence[str]) -> list[str]:
    """Return ``modes`` as report columns: those in ``order`` first, in its order, then the rest sorted."""
    present = set(modes)
    return [m for m in order if m in present] + sorted(present - set(order))


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
