"""End to end: a KV-cache model and a padded TransformerEncoder pass in a real pytest session."""

from __future__ import annotations

from exportdb.registry import installed_torch

TORCH = installed_torch() or (0, 0)
# torch 2.6 cannot load its own export of nn.TransformerEncoder's fast path (fixed in 2.7), and its strict
# export cannot decompose a buffer written from a grad-requiring value (fixed in 2.9): see
# tests/test_verdicts_fastpath.py and tests/test_verdicts_state.py.
NESTED_LOADS = TORCH >= (2, 7)
STRICT_KV = TORCH >= (2, 9)

MODELS = '''
import torch
from torch.export import Dim


class KVCache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(2, 16, 4), persistent=False)
        self.register_buffer("step", torch.zeros((), dtype=torch.long))
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        n = x.shape[1]
        self.k[:, :n] = self.k[:, :n] + self.proj(x)
        self.step.add_(1)
        return self.k.sum(1), self.step.clone()


def kv_case():
    torch.manual_seed(0)
    return KVCache(), (torch.randn(2, 3, 4),)


def encoder_case():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, 2).eval()
    mask = torch.zeros(2, 5, dtype=torch.bool)
    mask[0, 3:] = True
    return model, (torch.randn(2, 5, 8),), {"src_key_padding_mask": mask}
'''


def test_kv_cache_and_counter_pass_every_mode_on_drawn_shapes(project, verdicts):
    project.makepyfile(cachemodels=MODELS, test_kv="""
        import pytest
        from torch.export import Dim
        from cachemodels import kv_case

        @pytest.mark.exportable(dynamic_shapes=({1: Dim("n", min=1, max=15)},), examples=4)
        def test_kv():
            return kv_case()
    """)
    result = project.runpytest("-q")
    if not STRICT_KV:
        result.assert_outcomes(passed=2, failed=1)
        assert verdicts()[("test_kv.py::test_kv", "strict")] == "failed"
        assert "Found a graph input that requires gradients, and received a mutation" in result.stdout.str()
        return
    result.assert_outcomes(passed=3)
    assert set(verdicts().values()) == {"passed"}


def test_transformer_encoder_with_padding_mask_passes(project, verdicts):
    project.makepyfile(cachemodels=MODELS, test_enc="""
        import pytest
        from cachemodels import encoder_case

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_encoder():
            return encoder_case()
    """)
    result = project.runpytest("-q")
    expected = "passed" if NESTED_LOADS else "failed"
    result.assert_outcomes(**{expected: 2})
    assert verdicts() == {("test_enc.py::test_encoder", "strict"): expected,
                          ("test_enc.py::test_encoder", "non_strict"): expected}
    if not NESTED_LOADS:
        assert "_nested_tensor_from_mask_left_aligned" in result.stdout.str()
