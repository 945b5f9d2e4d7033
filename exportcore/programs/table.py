"""The shapes x programs table of a target column: one row per input its checks tried, one verdict per side.

Each row is one input (the examples, a drawn in-range shape, an out-of-range one) with the verdict
of every program under test (exportcore.programs.under_test: ``ep.module()`` under MODULE_COLUMN, the runtime
under its name): ``accepted``, ``rejected``, ``wrong result`` or ``error``. It goes to
``outcome.shape_table``; a mode's checks keep no table (their verdict is the outcome itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exportcore.programs.context import ProgramRun
    from exportcore.programs.under_test import ColumnRun, Side

__all__ = ["add_row", "keeps_table", "probe_cell", "quiet_cell", "shapes_text"]

_MAX_ROWS = 24


def keeps_table(run: ColumnRun) -> bool:
    """Whether ``run`` fills a shapes table (a target column does)."""
    return run.runtime is not None


def shapes_text(args: tuple, kwargs: dict) -> str:
    """Return a row's key: every input's shape (``args[0]=[2, 4]``)."""
    from exportcore.shapes import input_shapes

    return ", ".join(f"{p}={list(s)}" for p, s in input_shapes(args, kwargs).items())


def add_row(run: ColumnRun, args: tuple, kwargs: dict, kind: str, cells: dict[str, str]) -> None:
    """Add one input's row (one per distinct shapes, at most _MAX_ROWS) when ``run`` keeps a table."""
    if not keeps_table(run):
        return
    from exportcore.outcome import ShapeRow

    table = run.outcome.shape_table
    shapes = shapes_text(args, kwargs)
    if len(table) < _MAX_ROWS and all(r.shapes != shapes for r in table):
        table.append(ShapeRow(shapes, kind, dict(cells)))


def quiet_cell(run: ProgramRun, side: Side, args: tuple, kwargs: dict, reference: list | None,
               numerics: bool = True) -> str:
    """Return a side's verdict on one input from a quiet probe (for a side shown in the table, not judged)."""
    return probe_cell(run, side, args, kwargs, reference, numerics)[0]


def probe_cell(run: ProgramRun, side: Side, args: tuple, kwargs: dict, reference: list | None,
               numerics: bool = True) -> tuple[str, BaseException | None]:
    """Return a side's verdict on one input from a quiet probe, and what it raised when it was not a rejection."""
    from exportcore.compare import compare
    from exportcore.targets.base import flat_tensors

    try:
        out: Any = side.probe(run, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - the cell says what happened; the caller judges it
        return ("rejected", None) if side.rejects(run, exc) else ("error", exc)
    if reference is None or not numerics:
        return "accepted", None
    rtol, atol = side.table_tolerance(run)
    same = compare(reference, flat_tensors(out), rtol=rtol, atol=atol, path="output") is None
    return ("accepted" if same else "wrong result"), None
