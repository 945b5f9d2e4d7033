"""The input budget: drawn shapes and reject probes never allocate more than it allows, and say what they skipped."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.export import Dim

import exportcore
from exportcore.input_budget import budget_notes, default_budget, format_bytes, parse_bytes
from exportcore.shapes import ShapeSpec, concrete_invalid, reject_inputs, valid_assignments


@pytest.mark.parametrize(("text", "value"), [
    ("1048576", 2**20), ("1MiB", 2**20), ("1 MiB", 2**20), ("2GB", 2 * 10**9), ("1.5KiB", 1536), (4096, 4096),
])
def test_sizes_parse_with_and_without_units(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "lots", "-5", "0", "1 MiBs", "1e9", True])
def test_bad_sizes_are_value_errors(text):
    with pytest.raises(ValueError):
        parse_bytes(text)


def test_default_budget_is_64_mib_or_16_times_the_examples():
    assert default_budget(1000) == 64 * 2**20
    assert default_budget(10 * 2**20) == 160 * 2**20
    assert format_bytes(64 * 2**20) == "64 MiB" and format_bytes(1536) == "1.5 KiB"


def _spec(budget, tokens_max=4_000_000, width=256):
    tokens = Dim("tokens", min=2, max=tokens_max)
    args = (torch.randn(8, width),)
    return ShapeSpec.from_export_spec(({0: tokens},), args, None).with_budget(budget), args


def test_budget_caps_a_range_and_says_so():
    spec, _ = _spec(2**20)  # 1 MiB of (n, 256) float32 is n = 1024
    assert spec.root_range("tokens") == (2, 1024)
    assert spec.capped() == {"tokens": (1024, 4_000_000)}
    notes = budget_notes(spec)
    assert notes[0].startswith("range upper part not exercised above 1024: dim 'tokens' (declared [2, 4000000])")
    assert "input budget of 1 MiB" in notes[0]
    assert notes[1] == ("reject probe above the max of dim 'tokens' (4000001) not run: its inputs would exceed "
                        "the input budget of 1 MiB")


def test_a_range_that_fits_is_drawn_whole_and_probed_above_its_max():
    spec, _ = _spec(2**20, tokens_max=64)
    assert spec.root_range("tokens") == (2, 64) and spec.capped() == {} and budget_notes(spec) == []
    assert {label.split(":")[0] for label, _ in concrete_invalid(spec, random.Random(0))} >= {"above_max"}


def test_absurd_max_draws_and_probes_nothing_beyond_the_budget():
    spec, args = _spec(2**20, tokens_max=10**18)
    assert spec.root_range("tokens") == (2, 1024)
    labels = [label for label, _, _ in reject_inputs(spec, args, None, count=12, seed=0)]
    assert labels and not any(label.startswith("above_max") for label in labels)  # max + 1 would be 2**60 rows
    for _, new_args, _ in reject_inputs(spec, args, None, count=12, seed=0):
        assert new_args[0].numel() * 4 <= 2**20


def test_several_dims_high_at_once_are_filtered_to_the_budget():
    b, s = Dim("b", min=2, max=512), Dim("s", min=2, max=512)
    spec = ShapeSpec.from_export_spec(({0: b, 1: s}, {0: b}), (torch.randn(4, 8), torch.ones(4)), None)
    spec = spec.with_budget(64 * 1024)  # each alone may grow far, both together may not
    assert spec.root_range("b")[1] > 100 and spec.root_range("s")[1] > 100
    seen = []

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(valid_assignments(spec), st.integers(0, 2**32))
    def draw(valid, seed):
        seen.append(valid)
        assert spec.input_bytes(valid) <= 64 * 1024
        probes = concrete_invalid(spec, random.Random(seed))
        assert probes  # built on the lowest sizes where the drawn ones would not fit
        for _, invalid in probes:
            assert spec.input_bytes(invalid) <= 64 * 1024

    draw()
    assert len(seen) > 50


class Sizes:
    """The sizes a model was called with; an opaque object, not a list attribute, because torch 2.6's
    non-strict export fails ("Node arity mismatch") when a module's list attribute grows while tracing."""

    def __init__(self) -> None:
        self.values: list[int] = []

    def append(self, n: int) -> None:
        self.values.append(n)

    def __bool__(self) -> bool:
        return bool(self.values)

    def __iter__(self):
        return iter(self.values)


class RowSum(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seen = Sizes()

    def forward(self, x):
        self.seen.append(x.shape[0])
        return (x * 2).sum(-1)


@pytest.mark.parametrize("mode", ["non_strict", "training"])
def test_check_never_feeds_the_model_inputs_beyond_the_budget(mode):
    model = RowSum()
    out = exportcore.check(model, (torch.randn(8, 64),), dynamic_shapes={"x": {0: Dim("tokens", min=2, max=100_000)}},
                           mode=mode, examples=10, input_budget="256KiB")
    assert out.status == "passed", out.failure and out.failure.headline()
    assert model.seen and max(model.seen) <= 1024  # 256 KiB of (n, 64) float32
    assert out.examples.accepted >= 5
    assert any(n.startswith("range upper part not exercised above 1024: dim 'tokens'") for n in out.notes)
    assert any("reject probe above the max of dim 'tokens' (100001) not run" in n for n in out.notes)


def test_default_budget_lets_an_absurd_declared_max_pass_without_allocating_it():
    model = RowSum()
    out = exportcore.check(model, (torch.randn(8, 256),), dynamic_shapes={"x": {0: Dim("tokens", min=2, max=10**18)}},
                           examples=6, checks=("numerics", "accept", "reject"))
    assert out.status == "passed", out.failure and out.failure.headline()
    assert max(model.seen) <= 65536  # 64 MiB of (n, 256) float32
    assert any("not exercised above 65536" in n and "64 MiB" in n for n in out.notes)


def test_bad_budget_argument_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="input_budget: expected a size in bytes"):
        exportcore.check(RowSum(), (torch.randn(8, 4),), input_budget="big")
