"""The incremental gate (exportcore.reuse.whole): an unchanged (case, mode) is served its whole outcome before
eager, with no eager and no capture; every earlier stale-pass reproducer is checked again in full instead,
gives the verdict a cold check gives, and names what changed (Outcome.rechecked_because).

Each check() below is a session of its own on one cache folder (tests/sessions.py): only the disk answers
for an earlier one. A "naive" key (the model, inputs and options without the code the walk ran, the
registries, torch's configuration or the environment) would serve every one of these the old verdict.
"""

from __future__ import annotations

import sys

import pytest
import torch
from torch._decomp import global_decomposition_table
from torch.export import Dim

import exportcore
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
from tests.sessions import native_libraries, reported_version, write_module

SPEC = {"x": {0: Dim("n", min=2, max=32)}}
aten = torch.ops.aten


def gate(cache: ResultCache | None, model: torch.nn.Module, mode: str = "non_strict", spec: object = SPEC,
         **options: object) -> exportcore.Outcome:
    """One session: check ``model`` on 8 rows of 3 (a cache of None: a cold check that shares nothing)."""
    args = (torch.randn(8, 3, generator=torch.Generator().manual_seed(0)),)
    options.setdefault("examples", 3)
    session = EngineSession(cache) if cache is not None else EngineSession(reuse=False)
    return exportcore.check(model, args, dynamic_shapes=spec, mode=mode, case_id="case", session=session,
                            **options)


def whole(outcome: exportcore.Outcome) -> bool:
    return (outcome.reused_from or "").startswith("cache: whole,")


def verdict(outcome: exportcore.Outcome) -> tuple:
    failure = outcome.failure
    return (outcome.status, failure.stage if failure else None, failure.category if failure else None,
            sorted({f.kind for f in outcome.findings}))


def rechecked(cache: ResultCache, model: torch.nn.Module, **options: object) -> exportcore.Outcome:
    """A changed case: checked in full (not served whole), with the verdict a cold check without a cache gives."""
    outcome = gate(cache, model, **options)
    assert not whole(outcome) and "eager" in outcome.timings and "capture" in outcome.timings
    assert verdict(outcome) == verdict(gate(None, model, **options))
    return outcome


def warm(tmp_path, model: torch.nn.Module, **options: object) -> ResultCache:
    """A cache whose entry for ``model`` was stored by a cold session and served whole by the next."""
    cache = ResultCache(tmp_path / "cache")
    assert gate(cache, model, **options).status == "passed"
    assert whole(gate(cache, model, **options))
    return cache


CAPTURED = """
import torch


# torch 2.6 has no is_exporting(); its is_compiling() is true while export traces too
EXPORTING = getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)


def exporting(x):
    return x * 2{edit}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = {scale}

    def forward(self, x):
        if EXPORTING():  # only the capture takes this branch
            return exporting(x) * self.scale
        return x * 2 * self.scale
"""


def _captured(tmp_path, edit: str = "", scale: float = 1.0) -> torch.nn.Module:
    module = write_module(tmp_path / "pte_gate_captured.py", CAPTURED.format(edit=edit, scale=scale),
                          "pte_gate_captured")
    return module.Net()


@pytest.mark.parametrize("mode", ["non_strict", "training"])
def test_an_unchanged_case_is_served_whole_with_the_identical_verdict(tmp_path, mode) -> None:
    cache = ResultCache(tmp_path / "cache")
    cold = gate(cache, _captured(tmp_path), mode=mode)
    assert cold.status == "passed" and not whole(cold) and cold.rechecked_because is None
    for _ in range(2):  # and again: serving writes nothing that changes the next session's answer
        served = gate(cache, _captured(tmp_path), mode=mode)
        assert whole(served) and served.reused_from.startswith(f"cache: whole, {mode}, ")
        assert set(served.timings) == {"reuse"}  # neither eager nor the capture ran
        for field in ("status", "failure", "findings", "numerics", "range_constraints", "dims", "graph", "examples"):
            assert getattr(served, field) == getattr(cold, field), field
        assert any(note.startswith("served whole from the result cache") for note in served.notes)


