"""The shapes x runtimes table of a target column, and what its runtime checks share.

Each row is one input the runtime checks tried (the examples, a drawn in-range shape, an
out-of-range one) with the verdict of ``ep.module()`` (column MODULE_COLUMN) and of the runtime:
``accepted``, ``rejected``, ``wrong result`` or ``error``. It goes to ``outcome.shape_table``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.compare import compare
from exportcore.execute import clone_tree
from exportcore.guards import is_guard_error
from exportcore.sides import prepare, run_side
from exportcore.targets.base import flat_tensors

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["MODULE_COLUMN", "add_row", "eager_outputs", "module_verdict", "shapes_text"]

#: The table column of the exported program itself.
MODULE_COLUMN = ".module()"
_MAX_ROWS = 24


def shapes_text(args: tuple, kwargs: dict) -> str:
    """Return a row's key: every input's shape (``args[0]=[2, 4]``)."""
    from exportcore.shapes import input_shapes

    return ", ".join(f"{p}={list(s)}" for p, s in input_shapes(args, kwargs).items())


def add_row(run: Run, row: dict[str, str]) -> None:
    """Add ``row`` to the outcome's table (one row per distinct shapes, at most _MAX_ROWS)."""
    table = run.outcome.shape_table
    if len(table) < _MAX_ROWS and all(r["shapes"] != row["shapes"] for r in table):
        table.append(row)


def module_verdict(run: Run, args: tuple, kwargs: dict, reference: Any, numerics: bool = True) -> str:
    """Return ep.module()'s verdict on one input, for the table's MODULE_COLUMN."""
    import torch

    args, kwargs = clone_tree((args, kwargs))
    try:
        with torch.no_grad():
            out = run.programs["exported"](*args, **kwargs)
    except Exception as exc:
        return "rejected" if is_guard_error(exc) else "error"
    if reference is None or not numerics:
        return "accepted"
    same = compare(reference, flat_tensors(out), rtol=run.rtol, atol=run.atol, path="output") is None
    return "accepted" if same else "wrong result"


def eager_outputs(run: Run, args: tuple, kwargs: dict) -> list | None:
    """Return eager's flat outputs on one input (None when eager refuses it)."""
    # From the snapshot state every time: a runtime starts each call from the exported state.
    prepare(run)
    try:
        return flat_tensors(run_side(run, run.model, args, kwargs).outputs)
    except Exception:
        return None
