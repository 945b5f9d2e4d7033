"""Dynamic shapes end to end: drawn shapes through real exports, accept/reject, shrinking."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

from exportcore import check  # noqa: E402


class PairModel(torch.nn.Module):
    """x: [b, 16], y: [b + 1]."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 1)

    def forward(self, x, y):
        return self.lin(x).squeeze(-1) + y[1:]


class TokenModel(torch.nn.Module):
    def __init__(self, vocab: int = 50) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, 8)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, ids):
        return self.out(self.emb(ids)).mean(dim=1)


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 3.0


def test_derived_dims_pass_accept_and_reject():
    b = Dim("b", min=2, max=32)
    out = check(
        PairModel(), (torch.randn(4, 16), torch.randn(5)), dynamic_shapes={"x": {0: b}, "y": {0: b + 1}},
        mode="non_strict", examples=8,
    )
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.examples.tried >= 4
    assert out.examples.rejected >= 3  # below min, above max, the b+1 relation broken, a static dim changed
    assert out.declared["b"] == "[2, 32]"


def test_embedding_never_sees_out_of_vocabulary_ids():
    seq = Dim("seq", min=2, max=24)
    batch = Dim("batch", min=2, max=8)
    ids = torch.randint(0, 50, (3, 6))
    out = check(
        TokenModel(), (ids,), dynamic_shapes={"ids": {0: batch, 1: seq}}, mode="non_strict", examples=12,
    )
    assert out.status == "passed", out.failure and out.failure.headline()
    # an id >= 50 would make eager raise, and the example would be discarded
    assert out.examples.tried >= 8 and out.examples.discarded == 0


class _OddDiverging(torch.nn.Module):
    """Wraps an exported module so it is wrong exactly for odd batch sizes."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x):
        out = self.inner(x)
        return out + 1.0 if x.shape[0] % 2 else out


def test_divergence_on_odd_batches_is_found_and_shrunk(monkeypatch):
    real_export = torch.export.export

    def export_with_bug(*args, **kwargs):
        ep = real_export(*args, **kwargs)
        module = ep.module
        ep.module = lambda: _OddDiverging(module())  # type: ignore[method-assign]
        return ep

    monkeypatch.setattr(torch.export, "export", export_with_bug)
    out = check(
        Scale(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", min=2, max=40)}}, mode="non_strict",
        examples=25, checks=["numerics", "accept"],
    )
    assert out.status == "failed"
    assert out.failure.stage == "numerics"
    assert out.counterexample is not None
    assert out.counterexample.shapes == {"args[0]": [3, 3]}  # the smallest odd size in [2, 40]
    assert out.counterexample.reproduce


def test_export_happens_once_whatever_the_example_count(monkeypatch):
    calls = []
    real_export = torch.export.export

    def counting(*args, **kwargs):
        calls.append(1)
        return real_export(*args, **kwargs)

    monkeypatch.setattr(torch.export, "export", counting)
    for examples in (0, 1, 15):
        out = check(Scale(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", min=2, max=40)}}, examples=examples)
        assert out.status == "passed"
        assert out.examples.tried <= max(examples, 1)
    assert len(calls) == 3


def test_a_spec_wider_than_the_model_is_reported_as_discards():
    class NeedsEven(torch.nn.Module):
        def forward(self, x):
            return x.view(-1, 2, x.shape[1]).sum(1)

    out = check(
        NeedsEven(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", min=2, max=64)}}, examples=12,
        checks=["numerics"],
    )
    # the export itself constrains b to even values or fails; either way the user is told precisely
    if out.status == "passed":
        assert out.examples.discarded > 0 and out.examples.note
    else:
        assert out.failure.stage in ("capture", "constraints")
