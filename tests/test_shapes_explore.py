"""The exploration loop: shrinks failures to a minimal shape, discards eager rejections, is seeded."""

from __future__ import annotations

import hypothesis
import pytest
import torch
from torch.export import Dim

from exportcore.shapes import DEFAULT_EXAMPLES, Probe, ShapeSpec, examples_for, explore, hypothesis_settings, reject_inputs

ARGS = (torch.randn(4, 3), torch.randn(5))


@pytest.fixture(scope="module")
def spec() -> ShapeSpec:
    b = Dim("b", min=2, max=64)
    return ShapeSpec.from_export_spec(({0: b}, {0: b + 1}), ARGS, None)


def odd_from_five(args: tuple, kwargs: dict) -> Probe:
    n = args[0].shape[0]
    return Probe("fail", f"diverges at {n}") if n % 2 and n >= 5 else Probe("ok")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_failure_shrinks_to_the_smallest_failing_size(spec, seed):
    result = explore(spec, ARGS, None, odd_from_five, examples=30, seed=seed)
    assert result.failure is not None and result.failure.message == "diverges at 5"
    assert result.counterexample.shapes == {"args[0]": [5, 3], "args[1]": [6]}
    assert "b=5" in result.counterexample.message
    assert "synthesize(args, kwargs, {'args[0]': (5, 3), 'args[1]': (6,)}" in result.counterexample.reproduce


@pytest.mark.parametrize("seed", range(6))
def test_every_bound_is_probed_whatever_hypothesis_draws(seed):
    x = Dim("x", min=3, max=40)
    two = ShapeSpec.from_export_spec(({0: Dim("b", min=2, max=64)}, {0: x}), ARGS, None)
    result = explore(two, ARGS, None, lambda a, k: Probe("ok"), examples=10, seed=seed)
    assert result.stats.tried <= 10
    drawn = [(d["args[0]"][0], d["args[1]"][0]) for d in result.drawn]
    assert {(2, 3), (64, 3), (2, 40)} <= set(drawn)


@pytest.mark.parametrize("seed", range(4))
def test_a_failure_only_at_the_top_is_found_and_lowered_to_its_smallest_size(spec, seed):
    def from_sixty(args: tuple, kwargs: dict) -> Probe:
        n = args[0].shape[0]
        return Probe("fail", f"diverges at {n}") if n >= 60 else Probe("ok")

    result = explore(spec, ARGS, None, from_sixty, examples=10, seed=seed)
    assert result.failure is not None and result.failure.message == "diverges at 60"
    assert result.counterexample.shapes == {"args[0]": [60, 3], "args[1]": [61]}
    assert "b=60" in result.counterexample.message