def test_strict_is_never_served_whole(tmp_path) -> None:
    # dynamo translates the model's frames instead of running them: what it traced is not recorded
    cache = ResultCache(tmp_path / "cache")
    assert gate(cache, _captured(tmp_path), mode="strict").status == "passed"
    again = gate(cache, _captured(tmp_path), mode="strict")
    assert again.status == "passed" and not whole(again) and "capture" in again.timings


def test_an_edit_only_the_capture_reaches_under_is_exporting_is_checked_again(tmp_path) -> None:
    cache = warm(tmp_path, _captured(tmp_path))
    edited = rechecked(cache, _captured(tmp_path, edit=" + 1"))
    assert edited.status == "failed" and edited.rechecked_because == "code: pte_gate_captured:exporting"


def test_an_attribute_read_only_while_tracing_is_checked_again(tmp_path) -> None:
    cache = warm(tmp_path, _captured(tmp_path))
    model = _captured(tmp_path)
    model.scale = 3.0  # eager reads it too, but nothing before the capture ran does
    changed = rechecked(cache, model)
    assert changed.status == "passed" and changed.rechecked_because == "attributes"


@torch.library.custom_op("pytest_export_gate::first_half", mutates_args=())
def first_half(x: torch.Tensor) -> torch.Tensor:
    return x[: x.shape[0] // 2].clone()


@first_half.register_fake
def _first_half_fake(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty((x.shape[0] // 2, *x.shape[1:]))


class FirstHalf(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return first_half(x) * 2


def test_a_fake_kernel_registered_anew_while_the_real_one_is_not_is_checked_again(tmp_path) -> None:
    # the fake kernel runs only in the capture; agreeing at the example's 8 rows, it differs at drawn sizes
    spec = {"x": {0: Dim("n", min=6, max=32)}}
    cache = warm(tmp_path, FirstHalf(), spec=spec)
    try:
        first_half.register_fake(lambda x: x.new_empty((x.shape[0] - 4, *x.shape[1:])))
        edited = rechecked(cache, FirstHalf(), spec=spec)
    finally:
        first_half.register_fake(_first_half_fake)
    assert edited.status == "failed"
    assert edited.rechecked_because == "registered kernels, decompositions or pytree nodes"
    assert whole(gate(cache, FirstHalf(), spec=spec))  # registered back: the same walk again


DECOMPOSITION = """
import torch


def silu(x):
    return x * torch.sigmoid(x){edit}
"""


class Silu(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(x)


def test_a_decomposition_registered_in_torchs_table_is_checked_again(tmp_path, monkeypatch) -> None:
    table = global_decomposition_table["post_autograd"]
    monkeypatch.setitem(table, aten.silu.default, table.get(aten.silu.default))

    def load(edit: str = "") -> Silu:
        module = write_module(tmp_path / "pte_gate_decompositions.py", DECOMPOSITION.format(edit=edit),
                              "pte_gate_decompositions")
        monkeypatch.setitem(sys.modules, "pte_gate_decompositions", module)  # as a conftest's is
        table[aten.silu.default] = module.silu
        return Silu()

    cache = warm(tmp_path, load())
    edited = rechecked(cache, load(" * 1.5"))
    assert edited.status == "failed" and edited.failure.stage == "numerics"
    assert edited.rechecked_because == "registered kernels, decompositions or pytree nodes"


@pytest.mark.parametrize("flag", ["fx", "dynamo"])
def test_a_torch_config_flag_is_checked_again(tmp_path, flag) -> None:
    cache = warm(tmp_path, _captured(tmp_path))
    config = torch.fx.experimental._config if flag == "fx" else torch._dynamo.config
    # backed_size_oblivious where torch has it (2.7 on); use_duck_shape in every supported torch
    fx_flag = "backed_size_oblivious" if hasattr(config, "backed_size_oblivious") else "use_duck_shape"
    name = fx_flag if flag == "fx" else "capture_scalar_outputs"
    with config.patch(**{name: not getattr(config, name)}):
        changed = rechecked(cache, _captured(tmp_path))
    assert changed.rechecked_because == "torch config"


def test_a_rebuilt_native_library_is_checked_again(tmp_path) -> None:
    import ctypes
    import shutil


    first, second = native_libraries(2)
    kernel = tmp_path / "build" / "libgatekernel.so"
    kernel.parent.mkdir()
    shutil.copy(first, kernel)
    ctypes.CDLL(str(kernel))
    cache = warm(tmp_path, _captured(tmp_path))
    rebuilt = kernel.with_suffix(".new")
    shutil.copy(second, rebuilt)
    rebuilt.replace(kernel)
    ctypes.CDLL(str(kernel))
    assert rechecked(cache, _captured(tmp_path)).rechecked_because == "native code"


def test_a_changed_spec_or_option_is_checked_again(tmp_path) -> None:
    cache = warm(tmp_path, _captured(tmp_path))
    narrower = {"x": {0: Dim("n", min=2, max=16)}}
    assert rechecked(cache, _captured(tmp_path), spec=narrower).rechecked_because == "spec"
    # compared with the last stored walk's parts: the narrower spec's, stored just now
    assert rechecked(cache, _captured(tmp_path), spec=narrower, rtol=1e-2).rechecked_because == "options"


def test_another_torch_or_library_version_is_checked_again(tmp_path, monkeypatch) -> None:
    from exportcore.reuse import result_cache

    cache = warm(tmp_path, _captured(tmp_path))
    real = torch.__version__
    monkeypatch.setattr(torch, "__version__", "2.99.0")
    upgraded = rechecked(cache, _captured(tmp_path))
    assert upgraded.rechecked_because == f"torch {real} → 2.99.0"
    monkeypatch.setattr(torch, "__version__", real)
    assert whole(gate(cache, _captured(tmp_path)))  # the entry of the real version serves again
    try:
        with reported_version("hypothesis", "0.0.1"):
            result_cache._library_versions.cache_clear()
            assert rechecked(cache, _captured(tmp_path)).rechecked_because.startswith("hypothesis ")
    finally:
        result_cache._library_versions.cache_clear()
    assert whole(gate(cache, _captured(tmp_path)))


ENVIRON = """
import os

import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x * float(os.environ.get("PTE_GATE_SCALE", "2"))
"""


def test_an_environment_variable_the_walk_read_is_checked_again(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PTE_GATE_SCALE", raising=False)
    model = write_module(tmp_path / "pte_gate_environ.py", ENVIRON, "pte_gate_environ").Net
    cache = warm(tmp_path, model())
    monkeypatch.setenv("PTE_GATE_SCALE", "3")
    assert rechecked(cache, model()).rechecked_because == "environment variable PTE_GATE_SCALE"


def test_failing_outcomes_are_not_stored_whole(tmp_path) -> None:
    # a failure keeps its live diagnosis and explanation: checked in full every session
    cache = ResultCache(tmp_path / "cache")
    broken = _captured(tmp_path, edit=" + 1")
    assert gate(cache, broken).status == "failed"
    again = gate(cache, broken)
    assert again.status == "failed" and not whole(again) and "capture" in again.timings


class Halves(torch.nn.Module):
    def forward(self, x):
        return x / 2


def test_another_recorded_input_set_is_rechecked_not_served(tmp_path) -> None:
    from exportcore.case import Case, EngineOptions
    from exportcore.check import run_check

    cache = ResultCache(tmp_path / "cache")
    example, inside = torch.randn(8, 3), [(torch.randn(4, 3),)]
    outside = [(torch.randn(40, 3),)]  # past the declared n <= 32: an input error of the case

    def check(recorded: list) -> exportcore.Outcome:
        case = Case(model=Halves(), args=(example,), dynamic_shapes=SPEC, recorded_inputs=recorded)
        return run_check(case, EngineOptions.for_case(case, "non_strict", examples=3, case_id="case"),
                         EngineSession(cache))

    assert check(inside).status == "passed"
    assert whole(check(inside))  # unchanged: served whole
    changed = check(outside)  # the sets are part of the case: a served pass here would hide the input error
    assert not whole(changed) and changed.status == "error" and "recorded_inputs[0]" in changed.failure.message
