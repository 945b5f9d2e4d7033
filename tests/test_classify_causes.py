"""Classification names the real cause (issue 20 point 14), on real exports through exportcore.check.

Each case was misread by a rule that matched a look-alike word: a torch.Generator as a Python
generator, a numpy draw as a dynamic dim, torch's own BatchNorm as the user's .item(), a str output
as a custom op.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import exportcore  # noqa: E402

X = torch.randn(4, 3)


class HeldGenerator(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.randn(x.shape, generator=self.gen)


class NumpyScale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * float(np.random.rand())


class NumpyLength(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[: np.random.randint(1, 4)]


class CumulativeBatchNorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(3, momentum=None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


class ReturnsStr(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, str]:
        return x * 2, "hello"


def failed(model: torch.nn.Module, mode: str, **kw: object) -> exportcore.Outcome:
    out = exportcore.check(model, (X,), mode=mode, explain="off", **kw)
    if out.status != "failed":
        pytest.skip(f"torch {torch.__version__} {mode}: {type(model).__name__} does not fail ({out.status})")
    return out


def test_strict_torch_generator_is_not_a_python_generator() -> None:
    failure = failed(HeldGenerator(), "strict").failure
    assert failure.stage == "capture"
    assert failure.category == "python.object-model"
    assert "torch.Generator" in failure.hint and "iterator" not in failure.hint
    assert failure.exportdb_case is None  # no case shows it; a look-alike link would mislead


def test_non_strict_torch_generator_is_no_fake_kernel_problem() -> None:
    out = exportcore.check(HeldGenerator(), (X,), mode="non_strict", explain="off")
    assert out.failure is None or "fake" not in out.failure.hint


def test_numpy_random_in_strict_is_a_runtime_value_not_a_dynamic_dim() -> None:
    for model in (NumpyScale(), NumpyLength()):
        failure = failed(model, "strict").failure
        assert failure.category == "torch.dynamic-value", failure
        assert "numpy.random" in failure.hint and "declared" not in failure.hint
        assert failure.stage == "capture"


def test_numpy_random_shape_in_non_strict_does_not_ask_for_a_dynamic_dim() -> None:
    np.random.seed(3)  # numpy draws 3, then 1, 2, 1, 1: eager keeps 3 rows, the export bakes another count
    try:
        out = exportcore.check(NumpyLength(), (X,), mode="non_strict", explain="off")
    finally:
        np.random.seed(None)
    assert out.status == "failed"
    failure = out.failure
    assert failure.stage == "numerics"
    assert "declare the dim dynamic" not in failure.hint
    assert "random" in failure.hint


def test_batchnorm_without_momentum_in_training_names_torch_module() -> None:
    failure = failed(CumulativeBatchNorm(), "training").failure
    assert failure.category == "data-dependent"
    assert "momentum" in failure.hint and "batchnorm.py" in failure.hint
    assert "torch._check" not in failure.hint
    assert failure.exportdb_case is None


def test_str_output_fails_save_load_naming_the_output_node() -> None:
    failure = failed(ReturnsStr(), "non_strict").failure
    if failure.stage != "serialize":
        pytest.skip(f"torch {torch.__version__} refuses the str output before save/load ({failure.stage})")
    assert failure.category == "serialization"
    assert "as_string" in failure.message and "as_string" in failure.detail
    assert "str constant" in failure.hint and "custom op" not in failure.hint
    assert "as_string" in failure.traceback  # shown with -vv
