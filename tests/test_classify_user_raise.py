"""A ValueError the model's own forward raises while being exported is the model's, not torch's (issue 50, item 16).

It was classed ``internal`` ("torch or pytest-export failed on its own"), sending the user to report
a bug in torch. The truth, in each test: eager runs, bare torch.export raises what the model raised.
"""

from __future__ import annotations

import pytest
import torch

import exportcore

X = torch.randn(2, 3)


class ChecksExactType(torch.nn.Module):
    def forward(self, x):
        if type(x) is not torch.Tensor:
            raise ValueError(f"expected a plain tensor, got {type(x).__name__}")
        return x * 2


class RefusesExport(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_exporting():
            raise ValueError("this model refuses to be exported")
        return x * 2


class _Validator:
    def check(self, x):
        if type(x) is not torch.Tensor: raise ValueError("bad input type")  # noqa: E701 - the raise on the if's line


class ThroughAHelper(torch.nn.Module):
    def forward(self, x):
        _Validator().check(x)
        return x + 1


CASES = [(ChecksExactType, "non_strict"), (RefusesExport, "non_strict"), (RefusesExport, "strict"),
         (ThroughAHelper, "non_strict")]


@pytest.mark.parametrize(("model", "mode"), CASES, ids=[f"{m.__name__}-{mode}" for m, mode in CASES])
def test_the_models_own_raise_while_traced_is_not_classed_internal(model, mode):
    if model is RefusesExport and not hasattr(torch.compiler, "is_exporting"):
        pytest.skip("torch.compiler.is_exporting is newer")
    model()(X)  # the truth: eager runs
    with pytest.raises(Exception) as bare:
        torch.export.export(model(), (X,), strict=mode == "strict")
    assert "ValueError" in f"{type(bare.value).__name__} {bare.value}"  # and export fails on the model's raise
    out = exportcore.check(model(), (X,), mode=mode, explain="off")
    assert (out.status, out.failure.stage) == ("failed", "capture"), out.failure.headline()
    assert out.failure.category == "python.object-model", out.failure.headline()
    assert out.failure.hint.startswith("The model's own code raised ValueError while being traced")


def test_an_operator_error_from_a_user_line_is_still_not_the_models_raise():
    from exportcore.diagnosis.categories import decide

    try:
        torch.ones(2) + torch.ones(3)
    except RuntimeError as exc:  # raised by the op in C++, though the innermost Python frame is this file
        category, hint, _ = decide(exc, "capture")
    assert not hint.startswith("The model's own code raised")
