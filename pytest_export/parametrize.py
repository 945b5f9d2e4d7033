"""Parametrize an exportable test over its export modes, per parameter where pytest.param carries the marker.

pytest shows a parameter's marks (``pytest.param(..., marks=pytest.mark.exportable(...))``)
only on its callspec, after the function's own markers; each parameter gets the modes of its
merged marker (pytest_export.marker: closest wins per argument), and a parameter without one
beside parameters with one is refused: it would pass without exporting anything.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from exportcore.columns import Column
from pytest_export.marker import MARKER, MODE_PARAM, ExportSpec, MarkerError, ModeParam, markers_of, parse_markers
from pytest_export.options import RunOptions

__all__ = ["parametrize_modes"]


def parametrize_modes(metafunc: pytest.Metafunc, options: RunOptions) -> None:
    """Parametrize ``metafunc`` over its modes; a marker that cannot be honoured fails collection, naming the test."""
    base = list(metafunc.definition.iter_markers(MARKER))
    # The user's parametrization so far: a pytest.param(..., marks=exportable(...)) is only visible here.
    calls = list(getattr(metafunc, "_calls", ()))
    if not any(m.name == MARKER for c in calls for m in c.marks):
        if base:
            spec = _spec_or_fail(metafunc.definition.nodeid, base, options.known_modes)
            _parametrize(metafunc, options.columns_for(spec.modes, spec.targets, spec.devices), spec)
        return
    columns: dict[str, list[Column]] = {}
    specs: dict[str, ExportSpec] = {}
    for call in calls:
        markers = markers_of(metafunc.definition, call.marks)
        where = f"{metafunc.definition.nodeid}[{call.id}]"
        if not markers:
            pytest.fail(f"{where}: @pytest.mark.{MARKER}: other parameters of this test carry the marker and "
                        "this one does not, so it would pass without exporting anything; give it "
                        f"marks=pytest.mark.{MARKER}(...) too, or put the marker on the test function",
                        pytrace=False)
        specs[call.id] = _spec_or_fail(where, markers, options.known_modes, merged=len(markers) > 1)
        columns[call.id] = options.columns_for(specs[call.id].modes, specs[call.id].targets, specs[call.id].devices)
    every = list(dict.fromkeys(m for c in columns.values() for m in c))
    _parametrize(metafunc, every, ExportSpec())
    if every:
        # Keep each parameter's own modes only, each carrying its own parameter's spec. A parameter
        # left with none (its modes all outside --export-modes) drops out here; the columns of the
        # others keep the list non-empty.
        metafunc._calls[:] = [
            dataclasses.replace(c, params={**c.params, MODE_PARAM: ModeParam(c.params[MODE_PARAM].column,
                                                                             specs[_call_id(c)])})
            for c in metafunc._calls if c.params[MODE_PARAM].column in columns[_call_id(c)]
        ]


def _spec_or_fail(where: str, markers: list[Any], known_modes: tuple[str, ...], merged: bool = False,
                  ) -> ExportSpec:
    try:
        spec = parse_markers(markers, known_modes)
    except MarkerError as exc:
        problem = str(exc)
    else:
        return spec
    how = " (a pytest.param's marker merged with the test's, closest wins per argument)" if merged else ""
    # Outside the except block, so the error shows without "During handling of ..." chaining.
    pytest.fail(f"{where}: @pytest.mark.{MARKER}{how}: {problem}", pytrace=False)


def _call_id(call: Any) -> str:
    # The call's id before the mode was appended (the mode's id is the last one).
    return "-".join(call._idlist[:-1])


def _parametrize(metafunc: pytest.Metafunc, columns: list[Column], spec: ExportSpec) -> None:
    if MODE_PARAM not in metafunc.fixturenames:
        # A test may take export_mode as an argument; otherwise make room for the parameter.
        metafunc.fixturenames.append(MODE_PARAM)
    metafunc.parametrize(MODE_PARAM, [ModeParam(column, spec) for column in columns], ids=[c.label for c in columns])
