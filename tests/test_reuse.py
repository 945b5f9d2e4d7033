"""Work shared between modes and programs only when they are proven the same program."""

from __future__ import annotations

import io

import pytest
import torch
from torch import nn
from torch.export import Dim

import exportcore
from exportcore import EngineSession
from exportcore.reuse.identity import same_program, structure

BATCH = {"x": {0: Dim("batch", min=2, max=64)}}


class Normed(nn.Module):
    """Linear + BatchNorm: strict export drops the unread num_batches_tracked, non-strict keeps it."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.lin(x)).relu()


def seeded(cls: type, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return cls().eval()


def example(seed: int = 1) -> tuple:
    return (torch.randn(4, 8, generator=torch.Generator().manual_seed(seed)),)


_SESSION: list[EngineSession] = []


@pytest.fixture(autouse=True)
def fresh_session():
    """A test's checks share one engine session, as the plugin's do; the next test starts a fresh one."""
    _SESSION[:] = [EngineSession()]
    yield
    _SESSION.clear()


def check(*args, **options):
    """exportcore.check in the test's session (``session=`` given: that one)."""
    return exportcore.check(*args, **{"session": _SESSION[0], **options})


def test_non_strict_reuses_strict_when_it_captures_the_same_program_and_still_runs_its_own_state_check():
    strict = check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="strict", case_id="c")
    non_strict = check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="non_strict", case_id="c")
    assert strict.status == non_strict.status == "passed"
    assert strict.reused_from is None and non_strict.reused_from == "strict"
    assert any("reused from strict" in note for note in non_strict.notes)
    # the runs happened once: the receiver timed no run, decompose or serialize stage
    assert {"run", "decompose", "serialize"} <= set(strict.timings)
    assert not {"run", "decompose", "serialize"} & set(non_strict.timings)
    assert non_strict.examples == strict.examples and non_strict.graph == strict.graph
    # the state check reads each mode's own program (on torch 2.14 strict's lacks num_batches_tracked
    # and says so, non-strict's has it); the findings of the shared steps are strict's
    assert "state" in strict.timings and "state" in non_strict.timings
    assert "state_missing" not in [f.kind for f in non_strict.findings]
    shared = [f.kind for f in strict.findings if f.kind != "state_missing"]
    assert [f.kind for f in non_strict.findings] == shared


@pytest.mark.parametrize(
    "change",
    ["weights", "inputs", "options", "case", "reuse off"],
)
def test_nothing_is_reused_unless_everything_that_decides_the_result_is_equal(change):
    check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="strict", case_id="c")
    model = seeded(Normed, seed=5) if change == "weights" else seeded(Normed)
    args = example(seed=7) if change == "inputs" else example()
    options = {
        "case_id": "other" if change == "case" else "c",
        "rtol": 1e-3 if change == "options" else None,
        "session": EngineSession(reuse=False) if change == "reuse off" else _SESSION[0],
    }
    outcome = check(model, args, dynamic_shapes=BATCH, mode="non_strict", **options)
    assert outcome.status == "passed"
    assert outcome.reused_from is None
    assert "run" in outcome.timings


def test_a_failing_mode_donates_nothing_and_training_never_takes_an_inference_modes_results():
    class Drifting(nn.Module):
        def forward(self, x):
            return x * 2 if torch.compiler.is_compiling() else x * 3

    first = check(Drifting(), (torch.randn(3),), mode="strict", case_id="d")
    second = check(Drifting(), (torch.randn(3),), mode="non_strict", case_id="d")
    assert first.status == second.status == "failed"
    assert second.reused_from is None and second.failure.stage == "numerics"

    check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="strict", case_id="t")
    training = check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="training", case_id="t")
    assert training.reused_from is None and "run" in training.timings


class GuardedOutsideDynamo(nn.Module):
    """A shape test only non-strict tracing runs: the same graph in both modes, and the same answer at 3
    rows, but non-strict's program also guards ``rows != 3`` (torch 2.7+ records it in _guards_code)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.compiler.is_dynamo_compiling() and x.shape[0] == 3:
            return x * 2
        return x * 2


def test_a_mode_whose_program_guards_more_takes_nothing_from_one_that_guards_less():
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
    spec = {"x": {0: Dim.AUTO}}
    alone = check(GuardedOutsideDynamo(), (x,), dynamic_shapes=spec, mode="non_strict", case_id="alone")
    strict = check(GuardedOutsideDynamo(), (x,), dynamic_shapes=spec, mode="strict", case_id="g")
    after = check(GuardedOutsideDynamo(), (x,), dynamic_shapes=spec, mode="non_strict", case_id="g")
    assert strict.status == "passed"
    assert (after.status, after.failure and after.failure.stage) == (alone.status, alone.failure and alone.failure.stage)
    if hasattr(torch.export.export(GuardedOutsideDynamo(), (x,), dynamic_shapes=spec, strict=False), "_guards_code"):
        # the program rejects 3 rows, which eager and the declared (automatic) range accept
        assert (alone.status, alone.failure.stage) == ("failed", "guards"), alone.failure
        assert after.reused_from is None


def _export(model: nn.Module, strict: bool, dynamic: bool = True):
    return torch.export.export(model, example(), dynamic_shapes=BATCH if dynamic else None, strict=strict)


def test_same_program_is_canonical_but_never_loose():
    model = seeded(Normed)
    strict, non_strict = _export(model, True), _export(model, False)
    assert same_program(strict, non_strict)  # torch's symbols differ (s6 / s77), num_batches_tracked unread

    buffer = io.BytesIO()
    torch.export.save(strict, buffer)
    buffer.seek(0)
    assert same_program(strict, torch.export.load(buffer))

    assert not same_program(strict, _export(seeded(Normed, seed=3), True))  # other weights
    assert not same_program(strict, _export(model, True, dynamic=False))  # static: other ranges and shapes
    assert not same_program(strict, strict.run_decompositions())  # linear became addmm

    class Scaled(nn.Module):
        def __init__(self, scale: float) -> None:
            super().__init__()
            self.scale = scale

        def forward(self, x):
            return x * torch.tensor([self.scale])  # a tensor constant lifted into the program

    a = torch.export.export(Scaled(2.0), (torch.randn(3),))
    b = torch.export.export(Scaled(3.0), (torch.randn(3),))
    assert structure(a) == structure(b)  # the same code ...
    assert not same_program(a, b)  # ... and another constant: not the same program


def test_python_state_that_changes_eager_stops_sharing():
    class Counting(nn.Module):
        """The same tensors and program, but eager's answer depends on a Python attribute."""

        def __init__(self, offset: float) -> None:
            super().__init__()
            self.offset = offset
            self.lin = nn.Linear(8, 4)

        def forward(self, x):
            return self.lin(x) + (self.offset if not torch.compiler.is_compiling() else 0.0)

    torch.manual_seed(0)
    a = Counting(0.0)
    torch.manual_seed(0)
    b = Counting(1.0)
    assert check(a, example(), mode="strict", case_id="p").status == "passed"
    outcome = check(b, example(), mode="non_strict", case_id="p")
    assert outcome.reused_from is None
    assert outcome.status == "failed" and outcome.failure.stage == "numerics"


