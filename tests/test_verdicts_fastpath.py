"""The eager reference follows the path export traced: nn.TransformerEncoder's fast path is off."""

from __future__ import annotations

import itertools

import pytest
import torch

from exportcore import check
from exportdb.registry import parse_version

# torch 2.6 exports nn.TransformerEncoder's nested-tensor fast path and cannot load the program back
# (SerializeError on aten._nested_tensor_from_mask_left_aligned); 2.7 loads it (measured on 2.6, 2.7, 2.8).
NESTED_LOADS = parse_version(torch.__version__) >= (2, 7)


def _encoder() -> torch.nn.Module:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
    return torch.nn.TransformerEncoder(layer, 2).eval()


def _inputs() -> tuple[tuple, dict]:
    mask = torch.zeros(2, 5, dtype=torch.bool)
    mask[0, 3:] = True  # padded positions: the fast path returns zeros there, the traced path does not
    return (torch.randn(2, 5, 8),), {"src_key_padding_mask": mask}


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_transformer_encoder_with_padding_mask_passes(mode):
    args, kwargs = _inputs()
    with torch.no_grad():  # the premise: under no_grad eager itself takes the fast path and differs
        fast = _encoder()(*args, **kwargs)
    assert torch.all(fast[0, 3:] == 0)
    outcome = check(_encoder(), args, kwargs, mode=mode, examples=0)
    if not NESTED_LOADS:  # a true failure: torch 2.6 itself cannot load what it exported
        assert (outcome.status, outcome.failure.stage) == ("failed", "serialize"), outcome.failure
        assert "_nested_tensor_from_mask_left_aligned" in outcome.failure.message
    else:
        assert outcome.status == "passed", outcome.failure
    assert torch.backends.mha.get_fastpath_enabled()  # the user's setting is back


class ScaledEncoder(torch.nn.Module):
    """The encoder times a Python global: a real mismatch the traced path must not hide."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = _encoder()
        self.counter = itertools.count(1)

    def forward(self, x: torch.Tensor, src_key_padding_mask: torch.Tensor) -> torch.Tensor:
        return self.enc(x, src_key_padding_mask=src_key_padding_mask) * next(self.counter)


@pytest.mark.skipif(not NESTED_LOADS, reason="torch 2.6 cannot load an exported TransformerEncoder back "
                    "(_nested_tensor_from_mask_left_aligned): the serialize stage fails before numerics run")
def test_a_real_mismatch_behind_an_encoder_still_fails():
    args, kwargs = _inputs()
    outcome = check(ScaledEncoder().eval(), args, kwargs, mode="non_strict", examples=0)
    assert outcome.status == "failed"
    assert outcome.failure.category == "numerics"
