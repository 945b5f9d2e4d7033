"""exportcore.diagnosis.classify on the exceptions torch 2.14 really raises, each reproduced with a tiny model."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim, export  # noqa: E402

from exportcore.diagnosis.classify import CATEGORIES, EAGER_HINT, classify, mismatch_failure, user_source  # noqa: E402
from exportcore.compare import compare  # noqa: E402
from exportcore.outcome import Failure, Outcome  # noqa: E402

HERE = Path(__file__).name
X = torch.randn(4, 3)


def raised(fn: Callable[[], Any]) -> BaseException:
    """Run fn and return what it raised (the test fails if nothing was raised)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - any exception torch raises is the subject under test
        return exc
    raise AssertionError("expected an exception")


def raised_or_older(fn: Callable[[], Any], what: str) -> BaseException:
    """Like raised(), but a torch older than 2.14 that exports ``what`` without error skips the test."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - any exception torch raises is the subject under test
        return exc
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 14):
        pytest.skip(f"torch {torch.__version__} exports {what} without error: nothing to classify")
    raise AssertionError("expected an exception")


def line_of(marker: str) -> int:
    """Return the line number in this file of the line that contains marker."""
    for number, text in enumerate(Path(__file__).read_text().splitlines(), 1):
        if marker in text and "line_of(" not in text:
            return number
    raise LookupError(marker)


# ---- models, one per failure class -------------------------------------------------------------


class DataDependentBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # MARK-branch
            return x + 1
        return x - 1


class ItemBranch(torch.nn.Module):
    def forward(self, x):
        n = x.sum().long().item()
        if n > 2:  # MARK-item
            return x + 1
        return x


class ItemAssert(torch.nn.Module):
    def forward(self, x):
        assert x.sum() > 1000, "too small"  # MARK-assert
        return x


_LOCK = threading.Lock()


class LockContext(torch.nn.Module):
    def forward(self, x):
        with _LOCK:  # MARK-lock
            return x + 1


class OpensFile(torch.nn.Module):
    def forward(self, x):
        with open(__file__):  # MARK-open
            return x + 1


class GraphBreak(torch.nn.Module):
    def forward(self, x):
        torch._dynamo.graph_break()
        return x + 1


class DeepCopy(torch.nn.Module):
    def forward(self, x):
        import copy

        return copy.deepcopy(x) + 1


class ResizesInput(torch.nn.Module):
    def forward(self, x):
        x.resize_(12)  # MARK-resize
        return x + 1


class FixedView(torch.nn.Module):
    def forward(self, x):
        return x.view(4, 3) * 2


class NeedsEven(torch.nn.Module):
    def forward(self, x):
        return x.reshape(2, -1, 3)


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Holder:
    def __init__(self, t):
        self.t = t


class TakesObject(torch.nn.Module):
    def forward(self, o):
        return o.t + 1


class CondAliases(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x[:2], lambda x: x[2:] * 2, (x,))


class BrokenEager(torch.nn.Module):
    def forward(self, x):
        return x @ torch.ones(5, 5)  # MARK-eager


class UserAssert(torch.nn.Module):
    def forward(self, x):
        assert x.dim() == 3, "expects a 3-d input"  # MARK-userassert
        return x


torch.library.define("pte_classify::nofake", "(Tensor x) -> Tensor")
torch.library.impl("pte_classify::nofake", "CPU")(lambda x: x * 2)


@torch.library.custom_op("pte_classify::nofake2", mutates_args=())
def nofake2(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@torch.library.custom_op("pte_classify::badfake", mutates_args=())
def badfake(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@badfake.register_fake
def _(x):
    return x.new_empty(x.shape[0] + 1, x.shape[1])  # wrong on purpose: one row too many


class NoFakeLibrary(torch.nn.Module):
    def forward(self, x):
        return torch.ops.pte_classify.nofake(x) + 1


class NoFakeCustomOp(torch.nn.Module):
    def forward(self, x):
        return nofake2(x) + x


class BadFake(torch.nn.Module):
    def forward(self, x):
        return badfake(x) + x


# ---- data-dependent ----------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_branch_on_tensor_value_is_data_dependent_with_torch_cond_hint(strict):
    failure = classify(raised(lambda: export(DataDependentBranch(), (X,), strict=strict)), "capture")
    assert (failure.stage, failure.category) == ("capture", "data-dependent")
    assert "torch.cond" in failure.hint
    assert failure.source is not None and failure.source.file.endswith(HERE)
    assert failure.source.line == line_of("MARK-branch")
    assert "if x.sum() > 0" in failure.source.code
    # torch 2.6-2.8 raise UserError(DYNAMIC_CONTROL_FLOW) in strict
    assert failure.exc_type in (("Unsupported", "UserError(DYNAMIC_CONTROL_FLOW)") if strict
                                else ("GuardOnDataDependentSymNode",))


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_branch_on_item_value_is_data_dependent(strict):
    exc = raised(lambda: export(ItemBranch(), (X,), strict=strict))
    failure = classify(exc, "capture")
    assert failure.category == "data-dependent"
    assert failure.exc_type == ("UserError(ANTI_PATTERN)" if strict else "GuardOnDataDependentSymNode")
    assert "u0 > 2" in failure.message
    assert failure.source is not None and failure.source.line == line_of("MARK-item")
    assert "torch.cond" in failure.hint


def test_assert_on_tensor_value_in_non_strict_hints_torch_check():
    failure = classify(raised(lambda: export(ItemAssert(), (X,), strict=False)), "capture")
    assert failure.category == "data-dependent"
    assert "torch._check" in failure.hint
    assert failure.source is not None and failure.source.line == line_of("MARK-assert")


# ---- strict-mode graph breaks ------------------------------------------------------------------


def test_unsupported_context_manager_in_strict():
    failure = classify(raised(lambda: export(LockContext(), (X,), strict=True)), "capture")
    assert failure.category == "python.context-manager"
    assert "strict=False" in failure.hint
    assert failure.message.startswith(("Unsupported context manager", "BEFORE_WITH"))  # the latter: torch 2.6
    assert failure.source is not None and failure.source.line == line_of("MARK-lock")


def test_builtin_call_in_strict_names_the_builtin():
    failure = classify(raised(lambda: export(OpensFile(), (X,), strict=True)), "capture")
    assert failure.category == "python.builtin"
    assert "`open`" in failure.hint
    assert failure.source is not None and failure.source.line == line_of("MARK-open")


def test_explicit_graph_break_is_an_escape_hatch():
    failure = classify(raised(lambda: export(GraphBreak(), (X,), strict=True)), "capture")
    assert failure.category == "torch.escape-hatch"
    assert "graph_break" in failure.hint


def test_deepcopy_in_strict_is_standard_library():
    failure = classify(raised(lambda: export(DeepCopy(), (X,), strict=True)), "capture")
    assert failure.category == "python.standard-library"
    assert "`copy`" in failure.hint  # dynamo gave up inside copy.py


class PythonRandom(torch.nn.Module):
    def forward(self, x):
        import random

        return x * random.random()


def test_python_random_in_strict_is_standard_library():
    failure = classify(raised(lambda: export(PythonRandom(), (X,), strict=True)), "capture")
    assert failure.category == "python.standard-library"
    assert "torch.rand" in failure.hint


def test_deepcopy_in_non_strict_is_standard_library():
    failure = classify(raised_or_older(lambda: export(DeepCopy(), (X,), strict=False), "deepcopy in non-strict"),
                       "capture")
    assert failure.category == "python.standard-library"
    assert "clone()" in failure.hint


def _time(x):
    import time

    return x * time.time()


def _log(x):
    import logging

    logging.getLogger("pte").debug("tracing")
    return x * 2


def _pid(x):
    import os

    return x * (os.getpid() % 2)


@pytest.mark.filterwarnings("ignore:Dynamo does not know how to trace")
@pytest.mark.parametrize(
    ("body", "category", "hint_says"),
    [
        (_time, "python.standard-library", "`time.time`"),
        (_log, "python.standard-library", "standard library"),
        (_pid, "python.standard-library", "`posix.getpid`"),
        (lambda x: sorted([x, x + 1], key=lambda t: t.sum())[0], "python.builtin", "torch.sort"),
        (lambda x: x + sum(x.tolist()[0]), "data-dependent", "tolist"),
    ],
    ids=["time", "logging", "os", "sorted", "tolist"],
)
def test_strict_graph_breaks_by_what_was_called(body, category, hint_says):
    class Calls(torch.nn.Module):
        def forward(self, x):
            return body(x)

    failure = classify(raised(lambda: export(Calls(), (X,), strict=True)), "capture")
    assert failure.category == category
    assert hint_says in failure.hint


def test_in_place_metadata_mutation_of_an_input_is_mutation():
    failure = classify(raised(lambda: export(ResizesInput(), (X.clone(),), strict=True)), "capture")
    assert failure.category == "torch.mutation"
    assert "out-of-place" in failure.hint
    assert failure.source is not None and failure.source.line == line_of("MARK-resize")


# ---- dynamic shapes ----------------------------------------------------------------------------


def test_specialized_dim_is_a_constraint_violation_with_torch_fix():
    b = Dim("b", min=2, max=10)
    exc = raised(lambda: export(FixedView(), (X,), dynamic_shapes={"x": {0: b}}))
    failure = classify(exc, "capture")
    assert (failure.stage, failure.category) == ("constraints", "torch.dynamic-shape")
    assert failure.exc_type == "UserError(CONSTRAINT_VIOLATION)"
    assert "Suggested fixes" in failure.detail
    assert failure.hint.startswith("torch suggests b = 4: the model fixes b to 4") and "Dim.STATIC" in failure.hint
    # torch 2.6-2.8: "... because b was inferred to be a constant (4)"
    assert re.search(r"(specialized it|was inferred) to be a constant \(4\)", failure.message)


def test_derived_dim_suggestion_becomes_the_hint():
    b = Dim("b", min=2, max=10)
    failure = classify(raised(lambda: export(NeedsEven(), (X,), dynamic_shapes={"x": {0: b}})), "capture")
    assert failure.stage == "constraints"
    assert "b = 2*_b" in failure.hint and "Dim('_b'" in failure.hint


def test_raw_constraint_violation_error_maps_to_constraints():
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    failure = classify(ConstraintViolationError("Constraints violated (b)!\nSuggested fixes:\n  b = 4\n"), "capture")
    assert (failure.stage, failure.category) == ("constraints", "torch.dynamic-shape")
    assert "b = 4" in failure.hint


def test_dynamic_shapes_not_matching_inputs_is_an_input_error():
    b = Dim("b", min=2, max=10)
    failure = classify(raised(lambda: export(Double(), (X,), dynamic_shapes={"y": {0: b}})), "capture")
    assert (failure.stage, failure.category) == ("input", "torch.dynamic-shape")
    assert failure.exc_type == "UserError(INVALID_INPUT)"
    assert "dynamic_shapes" in failure.hint


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_unregistered_input_class_is_a_data_structure_input_error(strict):
    failure = classify(raised(lambda: export(TakesObject(), (Holder(X),), strict=strict)), "capture")
    assert (failure.stage, failure.category) == ("input", "python.data-structure")
    assert "register_dataclass" in failure.hint


# ---- operators and fake kernels ---------------------------------------------------------------


@pytest.mark.parametrize("model", [NoFakeLibrary, NoFakeCustomOp], ids=["library_define", "custom_op"])
@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_missing_fake_kernel_names_the_op(model, strict):
    failure = classify(raised(lambda: export(model(), (X,), strict=strict)), "capture")
    assert failure.category == "torch.operator"
    assert "register_fake" in failure.hint
    name = "nofake2" if model is NoFakeCustomOp else "nofake"
    assert f'"pte_classify::{name}"' in failure.hint


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_fake_kernel_with_wrong_shape_is_an_operator_failure(strict):
    exc = raised(lambda: export(BadFake(), (X,), strict=strict))
    failure = classify(exc, "capture")
    assert failure.category == "torch.operator"
    assert "register_fake" in failure.hint
    if strict:
        assert failure.exc_type == "TorchRuntimeError"
        # the inner error, not dynamo's generic title (torch 2.6-2.8: "The size of tensor a (5) must match ...")
        assert re.search(r"broadcast|must match the size", failure.message)


def test_torch_cond_branch_returning_an_alias():
    failure = classify(raised_or_older(lambda: export(CondAliases(), (X,), strict=False), "an aliasing cond branch"),
                       "capture")
    assert failure.category == "torch.cond"
    assert "clone()" in failure.hint


class CondShapes(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x.sum(0), lambda x: x * 2, (x,))


def test_torch_cond_branches_with_different_shapes():
    failure = classify(raised(lambda: export(CondShapes(), (X,), strict=False)), "capture")
    assert failure.category == "torch.cond"
    assert "same structure, shapes and dtypes" in failure.hint
    assert re.search(r"expected same dim|same metadata", failure.message)  # the latter: torch 2.6-2.8


class ReturnsObject(torch.nn.Module):
    def forward(self, x):
        return Holder(x)


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_unregistered_output_class_is_a_data_structure_failure(strict):
    failure = classify(raised(lambda: export(ReturnsObject(), (X,), strict=strict)), "capture")
    assert (failure.stage, failure.category) == ("capture", "python.data-structure")
    assert "register_dataclass" in failure.hint


def test_verifier_spec_violation():
    ep = export(Double(), (X,))
    node = next(n for n in ep.graph.nodes if n.op == "call_function")
    node.target = torch.mul  # a Python-level torch function is not export IR
    failure = classify(raised(ep.validate), "decompose")
    assert failure.exc_type == "SpecViolationError"
    assert (failure.stage, failure.category) == ("decompose", "decomposition")
    assert classify(raised(ep.validate), "capture").category == "torch.operator"


# ---- later stages ------------------------------------------------------------------------------


def test_eager_failure_is_the_model_being_broken():
    failure = classify(raised(lambda: BrokenEager()(X)), "eager")
    assert (failure.stage, failure.category, failure.hint) == ("eager", "eager", EAGER_HINT)
    assert failure.source is not None and failure.source.line == line_of("MARK-eager")
    assert "cannot be multiplied" in failure.message


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non_strict"])
def test_user_assert_that_fails_is_python_assert(strict):
    failure = classify(raised(lambda: export(UserAssert(), (X,), strict=strict)), "capture")
    # The whole failure on a miss: on torch 2.8/2.9 this failed only deep in a full -n 2 run.
    assert failure.category == "python.assert", (failure.category, failure.message)
    assert failure.source is not None and failure.source.line == line_of("MARK-userassert")
    if strict:
        # This module's asserts are rewritten by pytest; dynamo then traces into pytest's saferepr.
        assert "PYTEST_DONT_REWRITE" in failure.hint


def test_user_assert_through_a_raising_assertrepr_hook_is_still_python_assert(pytester):
    # Seen on torch 2.8/2.9 deep in a full -n 2 run: dynamo traced the rewritten assert into the
    # plugins' pytest_assertrepr_compare hooks, one raised, and dynamo reported only "Observed
    # exception" with the model's line (no rewrite.py frame in its user stack to recognise).
    pytester.makeconftest(
        "def pytest_assertrepr_compare(config, op, left, right):\n"
        "    return {}['no such key']\n"
    )
    pytester.makepyfile(test_model='''
        import torch
        from exportcore.diagnosis.classify import classify

        class UserAssert(torch.nn.Module):
            def forward(self, x):
                assert x.dim() == 3, "expects a 3-d input"
                return x

        def test_classify_it():
            try:
                torch.export.export(UserAssert(), (torch.randn(4, 3),), strict=True)
            except Exception as exc:
                failure = classify(exc, "capture")
            else:
                raise AssertionError("export should have failed")
            assert failure.category == "python.assert", (failure.category, failure.message)
            assert "PYTEST_DONT_REWRITE" in failure.hint
    ''')
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.fixture(scope="module")
def static_program():
    return export(Double(), (X,))


def test_guard_failure_when_calling_the_exported_module(static_program):
    failure = classify(raised(lambda: static_program.module()(torch.randn(5, 3))), "run")
    assert failure.category == "guards"
    assert re.search(r"`(x\.size\(\)\[0\]|\*args\[0\]\.shape\[0\]) == 4`", failure.hint)  # 2nd: torch 2.6-2.8


def test_calling_with_another_input_structure_is_a_guard_failure(static_program):
    failure = classify(raised(lambda: static_program.module()(X, X)), "run")
    assert failure.category == "guards"


def test_calling_with_another_rank_is_a_guard_failure(static_program):
    failure = classify(raised(lambda: static_program.module()(torch.randn(4))), "run")
    assert failure.category == "guards"
    assert "rank" in failure.hint


def test_load_without_the_custom_op_library_is_serialization():
    lib = torch.library.Library("pte_classify_ser", "FRAGMENT")
    lib.define("op(Tensor x) -> Tensor")
    lib.impl("op", lambda x: x * 2, "CompositeExplicitAutograd")
    torch.library.register_fake("pte_classify_ser::op", lambda x: torch.empty_like(x), lib=lib)

    class UsesOp(torch.nn.Module):
        def forward(self, x):
            return torch.ops.pte_classify_ser.op(x)

    buffer = io.BytesIO()
    torch.export.save(export(UsesOp(), (X,)), buffer)
    lib._destroy()  # as in a process that never imported the library defining the op
    failure = classify(raised(lambda: torch.export.load(io.BytesIO(buffer.getvalue()))), "serialize")
    assert (failure.stage, failure.category) == ("serialize", "serialization")
    assert "custom ops" in failure.hint and "before loading" in failure.hint


def test_load_of_garbage_is_serialization():
    failure = classify(raised(lambda: torch.export.load(io.BytesIO(b"not a zip"))), "serialize")
    assert (failure.stage, failure.category) == ("serialize", "serialization")


def test_failing_decomposition_names_the_op(static_program):
    def boom(*args, **kwargs):
        raise RuntimeError("boom in decomposition")

    table = {torch.ops.aten.mul.Tensor: boom}
    failure = classify(raised(lambda: static_program.run_decompositions(table)), "decompose")
    assert (failure.stage, failure.category) == ("decompose", "decomposition")
    assert "aten.mul.Tensor" in failure.hint


# ---- the Failure itself ------------------------------------------------------------------------


def test_failure_round_trips_through_outcome_json():
    failure = classify(raised(lambda: export(DataDependentBranch(), (X,), strict=False)), "capture")
    outcome = Outcome(case_id="c", mode="non_strict", status="failed", failure=failure)
    assert Outcome.from_json(outcome.to_json()) == outcome
    assert failure.category in CATEGORIES
    assert "\n" not in failure.message and len(failure.message) <= 400
    assert len(failure.detail) <= 4000 + 100
    assert "Traceback" in failure.traceback
    assert failure.headline().startswith("[capture] data-dependent: GuardOnDataDependentSymNode: Could not guard")
    assert "Eq(u0, 1)" in failure.message and "unhinted" not in failure.message


def test_unknown_exception_is_internal_and_keeps_its_message():
    failure = classify(KeyError("weird"), "capture")
    assert failure.category == "internal"
    assert failure.exc_type == "KeyError" and "weird" in failure.message
    assert failure.hint


def test_long_detail_is_trimmed_keeping_the_end():
    text = "first line\n" + "x" * 10000 + "\nSuggested fixes:\n  b = 4\n"
    failure = classify(RuntimeError(text), "capture")
    assert len(failure.detail) < 4100 and failure.detail.endswith("b = 4")


def test_exception_with_a_broken_str_still_classifies():
    class Weird(RuntimeError):
        def __str__(self):
            raise ValueError("no str for you")

    failure = classify(Weird(), "run")
    assert failure.exc_type == "Weird" and failure.message


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="stage"):
        classify(RuntimeError("x"), "compile")
    with pytest.raises(TypeError, match="exc"):
        classify("not an exception", "capture")  # type: ignore[arg-type]


def test_user_source_prefers_torch_message_when_stack_has_only_the_caller():
    exc = raised(lambda: export(LockContext(), (X,), strict=True))
    loc = user_source(exc)
    assert loc is not None and loc.function == "forward" and "with _LOCK" in loc.code


def test_user_source_is_none_without_user_frames():
    assert user_source(RuntimeError("no traceback")) is None


def test_mismatch_failure_names_leaf_and_program():
    expected = {"logits": torch.zeros(3)}
    mismatch = compare(expected, {"logits": torch.tensor([0.0, 1.0, 0.0])})
    assert mismatch is not None
    failure = mismatch_failure(mismatch, program="decomposed")
    assert isinstance(failure, Failure)
    assert (failure.stage, failure.category, failure.exc_type) == ("numerics", "numerics", "ValueMismatch")
    assert failure.message.startswith("decomposed program: output['logits']")
    assert "rtol" in failure.hint


def test_classify_does_not_swallow_keyboard_interrupt_type():
    failure = classify(KeyboardInterrupt(), "run")
    assert failure.exc_type == "KeyboardInterrupt"




class MutatesAttribute(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mem = torch.zeros(3)  # a plain tensor attribute, not a registered buffer

    def forward(self, x):
        self.mem.mul_(0.5).add_(x.detach().mean(0))
        return x + self.mem


def test_a_mutated_tensor_attribute_the_decomposition_refuses_says_register_buffer():
    # torch's own message says so; the generic decomposition hint (keep the op out of the table) did not
    ep = export(MutatesAttribute(), (X,), strict=False)
    failure = classify(raised(ep.run_decompositions), "decompose")
    assert failure.category == "torch.mutation"
    assert "register_buffer" in failure.hint and "decomposition table" not in failure.hint


class Autocast(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.l2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.l1(x).relu()
        return self.l2(h.float())


def test_an_exported_program_that_fails_its_examples_is_not_blamed_on_its_decomposition():
    # strict export of an autocast region asserts float32 on the bfloat16 result: ep.module() raises on
    # the examples, and so does run_decompositions, which ran first and was blamed with its table hint
    import exportcore

    x = torch.randn(3, 8)
    ep = export(Autocast(), (x,), strict=True)
    outcome = exportcore.check(Autocast(), (x,), mode="strict", dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}})
    try:
        ep.module()(x)
    except RuntimeError:
        pass
    else:  # this torch exports it right (2.6)
        assert outcome.status == "passed", outcome.failure
        return
    assert outcome.status == "failed" and outcome.failure.stage == "run", outcome.failure
    assert outcome.failure.message.startswith("exported program failed on the example inputs")
    assert outcome.failure.category == "python.context-manager" and "strict=False" in outcome.failure.hint
    assert exportcore.check(Autocast(), (x,), mode="non_strict").status == "passed"
