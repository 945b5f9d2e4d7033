"""A zoo factory's global settings hold for its own case only (issue 50, item 16).

A factory that calls ``torch.set_default_dtype(torch.float64)`` built every later model in float64:
the build ran outside the isolation that restores global torch state after each case.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

FACTORIES = '''
import torch

class Fill(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(x.shape)  # a default-dtype tensor: float64 only while the factory's setting holds

class FillInFloat64(Fill):
    def forward(self, x):
        if not torch.compiler.is_compiling():  # eager: the factory's setting still holds for its own case
            assert torch.get_default_dtype() is torch.float64, "the factory's float64 was dropped"
        return super().forward(x)

def a_float64():
    torch.set_default_dtype(torch.float64)
    return FillInFloat64(), (torch.randn(3, 4),)

def b_default():
    assert torch.get_default_dtype() is torch.float32, f"leaked: default dtype {torch.get_default_dtype()}"
    return Fill(), (torch.randn(3, 4),)
'''

PLAIN = '''
import torch

def test_after_the_zoo():
    assert torch.get_default_dtype() is torch.float32
'''


def test_a_factorys_default_dtype_does_not_leak_into_later_models(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(dtype_models=FACTORIES, test_plain=PLAIN)
    result = pytester.runpytest_subprocess("--export-model=dtype_models:a_float64",
                                           "--export-model=dtype_models:b_default", "test_plain.py",
                                           "--export-modes=strict,non_strict", "--export-examples=1",
                                           "--export-report=r.json", "-p", "no:cacheprovider", "-p", "no:randomly")
    assert "leaked" not in result.stdout.str(), result.stdout.str()
    records = {r["test"]: r for r in json.loads((pytester.path / "r.json").read_text())["records"]}
    assert {t: r["verdict"] for t, r in records.items()} == {
        f"zoo/dtype_models/{name}[{mode}]": "passed"
        for name in ("a_float64", "b_default") for mode in ("strict", "non_strict")}
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
