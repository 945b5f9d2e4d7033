"""Failures link to the ExportDB case of their own guard shape, and show its rewrite as a snippet."""

from __future__ import annotations

import pytest

from exportcore.diagnosis.links import nearest_case
from exportdb.registry import get
from exportdb.snippets import rewrite_snippet
from pytest_export.rendering.story import rewrite_lines

_HEAD = "Constraints violated (n)! Not all values of n = L['x'].size()[0] in the specified range n <= 64 "


@pytest.mark.parametrize(("guard", "case"), [
    ("round(L['x'].size()[0] / 2) != 1.", "round_on_size"),
    ("math.floor(L['x'].size()[0] / 2) >= 0.", "floor_on_size"),
    ("math.ceil(L['x'].size()[0] / 2) != 1.", "floor_on_size"),
    ("(L['x'].size()[0] // 2) <= L['x'].size()[0].", "floordiv_on_size"),
    ("(1 + (((-3) + L['x'].size()[0]) // 2)) != 1.", "conv_output_size_guard"),
    ("L['x'].size()[0] <= 16.", "range_narrowed_by_check"),
])
def test_guard_shape_picks_its_case(guard: str, case: str) -> None:
    message = _HEAD + "satisfy the generated guard " + guard
    assert nearest_case("UserError(CONSTRAINT_VIOLATION)", message, "constraints", "torch.dynamic-shape") == case
    assert get(case).failing_modes()  # a failing case, with a rewrite to show


def test_runtime_output_size_guard_links_the_conv_case() -> None:
    message = "in-spec shape rejected by exported program (Guard failed: 1 + (-1 + x.size()[2]) // 4 != 1); ..."
    assert nearest_case("GuardRejected", message, "guards", "guards") == "conv_output_size_guard"


def test_snippet_shows_forward_before_and_after() -> None:
    snippet = rewrite_snippet("round_on_size")
    assert snippet is not None and snippet.rewrite == "halves_by_reshape"
    assert "round(x.shape[0] / 2)" in snippet.before and snippet.before.startswith("def forward")
    assert "x.reshape(2, -1).sum(0)" in snippet.after


def test_snippet_shows_the_spec_when_only_the_spec_changes() -> None:
    snippet = rewrite_snippet("conv_output_size_guard")
    assert snippet is not None
    assert 'Dim("h", min=4' in snippet.before and 'Dim("h", min=9' in snippet.after


def test_no_snippet_for_unknown_or_passing_cases() -> None:
    assert rewrite_snippet("no_such_case") is None
    assert rewrite_snippet("halves_by_reshape") is None
    assert rewrite_lines(None) == [] and rewrite_lines("no_such_case") == []
