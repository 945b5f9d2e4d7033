"""Fuzz the dynamic-shape parser: any spec, any inputs, any model -> a ShapeSpec or ValueError/TypeError."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

from exportcore.shapes import ShapeSpec  # noqa: E402

# derandomize: the same examples every run, so a failure here is never a flake.
FUZZ = settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

_A, _B, _C = Dim("a"), Dim("b", min=2, max=8), Dim("c", min=0, max=3)
ROOTS = [_A, _B, _C, Dim("e", min=4), Dim("f", max=5), Dim("b", min=3, max=9)]  # the last clashes with _B
DERIVED = [_B * 2, _B + 1, 2 * _B - 1, _C - 5, _A * 3, _B - 1]
HINTS = [Dim.AUTO, Dim.DYNAMIC, Dim.STATIC]
JUNK = st.none() | st.booleans() | st.integers(-3, 12) | st.floats(allow_nan=True) | st.text(max_size=3)
GOOD_DIMS = st.sampled_from(ROOTS + DERIVED + HINTS + [None])
DIMS = GOOD_DIMS | st.integers(-1, 9) | JUNK


def f1(x):
    return x


def f2(x, y):
    return x


def f3(x, y=None, *rest, **extra):
    return x


class Module(torch.nn.Module):
    def forward(self, x, y=None):
        return x


MODELS = st.sampled_from([f1, f2, f3, Module(), None, len, 5])

TENSORS = st.lists(st.integers(0, 9), max_size=3).map(lambda shape: torch.zeros(shape))
LEAVES = TENSORS | st.integers(-2, 5) | st.none() | st.text(max_size=2)
INPUTS = st.recursive(
    LEAVES, lambda c: st.lists(c, max_size=2) | st.dictionaries(st.sampled_from("xyz"), c, max_size=2), max_leaves=4
)
ARGS = st.lists(INPUTS, max_size=3).map(tuple)
KWARGS = st.none() | st.dictionaries(st.sampled_from(["y", "z", "extra"]), INPUTS, max_size=2)


def _aligned(value: Any, dims: st.SearchStrategy[Any] = DIMS) -> st.SearchStrategy[Any]:
    """A spec shaped like ``value`` (so the parser gets past the top level), with random dims inside."""
    if isinstance(value, torch.Tensor):
        axes = st.integers(0, max(value.dim() - 1, 0)) | st.integers(-1, value.dim() + 1)
        return st.dictionaries(axes, dims, max_size=3) | st.lists(dims, min_size=value.dim(),
                                                                  max_size=value.dim()).map(tuple) | st.none()
    if isinstance(value, (list, tuple)):
        return st.tuples(*(_aligned(v, dims) for v in value)).map(type(value) if isinstance(value, list) else tuple)
    if isinstance(value, dict):
        return st.fixed_dictionaries({k: _aligned(v, dims) for k, v in value.items()})
    return st.none() | dims


SPECS = st.recursive(st.none() | DIMS, lambda c: st.lists(c, max_size=3) | st.lists(c, max_size=3).map(tuple)
                     | st.dictionaries(st.sampled_from(["x", "y", "z", 0, 1]) | JUNK, c, max_size=3), max_leaves=8)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Any, tuple, Any, Any]:
    args, kwargs, model = draw(ARGS), draw(KWARGS), draw(MODELS)
    aligned = st.tuples(*(_aligned(a) for a in args))
    plausible = st.tuples(*(_aligned(a, GOOD_DIMS) for a in args))
    spec = draw(SPECS | aligned | aligned.map(list) | plausible | plausible | st.just(None))
    return spec, args, kwargs, model


@st.composite
def plausible_cases(draw: st.DrawFn) -> tuple[Any, tuple, Any, Any]:
    """Mostly well-formed cases, so that the deeper rules (ranges, derived dims, clashes) are reached."""
    model = draw(st.sampled_from([f1, f3, Module()]))
    tensor = st.lists(st.integers(0, 12), min_size=1, max_size=3).map(lambda shape: torch.zeros(shape))
    args = (draw(tensor),)
    spec = draw(st.tuples(_aligned(args[0], GOOD_DIMS)) | st.fixed_dictionaries({"x": _aligned(args[0], GOOD_DIMS)}))
    return spec, args, None, model


def _parse(spec: Any, args: Any, kwargs: Any, model: Any) -> ShapeSpec | None:
    try:
        return ShapeSpec.from_export_spec(spec, args, kwargs, model=model)
    except (ValueError, TypeError) as exc:
        assert str(exc), "an error must say what is wrong"
        return None


@FUZZ
@given(cases() | plausible_cases())
def test_any_spec_is_parsed_or_rejected_with_value_or_type_error(case):
    parsed = _parse(*case)
    if parsed is not None:
        for name, dim in parsed.dims.items():
            assert dim.max is None or dim.min <= dim.max, name


@FUZZ
@given(SPECS | DIMS, JUNK | st.lists(JUNK, max_size=2), JUNK)
def test_malformed_arguments_are_rejected_with_value_or_type_error(spec, args, kwargs):
    _parse(spec, args, kwargs, f1)


@FUZZ
@given(plausible_cases())
def test_an_accepted_spec_is_satisfied_by_its_own_example_inputs(case):
    parsed = _parse(*case)
    if parsed is not None:
        assert parsed.violations(parsed.example_assignment()) == []
