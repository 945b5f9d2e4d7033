"""The mode parameter an exportable item carries: a plain column to the test, its parsed marker to the plugin."""

from __future__ import annotations

import copy
import pickle

from exportcore.columns import Column
from pytest_export.marker import ExportSpec, ModeParam


def test_the_mode_a_test_receives_behaves_as_its_column_string():
    spec = ExportSpec(modes=("strict",), inputs=lambda shapes, rng: None)  # a lambda: not picklable
    mode = ModeParam(Column("strict"), spec)
    assert mode == "strict" and hash(mode) == hash("strict") and f"{mode}" == "strict"
    assert mode.spec is spec and mode.column == Column("strict")
    # Handed to another process or copied, it is the column alone, never the spec it carries.
    for moved in (pickle.loads(pickle.dumps(mode)), copy.deepcopy(mode), copy.copy(mode)):
        assert moved == "strict" and type(moved) is str
