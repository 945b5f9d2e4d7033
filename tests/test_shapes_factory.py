"""A user's ``inputs=`` factory is checked against the drawn shapes: its faults are input errors, not export ones."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore

BATCH = Dim("batch", min=2, max=16)


class Lin(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def _check(factory, **kwargs):
    torch.manual_seed(0)
    return exportcore.check(Lin(), (torch.randn(4, 4),), dynamic_shapes={"x": {0: BATCH}}, examples=6,
                            inputs=factory, **kwargs)


def test_factory_returning_shapes_outside_the_draw_is_blamed_not_the_export():
    # Twice the drawn batch goes past max=16: the guards reject it, which used to read
    # "the export specialized or narrowed a dimension" with shapes the sampler never drew.
    out = _check(lambda shapes, rng: ((torch.randn(shapes["args[0]"][0] * 2, 4),), {}))
    assert (out.status, out.failure.stage, out.failure.category) == ("error", "input", "input")
    assert out.failure.exc_type == "InputFactoryError"
    assert "inputs factory returned args[0] of shape [4, 4], but the drawn shape is [2, 4]" in out.failure.message
    assert "specialized" not in out.failure.message


def test_factory_ignoring_the_shapes_is_not_a_silent_pass():
    # Always the example shape: eager and export agree on it, so nothing in the range was checked.
    out = _check(lambda shapes, rng: ((torch.randn(4, 4),), {}))
    assert (out.status, out.failure.stage) == ("error", "input")
    assert "returned args[0] of shape [4, 4], but the drawn shape is [2, 4]" in out.failure.message


def test_factory_returning_the_wrong_structure_names_the_missing_input():
    out = _check(lambda shapes, rng: ((), {"x": torch.randn(*shapes["args[0]"])}))
    assert (out.status, out.failure.category) == ("error", "input")
    assert "inputs factory returned nothing at args[0], where the drawn shapes need a tensor of shape [2, 4]" in (
        out.failure.message)


def test_exception_in_the_factory_is_an_input_error_not_internal():
    def factory(shapes, rng):
        raise KeyError("no tokenizer loaded")

    out = _check(factory)
    assert (out.status, out.failure.stage, out.failure.category) == ("error", "input", "input")
    assert "inputs factory raised KeyError: 'no tokenizer loaded' (drawn shapes: args[0]=[2, 4])" in out.failure.message


def test_factory_returning_no_pair_is_an_input_error():
    out = _check(lambda shapes, rng: torch.randn(*shapes["args[0]"]))
    assert (out.status, out.failure.category) == ("error", "input")
    assert "inputs must produce (args: tuple, kwargs: dict), got Tensor" in out.failure.message


@pytest.mark.parametrize("mode", ["non_strict", "training"])
def test_a_correct_factory_still_passes(mode):
    out = _check(lambda shapes, rng: ((torch.randn(*shapes["args[0]"], generator=None),), {}), mode=mode)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.examples.accepted >= 3


def test_strategy_drawing_outside_the_declared_range_is_blamed_not_the_export():
    from hypothesis import strategies as st

    too_big = st.integers(2, 40).map(lambda n: ((torch.randn(n, 4),), {}))  # batch is declared up to 16
    out = _check(too_big)
    assert (out.status, out.failure.stage, out.failure.category) == ("error", "input", "input")
    assert "inputs strategy drew shapes outside the declared dynamic_shapes (above_max:batch): args[0]=[17, 4]" in (
        out.failure.message)


def test_strategy_changing_a_static_size_is_an_input_error():
    from hypothesis import strategies as st

    wide = st.integers(2, 16).map(lambda n: ((torch.randn(n, 5),), {}))
    out = _check(wide)
    assert (out.status, out.failure.category) == ("error", "input")
    assert "static_changed:args[0].shape[1]" in out.failure.message


def test_strategy_inside_the_spec_passes():
    from hypothesis import strategies as st

    out = _check(st.integers(2, 16).map(lambda n: ((torch.randn(n, 4),), {})))
    assert out.status == "passed", out.failure and out.failure.headline()
