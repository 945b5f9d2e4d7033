"""The dynamism ledger: each declared dynamic dim's outcome, read off the program and matching bare torch.export.

One reproducer per outcome (dynamic as declared, narrowed, specialized at a declared bound,
related, a failure that names its dim), each checked against what bare ``torch.export`` gives for
the same model and spec in this venv: its ``range_constraints``, its input shapes, or the fix its
constraint violation suggests.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore


class Rows(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1).sum(1)


class AtMost32(torch.nn.Module):
    def forward(self, x):
        torch._check(x.shape[0] <= 32)
        return x * 2


class SpecialAtMax(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.shape[0] == 64 else x


class Sum(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Patches(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Conv2d(3, 4, 16, stride=16)

    def forward(self, x):
        return self.embed(x).flatten(2).transpose(1, 2).softmax(1)


def _dims(outcome) -> dict:
    return {d.name: d for d in outcome.dims}


def _bare(model, args, spec):
    return torch.export.export(model, args, dynamic_shapes=spec, strict=False)


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_a_dim_dynamic_as_declared_says_what_ran(mode: str) -> None:
    spec = {"x": {0: Dim("batch", min=2, max=64)}}
    outcome = exportcore.check(Rows(), (torch.randn(4, 8),), dynamic_shapes=spec, mode=mode)
    assert outcome.status == "passed"
    batch = _dims(outcome)["batch"]
    bare = _bare(Rows(), (torch.randn(4, 8),), spec)
    (vr,) = bare.range_constraints.values()
    assert (batch.kind, batch.exported) == ("dynamic", f"[{vr.lower}, {vr.upper}]")
    assert batch.short() == "batch 2..64 ✓"
    assert "ran 2 and 64" in batch.checked and "out-of-range sizes refused" in batch.checked
    assert batch.where == "args[0] dim 0" and not batch.failed


def test_a_silent_narrowing_under_dim_auto_is_shown_where_the_verdict_passes() -> None:
    # Dim.AUTO lets torch choose: a pass, but the row must not read as "dynamic" when it is 2..32
    spec = {"x": {0: Dim.AUTO}}
    outcome = exportcore.check(AtMost32(), (torch.randn(4, 8),), dynamic_shapes=spec, mode="non_strict")
    (dim,) = outcome.dims
    (vr,) = _bare(AtMost32(), (torch.randn(4, 8),), spec).range_constraints.values()
    assert (dim.kind, dim.exported) == ("narrowed", f"[{vr.lower}, {vr.upper}]") == ("narrowed", "[2, 32]")


def test_a_narrowing_torch_refuses_names_the_range_it_suggests() -> None:
    spec = {"x": {0: Dim("batch", max=64)}}
    outcome = exportcore.check(AtMost32(), (torch.randn(4, 8),), dynamic_shapes=spec, mode="non_strict")
    with pytest.raises(Exception, match=r"batch = Dim\('batch', max=32\)"):
        _bare(AtMost32(), (torch.randn(4, 8),), spec)
    batch = _dims(outcome)["batch"]
    assert outcome.status == "failed" and (batch.kind, batch.exported) == ("narrowed", "[0, 32]")
    assert batch.short() == "batch 0..64 → 0..32 ✗"


def test_a_dim_specialized_at_its_declared_bound() -> None:
    # pytorch#146046: the example at the max, and the model's own test of that size
    spec = {"x": {0: Dim("batch", min=2, max=64)}}
    outcome = exportcore.check(SpecialAtMax(), (torch.randn(64, 8),), dynamic_shapes=spec, mode="non_strict")
    with pytest.raises(Exception, match=r"batch = 64"):
        _bare(SpecialAtMax(), (torch.randn(64, 8),), spec)
    batch = _dims(outcome)["batch"]
    assert outcome.status == "failed" and (batch.kind, batch.exported) == ("specialized", "64")


def test_dims_torch_ties_together_are_related_both_ways() -> None:
    spec = {"x": {0: Dim("a", max=64)}, "y": {0: Dim("b", max=64)}}
    args = (torch.randn(4, 8), torch.randn(4, 8))
    with pytest.raises(Exception, match=r"b = a"):
        _bare(Sum(), args, spec)
    dims = _dims(exportcore.check(Sum(), args, dynamic_shapes=spec, mode="non_strict"))
    assert (dims["b"].kind, dims["b"].exported) == ("related", "= a")
    assert (dims["a"].kind, dims["a"].exported) == ("related", "= b")


def test_a_failure_caused_by_a_dim_names_that_dim() -> None:
    # H = W = 16*p from p = 1: torch keeps p >= 2, so a 16x16 image eager runs is refused
    p = Dim("p", min=1, max=10)
    spec = {"x": {2: 16 * p, 3: 16 * p}}
    outcome = exportcore.check(Patches(), (torch.randn(2, 3, 32, 32),), dynamic_shapes=spec, mode="non_strict")
    bare = _bare(Patches(), (torch.randn(2, 3, 32, 32),), spec)
    (vr,) = [v for k, v in bare.range_constraints.items() if k.is_symbol]  # torch also lists 16*s: [16, 160]
    try:
        bare.module()(torch.randn(2, 3, 16, 16))
        refuses = False
    except Exception:  # noqa: BLE001 - the program's guard
        refuses = True
    dim = _dims(outcome)["p"]
    if not refuses:  # torch 2.6 states p >= 2 yet takes p = 1: nothing refused, nothing narrowed
        assert outcome.status == "passed" and (dim.kind, dim.failed) == ("dynamic", "")
        assert dim.exported.startswith("[1, 10] (torch states [2, 10]") and "ran 1 and 10" in dim.checked
        return
    assert (vr.lower, vr.upper) == (2, 10)
    assert outcome.status == "failed" and outcome.failure.stage == "guards"
    assert (dim.kind, dim.exported) == ("narrowed", "[2, 10]")
    assert dim.failed == "size 16 (p = 1) is declared but the program refuses it"


def test_the_ledger_travels_in_the_outcome_json() -> None:
    outcome = exportcore.check(Rows(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("batch", max=16)}},
                               mode="non_strict", examples=2)
    again = exportcore.Outcome.from_json(outcome.to_json())
    assert again.dims == outcome.dims and again.dims[0].name == "batch"
