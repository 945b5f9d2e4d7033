"""A derived dim's declared minimum is run as a size: torch may narrow its root and reject it.

A ViT declares H/W as patch multiples from one patch up (``16*p``, ``p`` in [1, 10]). torch 2.15.0
exports ``p`` as [2, 10] without a word, and every program (exported, decomposed, reloaded)
rejects the 16x16 image eager runs. The floor of 2 that keeps sizes 0/1 out of the draws was
applied to the root ``p`` (never a size itself) instead of to the sizes, so 16x16 was never tried
and the zoo's timm/test_vit passed non_strict and training (issue 50, item 8).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402


class PatchEmbed(torch.nn.Module):
    """A ViT's stem: 16x16 patches, then a pooled token sequence."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Conv2d(3, 8, 16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).flatten(2).transpose(1, 2).mean(1)


SEEN: list[int] = []  # eager runs on copies of the model: what it saw is kept outside it


class Doubles(torch.nn.Module):
    def forward(self, y: torch.Tensor) -> torch.Tensor:
        if not torch.compiler.is_compiling():
            SEEN.append(y.shape[1])
        return y * 2


def _patch_spec(p_min: int) -> tuple[dict, ...]:
    p = Dim("p", min=p_min, max=10)
    return ({0: Dim("batch", min=2, max=8), 2: 16 * p, 3: 16 * p},)


@pytest.mark.parametrize("mode", ["strict", "non_strict", "training"])
def test_a_program_rejecting_a_derived_dims_declared_minimum_fails_guards(mode: str) -> None:
    torch.manual_seed(0)
    model, x = PatchEmbed(), torch.randn(2, 3, 64, 64)
    # bare torch: p is narrowed to [2, 10] and the one-patch image eager runs is refused
    ep = torch.export.export(model.train(mode == "training"), (x,), dynamic_shapes=_patch_spec(1),
                             strict=mode == "strict")
    one_patch = torch.randn(2, 3, 16, 16)
    model(one_patch)
    outcome = exportcore.check(model, (x,), mode=mode, dynamic_shapes=_patch_spec(1))
    try:
        ep.module()(one_patch)
    except Exception as exc:  # noqa: BLE001 - the program's guard
        assert "Guard failed" in str(exc) or "Expected input" in str(exc), exc
    else:  # torch 2.6 states p >= 2 yet its program takes p = 1: nothing promised is refused
        assert outcome.status == "passed", outcome.failure
        return
    assert outcome.status == "failed", outcome
    assert outcome.failure.stage == "guards", outcome.failure
    assert outcome.counterexample.shapes == {"args[0]": [2, 3, 16, 16]}, outcome.counterexample
    # declared from two patches, as torch exports it: nothing promised is refused
    fine = exportcore.check(model, (x,), mode=mode, dynamic_shapes=_patch_spec(2))
    assert fine.status == "passed", fine.failure


def test_a_derived_dims_declared_minimum_that_the_program_takes_passes_and_ran() -> None:
    d = Dim("d", min=1, max=10)
    # bare torch: d is exported as [2, 10] here too, but nothing guards it: size 2 runs
    ep = torch.export.export(Doubles(), (torch.randn(3, 8),), dynamic_shapes=({1: 2 * d},), strict=False)
    assert torch.equal(ep.module()(torch.ones(3, 2)), torch.full((3, 2), 2.0))
    SEEN.clear()
    # the reject check is left out: y * 2 takes an odd size too (no guard on 2*d), its own matter
    outcome = exportcore.check(Doubles(), (torch.randn(3, 8),), mode="non_strict", dynamic_shapes=({1: 2 * d},),
                               checks=("numerics", "accept"))
    assert outcome.status == "passed", outcome.failure
    assert 2 in SEEN and 20 in SEEN, SEEN  # both declared bounds ran as sizes


TIMM_STYLE = '''
import torch

class PatchEmbed(torch.nn.Module):
    patch_size = (16, 16)

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Conv2d(3, 8, 16, 16)

class TinyViT(torch.nn.Module):
    """What the zoo reads of a timm ViT: pretrained_cfg, dynamic_img_size, patch_embed.patch_size."""

    pretrained_cfg = {"input_size": (3, 64, 64)}
    dynamic_img_size = True

    def __init__(self):
        super().__init__()
        self.patch_embed = PatchEmbed()

    def forward(self, x):
        return self.patch_embed.proj(x).flatten(2).transpose(1, 2).mean(1)

def make():
    return TinyViT()
'''


def test_the_zoo_declares_patch_multiples_from_two_patches_where_torch_keeps_them(pytester: pytest.Pytester) -> None:
    """The zoo's own inference for a timm-style ViT (H/W = 16*p), no timm needed.

    It declared p from 1, a one-patch image torch narrows away (a false pass before the drawn
    shapes ran a derived dim's minimum; a true failure after). It now declares p from 2, the floor
    torch keeps: the one-patch image is no longer promised, so no failure is that refusal.
    """
    import json

    pytester.makepyfile(vit_models=TIMM_STYLE)
    pytester.runpytest_subprocess("--export-model=vit_models:make", "--export-modes=non_strict,training",
                                  "--export-examples=1", "--export-report=r.json", "-p", "no:cacheprovider")
    records = json.loads((pytester.path / "r.json").read_text())["records"]
    assert len(records) == 2
    for record in records:
        outcome = record["outcome"]
        assert outcome["declared"]["patches_h"] == "[2, 4]", outcome["declared"]
        assert (outcome["counterexample"] or {}).get("shapes") != {"args[0]": [2, 3, 16, 16]}
