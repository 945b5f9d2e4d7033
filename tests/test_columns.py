"""A result's column as a value: a mode or a target on a device, its label the result key."""

from __future__ import annotations

import pytest

from exportcore.columns import Column


@pytest.mark.parametrize("label", ["strict", "non_strict", "training", "aoti", "onnx-cuda", "strict-cuda", "my_mode"])
def test_a_label_parses_to_the_column_that_writes_it(label):
    assert Column.parse(label).label == label and str(Column.parse(label)) == label


def test_a_column_says_what_it_runs_and_where():
    aoti = Column.parse("aoti-cuda")
    assert aoti == Column("aoti", "cuda") and aoti.is_target and aoti.target == "aoti"
    assert aoti.keywords() == {"target": "aoti", "device": "cuda"}
    strict = Column.parse("strict")
    assert strict == Column("strict", "cpu") and not strict.is_target and strict.target is None
    assert strict.keywords() == {}


def test_a_suffix_that_is_no_other_device_stays_in_the_name():
    assert Column.parse("strict-cpu") == Column("strict-cpu") and Column.parse("a-b") == Column("a-b")
