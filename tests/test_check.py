"""exportcore.check end to end: real exports, every mode, the acceptance cases of the engine."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore import check  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


class DataDependentBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


_LOCK = threading.Lock()


class WithLock(torch.nn.Module):
    def forward(self, x):
        with _LOCK:  # dynamo cannot trace through a threading.Lock context manager
            return x + 1


class ConvBNDrop(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.drop = torch.nn.Dropout(0.3)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        y = self.drop(torch.relu(self.bn(self.conv(x))))
        return self.head(y.mean(dim=(2, 3)))


class DictOut(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        logits = self.lin(x)
        return {"logits": logits, "probs": logits.softmax(-1), "n": x.shape[1]}


class Reshaper(torch.nn.Module):
    def forward(self, x):
        # Branching on a size makes Dim.AUTO specialize the batch dim to its example value.
        if x.shape[0] == 4:
            return x.reshape(-1)
        return x


@pytest.mark.parametrize("mode", exportcore.MODES)
def test_mlp_passes_every_mode_with_every_check(mode):
    b = Dim("batch", min=2, max=32)
    out = check(MLP(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: b}}, mode=mode, examples=4)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.failure is None
    assert set(out.checks) == set(exportcore.CHECKS)
    for stage in ("eager", "capture", "decompose", "serialize", "run"):
        assert out.timings.get(stage, 0) > 0, stage
    assert out.range_constraints and "[2, 32]" in out.range_constraints.values()
    assert out.declared == {"batch": "[2, 32]"}
    assert out.examples.tried >= 1 and out.examples.rejected >= 1
    assert out.graph is not None and out.graph.node_count > 0
    assert any("addmm" in op or "mm" in op for op in out.graph.op_histogram)
    assert exportcore.Outcome.from_json(out.to_json()) == out


def test_data_dependent_branch_fails_capture_with_cond_hint():
    out = check(DataDependentBranch(), (torch.randn(3),), mode="non_strict")
    assert out.status == "failed"
    assert out.failure.stage == "capture"
    assert out.failure.category == "data-dependent"
    assert "torch.cond" in out.failure.hint
    assert out.failure.source is not None and out.failure.source.file.endswith("test_check.py")


def test_context_manager_fails_strict_but_passes_non_strict():
    strict = check(WithLock(), (torch.randn(3),), mode="strict")
    assert strict.status == "failed"
    assert strict.failure.stage == "capture"
    assert strict.failure.category == "python.context-manager"
    assert check(WithLock(), (torch.randn(3),), mode="non_strict").status == "passed"


def test_training_compares_outputs_running_stats_grads_and_leaves_model_unchanged():
    model = ConvBNDrop()
    model.eval()  # the user's own setting must survive the training-mode check
    before = {k: v.clone() for k, v in model.state_dict().items()}
    params_before = {n: p.requires_grad for n, p in model.named_parameters()}
    out = check(
        model, (torch.randn(4, 3, 8, 8),), dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}}, mode="training",
        examples=3,
    )
    assert out.status == "passed", out.failure and out.failure.headline()
    assert any("gradients are not" in n for n in out.notes)  # honest about the decomposed program
    assert not model.training
    after = model.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        assert torch.equal(before[k], after[k]), k
        assert type(after[k]) is torch.Tensor, f"{k} left as {type(after[k]).__name__}"
    assert all(p.grad is None for p in model.parameters())
    assert {n: p.requires_grad for n, p in model.named_parameters()} == params_before


def test_training_passes_a_buffer_update_that_export_keeps():
    # The count does not feed the outputs (so backward works); the exported program counts too,
    # which the state check compares (tests/test_verdicts_state.py: a baked-in update fails).
    class Counter(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            self.calls += 1
            return self.lin(x)

    out = check(Counter(), (torch.randn(2, 3),), mode="training", examples=0)
    assert out.status == "passed", out.failure and out.failure.headline()


def test_dict_output_with_ints_compares_leaf_by_leaf():
    out = check(DictOut(), (torch.randn(2, 4),), mode="strict", examples=0)
    assert out.status == "passed", out.failure and out.failure.headline()


def test_altered_exported_program_is_a_numerics_failure_naming_the_leaf(monkeypatch):
    real_export = torch.export.export

    def export_then_break(*args, **kwargs):
        ep = real_export(*args, **kwargs)
        for node in ep.graph.nodes:
            if node.op == "call_function" and "softmax" in str(node.target):
                node.target = torch.ops.aten.log_softmax.int
        ep.graph_module.recompile()
        return ep

    monkeypatch.setattr(torch.export, "export", export_then_break)
    out = check(DictOut(), (torch.randn(2, 4),), mode="non_strict", examples=0, checks=["numerics"])
    assert out.status == "failed"
    assert out.failure.stage == "numerics"
    assert "['probs']" in out.failure.message
    assert "max abs" in out.failure.detail.lower()


def test_static_export_rejects_other_batch_size():
    out = check(MLP(), (torch.randn(4, 8),), mode="non_strict", examples=0)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.range_constraints == {}
    assert out.examples.rejected >= 1


def test_auto_dim_that_specializes_is_flagged():
    out = check(Reshaper(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim.AUTO}}, mode="non_strict", examples=4)
    kinds = {f.kind for f in out.findings}
    assert "specialized" in kinds
    # and the accept check refuses the run: a drawn in-spec batch size is rejected by the guards
    assert out.status == "failed"
    assert out.failure.stage == "guards"
    assert "declared" in out.failure.message or "declared" in out.failure.detail


def test_auto_dim_accepts_sizes_0_and_1_is_a_finding_and_can_be_an_error():
    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    spec = {"x": {0: Dim.AUTO}}
    warn = check(Double(), (torch.randn(4, 3),), dynamic_shapes=spec, examples=2)
    assert warn.status == "passed"
    assert {f.kind: f.severity for f in warn.findings}.get("size01_accepted") == "warning"
    assert {f.kind for f in warn.findings} >= {"dtype_accepted"}
    err = check(Double(), (torch.randn(4, 3),), dynamic_shapes=spec, examples=2, findings_as_errors=True)
    assert err.status == "failed"


class UnreadBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((3,), 2.0))
        self.register_buffer("calibration", torch.ones(3))  # kept for a later step; forward never reads it

    def forward(self, x):
        return x * self.scale


def test_strict_reports_unused_buffer_dropped_from_module():
    x = torch.randn(2, 3)
    out = check(UnreadBuffer(), (x,), mode="strict", examples=0)
    missing = [f for f in out.findings if f.kind == "state_missing"]
    exported = torch.export.export(UnreadBuffer().eval(), (x,), strict=True).module()
    if "calibration" in dict(exported.named_buffers()):
        assert not missing  # a torch that keeps every buffer in strict exports: nothing to report
    else:
        assert missing and "calibration" in missing[0].message


def test_an_eval_batchnorms_dropped_counters_are_a_note_not_a_finding():
    # torchvision's resnet18 has 20: an eval-mode BatchNorm never reads num_batches_tracked
    x = torch.randn(2, 3, 8, 8)
    out = check(ConvBNDrop(), (x,), mode="strict", examples=0)
    assert out.status == "passed" and "state_missing" not in [f.kind for f in out.findings]
    exported = torch.export.export(ConvBNDrop().eval(), (x,), strict=True).module()
    dropped = not any(name.endswith("num_batches_tracked") for name, _ in exported.named_buffers())
    assert any("num_batches_tracked counter of 1 BatchNorm layer" in n for n in out.notes) == dropped
    training = check(ConvBNDrop(), (x,), mode="training", examples=0)
    assert training.status == "passed" and "state_missing" not in [f.kind for f in training.findings]


def test_eager_failure_is_an_error_not_an_export_failure():
    class Broken(torch.nn.Module):
        def forward(self, x):
            return x @ torch.randn(5, 5)

    out = check(Broken(), (torch.randn(2, 3),))
    assert out.status == "error"
    assert out.failure.stage == "eager"
    assert out.failure.category == "eager"


@pytest.mark.parametrize(
    ("kwargs", "exc", "needle"),
    [
        ({"args": [torch.randn(2)]}, TypeError, "args must be a tuple"),
        ({"mode": "fast"}, ValueError, "unknown mode 'fast'"),
        ({"model": 42}, TypeError, "model must be"),
        ({"checks": ["numerics", "vibes"]}, ValueError, "vibes"),
        ({"dynamic_shapes": {"y": {0: Dim("b")}}}, ValueError, "dynamic_shapes"),
        ({"dynamic_shapes": {"x": {3: Dim("b")}}}, ValueError, "dynamic_shapes"),
        ({"rtol": float("nan")}, ValueError, "rtol must be a finite non-negative number or None, got nan"),
        ({"atol": float("inf")}, ValueError, "atol must be a finite non-negative number or None, got inf"),
        ({"atol": -1e-6}, ValueError, "atol must be a finite non-negative number"),
        ({"rtol": True}, ValueError, "rtol must be a finite non-negative number"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs, exc, needle):
    call = {"model": MLP(), "args": (torch.randn(4, 8),)}
    call.update(kwargs)
    with pytest.raises(exc, match=needle):
        check(call.pop("model"), call.pop("args"), **call)


def test_each_case_and_mode_is_exported_exactly_once(monkeypatch):
    calls = []
    real_export = torch.export.export

    def counting(*args, **kwargs):
        calls.append(kwargs.get("strict"))
        return real_export(*args, **kwargs)

    monkeypatch.setattr(torch.export, "export", counting)
    for mode in exportcore.MODES:
        out = check(MLP(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("b", min=2, max=16)}}, mode=mode, examples=6)
        assert out.status == "passed"
    assert calls == [True, False, False]


def test_importing_the_packages_does_not_import_torch():
    code = "import pytest_export, exportcore, sys; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_plain_function_is_exported_with_its_own_argument_names():
    def scaled_sum(x, y):
        return x * y + 1

    b = Dim("b", min=2, max=9)
    out = check(scaled_sum, (torch.randn(4, 3), torch.randn(4, 3)), dynamic_shapes={"x": {0: b}, "y": {0: b}}, examples=3)
    assert out.status == "passed", out.failure and out.failure.headline()
    assert out.case_id.endswith("scaled_sum")
