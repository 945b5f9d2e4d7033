"""Tie-aware discrete outputs: an argmax / max(dim) / topk index that flips where eager's own scores tie is a tie
(a note), not a mismatch; a flip to an index whose eager score is beyond the tolerance still fails.

Each model perturbs its logits only while it is traced (``torch.compiler.is_compiling()``), as a decomposition or
another summation order would: bare torch.export's program picks another index than eager in every case below,
so the verdict is the tie rule's alone.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import exportcore  # noqa: E402
from exportcore.compare.ties import DiscreteCall, tie_of  # noqa: E402

# eager's rows: index 0 and 1 tie exactly in row 0, within 1e-6 in row 1; a clear winner in row 2
LOGITS = [[1.0, 1.0, 0.2, 0.1], [2.0, 2.0 - 1e-6, 0.3, 0.0], [0.5, 3.0, 0.1, 0.2]]


class Picks(torch.nn.Module):
    """Returns the logits and their argmax; the traced program adds ``bump`` to column ``col``."""

    def __init__(self, bump: float, col: int = 1, how: str = "argmax") -> None:
        super().__init__()
        self.bump, self.col, self.how = bump, col, how

    def forward(self, x):
        scores = x * 1.0
        if torch.compiler.is_compiling():
            scores = scores + torch.nn.functional.one_hot(torch.tensor(self.col), x.shape[-1]) * self.bump
        if self.how == "max":
            return scores.max(dim=-1).indices
        if self.how == "topk":
            return torch.topk(scores, 2, dim=-1).indices
        return scores.argmax(-1)


def _bare_flips(model: torch.nn.Module, x: torch.Tensor) -> bool:
    ep = torch.export.export(model, (x,), strict=False)
    return not torch.equal(ep.module()(x), model(x))


@pytest.mark.parametrize("how", ["argmax", "max", "topk"])
def test_a_flip_between_tied_scores_is_a_tie_noted_not_a_mismatch(how: str) -> None:
    x = torch.tensor(LOGITS[:2])
    model = Picks(2e-6, how=how)  # below float32's tolerance (1e-5 + 1e-4 * 2): a rounding-sized nudge
    assert _bare_flips(model, x)
    outcome = exportcore.check(model, (x,), mode="non_strict", checks=["numerics"])
    assert outcome.status == "passed", outcome.failure
    ties = [n for n in outcome.notes if n.startswith("tie: ep.module() output ")]
    assert ties and "each a tie" in ties[0], outcome.notes
    worst = next(e for e in outcome.numerics if e.program == "exported")
    assert 0 < worst.worst_fraction <= 1  # measured: the gap's share of the tolerance, not a clean 0


def test_a_flip_to_an_index_eager_scores_well_below_still_fails() -> None:
    x = torch.tensor(LOGITS)
    model = Picks(3.0, col=0)  # the program's row 2 now picks 0, which eager scores 0.5 against 3.0
    assert _bare_flips(model, x)
    outcome = exportcore.check(model, (x,), mode="non_strict", checks=["numerics"])
    assert outcome.status == "failed" and outcome.failure is not None
    assert outcome.failure.category == "numerics" and "output" in outcome.failure.message
    assert not [n for n in outcome.notes if n.startswith("tie: ")]


def test_the_judge_reads_eagers_scores_not_the_programs() -> None:
    # A program whose scores collapsed (every one equal) would call any flip a tie; eager's scores do not.
    eager_scores = torch.tensor([[0.1, 0.9, 0.3]])
    call = DiscreteCall("argmax", eager_scores, -1, False, torch.tensor([1]))
    assert tie_of(call, torch.tensor([1]), torch.tensor([0]), None, None) is None
    close = DiscreteCall("argmax", torch.tensor([[0.9, 0.9 + 5e-6, 0.3]]), -1, False, torch.tensor([1]))
    tie = tie_of(close, torch.tensor([1]), torch.tensor([0]), None, None)
    assert tie is not None and tie.flipped == 1 and tie.fraction <= 1
    # the case's own tolerance decides: tightened to exact, the same flip is a mismatch
    assert tie_of(close, torch.tensor([1]), torch.tensor([0]), 0.0, 0.0) is None
    # an index out of the scores' range is no pick
    assert tie_of(close, torch.tensor([1]), torch.tensor([7]), None, None) is None
