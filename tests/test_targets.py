"""Targets in the engine: real lowering to ONNX Runtime (and ExecuTorch when installed), the export
cache, devices, and how target failures are classified. AOTInductor runs in
tests/integration/test_option_export_targets.py, where its two compiles are shared by the plugin tests."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore.reuse.session import EngineSession  # noqa: E402
from exportcore.columns import Column  # noqa: E402
from exportcore.targets import unavailable  # noqa: E402
from exportcore.targets.cache import KeptExports  # noqa: E402
from exportcore.targets.failures import target_failure, unsupported_operator  # noqa: E402

BATCH = {"x": {0: Dim("batch", min=2, max=64)}}


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()


@torch.library.custom_op("pxtargets::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class CustomOp(torch.nn.Module):
    def forward(self, x):
        return twice(x) + 1


def small_case() -> tuple:
    torch.manual_seed(0)
    return Small(), (torch.randn(4, 4),)


needs_onnx = pytest.mark.skipif(unavailable("onnx") is not None, reason=str(unavailable("onnx")))
needs_aoti = pytest.mark.skipif(unavailable("aoti") is not None, reason=str(unavailable("aoti")))
needs_executorch = pytest.mark.skipif(unavailable("executorch") is not None, reason=str(unavailable("executorch")))


@pytest.fixture(scope="module")
def onnx_small():
    """One ONNX check of the small dynamic-batch model, shared by the tests reading it."""
    if unavailable("onnx") is not None:
        pytest.skip(unavailable("onnx"))
    model, args = small_case()
    return exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", examples=4, case_id="small")


@needs_onnx
def test_onnx_passes_numerics_on_examples_and_drawn_shapes(onnx_small):
    assert onnx_small.status == "passed", onnx_small.failure and onnx_small.failure.headline()
    assert onnx_small.mode == "onnx"
    assert {"lower", "load", "run", "guards"} <= set(onnx_small.timings)
    kinds = [row.kind for row in onnx_small.shape_table]
    assert kinds[0] == "example" and kinds.count("in range") >= 2
    assert all(row.cells["onnx"] == "accepted" for row in onnx_small.shape_table if row.kind != "example"
               and not row.kind.startswith("out of range"))


@needs_onnx
def test_onnxruntime_running_an_out_of_range_batch_is_the_reject_unguarded_finding(onnx_small):
    table = {row.shapes: row for row in onnx_small.shape_table}
    # The exported module refuses batch 67 (above max 64); onnxruntime runs it: the range is gone.
    above = next(r for r in table.values() if r.kind.startswith("out of range (above_max"))
    assert above.cells[".module()"] == "rejected" and above.cells["onnx"] == "accepted"
    found = [f for f in onnx_small.findings if f.kind == "reject_unguarded"]
    assert found and above.shapes in found[0].message and "onnx ran" in found[0].message
    # A static dimension changed is refused by onnxruntime's own input check.
    static = next(r for r in table.values() if "static_changed" in r.kind)
    assert static.cells["onnx"] == "rejected"


@needs_onnx
def test_findings_as_errors_fail_the_target():
    model, args = small_case()
    outcome = exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", examples=2,
                               findings_as_errors=True)
    assert outcome.status == "failed" and "onnx ran" in outcome.failure.message


@needs_onnx
def test_op_without_onnx_translation_fails_onnx_at_lower_naming_it_while_non_strict_passes():
    x = (torch.randn(4, 4),)
    assert exportcore.check(CustomOp(), x, dynamic_shapes=BATCH, mode="non_strict", examples=2).status == "passed"
    outcome = exportcore.check(CustomOp(), x, dynamic_shapes=BATCH, target="onnx", examples=2)
    assert outcome.status == "failed"
    assert (outcome.failure.stage, outcome.failure.category) == ("lower", "target.operator")
    assert "pxtargets.twice" in outcome.failure.message and "pxtargets.twice" in outcome.failure.hint
    assert "lower" in outcome.timings and "load" not in outcome.timings


@needs_onnx
def test_target_reuses_the_mode_export_and_never_a_stale_one():
    session = EngineSession(keep_exports=True)
    kept = session.exports
    model, args = small_case()
    assert exportcore.check(model, args, dynamic_shapes=BATCH, case_id="c", examples=1, session=session).status == "passed"
    hits = kept.hits
    reused = exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", case_id="c", examples=1, session=session)
    assert reused.status == "passed" and kept.hits == hits + 1 and "capture" not in reused.timings
    # Other weights under the same case id: the kept program would compute the old model.
    with torch.no_grad():
        model.fc.weight.mul_(3)
    fresh = exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", case_id="c", examples=1, session=session)
    assert fresh.status == "passed" and "capture" in fresh.timings and kept.hits == hits + 1
    # A flag that changes forward without changing any tensor misses too.
    model, args = small_case()
    assert exportcore.check(model, args, dynamic_shapes=BATCH, case_id="c", examples=1, session=session).status == "passed"
    model.extra = True
    flagged = exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", case_id="c", examples=1,
                               session=session)
    assert "capture" in flagged.timings and kept.hits == hits + 1
    # Without a session, nothing is kept between two checks.
    exportcore.check(model, args, dynamic_shapes=BATCH, case_id="c", examples=1)
    alone = exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", case_id="c", examples=1)
    assert "capture" in alone.timings


@needs_onnx
def test_a_kept_program_whose_tensors_changed_is_dropped():
    kept = KeptExports(enabled=True)
    model, args = small_case()
    ep = torch.export.export(model, args, dynamic_shapes=BATCH, strict=False)
    kept.store(("k",), ep)
    assert kept.lookup(("k",)) is ep
    with torch.no_grad():
        ep.state_dict["fc.bias"].add_(1)
    assert kept.lookup(("k",)) is None


class OneRowBranch(torch.nn.Module):
    """Another result at batch 1, which torch traces around (0/1 specialization): the program has only x * 3."""

    def forward(self, x):
        return x * 2 if x.shape[0] == 1 else x * 3


@pytest.mark.parametrize("target", [pytest.param("aoti", marks=needs_aoti), pytest.param("onnx", marks=needs_onnx)])
def test_a_runtime_is_held_to_eager_at_sizes_zero_and_one_of_its_range_with_a_verified_fix(target):
    # Dim("b", max=8) promises [0, 8]; the drawn shapes start at 2, so the compiled program's batch 1 was never run
    spec = ({0: Dim("b", max=8)},)
    outcome = exportcore.check(OneRowBranch(), (torch.randn(4, 3),), mode="non_strict", target=target,
                               dynamic_shapes=spec, examples=3)
    assert outcome.status == "failed", outcome.failure
    assert outcome.failure.message.startswith(f"{target} output differs from eager on size 1 of b (args[0] dim 0)")
    assert outcome.counterexample.shapes == {"args[0]": [1, 3]}
    row = next(r for r in outcome.shape_table if r.shapes == "args[0]=[1, 3]")
    assert row.kind == "in range" and row.cells[target] == "wrong result"
    assert next(r for r in outcome.shape_table if r.shapes == "args[0]=[0, 3]").cells[target] == "accepted"
    fix = outcome.explanation.fix
    assert fix.status == "verified" and fix.dynamic_shapes.startswith("b = Dim('b', min=2, max=8)"), fix
    fixed = exportcore.check(OneRowBranch(), (torch.randn(4, 3),), mode="non_strict", target=target, examples=3,
                             dynamic_shapes=({0: Dim("b", min=2, max=8)},), explain="off")
    assert fixed.status == "passed", fixed.failure


@needs_executorch
def test_executorch_passes_and_reports_what_it_does_out_of_range():
    model, args = small_case()
    outcome = exportcore.check(model, args, dynamic_shapes=BATCH, target="executorch", examples=3)
    assert outcome.status == "passed", outcome.failure and outcome.failure.headline()
    above = next(r for r in outcome.shape_table if r.kind.startswith("out of range (above_max"))
    assert above.cells["executorch"] == "rejected"  # the buffer sized for the max refuses it


def test_cuda_device_is_skipped_with_a_reason_without_a_gpu_and_runs_with_one():
    model, args = small_case()
    outcome = exportcore.check(model, args, dynamic_shapes=BATCH, mode="non_strict", device="cuda", examples=2)
    assert outcome.mode == "non_strict-cuda"
    if not torch.cuda.is_available():
        assert outcome.status == "skipped" and "cuda" in outcome.failure.message
    else:
        assert outcome.status == "passed", outcome.failure and outcome.failure.headline()
    assert next(model.parameters()).device.type == "cpu"  # the user's model is back where it was


def test_bad_target_device_and_training_are_refused_by_name():
    model, args = small_case()
    with pytest.raises(ValueError, match="target: unknown target 'tflite'"):
        exportcore.check(model, args, target="tflite")
    with pytest.raises(ValueError, match="device: unknown device 'tpu'"):
        exportcore.check(model, args, device="tpu")
    with pytest.raises(ValueError, match="inference export"):
        exportcore.check(model, args, target="onnx", mode="training")


def test_unavailable_target_is_a_skip_naming_what_is_missing(monkeypatch):
    session = EngineSession()
    session.caches.missing["onnx"] = "onnx: onnxruntime not installed (pip install ...)"  # what the session probed
    model, args = small_case()
    outcome = exportcore.check(model, args, target="onnx", session=session)
    assert outcome.status == "skipped" and outcome.failure.category == "target.unavailable"
    assert "onnxruntime not installed" in outcome.failure.message


def test_labels_round_trip():
    assert Column("strict").label == "strict" and Column("aoti", "cuda").label == "aoti-cuda"
    assert Column.parse("non_strict-cuda") == Column("non_strict", "cuda")
    assert Column.parse("non_strict") == Column("non_strict", "cpu")


def test_a_runtime_differing_on_a_drawn_shape_names_the_mismatch_not_the_tolerances():
    # the probe's message keys the shrunk counterexample: the mismatch itself, without the tolerances line
    from exportcore.programs.execute import RunResult
    from exportcore.programs.under_test import RuntimeSide
    from exportcore.targets import get_target

    side = RuntimeSide(label="onnx", target=get_target("onnx"), tolerance=(1e-5, 1e-6))
    failure = side.compare(None, RunResult(outputs=torch.zeros(3)), RunResult(outputs=[torch.ones(3)]),
                           "a drawn in-range shape", ((), {}), values=True)
    assert failure is not None and "tolerances: rtol=1e-05, atol=1e-06" in failure.detail
    message = side.in_spec_differs(failure)
    assert message.startswith("onnx output differs from eager: ") and "tolerances" not in message
    assert failure.detail.startswith(message.removeprefix("onnx output differs from eager: "))


@pytest.mark.parametrize(("text", "op", "category"), [
    ("No ONNX function found for <OpOverload(op='mylib.op', overload='default')>. Failure", "mylib.op.default",
     "target.operator"),
    ("Missing out variants: {'mylib::op'}", "mylib::op", "target.operator"),
    ("CppCompileError: C++ compile error\nfatal error: x.h: No such file", None, "target.toolchain"),
    ("Could not guard on data-dependent expression u0 > 2 (unbacked symint)", None, "target.dynamic-shape"),
    ("XNNPACK: unsupported dtype torch.float64", None, "target.dtype"),
    ("something else went wrong", None, "target.internal"),
])
def test_target_failures_name_the_operator_and_category(text, op, category):
    assert unsupported_operator(text) == op
    failure = target_failure(RuntimeError(text), "lower", "onnx")
    assert (failure.stage, failure.category) == ("lower", category)
    assert failure.hint and failure.message.startswith("onnx lower:")


def test_a_runtime_that_cannot_use_the_device_names_why():
    from exportcore.targets import get_target

    assert "CPU only" in get_target("executorch").unsupported_device("cuda")
    assert get_target("executorch").unsupported_device("cpu") is None
    assert get_target("aoti").unsupported_device("cuda") is None
    if unavailable("onnx") is None:
        import onnxruntime

        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            assert "CUDAExecutionProvider" in get_target("onnx").unsupported_device("cuda")


class Counter(torch.nn.Module):
    """Counts its calls in a buffer: runtimes keep such state differently."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(1))
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        self.calls.add_(1)
        return self.fc(x) * self.calls


