"""A training graph that draws random numbers (stochastic depth, dropout) is not blamed for a decomposition
that draws them with other ops (torch 2.6: aten.bernoulli_ -> aten.rand + aten.lt), and only then."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import exportcore  # noqa: E402
from exportcore.programs.random_draws import redrawn, seeded_ops  # noqa: E402
from exportcore.outcome import Failure  # noqa: E402


class StochasticDepth(nn.Module):
    """What torchvision's StochasticDepth("row") and timm's DropPath do: keep each row with probability p."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        keep = torch.empty(x.shape[0], 1).bernoulli_(0.5) / 0.5 if self.training else 1.0
        return self.lin(x) * keep + x


def test_stochastic_depth_passes_in_training_and_says_when_its_values_were_not_held_against_it():
    dims = {"x": {0: torch.export.Dim("batch", min=2, max=16)}}
    outcome = exportcore.check(StochasticDepth(), (torch.randn(4, 8),), mode="training", dynamic_shapes=dims)
    assert outcome.status == "passed", outcome.failure
    ep = torch.export.export(StochasticDepth().train(), (torch.randn(4, 8),))
    rewritten = seeded_ops(ep.module()) != seeded_ops(ep.run_decompositions().module())
    noted = [n for n in outcome.notes if "draws random numbers with other ops" in n]
    assert not noted or rewritten  # forgiven only where the decomposition rewrote the random ops
    if torch.__version__.startswith("2.6."):
        assert noted  # 2.6 turns bernoulli_ into rand + lt: every kept row differs, the false failure this fixes


class _Ctx:
    def __init__(self, programs):
        self.programs = programs


def test_only_a_value_difference_of_a_program_whose_random_ops_were_rewritten_is_forgiven():
    ep = torch.export.export(StochasticDepth().train(), (torch.randn(4, 8),))
    plain = torch.export.export(nn.Linear(8, 8), (torch.randn(4, 8),))
    value = Failure(stage="numerics", category="numerics", exc_type="ValueMismatch", message="differs")
    shape = Failure(stage="numerics", category="numerics", exc_type="ShapeMismatch", message="differs")
    drawless = _Ctx({"exported": ep.module(), "decomposed": plain.module()})  # other random ops: none at all
    assert redrawn(drawless, "decomposed", value) is not None
    assert redrawn(drawless, "decomposed", shape) is None  # randomness changes values, never shapes
    assert redrawn(drawless, "decomposed", None) is None
    assert redrawn(drawless, "exported", value) is None  # the exported program keeps the model's own draws
    same = _Ctx({"exported": ep.module(), "decomposed": ep.module()})
    assert redrawn(same, "decomposed", value) is None  # same random ops: a difference is the program's


class NoisyHead(nn.Module):
    """Draws from the global RNG in forward, outside any dropout module (a noise-injection head)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x) + 0.1 * torch.randn(x.shape[0], 8)


def test_a_run_is_seeded_as_torch_manual_seed_seeds_it():
    from exportcore.programs.execute import seed_rng

    seed_rng(1234)
    ours = (torch.randn(5), torch.rand(3), torch.randint(0, 100, (4,)))
    torch.manual_seed(1234)
    torchs = (torch.randn(5), torch.rand(3), torch.randint(0, 100, (4,)))
    for a, b in zip(ours, torchs):
        assert torch.equal(a, b)


@pytest.mark.parametrize("mode", ["non_strict", "training"])
def test_a_model_drawing_random_numbers_in_forward_gets_the_same_draws_on_both_sides(mode):
    dims = {"x": {0: torch.export.Dim("batch", min=2, max=16)}}
    outcome = exportcore.check(NoisyHead(), (torch.randn(4, 8),), mode=mode, dynamic_shapes=dims)
    assert outcome.status == "passed", outcome.failure


def test_a_custom_device_backend_is_seeded_as_torch_seeds_it_even_when_registered_later(tmp_path):
    # In a fresh process: renaming the privateuse1 backend cannot be undone in this one.
    from processes import last_lines

    script = """
    import types, torch
    from exportcore.programs.execute import seed_rng
    seed_rng(0)  # before any backend: the CPU generator alone
    torch.utils.rename_privateuse1_backend("foo")
    seeds = []
    mod = types.ModuleType("torch.foo")  # half set up: no is_available, no device_count
    mod._is_in_bad_fork = lambda: False
    mod.manual_seed_all = seeds.append
    torch._register_device_module("foo", mod)
    seed_rng(123)
    ours = torch.randn(3)
    torch.manual_seed(123)
    print(seeds, torch.equal(ours, torch.randn(3)))
    """
    assert last_lines(script, tmp_path, runs=1) == ["[123, 123] True"]


def test_a_cuda_seed_the_user_queued_before_cuda_started_survives_a_check(monkeypatch):
    # Where a GPU can start, a run seeds with torch.manual_seed, which queues its seed for CUDA's
    # start and drops the user's queued one. This machine need not have a GPU: torch queues the
    # seed all the same while CUDA has not started.
    from exportcore.programs import execute

    if torch.cuda.is_initialized() or not hasattr(torch.cuda, "_lazy_seed_tracker"):
        pytest.skip("CUDA already started, or a torch without a queue of seeds for its start")
    monkeypatch.setattr(execute, "_cpu_only", lambda *key: False)  # torch's way, as on a GPU machine
    torch.manual_seed(4321)
    tracker = torch.cuda._lazy_seed_tracker
    queued = (tracker.manual_seed_all_cb, list(tracker.call_order))
    outcome = exportcore.check(NoisyHead(), (torch.randn(4, 8),), mode="non_strict", examples=2)
    assert outcome.status == "passed", outcome.failure
    assert (tracker.manual_seed_all_cb, tracker.call_order) == queued


def test_cuda_started_during_a_check_is_seeded_with_the_seeds_the_user_queued(monkeypatch):
    # CUDA took the check's queued seed when it started; afterwards it must stand where the
    # user's queued seeds would have put it at its start. (Started is simulated: this machine
    # need not have a GPU, and a seed callback of torch's is a no-op without one.)
    from exportcore.sandbox.isolation import GlobalState

    if torch.cuda.is_initialized() or not hasattr(torch.cuda, "_lazy_seed_tracker"):
        pytest.skip("CUDA already started, or a torch without a queue of seeds for its start")
    seeded: list[str] = []
    tracker = torch.cuda._lazy_seed_tracker
    monkeypatch.setattr(tracker, "call_order", [(lambda: seeded.append("seed"), []),
                                                (lambda: seeded.append("seed_all"), [])])
    before = GlobalState.capture()
    monkeypatch.setattr(tracker, "call_order", [None, (lambda: seeded.append("the check's"), [])])
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    before.restore()
    assert seeded == ["seed", "seed_all"]
