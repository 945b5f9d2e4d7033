"""Dynamic shapes end to end: real exports, drawn shapes, accept/reject guards, shrinking."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore


class SumPlusShifted(torch.nn.Module):
    def forward(self, x, y):
        return x.sum(1) + y[1:]


class SpecializesOnFour(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] == 4:  # export records this branch and guards size == 4
            return x * 2
        return x * 3


class WrongOnOddBatch(torch.nn.Module):
    def forward(self, x):
        out = x * 2
        if getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)():
            out = out + (x.shape[0] % 2)  # only the exported program carries this
        return out


class Tagger(torch.nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, 4)
        self.head = torch.nn.Linear(4, 3)

    def forward(self, ids):
        return self.head(self.emb(ids))


@pytest.mark.parametrize("mode", ["non_strict", "strict"])
def test_derived_dims_pass_accept_and_reject(mode):
    b = Dim("b", min=3, max=32)
    out = exportcore.check(
        SumPlusShifted(), (torch.randn(4, 16), torch.randn(5)), dynamic_shapes={"x": {0: b}, "y": {0: b + 1}},
        mode=mode, examples=6, checks=("numerics", "accept", "reject"),
    )
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.examples.accepted >= 3 and out.examples.discarded == 0
    assert out.examples.rejected >= 4  # below min, above max, static 16 changed, b + 1 broken
    assert out.declared == {"b": "[3, 32]"}


def test_auto_dim_that_specializes_is_caught_by_the_accept_check():
    out = exportcore.check(SpecializesOnFour(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim.AUTO},), examples=6)
    assert out.status == "failed" and out.failure.stage == "guards"
    assert "declared args[0].shape[0]: [0, int_oo]" in out.failure.message
    assert "range_constraints" in out.failure.message
    assert out.counterexample is not None and out.counterexample.shapes == {"args[0]": [2, 3]}


def test_embedding_never_receives_an_out_of_vocabulary_id():
    vocab = 20
    ids = torch.randint(0, vocab, (2, 7))
    ids[0, 0] = vocab - 1
    out = exportcore.check(
        Tagger(vocab), (ids,), dynamic_shapes=({0: Dim("batch", min=2, max=8), 1: Dim("seq", min=2, max=40)},),
        examples=8, checks=("numerics", "accept"),
    )
    assert out.status == "passed", out.failure and out.failure.headline()
    # an id >= vocab makes eager raise, which would show up as a discarded draw
    assert out.examples.tried >= 4 and out.examples.discarded == 0


def test_divergence_on_odd_batches_shrinks_to_the_smallest_odd_size():
    out = exportcore.check(
        WrongOnOddBatch(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("b", min=2, max=64)},),
        examples=25, checks=("numerics",), seed=0,
    )
    assert out.status == "failed" and out.failure.stage == "numerics"
    assert out.counterexample.shapes == {"args[0]": [3, 3]}
    assert "b=3" in out.counterexample.message


@pytest.mark.parametrize("examples", [1, 15])
def test_export_runs_once_whatever_the_example_count(monkeypatch, examples):
    calls = []
    real = torch.export.export

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.export, "export", counting)
    out = exportcore.check(
        SumPlusShifted(), (torch.randn(4, 16), torch.randn(5)),
        dynamic_shapes={"x": {0: Dim("b", min=2, max=32)}, "y": {0: Dim("b", min=2, max=32) + 1}},
        examples=examples, checks=("numerics", "accept"),
    )
    assert out.status == "passed"
    assert out.examples.tried >= min(examples, 5)
    assert len(calls) == 1


class AtMostEight(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 8:  # export keeps the traced branch and narrows the range to it
            return x * 3
        return x * 2


def test_range_constraints_are_keyed_by_the_users_dim_names_with_torchs_symbols_aside():
    b = Dim("batch", min=3, max=32)
    out = exportcore.check(
        SumPlusShifted(), (torch.randn(4, 16), torch.randn(5)), dynamic_shapes={"x": {0: b}, "y": {0: b + 1}},
        examples=2, checks=("numerics",),
    )
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.range_constraints == {"batch": "[3, 32]", "batch + 1": "[4, 33]"}
    assert set(out.range_symbols) == {"batch"} and out.range_symbols["batch"].startswith("s")
    assert exportcore.Outcome.from_json(out.to_json()).range_symbols == out.range_symbols


def test_a_narrowed_range_is_reported_under_the_declared_name():
    # A named Dim would make torch refuse the export; Dim.DYNAMIC lets it narrow the range silently.
    dynamic = Dim.DYNAMIC(max=16) if callable(Dim.DYNAMIC) else Dim.DYNAMIC  # bounds: torch >= 2.8
    out = exportcore.check(AtMostEight(), (torch.randn(4, 3),), dynamic_shapes=({0: dynamic},),
                           examples=10, mode="non_strict")
    assert out.status == "failed" and out.failure.stage == "guards"
    assert out.range_constraints == {"args[0].shape[0]": "[2, 8]"}
    symbol = out.range_symbols["args[0].shape[0]"]
    assert f"exported range_constraints args[0].shape[0] ({symbol}): [2, 8]" in out.failure.message