def test_most_drawn_sizes_are_cheap(spec):
    sizes = []
    for seed in range(10):
        result = explore(spec, ARGS, None, lambda a, k: Probe("ok"), examples=10, seed=seed)
        sizes += [d["args[0]"][0] for d in result.drawn[2:]]  # the first two are the bounds 2 and 64
    cheap = [n for n in sizes if n <= 2 + (64 - 2) // 8]
    assert len(cheap) > len(sizes) / 2, sizes


def test_fewer_examples_than_bounds_probe_the_bounds_only(spec):
    result = explore(spec, ARGS, None, lambda a, k: Probe("ok"), examples=2, seed=0)
    assert [d["args[0]"][0] for d in result.drawn] == [2, 64]
    assert explore(spec, ARGS, None, lambda a, k: Probe("ok"), examples=1, seed=0).drawn == [
        {"args[0]": [2, 3], "args[1]": [3]}
    ]


def test_reproduce_snippet_rebuilds_the_failing_input(spec):
    from exportcore.shapes.synth import synthesize

    result = explore(spec, ARGS, None, odd_from_five, examples=30, seed=0)
    scope = {"synthesize": synthesize, "args": ARGS, "kwargs": {}}
    exec(result.counterexample.reproduce.splitlines()[1], scope)
    assert scope["args"][0].shape == (5, 3)


def test_passing_runs_try_about_examples_shapes_and_are_deterministic(spec):
    ok = lambda args, kwargs: Probe("ok")  # noqa: E731
    first = explore(spec, ARGS, None, ok, examples=12, seed=5)
    again = explore(spec, ARGS, None, ok, examples=12, seed=5)
    other = explore(spec, ARGS, None, ok, examples=12, seed=6)
    assert first.failure is None and first.counterexample is None
    assert first.stats.tried == first.stats.accepted <= 12
    assert first.drawn == again.drawn and first.drawn != other.drawn


def test_eager_rejections_are_discarded_and_noted_when_most(spec):
    picky = lambda args, kwargs: Probe("discard") if args[0].shape[0] > 6 else Probe("ok")  # noqa: E731
    result = explore(spec, ARGS, None, picky, examples=10, seed=0)
    assert result.failure is None
    assert result.stats.discarded > result.stats.tried / 2
    assert "rejected by the eager model" in result.stats.note
    assert "probably wider than what the model accepts" in result.stats.note
    nothing = explore(spec, ARGS, None, lambda a, k: Probe("discard"), examples=5, seed=0)
    assert nothing.failure is None and nothing.stats.accepted == 0 and nothing.stats.note


def test_a_raising_probe_is_a_run_failure_and_a_wrong_return_is_a_type_error(spec):
    def boom(args: tuple, kwargs: dict) -> Probe:
        raise RuntimeError("kernel exploded\nsecond line")

    result = explore(spec, ARGS, None, boom, examples=5, seed=0)
    assert (result.failure.status, result.failure.stage) == ("fail", "run")
    assert result.failure.message == "RuntimeError: kernel exploded"
    assert result.counterexample.shapes["args[0]"] == [2, 3]  # shrunk to the smallest size
    with pytest.raises(TypeError, match="probe must return a Probe"):
        explore(spec, ARGS, None, lambda a, k: "ok", examples=3, seed=0)


def test_bad_probe_status_and_examples_are_refused(spec):
    with pytest.raises(ValueError, match="Probe.status"):
        Probe("maybe")
    with pytest.raises(ValueError, match="examples must be a non-negative int"):
        explore(spec, ARGS, None, lambda a, k: Probe("ok"), examples=-1, seed=0)


def test_static_specs_and_zero_examples_probe_nothing(spec):
    static = ShapeSpec.from_export_spec(None, ARGS, None)
    calls = []
    probe = lambda a, k: calls.append(1) or Probe("ok")  # noqa: E731
    assert explore(static, ARGS, None, probe, examples=10, seed=0).stats.tried == 0
    assert explore(spec, ARGS, None, probe, examples=0, seed=0).stats.tried == 0
    assert calls == []


def test_caller_settings_are_merged_with_safe_defaults():
    merged = hypothesis_settings(7, hypothesis.settings(max_examples=100, derandomize=True))
    assert (merged.max_examples, merged.database, merged.deadline, merged.derandomize) == (7, None, None, True)
    assert hypothesis_settings(7, hypothesis.settings(max_examples=3)).max_examples == 7
    assert hypothesis_settings(7).max_examples == 7


def test_an_explicit_example_count_beats_the_profile_which_beats_the_default():
    assert examples_for(5, hypothesis.settings(max_examples=3)) == 5
    assert examples_for(5, hypothesis.settings(max_examples=200)) == 5
    assert examples_for(0, hypothesis.settings(max_examples=200)) == 0
    assert examples_for(None, hypothesis.settings(max_examples=3)) == 3
    assert examples_for(None, hypothesis.settings()) == DEFAULT_EXAMPLES == 10
    assert examples_for(None) == 10


def test_user_factory_drives_the_inputs(spec):
    def factory(shapes: dict, rng) -> tuple[tuple, dict]:
        return tuple(torch.zeros(s) for s in shapes.values()), {}

    seen = []
    result = explore(spec, ARGS, None, lambda a, k: seen.append(a[1].shape[0] - a[0].shape[0]) or Probe("ok"),
                     examples=6, seed=0, inputs=factory)
    assert result.failure is None and seen and set(seen) == {1}


def test_reject_inputs_cover_each_violation_kind_once_first():
    b = Dim("b", min=4, max=9)
    args = (torch.randn(4, 3), torch.randn(5))
    spec = ShapeSpec.from_export_spec(({0: b, 1: 3}, {0: b + 1}), args, None)
    out = reject_inputs(spec, args, None, count=4, seed=0)
    kinds = [label.split(":")[0] for label, _, _ in out]
    assert sorted(kinds) == ["above_max", "below_min", "relation_broken", "static_changed"]
    for label, new_args, _ in out:
        x, y = new_args[0].shape, new_args[1].shape
        if label == "below_min:b":
            assert 2 <= x[0] < 4 and y[0] == x[0] + 1
        elif label == "above_max:b":
            assert x[0] > 9 and y[0] == x[0] + 1
        elif label.startswith("static_changed"):
            assert x[1] != 3 and 4 <= x[0] <= 9
        else:
            assert y[0] != x[0] + 1
    assert len(reject_inputs(spec, args, None, count=50, seed=0)) == 5  # every applicable violation, once
    assert reject_inputs(spec, args, None, count=4, seed=0)[0][0] == out[0][0]  # seeded
