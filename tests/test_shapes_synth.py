"""Inputs for drawn shapes keep dtype, device, layout, requires_grad and the value domain."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.export import Dim

from exportcore.shapes import ShapeSpec, inputs_strategy, synthesize


def test_token_ids_stay_inside_the_vocabulary_for_an_embedding():
    vocab = 50
    emb = torch.nn.Embedding(vocab, 8)
    ids = torch.randint(0, vocab, (2, 12))
    for seed in range(20):
        (new,), _ = synthesize((ids,), None, {"args[0]": (9, 31)}, seed=seed)
        assert new.dtype == torch.long and new.shape == (9, 31)
        assert int(new.min()) >= int(ids.min()) and int(new.max()) <= int(ids.max()) < vocab
        emb(new)  # would raise IndexError on an out-of-vocabulary id


def test_labels_with_an_ignore_index_keep_it_and_stay_valid_for_the_loss():
    torch.manual_seed(0)
    labels = torch.randint(0, 5, (2, 6))
    labels[:, -2:] = -100  # HF's ignore_index on padded positions
    logits = torch.randn(4, 10, 5)
    for seed in range(20):
        (new,), _ = synthesize((labels,), None, {"args[0]": (4, 10)}, seed=seed)
        assert new.dtype == labels.dtype and new.shape == (4, 10)
        assert set(new.unique().tolist()) <= {-100, 0, 1, 2, 3, 4}  # drawn uniformly over [-100, 4] before
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), new.flatten(), ignore_index=-100)
    rates = [float((synthesize((labels,), None, {"args[0]": (50, 50)}, seed=s)[0][0] == -100).float().mean())
             for s in range(5)]
    assert all(0.2 < rate < 0.47 for rate in rates)  # about the example's 1/3
    relative = torch.arange(-6, 7).repeat(2, 1)  # all in one range across zero: still drawn within it
    (new,), _ = synthesize((relative,), None, {"args[0]": (3, 40)}, seed=1)
    assert int(new.min()) >= -6 and int(new.max()) <= 6


def test_dtypes_bools_masks_and_float_domains_are_kept():
    args = (
        torch.rand(3, 4, dtype=torch.float64),  # non-negative: uniform in the observed range
        torch.randn(3, 4, dtype=torch.float16),
        torch.ones(3, 5, dtype=torch.bfloat16),  # constant mask stays constant
        torch.tensor([True, False, True]),
        torch.arange(3, dtype=torch.int32) + 10,
    )
    shapes = {"args[0]": (6, 4), "args[1]": (6, 4), "args[2]": (6, 5), "args[3]": (7,), "args[4]": (8,)}
    new, _ = synthesize(args, None, shapes, seed=1)
    assert [t.dtype for t in new] == [t.dtype for t in args]
    assert {k: tuple(t.shape) for k, t in zip(shapes, new)} == shapes
    lo, hi = float(args[0].min()), float(args[0].max())
    assert lo <= float(new[0].min()) and float(new[0].max()) <= hi
    assert float(new[1].min()) < 0 < float(new[1].max())
    assert torch.equal(new[2], torch.ones(6, 5, dtype=torch.bfloat16))
    assert new[3].dtype == torch.bool
    assert 10 <= int(new[4].min()) and int(new[4].max()) <= 12


def test_float_masks_keep_their_levels():
    additive = torch.tensor([[0.0, float("-inf"), 0.0, float("-inf")]])
    binary = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    new, _ = synthesize((additive, binary), None, {"args[0]": (3, 9), "args[1]": (20,)}, seed=2)
    assert set(new[0].flatten().tolist()) == {0.0, float("-inf")}
    assert set(new[1].tolist()) == {0.0, 1.0}


def test_unchanged_tensors_are_cloned_and_leaves_kept():
    x = torch.randn(3, 4, requires_grad=True)
    scale = 0.5
    new, kw = synthesize((x, scale), {"mask": torch.ones(2)}, {"args[0]": (3, 4)}, seed=0)
    assert torch.equal(new[0], x) and new[0] is not x
    assert new[0].requires_grad and new[0].is_leaf
    assert new[1] == 0.5 and torch.equal(kw["mask"], torch.ones(2))


def test_requires_grad_layout_and_nesting_survive_resizing():
    x = torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last).requires_grad_(True)
    args = ({"img": x, "meta": [torch.zeros(2, dtype=torch.long), "tag"]},)
    new, _ = synthesize(args, None, {"args[0]['img']": (5, 3, 4, 4), "args[0]['meta'][0]": (5,)}, seed=3)
    img = new[0]["img"]
    assert img.shape == (5, 3, 4, 4) and img.requires_grad and img.is_leaf
    assert img.is_contiguous(memory_format=torch.channels_last)
    assert new[0]["meta"][1] == "tag" and torch.equal(new[0]["meta"][0], torch.zeros(5, dtype=torch.long))


def test_synthesis_is_deterministic_per_seed():
    x = torch.randn(3, 4)
    a, _ = synthesize((x,), None, {"args[0]": (5, 4)}, seed=7)
    b, _ = synthesize((x,), None, {"args[0]": (5, 4)}, seed=7)
    c, _ = synthesize((x,), None, {"args[0]": (5, 4)}, seed=8)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])


def test_unknown_path_and_bad_args_are_named():
    with pytest.raises(ValueError, match=r"shapes: no input at \['args\[3\]'\]"):
        synthesize((torch.ones(2),), None, {"args[3]": (2,)}, seed=0)
    with pytest.raises(TypeError, match="args must be a tuple"):
        synthesize([torch.ones(2)], None, {}, seed=0)  # type: ignore[arg-type]


def collect(strategy: st.SearchStrategy, n: int = 8) -> list:
    seen: list = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def grab(value: object) -> None:
        seen.append(value)

    grab()
    return seen


def test_inputs_strategy_resizes_examples_to_in_spec_shapes():
    b = Dim("b", min=2, max=9)
    args = (torch.randint(0, 30, (4, 6)), torch.ones(5))
    spec = ShapeSpec.from_export_spec(({0: b}, {0: b + 1}), args, None)
    for drawn in collect(inputs_strategy(spec, args, None)):
        n = drawn.assignment["b"]
        assert drawn.args[0].shape == (n, 6) and drawn.args[1].shape == (n + 1,)
        assert int(drawn.args[0].max()) < 30


def test_user_factory_receives_shapes_and_a_seeded_rng():
    b = Dim("b", min=2, max=9)
    args = (torch.ones(4, 2),)
    spec = ShapeSpec.from_export_spec(({0: b},), args, None)
    calls = []

    def factory(shapes: dict, rng: random.Random) -> tuple[tuple, dict]:
        calls.append(shapes)
        return (torch.full(shapes["args[0]"], float(rng.randint(0, 9))),), {}

    drawn = collect(inputs_strategy(spec, args, None, factory))
    assert calls and all(d.args[0].shape == calls[i]["args[0]"] for i, d in enumerate(drawn))
    assert not any(d.problem for d in drawn)
    # the factory's faults are carried by the draw, for the caller to blame the factory
    (bad,) = collect(inputs_strategy(spec, args, None, lambda shapes, rng: [1, 2]), 1)
    assert bad.problem.startswith("inputs must produce (args: tuple, kwargs: dict), got list")
    with pytest.raises(TypeError, match="inputs must be a callable"):
        inputs_strategy(spec, args, None, 42)


def test_user_strategy_is_used_as_is_and_shapes_are_read_back():
    spec = ShapeSpec.from_export_spec(({0: Dim("b", min=2, max=9)},), (torch.ones(4),), None)
    user = st.integers(2, 9).map(lambda n: ((torch.zeros(n),), {}))
    for drawn in collect(inputs_strategy(spec, (torch.ones(4),), None, user)):
        assert drawn.shapes == {"args[0]": tuple(drawn.args[0].shape)}
        assert drawn.assignment == {}
