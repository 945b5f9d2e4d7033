"""Float32 math below float32 precision (TF32 on CUDA) is not blamed on the program.

On CUDA, cudnn.allow_tf32 is on by default, so a float32 convolution rounds its inputs to TF32 in
eager and in the exported program alike; the two differ by ~1e-3 where their kernels round at other
points (or cudnn's backward sums with atomics), and from float64 by far more (resnet18's conv1 weight
grad on an H200: 1.31 off float64 at values up to 10, both sides). resnet18 failed in training mode
there although its program is correct. A mismatch under reduced precision is now judged on eager and
the program both run again at full float32 precision (exportcore.sandbox.float32_precision, parity).

Without a GPU the same path runs on the CPU through the fp32_precision switches of torch >= 2.9
(mkldnn): the custom kernel below reads its operands as TF32 when the backend allows it, as cuBLAS
does; eager and the traced program call two variants of it that round at other points.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Iterator

import pytest

torch = pytest.importorskip("torch")
from torch._subclasses.fake_tensor import FakeTensor  # noqa: E402

import exportcore  # noqa: E402
from exportcore.sandbox.float32_precision import full_float32, reduced_float32  # noqa: E402


def _tf32(t: torch.Tensor) -> torch.Tensor:
    """``t`` with TF32's 10 mantissa bits (truncated), as a TF32 kernel reads float32."""
    return (t.view(torch.int32) & -8192).view(torch.float32)


def _tf32_nearest(t: torch.Tensor) -> torch.Tensor:
    """``t`` rounded to TF32's 10 mantissa bits (to nearest), as another kernel reads float32."""
    return ((t.view(torch.int32) + 4096) & -8192).view(torch.float32)


def _operands(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(64, 512, generator=gen), torch.randn(512, 64, generator=gen)


def test_reduced_precision_is_read_per_device_and_full_float32_puts_every_switch_back(monkeypatch) -> None:
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    with _quiet():
        assert "torch.backends.cudnn.allow_tf32" in reduced_float32("cuda")
        before = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
                  torch.get_float32_matmul_precision())
        with full_float32():
            assert reduced_float32("cuda") == ()
            assert torch.get_float32_matmul_precision() == "highest"
        assert (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
                torch.get_float32_matmul_precision()) == before
        assert reduced_float32("cpu") == ()


@contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch >= 2.9 warns that allow_tf32 is the legacy API
        yield


_MKLDNN_PRECISION = hasattr(getattr(torch.backends, "mkldnn", None), "matmul") and hasattr(
    torch.backends.mkldnn.matmul, "fp32_precision")


if _MKLDNN_PRECISION:
    @torch.library.custom_op("pytest_export_tests::matmul", mutates_args=())
    def matmul(a: torch.Tensor, b: torch.Tensor, nearest: bool) -> torch.Tensor:
        """A float32 matmul kernel that reads its operands as TF32 when the backend allows it, as cuBLAS does;
        ``nearest``: rounding them and summing in halves (another kernel) instead of truncating."""
        if a.dtype != torch.float32 or torch.backends.mkldnn.matmul.fp32_precision != "tf32":
            return a @ b
        if not nearest:
            return _tf32(a) @ _tf32(b)
        k = a.shape[-1] // 2
        a, b = _tf32_nearest(a), _tf32_nearest(b)
        return a[..., :k] @ b[:k] + a[..., k:] @ b[k:]

    @matmul.register_fake
    def _(a: torch.Tensor, b: torch.Tensor, nearest: bool) -> torch.Tensor:
        return a.new_empty(a.shape[0], b.shape[1])


class Product(torch.nn.Module):
    """Eager calls one kernel; the program, another that rounds to TF32 otherwise (both only when allowed)."""

    def __init__(self, wrong: float = 0.0) -> None:
        super().__init__()
        self.b, self.wrong = torch.nn.Parameter(_operands(1)[1]), wrong

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if isinstance(x, FakeTensor):  # being traced: the program calls the other kernel
            return torch.ops.pytest_export_tests.matmul(x, self.b, True) * (1 + self.wrong)
        return torch.ops.pytest_export_tests.matmul(x, self.b, False)


@pytest.mark.skipif(not _MKLDNN_PRECISION, reason="this torch has no fp32_precision switches (torch < 2.9)")
@pytest.mark.parametrize("wrong", [0.0, 1e-2])
def test_the_check_passes_a_program_as_exact_as_reduced_eager_and_fails_a_wrong_one(wrong) -> None:
    # Set as torch's docs say (the new API alone): torch then refuses get_float32_matmul_precision(),
    # which every check read before anything else and crashed on.
    torch.backends.mkldnn.matmul.fp32_precision = "tf32"
    try:
        assert reduced_float32("cpu")
        x = _operands(2)[0]
        out = exportcore.check(Product(wrong), (x,), mode="non_strict", checks=("numerics",))
        after = torch.backends.mkldnn.matmul.fp32_precision
    finally:
        torch.backends.mkldnn.matmul.fp32_precision = "none"
    if wrong:
        assert out.status == "failed" and out.failure.stage == "numerics", out.failure
    else:
        assert out.status == "passed", out.failure
        assert any("below float32 precision" in note and "mkldnn" in note for note in out.notes), out.notes
    assert after == "tf32"  # the check put the user's switch back


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU: TF32 is a CUDA kernel's precision")
def test_resnet18_trains_on_cuda_under_tf32_without_blame() -> None:
    torchvision = pytest.importorskip("torchvision")
    with _quiet():
        if not reduced_float32("cuda"):
            pytest.skip("TF32 is switched off in this process")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    out = exportcore.check(model, (torch.randn(4, 3, 64, 64),), mode="training", device="cuda", examples=2)
    assert out.status == "passed", out.failure
    print(out.notes)
