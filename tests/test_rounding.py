"""Rounding vs. defects when eager is more exact than float32 needs (issue 20 point 11).

CPU kernels such as batch norm accumulate float32 in double, so eager lands within an ulp of a
float64 run, while a decomposed program reduces in float32, in another order. "Program error <= 4x
eager's" then blames rounding. The program is forgiven when it is within the tolerances of the
float64 reference norm-wise and no element is more than 4x its tolerance away, and the outcome
keeps the signal as a ``less_precise`` finding; real defects still fail.

The model below makes the difference deterministic: eager sums in double (as those kernels do),
the traced program sums sequentially in float32 (an accumulation order, nothing else).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch._subclasses.fake_tensor import FakeTensor  # noqa: E402

import exportcore  # noqa: E402
from exportcore.compare import Rounding, compare, compare_with_reference  # noqa: E402

N, OFFSET, SCALE = 4096, 16.0, 0.01


def _inputs() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(8, 10, N) + OFFSET


def _exact(x: torch.Tensor) -> torch.Tensor:
    return (x.double().sum(-1) * SCALE - OFFSET * N * SCALE).to(x.dtype)


def _sequential(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(-1)[..., -1] * SCALE - OFFSET * N * SCALE


class Logits(torch.nn.Module):
    """Logits of about 0.5: eager accumulates in double; the exported program sums in float32."""

    def __init__(self, wrong: float = 0.0) -> None:
        super().__init__()
        self.wrong = wrong

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if isinstance(x, FakeTensor):  # being traced (non-strict): the program's way
            return _sequential(x) * (1 + self.wrong)
        return _exact(x)


def test_float32_accumulation_is_forgiven_and_reported() -> None:
    x = _inputs()
    eager, program, reference = _exact(x), _sequential(x), _exact(x.double())
    plain = compare(eager, program)
    assert plain is not None and plain.kind == "value"  # the plain tolerances fail on some logits
    forgiven: list[Rounding] = []
    assert compare_with_reference(eager, program, reference, forgiven=forgiven) is None
    assert len(forgiven) == 1 and forgiven[0].beyond > 0
    assert forgiven[0].program_error > 4 * forgiven[0].eager_error  # what the 4x-eager rule alone failed


@pytest.mark.parametrize("how", ["one-element", "systematic", "wrong-op"])
def test_real_defects_still_fail(how: str) -> None:
    x = _inputs()
    eager, reference = _exact(x), _exact(x.double())
    wrong = eager.clone()
    if how == "one-element":
        wrong[3, 4] += 6 * (1e-5 + 1e-4 * abs(float(eager[3, 4])))
    elif how == "systematic":
        wrong = wrong * 1.001
    else:
        wrong = (x.double().mean(-1) * SCALE).float()  # mean where the model sums
    found = compare_with_reference(eager, wrong, reference, forgiven=[])
    assert found is not None and found.kind == "value"


def test_plugin_passes_a_less_precise_program_with_a_finding() -> None:
    out = exportcore.check(Logits(), (_inputs(),), mode="non_strict", checks=("numerics",))
    assert out.status == "passed", out.failure
    found = [f for f in out.findings if f.kind == "less_precise"]
    assert len(found) == 1 and found[0].message.startswith("ep.module() is less precise than eager")


def test_plugin_still_fails_a_wrong_program() -> None:
    out = exportcore.check(Logits(wrong=1e-3), (_inputs(),), mode="non_strict", checks=("numerics",))
    assert out.status == "failed" and out.failure.stage == "numerics"


def _cancelling_rows(seed: int = 0) -> torch.Tensor:
    """Rows of 8192 terms of about 1 whose sums are about 1: float32 sums are ~5e-5 off, just past rtol=1e-4."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(256, 8192, generator=gen, dtype=torch.float64)
    x[:, -1] += torch.randn(256, generator=gen, dtype=torch.float64) - x.sum(-1)
    return x.float()


class Sum(torch.nn.Module):
    """Eager sums each row front to back; the exported program back to front (another reduction order)."""

    def __init__(self, wrong: float = 0.0) -> None:
        super().__init__()
        self.wrong = wrong

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if isinstance(x, FakeTensor):
            return x.flip(-1).sum(-1) * (1 + self.wrong)
        return x.sum(-1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_eager_float32_just_past_the_tolerances_of_float64_still_vouches_for_it(seed: int) -> None:
    # Elementwise, eager float32 is not within rtol=1e-4 of the float64 run everywhere (long
    # reductions never are: a conv's weight grad over a batch on CUDA, 1.5% of elements); norm-wise
    # it is, and no element is more than 4x its tolerance away. The float64 run was not trusted then,
    # and a program that only sums in another order failed.
    x = _cancelling_rows(seed)
    eager, program, reference = x.sum(-1), x.flip(-1).sum(-1), x.double().sum(-1)
    assert compare(eager, reference.float()) is not None and compare(eager, program) is not None
    assert compare_with_reference(eager, program, reference) is None
    assert compare_with_reference(eager, program * (1 + 1e-3), reference) is not None


@pytest.mark.parametrize("wrong", [0.0, 1e-3])
def test_plugin_passes_a_sum_in_another_order_and_fails_a_wrong_one(wrong: float) -> None:
    out = exportcore.check(Sum(wrong), (_cancelling_rows(),), mode="non_strict", checks=("numerics",))
    assert out.status == ("failed" if wrong else "passed"), out.failure
