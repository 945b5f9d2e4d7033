"""The persistent result cache: a warm run takes an earlier run's results only under the same proof."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn
from torch.export import Dim

import exportcore
from exportcore.reuse import result_cache
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
from tests.sessions import native_libraries

BATCH = {"x": {0: Dim("batch", min=2, max=64)}}
RUN_STEPS = {"run", "decompose", "serialize"}


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).relu()


class MlpTanh(Mlp):
    """Mlp with another op: the model's code changed, so the captured graph did."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).tanh()


class Elementwise(Mlp):
    """Elementwise only: its answer is bit for bit the same in any memory layout of its input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.lin.weight[0]).relu()


def model(cls: type = Mlp, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return cls().eval()


def example(dtype: torch.dtype = torch.float32) -> tuple:
    return (torch.randn(4, 8, generator=torch.Generator().manual_seed(1)).to(dtype),)


def check(cache: ResultCache, m: nn.Module | None = None, args: tuple | None = None, **options):
    options.setdefault("dynamic_shapes", BATCH)
    options.setdefault("mode", "strict")
    options.setdefault("case_id", "case")
    # each check() below stands for a new session: only the disk store may answer for an earlier one
    return exportcore.check(m if m is not None else model(), args if args is not None else example(),
                            session=EngineSession(cache), **options)


def served(outcome) -> bool:
    return (outcome.reused_from or "").startswith("cache:")


def test_a_warm_run_takes_the_cold_runs_results(tmp_path) -> None:
    cache = ResultCache(tmp_path)
    cold = check(cache)
    warm = check(cache)
    assert cold.status == warm.status == "passed"
    assert not served(cold) and served(warm)
    assert warm.reused_from.startswith("cache: strict, ")
    # capture and eager ran again; the program runs did not
    assert {"eager", "capture"} <= set(warm.timings) and not RUN_STEPS & set(warm.timings)
    assert RUN_STEPS <= set(cold.timings)
    assert warm.examples == cold.examples and warm.graph == cold.graph
    assert [f.kind for f in warm.findings] == [f.kind for f in cold.findings]
    # another mode capturing the same program is served by the same entry
    assert served(check(cache, mode="non_strict"))


def test_a_training_mode_is_served_only_by_its_own_earlier_run(tmp_path) -> None:
    cache = ResultCache(tmp_path)
    assert check(cache, mode="non_strict").status == "passed"
    cold = check(cache, mode="training")
    assert cold.status == "passed" and not served(cold)  # an inference mode's entry never answers training
    assert RUN_STEPS <= set(cold.timings)
    warm = check(cache, mode="training")
    # served whole (exportcore.reuse.whole): neither eager nor the capture ran again
    assert warm.status == "passed" and warm.reused_from.startswith("cache: whole, training, ")
    assert not RUN_STEPS & set(warm.timings) and warm.examples == cold.examples
    changed = check(cache, model(seed=3), mode="training")  # new weights: the proof fails, all of it runs
    assert changed.status == "passed" and not served(changed) and RUN_STEPS <= set(changed.timings)


@pytest.mark.parametrize("change", ["weight", "code", "dtype", "spec", "options", "case", "torch", "hypothesis",
                                    "sympy", "architecture", "cpu kernels"])
def test_anything_not_proven_the_same_runs_in_full(tmp_path, monkeypatch, change) -> None:
    cache = ResultCache(tmp_path)
    assert check(cache).status == "passed"
    kwargs: dict = {}
    if change == "weight":
        kwargs["m"] = model(seed=1)
    elif change == "code":
        kwargs["m"] = model(MlpTanh)
    elif change == "dtype":
        kwargs["m"] = model().double()
        kwargs["args"] = example(torch.float64)
    elif change == "spec":
        kwargs["dynamic_shapes"] = {"x": {0: Dim("batch", min=2, max=32)}}
    elif change == "options":
        kwargs["rtol"], kwargs["atol"] = 1e-3, 1e-3
    elif change == "case":
        kwargs["case_id"] = "another"
    elif change == "torch":
        real = result_cache.environment()
        monkeypatch.setattr(result_cache, "environment", lambda: real.replace("torch ", "torch 0.0.0-"))
    elif change == "architecture":  # a cache restored on an arm64 runner of the same OS
        import platform

        monkeypatch.setattr(platform, "machine", lambda: "aarch64" if platform.uname().machine != "aarch64" else "x86_64")
    elif change == "cpu kernels":  # the same wheel on a CPU without AVX512: torch dispatches other kernels
        monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "NO AVX")
    else:  # another hypothesis may draw other shapes from one seed; sympy writes the sizes save/load keeps
        real = result_cache._library_versions()
        monkeypatch.setattr(result_cache, "_library_versions", lambda: real.replace(f"{change} ", f"{change} 0.0.0-"))
    again = check(cache, **kwargs)
    assert again.status == "passed" and not served(again)
    assert RUN_STEPS <= set(again.timings)


def test_the_draws_settings_decide_not_the_folder_hypothesis_keeps_examples_in(tmp_path) -> None:
    # The profile's example database is a folder under the checkout: an entry written in one folder
    # is served in another (a CI runner's other workspace, a second worktree), and a deadline the
    # drawn shapes do not run under changes nothing; a setting that changes the draws is not served.
    # The base is the loaded profile, whatever it is: with CI set hypothesis loads its "ci" profile,
    # which already derandomizes, so the changed setting is the opposite of the profile's own.
    from hypothesis import settings
    from hypothesis.database import DirectoryBasedExampleDatabase

    cache = ResultCache(tmp_path / "cache")
    here = settings(database=DirectoryBasedExampleDatabase(str(tmp_path / "a" / ".hypothesis")))
    assert check(cache, hypothesis_settings=here).status == "passed"
    moved = settings(here, database=DirectoryBasedExampleDatabase(str(tmp_path / "b" / ".hypothesis")), deadline=None)
    assert served(check(cache, hypothesis_settings=moved))
    other = check(cache, hypothesis_settings=settings(here, derandomize=not here.derandomize))
    assert other.status == "passed" and not served(other) and RUN_STEPS <= set(other.timings)


def test_a_native_kernel_rebuilt_in_the_users_tree_is_not_served_its_old_results(tmp_path) -> None:
    # A custom op's kernel built in place (pip install -e ., cpp_extension.load, ctypes): no version names
    # it, and a rebuild may change only what the drawn shapes see. Here any library mapped from a folder
    # of the user's stands for it (copies of the stdlib's extension modules, loaded and never called).
    import ctypes
    import shutil

    first, second = native_libraries(2)
    cache = ResultCache(tmp_path / "cache")
    assert check(cache).status == "passed"
    build = tmp_path / "build"
    build.mkdir()
    kernel = build / "libkernel.so"
    shutil.copy(first, kernel)
    ctypes.CDLL(str(kernel))
    loaded = check(cache)
    assert loaded.status == "passed" and not served(loaded) and RUN_STEPS <= set(loaded.timings)
    assert served(check(cache))  # the same library, the same bytes: the entry just written serves
    rebuilt = build / "libkernel.so.new"
    shutil.copy(second, rebuilt)
    rebuilt.replace(kernel)  # a rebuild replaces the file; the process still maps the old one too
    ctypes.CDLL(str(kernel))
    again = check(cache)
    assert again.status == "passed" and not served(again) and RUN_STEPS <= set(again.timings)


def test_a_native_library_is_named_by_its_content_not_where_the_checkout_built_it(tmp_path) -> None:
    import shutil

    from exportcore.reuse import native_code

    first, second = native_libraries(2)
    here, there, other = (tmp_path / folder / "libkernel.so" for folder in "abc")
    for path, source in ((here, first), (there, first), (other, second)):
        path.parent.mkdir()
        shutil.copy(source, path)
    assert native_code._digest(frozenset({str(here)})) == native_code._digest(frozenset({str(there)}))
    assert native_code._digest(frozenset({str(here)})) != native_code._digest(frozenset({str(other)}))
    # torch's own libraries are named by its version: a session that loads nothing of its own has none
    torch_libraries = [path for path in native_code.loaded_libraries() if "/torch/lib/" in path]
    assert torch_libraries and all(native_code._named_elsewhere(path) for path in torch_libraries)


def test_code_a_target_compiled_from_a_program_is_not_the_users_native_code(tmp_path) -> None:
    # AOTInductor extracts its .so to a temporary folder, maps it and deletes it while mapped: named
    # as the user's code, it would never match again, and every case after the first AOTInductor
    # column of a process ran in full. A copy of a stdlib extension module stands for it.
    import ctypes
    import shutil

    from exportcore.reuse.native_code import generated, loaded_libraries, native_code

    library = native_libraries(3)[2]
    with EngineSession().activated():  # what a target generated is marked in the session running it
        before = native_code()
        compiled = tmp_path / "aotinductor_x" / "model.wrapper.so"
        compiled.parent.mkdir()
        shutil.copy(library, compiled)
        with generated():
            ctypes.CDLL(str(compiled))
        compiled.unlink()
        assert any(path.startswith(str(compiled)) for path in loaded_libraries())  # still mapped, as AOTInductor's
        assert native_code() == before


def _global_hook() -> None:
    torch.nn.modules.module.register_module_forward_hook(lambda module, args, output: output)


@pytest.mark.parametrize("setting", [
    pytest.param(lambda: torch.use_deterministic_algorithms(True), id="deterministic"),
    pytest.param(lambda: torch.set_float32_matmul_precision("medium"), id="matmul-precision"),
    pytest.param(lambda: setattr(torch.backends.mkldnn, "enabled", False), id="mkldnn-off"),
    pytest.param(lambda: torch.set_default_dtype(torch.float64), id="default-dtype"),
    pytest.param(_global_hook, id="global-hook"),
])
def test_results_found_under_other_process_settings_are_not_served(tmp_path, setting) -> None:
    # A conftest that turns on deterministic algorithms (an op may raise) or TF32 (numbers past
    # tolerance) changes what eager and the programs compute, and neither graph nor model shows it.
    from exportcore.sandbox.isolation import GlobalState

    cache, m, args = ResultCache(tmp_path), model(), example()  # built before: the same tensors under each setting
    assert check(cache, m, args, mode="non_strict").status == "passed"
    before = GlobalState.capture()
    setting()
    try:
        again = check(cache, m, args, mode="non_strict")
    finally:
        before.restore()
    assert again.status == "passed" and not served(again) and RUN_STEPS <= set(again.timings)
    assert served(check(cache, m, args, mode="non_strict"))  # the settings back as they were: served again


def test_the_same_values_in_another_memory_layout_are_other_inputs(tmp_path) -> None:
    # Drawn shapes are built in the example's stride order (exportcore.shapes.layouts), so a
    # column-major example is another input even where eager's answer is the same bit for bit.
    cache = ResultCache(tmp_path)
    rows = example()[0]
    columns = rows.t().contiguous().t()
    assert torch.equal(rows, columns) and rows.stride() != columns.stride()
    assert check(cache, model(Elementwise), (rows,)).status == "passed"
    assert served(check(cache, model(Elementwise), (rows.clone(),)))  # the same layout is served
    again = check(cache, model(Elementwise), (columns,))
    assert again.status == "passed" and not served(again) and RUN_STEPS <= set(again.timings)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).relu()


def test_the_same_weights_in_another_memory_layout_are_another_model(tmp_path) -> None:
    # model.to(memory_format=torch.channels_last), an everyday speed-up, keeps every value: the
    # programs then run (and save and load) channels_last weights, which the contiguous pass never did.
    cache = ResultCache(tmp_path)
    images = (torch.randn(2, 3, 6, 6, generator=torch.Generator().manual_seed(0)),)
    assert check(cache, model(ConvNet), images).status == "passed"
    assert served(check(cache, model(ConvNet), images))
    channels_last = model(ConvNet).to(memory_format=torch.channels_last)
    assert channels_last.conv.weight.stride() != model(ConvNet).conv.weight.stride()
    again = check(cache, channels_last, images)
    assert again.status == "passed" and not served(again) and RUN_STEPS <= set(again.timings)


@torch.library.custom_op("pytest_export_cache::first_half", mutates_args=())
def first_half(x: torch.Tensor) -> torch.Tensor:
    return x[: x.shape[0] // 2].clone()


@first_half.register_fake
def _first_half_fake(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty((x.shape[0] // 2, *x.shape[1:]))


class FirstHalf(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return first_half(x) * 2


def test_an_edited_fake_kernel_is_not_served_the_old_pass(tmp_path) -> None:
    # A custom op's fake kernel decides the shapes the graph declares, and the drawn shapes check
    # them against what the program returns. Edited to a formula that agrees only at the example's
    # 8 rows, the graph's code and eager's answer stay the same: the cold verdict must still be found.
    cache = ResultCache(tmp_path)
    spec = {"x": {0: Dim("n", min=6, max=64)}}
    args = (torch.randn(8, 3, generator=torch.Generator().manual_seed(0)),)
    assert check(cache, FirstHalf(), args, dynamic_shapes=spec).status == "passed"
    assert served(check(cache, FirstHalf(), args, dynamic_shapes=spec))
    try:
        first_half.register_fake(lambda x: x.new_empty((x.shape[0] - 4, *x.shape[1:])))
        edited = check(cache, FirstHalf(), args, dynamic_shapes=spec)
    finally:
        first_half.register_fake(_first_half_fake)
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.exc_type == "OutputMetadataMismatch"


class _Clamp(torch.autograd.Function):
    exact = True  # False: a straight-through backward, which the traced forward's own gradient is not

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= 1) if _Clamp.exact else grad


class Clamped(Mlp):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _Clamp.apply(self.lin(x) * 3)


def test_an_edited_custom_backward_is_not_served_the_old_pass(tmp_path, monkeypatch) -> None:
    # A training program differentiates its traced forward; eager runs the Function's own backward.
    # Editing that backward changes eager's gradients and nothing else the proof looked at before.
    cache = ResultCache(tmp_path)
    assert check(cache, model(Clamped), mode="training").status == "passed"
    assert served(check(cache, model(Clamped), mode="training"))
    monkeypatch.setattr(_Clamp, "exact", False)
    edited = check(cache, model(Clamped), mode="training")
    assert not served(edited)
    assert edited.status == "failed" and "grads" in edited.failure.message


def test_the_environment_names_every_version_that_decides_a_result() -> None:
    import platform

    import hypothesis
    import sympy

    env = result_cache.environment()
    for name, version in (("torch", torch.__version__), ("hypothesis", hypothesis.__version__),
                          ("sympy", sympy.__version__), ("python", platform.python_version())):
        assert f"{name} {version}" in env, (name, env)
    assert "pytest-export " in env
    import platform as host

    assert f"machine {host.system()} {host.machine()} cpu {torch.backends.cpu.get_cpu_capability()}" in env


def test_a_weight_change_that_breaks_numerics_is_not_served_the_old_pass(tmp_path) -> None:
    """The stale-verdict case: same graph, new weights whose program would differ from eager is re-run."""
    cache = ResultCache(tmp_path)
    assert check(cache).status == "passed"
    m = model()
    with torch.no_grad():
        m.lin.weight.fill_(float("nan"))  # eager now answers NaN: a different reference, so no reuse
    again = check(cache, m=m)
    assert not served(again)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign format", "other identity"])
def test_a_damaged_entry_is_ignored_and_removed(tmp_path, damage) -> None:
    cache = ResultCache(tmp_path)
    assert check(cache).status == "passed"
    (entry,) = cache.entries()
    text = entry.read_text()
    if damage == "garbage":
        entry.write_bytes(b"\x00\xffnot json")
    elif damage == "truncated":
        entry.write_text(text[: len(text) // 2])
    else:
        data = json.loads(text)
        if damage == "foreign format":
            data["format"] = result_cache.FORMAT + 1
        else:
            data["identity"] = "something else"
        entry.write_text(json.dumps(data))
    again = check(cache)
    assert again.status == "passed" and not served(again)
    assert RUN_STEPS <= set(again.timings)
    # the bad entry went, and the full run stored a good one in its place
    assert [json.loads(p.read_text())["format"] for p in cache.entries()] == [result_cache.FORMAT]
    assert served(check(cache))


def test_read_and_write_modes(tmp_path) -> None:
    assert check(ResultCache(tmp_path, "read")).status == "passed"
    assert ResultCache(tmp_path).entries() == []  # read: stores nothing
    check(ResultCache(tmp_path, "write"))
    assert len(ResultCache(tmp_path).entries()) == 1
    assert not served(check(ResultCache(tmp_path, "write")))  # write: takes nothing
    assert served(check(ResultCache(tmp_path, "read")))
    assert not served(check(ResultCache(tmp_path, "off")))
    with pytest.raises(ValueError, match="cache mode must be one of"):
        ResultCache(tmp_path, "sometimes")


def test_bounded_oldest_entries_go_first(tmp_path) -> None:
    cache = ResultCache(tmp_path, max_entries=2)
    for case in ("a", "b", "c"):
        check(cache, case_id=case)
    assert len(cache.entries()) == 2
    assert not served(check(cache, case_id="a"))  # the oldest was evicted
    assert served(check(cache, case_id="c"))


def test_bounded_without_listing_the_store_on_every_put(tmp_path) -> None:
    # a zoo run stores thousands of entries: each put must not list and stat the whole store
    cache = ResultCache(tmp_path, max_entries=400)
    listings = 0
    entries = cache.entries

    def counted() -> list:
        nonlocal listings
        listings += 1
        return entries()

    cache.entries = counted  # type: ignore[method-assign]
    for n in range(1000):
        cache.put(f"identity {n}", result_cache.Entry(format=result_cache.FORMAT, identity="", mode="strict", run="t"))
        if n % 10 == 0:
            assert len(entries()) <= 400
    assert len(entries()) <= 400
    assert listings < 1000 / 10
    assert cache.get("identity 999") is not None  # the newest stay
    assert cache.get("identity 0") is None  # the oldest went


def test_failing_walks_and_input_strategies_are_never_stored(tmp_path) -> None:
    cache = ResultCache(tmp_path)

    class Branchy(nn.Module):
        def forward(self, x):
            return x + 1 if x.sum() > 0 else x - 1

    assert check(cache, m=Branchy(), args=(torch.ones(4, 8),), mode="non_strict").status == "failed"
    assert cache.entries() == []

    from hypothesis import strategies as st

    # a strategy (or a partial, a callable object) is no function whose code a record names
    strategy = st.integers(2, 64).map(lambda n: ((torch.randn(n, 8),), {}))
    first = check(cache, inputs=strategy)
    assert first.status == "passed"
    assert cache.entries() == []
    assert not served(check(cache, inputs=strategy))


class Stem(nn.Module):
    """Two strided convs: an h of 2 (the spec's min) shrinks to size 1, which torch 2.8+ guards against."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.Conv2d(4, 4, 3, 2, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).mean((2, 3))


class CountingCache(ResultCache):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hits = 0

    def get(self, identity: str, kind=None):
        entry = super().get(identity, kind)
        self.hits += entry is not None
        return entry


@pytest.mark.skipif(torch.torch_version.TorchVersion(torch.__version__) < (2, 8), reason="torch < 2.8 exports the Stem for every h >= 2: nothing to fix")
def test_a_failing_cases_verified_fix_is_re_exported_every_run_and_its_checks_served(tmp_path) -> None:
    def failing(cache):
        torch.manual_seed(0)
        return check(cache, Stem().eval(), (torch.randn(1, 3, 16, 16),), mode="non_strict", examples=2,
                     dynamic_shapes={"x": {2: Dim("h", min=2, max=64)}})

    cold_cache = CountingCache(tmp_path)
    cold = failing(cold_cache)
    assert cold.status == "failed" and cold.explanation.fix.status == "verified", cold.explanation
    # the fix's re-export passed: stored; so did the option rescue's re-check where it rescued
    rescued = int(cold.explanation.rescue is not None and cold.explanation.rescue.status == "verified")
    # each passing re-check is stored twice: its checks after capture, and whole (exportcore.reuse.whole)
    assert cold_cache.hits == 0 and len(cold_cache.entries()) == 2 * (1 + rescued)
    warm_cache = CountingCache(tmp_path)
    warm = failing(warm_cache)
    # the verdict and the fix are the same; the fix's re-check was served whole
    assert warm.status == "failed" and warm.failure.headline() == cold.failure.headline()
    assert warm.explanation.fix.status == "verified" and warm.explanation.fix.exports == cold.explanation.fix.exports
    assert warm.explanation.fix.dynamic_shapes == cold.explanation.fix.dynamic_shapes
    assert warm_cache.hits == 1 + rescued
    assert not served(warm)  # the failing walk itself is never stored
    # another model fails the same way: its fix is verified on its own weights, nothing served
    other_cache = CountingCache(tmp_path)
    torch.manual_seed(5)
    other = check(other_cache, Stem().eval(), (torch.randn(1, 3, 16, 16),), mode="non_strict", examples=2,
                  dynamic_shapes={"x": {2: Dim("h", min=2, max=64)}})
    assert other.explanation.fix.status == "verified" and other_cache.hits == 0


def test_a_cuda_column_is_keyed_by_its_gpu() -> None:
    from exportcore.devices import device_facts

    assert device_facts("cpu") == ""  # the CPU's facts are the environment's, process-wide
    if not torch.cuda.is_available():
        pytest.skip("no GPU: the cuda facts are read from one")
    facts = device_facts("cuda")
    assert torch.cuda.get_device_name() in facts and f"cuda {torch.version.cuda}" in facts