@needs_onnx
def test_a_model_that_mutates_a_buffer_is_compared_on_its_first_call_only_and_says_so():
    torch.manual_seed(0)
    outcome = exportcore.check(Counter(), (torch.randn(4, 4),), dynamic_shapes=BATCH, target="onnx", examples=3)
    assert outcome.status == "passed", outcome.failure and outcome.failure.headline()
    assert any("mutates buffers (calls)" in note for note in outcome.notes)
    assert all(r.cells[".module()"] != "wrong result" for r in outcome.shape_table)


@needs_onnx
def test_the_artifact_directory_is_removed_afterwards(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    model, args = small_case()
    outcome = exportcore.check(model, args, dynamic_shapes=BATCH, target="onnx", examples=1)
    assert outcome.status == "passed"
    assert not list(tmp_path.glob("pytest-export-*"))


def test_aoti_input_check_printed_to_stderr_becomes_the_error_message():
    """torch 2.8-2.12 raise only "API call failed" and print the reason to fd 2: recover it."""
    import os

    from exportcore.targets.aoti import TARGET, _stderr_of

    def call(args, kwargs):
        os.write(2, b"Error: input_handles[0]: dim value is too large at 0, expected to be <= 15, but got: 16\n")
        raise RuntimeError("run_func_(...) API call failed at model_container_runner.cpp, line 144")

    reason = _stderr_of(call, (), {})
    assert reason == "input_handles[0]: dim value is too large at 0, expected to be <= 15, but got: 16"
    assert TARGET.rejection(RuntimeError(f"{reason} (API call failed)"))
    assert _stderr_of(lambda a, k: None, (), {}) is None
