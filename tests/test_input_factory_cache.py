"""An ``inputs=`` factory is proven the same across sessions by its code and what it builds, or nothing is served."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
from sessions import served, write_module

# Rows past 16 come from a helper the examples' 8 rows never reach: only the drawn shapes call it.
FACTORY = '''
import torch

LOW = {low}


def long_rows(n):
    return torch.arange(n * 3, dtype=torch.float32).reshape(n, 3) / n * {factor}


class Doubled(torch.nn.Module):
    def forward(self, x):
        return (x * 2).relu()


def make(scale, table=None):
    def inputs(shapes, rng):
        n = shapes["args[0]"][0]
        if n > 40 and table is not None:
            return (table[:n],), {{}}
        if n > 16:
            return (long_rows(n),), {{}}
        return (torch.randn(n, 3) * {code} + LOW,), {{}}  # torch's global generator, seeded per case
    return inputs
'''
SPEC = {"x": {0: Dim("n", min=2, max=64)}}


def session(cache: ResultCache, path: Path, inputs_of=None, *, low: str = "0.0", factor: str = "1.0",
            code: str = "scale", scale: float = 1.0):
    """One session: the factory's module as the user left it, imported afresh; in a session of its own."""
    module = write_module(path, FACTORY.format(low=low, factor=factor, code=code), "pte_factory_model")
    inputs = (inputs_of or (lambda m: m.make(scale)))(module)
    example = (torch.randn(8, 3, generator=torch.Generator().manual_seed(0)),)
    outcome = exportcore.check(module.Doubled(), example, dynamic_shapes=SPEC, mode="strict", case_id="case",
                               session=EngineSession(cache), inputs=inputs)
    assert outcome.status == "passed", outcome.failure
    return outcome


@pytest.fixture
def warm(tmp_path):
    cache, path = ResultCache(tmp_path / "cache"), tmp_path / "factory_model.py"
    cold = session(cache, path)
    assert not served(cold) and cold.examples.accepted > 0
    again = session(cache, path)  # the same source in a new module object: a later session
    assert served(again) and again.examples == cold.examples
    return cache, path


@pytest.mark.parametrize("edit", [
    {"scale": 2.0}, {"low": "1.0"}, {"code": "scale * 1.5"}, {"factor": "2.0"},
], ids=["a closure value", "a module constant it reads", "its code", "a helper only drawn shapes reach"])
def test_an_edited_factory_is_checked_again(warm, edit) -> None:
    cache, path = warm
    edited = session(cache, path, **edit)
    assert not served(edited)
    assert {"run", "decompose", "serialize"} <= set(edited.timings)


def test_a_tensor_the_factory_holds_is_part_of_it_by_value(tmp_path) -> None:
    # Read only past 40 rows: neither the examples' inputs nor the code show an edit to its values.
    cache, path = ResultCache(tmp_path / "cache"), tmp_path / "factory_model.py"
    table = torch.linspace(-1, 1, 64 * 3).reshape(64, 3)
    assert not served(session(cache, path, lambda m: m.make(1.0, table)))
    assert served(session(cache, path, lambda m: m.make(1.0, table.clone())))
    assert not served(session(cache, path, lambda m: m.make(1.0, table * 2)))


def test_a_partial_or_callable_object_is_never_served(warm) -> None:
    cache, path = warm
    partial = session(cache, path, lambda m: functools.partial(m.make(1.0)))
    assert not served(partial)
    assert not served(session(cache, path, lambda m: functools.partial(m.make(1.0))))


class Relu(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.relu()


def test_the_identitys_call_changes_nothing_the_check_draws(tmp_path) -> None:
    # The factory is called once at the examples' shapes to prove it the same; the drawn shapes after
    # it must see the very inputs a run without the cache sees (its RNG is set aside).
    built: list[list[float]] = [[], []]

    def make(into):
        def inputs(shapes, rng):
            x = torch.randn(*shapes["args[0]"])
            into.append(round(float(x.sum()), 4))
            return (x,), {}
        return inputs

    example = (torch.randn(8, 3, generator=torch.Generator().manual_seed(0)),)
    for into, cache in zip(built, (None, ResultCache(tmp_path))):
        torch.manual_seed(7)
        outcome = exportcore.check(Relu(), example, dynamic_shapes=SPEC, mode="non_strict", case_id="case",
                                   session=EngineSession(cache), inputs=make(into))
        assert outcome.status == "passed"
    without, with_cache = built
    assert len(with_cache) == len(without) + 1  # one call more: the identity's, at the examples' shapes
    assert with_cache[1:] == without
