"""Output metadata (issue 20 point 5): a program's outputs must have the shapes and dtypes its graph declares.

Real exports of custom ops whose fake kernel lies: eager and the program run the same kernel, so
numerics alone passes them; the graph's output meta["val"] (what AOTInductor/ExecuTorch plan
buffers from) says otherwise.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore.programs.output_meta import contradiction  # noqa: E402

if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op is not available", allow_module_level=True)


@torch.library.custom_op("pytest_export_meta::row_sums", mutates_args=(), schema="(Tensor x) -> Tensor")
def row_sums(x):
    return x.sum(1)


@row_sums.register_fake
def _(x):
    return x.new_empty(x.shape[0], x.shape[0])  # the lie: [n, n] instead of [n]


@torch.library.custom_op("pytest_export_meta::as_double", mutates_args=(), schema="(Tensor x) -> Tensor")
def as_double(x):
    return x * 2


@as_double.register_fake
def _(x):
    return torch.empty_like(x, dtype=torch.float64)  # the lie: float64 where the kernel keeps float32


@torch.library.custom_op("pytest_export_meta::one_more", mutates_args=(), schema="(Tensor x) -> Tensor")
def one_more(x):
    return x.clone()


@one_more.register_fake
def _(x):
    return x.new_empty(x.shape[0] + 1, x.shape[1])  # a symbolic lie: s0 + 1 rows for s0


@torch.library.custom_op("pytest_export_meta::rows_fixed", mutates_args=(), schema="(Tensor x) -> Tensor")
def rows_fixed(x):
    return x.sum(1)


@rows_fixed.register_fake
def _(x):
    return x.new_empty(4)  # right at the example (4 rows) only: it ignores the dynamic dim


@torch.library.custom_op("pytest_export_meta::honest", mutates_args=(), schema="(Tensor x) -> Tensor")
def honest(x):
    return x.sum(1)


@honest.register_fake
def _(x):
    return x.new_empty(x.shape[0])


class Calls(torch.nn.Module):
    def __init__(self, op) -> None:
        super().__init__()
        self.op = op

    def forward(self, x):
        return {"out": self.op(x), "twice": x * 2}


@pytest.mark.parametrize("mode", ["strict", "non_strict", "training"])
def test_fake_kernel_shape_lie_fails_naming_the_node(mode: str) -> None:
    out = exportcore.check(Calls(row_sums), (torch.randn(4, 4),), mode=mode)
    assert out.status == "failed"
    failure = out.failure
    assert (failure.stage, failure.category, failure.exc_type) == ("run", "torch.operator", "OutputMetadataMismatch")
    assert "output['out']" in failure.message and "row_sums" in failure.message
    assert "declares shape [4, 4], the program returned [4]" in failure.message
    assert "fake kernel" in failure.hint
    assert failure.exportdb_case == "custom_op_wrong_fake_shape"


def test_fake_kernel_dtype_lie_fails() -> None:
    out = exportcore.check(Calls(as_double), (torch.randn(3, 2),), mode="non_strict")
    assert out.failure is not None and out.failure.exc_type == "OutputMetadataMismatch"
    assert "declares dtype torch.float64, the program returned torch.float32" in out.failure.message


def test_symbolic_sizes_are_evaluated_against_the_inputs() -> None:
    out = exportcore.check(Calls(one_more), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}},
                           mode="non_strict")
    assert out.failure is not None and out.failure.exc_type == "OutputMetadataMismatch"
    assert "declares shape [5, 3], the program returned [4, 3]" in out.failure.message


def test_a_fake_kernel_right_only_at_the_example_fails_on_a_drawn_shape() -> None:
    out = exportcore.check(Calls(rows_fixed), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}},
                           mode="non_strict", examples=4)
    failure = out.failure
    assert failure is not None and (failure.stage, failure.category) == ("run", "torch.operator")
    assert failure.exc_type == "OutputMetadataMismatch" and "declares shape [4]" in failure.message
    assert "minimal failing shapes" in failure.message


def test_honest_fake_kernel_passes_on_every_drawn_shape() -> None:
    out = exportcore.check(Calls(honest), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}},
                           mode="non_strict", examples=4)
    assert out.status == "passed", out.failure


def test_contradiction_binds_symbols_to_the_call_inputs() -> None:
    ep = torch.export.export(Calls(one_more), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}})
    program = ep.module()
    x = torch.randn(6, 3)
    found = contradiction(program, (x,), {}, program(x))
    assert found is not None and "declares shape [7, 3], the program returned [6, 3]" in found
    honest_ep = torch.export.export(Calls(honest), (torch.randn(4, 3),))
    module = honest_ep.module()
    assert contradiction(module, (torch.randn(4, 3),), {}, module(torch.randn(4, 3))) is None


class Halves:
    """An output type registered without ``flatten_with_keys_fn``: export accepts it, key paths do not exist."""

    def __init__(self, low, high):
        self.low, self.high = low, high


torch.utils._pytree.register_pytree_node(
    Halves, lambda h: ([h.low, h.high], None), lambda values, context: Halves(*values),
    serialized_type_name="test_output_meta.Halves",
)


class Split(torch.nn.Module):
    def forward(self, x):
        return Halves(x * 2, x + 1)


def test_an_output_type_without_key_paths_is_checked_by_position_not_an_error() -> None:
    # key paths were required here, and their absence raised out of check(): an error verdict on a
    # model that exports and matches eager
    out = exportcore.check(Split(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}},
                           mode="non_strict", examples=3)
    assert out.status == "passed", out.failure
