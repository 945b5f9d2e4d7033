"""Sizes 0 and 1 inside a declared range are checked: torch traces around them (0/1 specialization).

``Dim("b", max=8)`` exports the range [0, 8], but torch traces assuming b >= 2 and adds no guard:
a branch on ``b == 1`` is baked in as not taken, and a decomposition may not handle an empty dim.
The drawn shapes start at 2, so before these checks such programs passed while computing the
wrong answer at batch 1 (bare torch: ep.module() returns the other branch's result).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402


class OneRowBranch(torch.nn.Module):
    """What a squeeze-when-single or a batch-of-one fast path does: another result at size 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] == 1 else x * 3


class InstanceNormed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.instance_norm(x) + x.sum(0, keepdim=True)


@pytest.mark.parametrize("mode", ["strict", "non_strict", "training"])
def test_a_program_wrong_at_size_one_of_its_range_fails_there(mode: str) -> None:
    x = torch.randn(4, 3)
    ep = torch.export.export(OneRowBranch(), (x,), dynamic_shapes=({0: Dim("b", max=8)},), strict=mode == "strict")
    one = torch.ones(1, 3)
    assert not torch.equal(ep.module()(one), OneRowBranch()(one))  # bare torch: the other branch, unguarded
    outcome = exportcore.check(OneRowBranch(), (x,), mode=mode, dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "failed" and outcome.failure.stage in ("numerics", "training"), outcome.failure
    assert outcome.counterexample.shapes == {"args[0]": [1, 3]}
    assert "b=1 is inside the exported range [0, 8]" in outcome.failure.hint and "min=2" in outcome.failure.hint
    # declared from 2, the range leaves 1 out: not checked there, and torch's missing guard is a finding
    narrowed = exportcore.check(OneRowBranch(), (x,), mode=mode, dynamic_shapes=({0: Dim("b", min=2, max=8)},))
    assert narrowed.status == "passed", narrowed.failure
    assert any(f.kind == "size01_accepted" for f in narrowed.findings)


def test_a_decomposed_program_that_cannot_take_an_empty_batch_fails_at_size_zero() -> None:
    x = torch.randn(4, 3, 5)
    outcome = exportcore.check(InstanceNormed(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "failed", outcome.failure
    assert outcome.failure.message.startswith("decomposed program raised"), outcome.failure
    assert outcome.counterexample.shapes == {"args[0]": [0, 3, 5]} and "min=1" in outcome.failure.hint
    fine = exportcore.check(InstanceNormed(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", min=1, max=8)},))
    assert fine.status == "passed", fine.failure


def test_a_size_eager_itself_refuses_is_noted_not_held_against_the_program() -> None:
    bn = torch.nn.BatchNorm1d(3)  # training: one row has no variance, eager raises
    outcome = exportcore.check(bn, (torch.randn(4, 3),), mode="training", dynamic_shapes=({0: Dim("b", min=1, max=8)},))
    assert outcome.status == "passed", outcome.failure
    assert any("size 1 of b" in n and "eager rejects it" in n for n in outcome.notes), outcome.notes


def test_a_model_right_at_sizes_zero_and_one_passes_and_they_ran() -> None:
    seen: list[int] = []

    class Linear(torch.nn.Linear):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if not torch.compiler.is_compiling():
                seen.append(x.shape[0])
            return super().forward(x)

    outcome = exportcore.check(Linear(3, 2), (torch.randn(4, 3),), mode="non_strict",
                               dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "passed", outcome.failure
    assert {0, 1} <= set(seen)
