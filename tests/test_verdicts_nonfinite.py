"""Drawn shapes whose eager outputs are entirely NaN/inf check nothing (issue 50, item 7).

NaN compares equal to NaN where the positions agree, so on all-NaN outputs any program that also
answers NaN "matches": an all-NaN ``inputs=`` factory made a wrong model pass. The truth, in each
test, is bare torch.export's program against eager.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import strategies as st
from torch.export import Dim

import exportcore

pytestmark = pytest.mark.skipif(not hasattr(torch.compiler, "is_exporting"), reason="torch.compiler.is_exporting")

SPEC = {"x": {0: Dim("b", min=2, max=8)}}


class WrongPastFour(torch.nn.Module):
    """Eager scales batches above 4 by 3; export traces the example's branch (2) and guards nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        if not torch.compiler.is_exporting() and x.shape[0] > 4:
            return self.fc(x) * 3.0
        return self.fc(x) * 2.0


class NanPastFour(WrongPastFour):
    """Wrong past batch 4 too, but there eager's outputs (and the program's) are NaN everywhere."""

    def forward(self, x):
        rows = torch.ones(x.shape[0]).sum()  # a tensor, so that export guards nothing on it
        return super().forward(x) * torch.where(rows > 4, float("nan"), 1.0)


def _nan_factory(shapes, rng):
    return (torch.full(shapes["args[0]"], float("nan")),), {}


def _truth_wrong_past_four(model: torch.nn.Module, x: torch.Tensor) -> None:
    ep = torch.export.export(model, (x,), dynamic_shapes=SPEC)
    y = torch.randn(6, 3)
    assert not torch.allclose(ep.module()(y), model(y)), "the truth: the program is wrong at batch 6"
    nan = torch.full((6, 3), float("nan"))
    assert torch.isnan(ep.module()(nan)).all() and torch.isnan(model(nan)).all(), "and NaN in, NaN out on both"


@pytest.mark.parametrize("how", ["factory", "strategy"])
def test_an_all_nan_input_factory_is_an_input_error_not_a_pass(how):
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    model = WrongPastFour()
    _truth_wrong_past_four(model, x)
    plain = exportcore.check(model, (x,), dynamic_shapes=SPEC, examples=6)
    assert (plain.status, plain.failure.stage) == ("failed", "numerics"), "the engine's own inputs find it"
    inputs = _nan_factory if how == "factory" else st.integers(2, 8).map(
        lambda b: ((torch.full((b, 3), float("nan")),), {}))
    out = exportcore.check(model, (x,), dynamic_shapes=SPEC, inputs=inputs, examples=6)
    assert (out.status, out.failure and out.failure.stage) == ("error", "input"), out.failure and out.failure.headline()
    assert out.failure.exc_type == "InputFactoryError"
    who = "inputs factory" if how == "factory" else "inputs strategy"
    assert out.failure.message.startswith(f"{who}: eager's outputs are entirely NaN/inf on the {who}'s inputs")
    assert "args[0] holds NaN/inf at" in out.failure.message and "finite" in out.failure.hint


def test_a_factory_whose_nan_inputs_leave_eager_finite_somewhere_is_used():
    # NaN in a few places is a fair test (positions must agree): only an entirely non-finite answer is vacuous.
    torch.manual_seed(0)
    x = torch.randn(4, 3)

    def some_nan(shapes, rng):
        t = torch.randn(shapes["args[0]"])
        t[0, 0] = float("nan")
        return (t,), {}

    out = exportcore.check(WrongPastFour(), (x,), dynamic_shapes=SPEC, inputs=some_nan, examples=6)
    assert (out.status, out.failure.stage) == ("failed", "numerics"), out.failure and out.failure.headline()


def test_a_drawn_shape_where_eager_answers_only_nan_is_not_counted_as_checked():
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    model = NanPastFour()
    ep = torch.export.export(model, (x,), dynamic_shapes=SPEC)
    y = torch.randn(6, 3)
    assert torch.isnan(ep.module()(y)).all() and torch.isnan(model(y)).all()  # the truth: nothing to tell apart
    z = torch.randn(3, 3)
    assert torch.allclose(ep.module()(z), model(z))  # and right where eager answers numbers
    out = exportcore.check(model, (x,), dynamic_shapes=SPEC, examples=8)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.examples.discarded >= 1 and out.examples.accepted >= 1, out.examples
    assert out.examples.note == "", "NaN answers are not eager rejecting the shape"
    assert any("not counted as checked: eager's outputs are entirely NaN/inf" in n for n in out.notes), out.notes


def test_a_pass_where_every_drawn_shape_answered_nan_says_nothing_was_checked():
    torch.manual_seed(0)
    x = torch.randn(6, 3)
    spec = {"x": {0: Dim("b", min=5, max=8)}}
    out = exportcore.check(NanPastFour(), (x,), dynamic_shapes=spec, examples=4)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.examples.accepted == 0
    unchecked = [f for f in out.findings if f.kind == "no_shape_checked"]
    assert len(unchecked) == 1, out.findings
    assert "eager's outputs were entirely NaN/inf at" in unchecked[0].message
    assert "eager rejected" not in unchecked[0].message


def test_nothing_to_compare_counts_only_values_that_could_tell_programs_apart():
    from exportcore.checks.nonfinite import nothing_to_compare

    nan, inf = float("nan"), float("inf")
    assert nothing_to_compare(torch.full((2, 2), nan))
    assert nothing_to_compare({"a": torch.tensor([nan, inf, -inf]), "b": (torch.empty(0),)})
    assert not nothing_to_compare(torch.tensor([nan, 1.0]))
    assert not nothing_to_compare((torch.full((2,), nan), torch.tensor([1, 2])))  # integers compare exactly
    assert not nothing_to_compare((torch.full((2,), nan), 3))
    assert not nothing_to_compare(torch.empty(0))
    assert not nothing_to_compare(torch.tensor([1, 2]))


class StdScaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x) * x.std(0).sum()  # batch 1: an unbiased std is NaN, so every output is


def test_size_one_where_eager_answers_only_nan_is_noted_as_not_compared():
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    spec = {"x": {0: Dim("b", max=8)}}
    ep = torch.export.export(StdScaled(), (x,), dynamic_shapes=spec)
    assert torch.isnan(ep.module()(torch.randn(1, 3))).all()  # the truth: NaN on both sides at batch 1
    out = exportcore.check(StdScaled(), (x,), dynamic_shapes=spec, examples=4)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert any(n.startswith("size 1 of b") and "entirely NaN/inf" in n for n in out.notes), out.notes


class AllNan(torch.nn.Module):
    def forward(self, x):
        return torch.log(-1 - x.abs())  # NaN everywhere, for every input


def test_examples_on_which_eager_answers_only_nan_are_noted_as_not_compared():
    x = torch.randn(4, 3)
    ep = torch.export.export(AllNan(), (x,))
    assert torch.isnan(ep.module()(x)).all() and torch.isnan(AllNan()(x)).all()  # the truth: nothing to compare
    out = exportcore.check(AllNan(), (x,))
    assert out.status == "passed", out.failure and out.failure.headline()
    assert any(n.startswith("the example inputs: eager's outputs are entirely NaN/inf") for n in out.notes), out.notes
