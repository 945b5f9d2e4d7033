"""The one way every output counts a run: cases, the modes and targets they ran in, and results.

A *case* is a row of the matrix (a test's model and inputs); a *column* is a mode (``strict``,
``non_strict``, ``training``, a registered one) or a target (``aoti``, ``onnx``, ``executorch``,
on a device); a *result* is one case in one column, with one verdict. pytest counts tests, which
differs where ``export_check`` records several results in one test. Terminal, HTML, Markdown and
JSON say it with these words, from this module.
"""

from __future__ import annotations

from typing import Any, Sequence

from exportcore.columns import Column
from exportcore.devices import DEVICES
from exportcore.modes import MODES
from exportcore.targets import TARGETS

__all__ = ["COLUMN_ORDER", "is_target", "columns_phrase", "row_label"]

#: The matrix's columns in this order everywhere (terminal, HTML, Markdown): the built-in modes,
#: then the targets, per device; a registered mode or anything else follows alphabetically.
COLUMN_ORDER: tuple[str, ...] = tuple(Column(name, device).label for device in DEVICES
                                      for name in (*MODES, *TARGETS))


def is_target(column: str) -> bool:
    """Whether a column label is a target's (``aoti``, ``aoti-cuda``) rather than a mode's."""
    return Column.parse(column).is_target  # a report's label


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def columns_phrase(cases: int, columns: Sequence[str]) -> str:
    """``21 cases in 3 modes and 3 targets``: what the matrix spans."""
    targets = sum(1 for c in columns if is_target(c))
    modes = len(columns) - targets
    where = " and ".join(p for p in (_plural(modes, "mode") if modes else "",
                                      _plural(targets, "target") if targets else "") if p)
    return f"{_plural(cases, 'case')} in {where}" if where else _plural(cases, "case")


def row_label(case: str, test: str, source: str) -> str:
    """A matrix row's label: the case id, led by its test where ``export_check`` named the case.

    A marker test's case id is its node id (``file.py::test``); ``export_check(case_id="stem-small")``
    is the user's own key, which names no file: the row says which test recorded it.
    """
    if source == "fixture" and "::" not in case and test:
        return f"{test}::{case}"
    return case
