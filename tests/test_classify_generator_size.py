"""torch.rand(..., generator=) at a dynamic size, non-strict: the hint names the generator, not a custom op (issue 50, item 16).

torch has no symbolic-size kernel for the generator overloads of the random factories; the fake-tensor
rule read the failure as a custom op's wrong fake kernel ("check torch.library.register_fake") and
linked the custom-op ExportDB case. The truth, in each test: bare torch.export.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore

SPEC = {"x": {0: Dim("b", min=2, max=8)}}
X = torch.randn(4, 3)


class NoiseAtInputSize(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x):
        return x + torch.rand(x.shape, generator=self.gen)


class NoiseSliced(NoiseAtInputSize):
    """The hint's rewrite: draw at the largest declared size, slice to the dynamic one."""

    def forward(self, x):
        return x + torch.rand((8, x.shape[1]), generator=self.gen)[: x.shape[0]]


def test_a_generator_draw_at_a_dynamic_size_gets_the_generator_hint():
    try:
        torch.export.export(NoiseAtInputSize(), (X,), dynamic_shapes=SPEC, strict=False)
    except NotImplementedError as exc:  # torch 2.6: a generator the model holds is refused at any size
        pytest.skip(f"this torch refuses the generator itself, whatever the size: {exc}")
    except RuntimeError as exc:  # the truth: no kernel for a symbolic size with a generator
        assert "symbolic" in str(exc).lower()
    else:
        pytest.skip("this torch draws from a generator at a symbolic size")
    out = exportcore.check(NoiseAtInputSize(), (X,), dynamic_shapes=SPEC, mode="non_strict", explain="off")
    assert (out.status, out.failure.stage) == ("failed", "capture")
    assert out.failure.category == "torch.dynamic-shape", out.failure.headline()
    assert "torch.Generator" in out.failure.hint and "slice" in out.failure.hint
    assert "register_fake" not in out.failure.hint and out.failure.exportdb_case != "custom_op_missing_fake"


def test_the_hints_rewrite_exports_and_matches_eager():
    try:
        ep = torch.export.export(NoiseSliced(), (X,), dynamic_shapes=SPEC, strict=False)  # the truth: it exports
    except NotImplementedError as exc:  # torch 2.6: a generator the model holds is refused at any size
        pytest.skip(f"this torch refuses the generator itself, whatever the size: {exc}")
    assert ep.module()(torch.randn(6, 3)).shape == (6, 3)
    out = exportcore.check(NoiseSliced(), (X,), dynamic_shapes=SPEC, mode="non_strict", examples=4)
    assert out.status == "passed", out.failure and out.failure.headline()


def test_a_concrete_size_kernel_without_a_generator_is_not_blamed_on_a_custom_op():
    from exportcore.diagnosis.categories import decide

    exc = RuntimeError("SymIntArrayRef expected to contain only concrete integers that are stored inline. Found"
                       " symbolic SymInt at index 0: s77 in SymIntArrayRef [s77, 3]")
    category, hint, _ = decide(exc, "capture", code="y = some_op(x.shape)")
    assert category == "torch.dynamic-shape" and "generator" not in hint and "register_fake" not in hint