class Plain(nn.Module):
    """No dropout, no batch norm: training and eval capture the same program."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.out = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.lin(x).relu())


class Stepping(Plain):
    """The same program in both modes, and a buffer every call mutates."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps.add_(1)
        return super().forward(x) + self.steps


def _shared_notes(outcome) -> list[str]:
    return [note for note in outcome.notes if "this capture is the program" in note]


def test_training_checks_the_decomposed_and_reloaded_programs_of_the_same_program_its_own_way():
    strict = check(seeded(Plain), example(), dynamic_shapes=BATCH, mode="strict", case_id="s")
    training = check(seeded(Plain), example(), dynamic_shapes=BATCH, mode="training", case_id="s")
    assert strict.status == training.status == "passed"
    assert not _shared_notes(strict)
    notes = _shared_notes(training)
    assert [note.split(":")[0] for note in notes] == ["decompose", "save/load"]
    assert all("the program strict" in note for note in notes)
    # not a reuse of strict's walk: training ran its own drawn shapes (train mode, gradients)
    assert training.reused_from is None and "run" in training.timings
    assert training.examples.accepted > 0
    assert training.graph == strict.graph  # the very core-ATen program strict built
    alone = check(seeded(Plain), example(), dynamic_shapes=BATCH, mode="training", case_id="s",
                             session=EngineSession(reuse=False))
    assert not _shared_notes(alone)
    assert (alone.status, alone.graph, alone.findings) == (training.status, training.graph, training.findings)


def test_programs_are_not_shared_across_different_programs_cases_or_with_reuse_off():
    check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="strict", case_id="n")
    # batch norm in train() is another program: training builds its own
    assert not _shared_notes(check(seeded(Normed), example(), dynamic_shapes=BATCH, mode="training",
                                              case_id="n"))
    check(seeded(Plain), example(), dynamic_shapes=BATCH, mode="strict", case_id="p")
    other_weights = check(seeded(Plain, seed=3), example(), dynamic_shapes=BATCH, mode="training",
                                     case_id="p")
    assert other_weights.status == "passed" and not _shared_notes(other_weights)
    check(seeded(Plain), example(), dynamic_shapes=BATCH, mode="strict", case_id="p")
    other_case = check(seeded(Plain), example(), dynamic_shapes=BATCH, mode="training", case_id="q")
    assert not _shared_notes(other_case)


def test_a_program_whose_buffer_a_run_mutated_is_proven_again_before_it_is_shared():
    # every run adds 1 to `steps`: what a shared program's buffers hold when it is taken decides
    # the training verdict, which must be the verdict of a training walk that built its own
    strict = check(seeded(Stepping), example(), dynamic_shapes=BATCH, mode="strict", case_id="m")
    training = check(seeded(Stepping), example(), dynamic_shapes=BATCH, mode="training", case_id="m")
    alone = check(seeded(Stepping), example(), dynamic_shapes=BATCH, mode="training", case_id="m2",
                             session=EngineSession(reuse=False))
    assert strict.status == "passed"
    assert (training.status, [f.kind for f in training.findings]) == (alone.status, [f.kind for f in alone.findings])
    assert training.status == "passed"


def test_the_programs_kept_for_the_next_mode_hold_no_tensor_of_the_model():
    import gc
    import weakref

    model = seeded(Stepping)
    held = [weakref.ref(t) for t in (*model.parameters(), *model.buffers())]
    # (non-strict: a strict capture's dynamo frame state keeps the weights it traced alive, torch's doing)
    assert check(model, example(), dynamic_shapes=BATCH, mode="non_strict", case_id="w").status == "passed"
    del model
    gc.collect()
    assert all(ref() is None for ref in held)
    # ... and the next mode still takes the decomposed program, bound to its own model's tensors
    training = check(seeded(Stepping), example(), dynamic_shapes=BATCH, mode="training", case_id="w")
    assert training.status == "passed" and len(_shared_notes(training)) == 2
