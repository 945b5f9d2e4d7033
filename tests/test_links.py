"""exportcore.diagnosis.links: classified failures point at the ExportDB case that shows the fix."""

from __future__ import annotations

from typing import Any

import pytest

import exportcore
from exportcore.diagnosis.links import CATEGORY_FALLBACK, LINKS, linked_names, nearest_case
from exportdb.registry import Pass, all_cases, get


def test_every_linked_name_is_a_case() -> None:
    names = {c.name for c in all_cases()}
    assert linked_names() <= names, linked_names() - names


def test_linked_cases_that_fail_show_a_rewrite() -> None:
    for name in linked_names():
        case = get(name)
        newest = case.expect_on(None)  # rewrites are advice for the newest torch
        assert case.rewrite or all(isinstance(newest[m], Pass) for m in case.modes), name


@pytest.mark.parametrize(
    ("exc_type", "message", "stage", "category", "expected"),
    [
        ("GuardOnDataDependentSymNode", "Could not guard on data-dependent expression Eq(u0, 1).",
         "capture", "data-dependent", "if_on_tensor_value"),
        ("UserError(CONSTRAINT_VIOLATION)", "Constraints violated (b)! You marked b as dynamic but your code "
         "specialized it to be a constant (1). If you're", "constraints", "torch.dynamic-shape",
         "example_size_one_specializes"),
        ("UserError(CONSTRAINT_VIOLATION)", "Constraints violated (ny)! The values of ny = L['y'].size()[0] "
         "and nx = L['x'].size()[0] must always be equal.", "constraints", "torch.dynamic-shape",
         "unrelated_dims_must_be_equal"),
        ("Unsupported", "Unsupported context manager: Dynamo does not know how to enter a `lock`",
         "capture", "python.context-manager", "lock_context_manager"),
        ("SpecViolationError", "Node.meta wrap_with_set_grad_enabled is missing val field.", "serialize",
         "serialization", "set_grad_enabled_false"),
        # a stage filter keeps a message from linking outside the stage it was written for
        ("SpecViolationError", "Node.meta wrap_with_set_grad_enabled is missing val field.", "capture",
         "serialization", None),
        ("ValueError", "something nobody has seen", "capture", "torch.operator", "custom_op_missing_fake"),
        ("ValueError", "something nobody has seen", "capture", "internal", None),
        ("", "", "capture", "", None),
    ],
)
def test_table_lookups(exc_type: str, message: str, stage: str, category: str, expected: str | None) -> None:
    assert nearest_case(exc_type, message, stage, category) == expected


def test_table_is_well_formed() -> None:
    assert all(link.case and isinstance(link.stages, tuple) for link in LINKS)
    assert set(CATEGORY_FALLBACK.values()) <= {c.name for c in all_cases()}


# --- the classic failures, written as a user would, through the real engine -----------------


def _check(model: Any, args: tuple, mode: str, dynamic_shapes: Any = None) -> exportcore.Outcome:
    return exportcore.check(model, args, dynamic_shapes=dynamic_shapes, mode=mode, examples=1,
                            checks=("numerics",))


def _linked(outcome: exportcore.Outcome) -> str | None:
    assert outcome.status == "failed", outcome.status
    assert outcome.failure is not None
    return outcome.failure.exportdb_case


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_branch_on_tensor_value(mode: str) -> None:
    import torch

    class Gate(torch.nn.Module):
        def forward(self, x):
            if x.mean() > 0.5:
                return x * 2
            return x

    assert _linked(_check(Gate(), (torch.randn(2, 3),), mode)) == "if_on_tensor_value"


def test_data_assignment() -> None:
    import torch

    class Reset(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mem", torch.zeros(4))

        def forward(self, x):
            self.mem.data = x.detach() + 1
            return x * 3

    outcome = exportcore.check(Reset(), (torch.randn(4),), mode="strict", examples=1)
    assert _linked(outcome) == "data_attribute_assignment"


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_identity_builtins(mode: str) -> None:
    import torch

    class SameBuffer(torch.nn.Module):
        def forward(self, a, b):
            return a * 2 if a.data_ptr() == b.data_ptr() else a - b

    outcome = _check(SameBuffer(), (torch.randn(3), torch.randn(3)), mode)
    if mode == "non_strict" and outcome.failure is not None and outcome.failure.category == "numerics":
        # torch 2.6 non-strict bakes the comparison's example result into the graph: the export is
        # wrong rather than refused, and the numerics check is what catches it (no message to link).
        assert tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 14), outcome.failure
    else:
        assert _linked(outcome) == "tensor_identity_via_data_ptr"

    class ById(torch.nn.Module):
        def forward(self, a, b):
            return {id(a): a}[id(a)] + b

    # id() itself traces in torch 2.14 (ExportDB's id_builtin case records that).
    assert _check(ById(), (torch.randn(3), torch.randn(3)), mode).status == "passed"


def test_context_manager_under_strict() -> None:
    import threading

    import torch

    class Guarded(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mutex = threading.RLock()

        def forward(self, x):
            with self.mutex:
                return x.relu()

    assert _linked(_check(Guarded(), (torch.randn(3),), "strict")) == "lock_context_manager"
    assert _check(Guarded(), (torch.randn(3),), "non_strict").status == "passed"


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_item_dependent_size(mode: str) -> None:
    import torch

    class Chunker(torch.nn.Module):
        def forward(self, x, size):
            return torch.stack([c.sum() for c in x.split(size.item())])

    assert _linked(_check(Chunker(), (torch.randn(12), torch.tensor(4)), mode)) == "item_dependent_split_count"


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_missing_fake_kernel(mode: str) -> None:
    import torch

    op = _no_fake_op()

    class UsesOp(torch.nn.Module):
        def forward(self, x):
            return op(x).relu()

    assert _linked(_check(UsesOp(), (torch.randn(3),), mode)) == "custom_op_missing_fake"


_OPS: dict[str, Any] = {}


def _no_fake_op() -> Any:
    import torch

    if "op" not in _OPS:  # defining an op twice in one process is an error

        @torch.library.custom_op("linktest::square", mutates_args=(), schema="(Tensor x) -> Tensor")
        def square(x):
            return x * x

        _OPS["op"] = square
    return _OPS["op"]


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_dim_the_code_specializes(mode: str) -> None:
    import torch
    from torch.export import Dim

    class Heads(torch.nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], 4, 3).sum(1)

    outcome = _check(Heads(), (torch.randn(5, 12),), mode, {"x": {1: Dim("features", min=2, max=64)}})
    assert outcome.failure is not None and outcome.failure.stage == "constraints"
    assert _linked(outcome) == "reshape_specializes_dim"
