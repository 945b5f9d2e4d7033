"""Attention models are held to their decomposed program's values like any other model.

``aten.scaled_dot_product_attention`` carries torch's ``nondeterministic_seeded`` tag whatever its
``dropout_p``, and decomposition rewrites it into matmul and softmax. Counted as a random op, it
excused every attention model's decomposed program from matching eager's values, with a note saying
it draws random numbers, which it does not: a wrong decomposition of such a model passed. Held to
eager, a correct bfloat16 language model must still pass: its decomposed attention rounds elsewhere
than eager's fused kernel (a logit near zero is as far from float64 as its neighbours; its greedy
token flips at near-ties), and the float64 run judges that as rounding.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore.compare import compare_with_reference  # noqa: E402
from exportcore.programs.random_draws import seeded_ops  # noqa: E402

RANDOM_NOTE = "draws random numbers with other ops"


class Attention(nn.Module):
    def __init__(self, dropout_p: float = 0.0) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.dropout_p = dropout_p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).view(x.shape[0], x.shape[1], 3, 2, 8).permute(2, 0, 3, 1, 4)
        return nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout_p, is_causal=True)


def test_attention_draws_random_numbers_only_with_dropout() -> None:
    x = torch.randn(2, 6, 16)
    quiet = torch.export.export(Attention(0.0), (x,), strict=False)
    dropping = torch.export.export(Attention(0.25).train(), (x,), strict=False)
    assert not seeded_ops(quiet.module())
    assert sum(seeded_ops(dropping.module()).values()) == 1
    model = Attention(0.0)
    state = torch.get_rng_state()
    model(x)
    assert torch.equal(state, torch.get_rng_state())  # what the count says: no draw without dropout


# An op with only a CompositeImplicitAutograd kernel stays in the captured graph; run_decompositions
# lowers it by running that kernel while compiling, where this one computes the wrong thing.
_LIB = torch.library.Library("pte_attention", "DEF")
_LIB.define("halve(Tensor x) -> Tensor")


def _halve(x: torch.Tensor) -> torch.Tensor:
    return x * 0.55 if torch.compiler.is_compiling() else x * 0.5


_LIB.impl("halve", _halve, "CompositeImplicitAutograd")


class WronglyLowered(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.pte_attention.halve(super().forward(x))


@pytest.mark.parametrize("mode", ["non_strict", "training"])
def test_a_wrong_decomposition_of_an_attention_model_fails(mode: str) -> None:
    dims = {"x": {0: Dim("b", min=2, max=8), 1: Dim("t", min=2, max=16)}}
    outcome = exportcore.check(WronglyLowered(), (torch.randn(2, 6, 16),), mode=mode, dynamic_shapes=dims, examples=2)
    assert outcome.status == "failed", outcome.notes
    assert "run_decompositions" in outcome.failure.message, outcome.failure
    assert not [note for note in outcome.notes if RANDOM_NOTE in note]


class TinyLM(nn.Module):
    """One pre-norm transformer block in bfloat16; the logits and the greedy next token."""

    def __init__(self, vocab: int = 64, width: int = 32) -> None:
        super().__init__()
        self.emb, self.ln, self.ln2 = nn.Embedding(vocab, width), nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.o, self.head = nn.Linear(width, 3 * width), nn.Linear(width, width), nn.Linear(width, vocab)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.emb(ids)
        b, t, c = x.shape
        q, k, v = (h.view(b, t, 4, c // 4).transpose(1, 2) for h in self.qkv(self.ln(x)).split(c, -1))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, c))
        logits = self.head(x + self.mlp(self.ln2(x)))
        return logits, logits.argmax(-1)


def test_a_bfloat16_attention_model_passes_its_decomposed_program_on_its_merits() -> None:
    torch.manual_seed(0)
    model, ids = TinyLM().to(torch.bfloat16), torch.randint(0, 64, (2, 8))
    dims = {"ids": {0: Dim("b", min=2, max=8), 1: Dim("t", min=2, max=16)}}
    outcome = exportcore.check(model, (ids,), mode="non_strict", dynamic_shapes=dims)
    assert outcome.status == "passed", outcome.failure
    assert not [note for note in outcome.notes if RANDOM_NOTE in note]


def _tokens(flips_eager: int, flips_program: int, n: int = 200) -> tuple[torch.Tensor, ...]:
    reference = torch.arange(n) % 7
    eager, program = reference.clone(), reference.clone()
    eager[:flips_eager] += 1
    program[n - flips_program:] += 1
    return eager, program, reference


def test_integer_outputs_are_forgiven_only_flips_in_proportion_to_eagers() -> None:
    assert compare_with_reference(*_tokens(3, 12)) is None  # 12 <= 4 * 3
    assert compare_with_reference(*_tokens(3, 13)) is not None
    assert compare_with_reference(*_tokens(0, 1)) is not None  # eager exact: so must the program be
    assert compare_with_reference(*_tokens(40, 40)) is not None  # eager's ints are not float64's: another computation


def test_one_flip_more_only_beside_floats_below_float32() -> None:
    logits = torch.linspace(-1, 1, 10)
    def outputs(flips_eager: int, flips_program: int, dtype: torch.dtype) -> tuple[tuple[torch.Tensor, ...], ...]:
        return tuple((logits.to(dtype), tokens) for tokens in _tokens(flips_eager, flips_program))
    assert compare_with_reference(*outputs(0, 1, torch.bfloat16)) is None  # a near-tie eager happened to hold
    assert compare_with_reference(*outputs(0, 2, torch.bfloat16)) is not None
    assert compare_with_reference(*outputs(3, 13, torch.bfloat16)) is None
    assert compare_with_reference(*outputs(0, 1, torch.float32)) is not None


def test_integer_buffers_and_grads_are_never_forgiven() -> None:
    eager, program, reference = ({"running": torch.ones(4, dtype=torch.bfloat16), "num_batches_tracked": torch.tensor(n)}
                                 for n in (3, 2, 3))
    for part in ("buffers", "grads"):
        assert compare_with_reference(eager, program, reference, path=part) is not None
