"""Memory: outcomes are plain data that keep nothing alive; a hundred exports in one process stay flat."""

from __future__ import annotations

import dataclasses
import gc
import json
import subprocess
import sys
import textwrap
import weakref

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore import outcome as outcome_module  # noqa: E402

PLAIN = (str, int, float, bool, type(None))
RECORDS = tuple(v for v in vars(outcome_module).values() if dataclasses.is_dataclass(v))


def _walk(value, where: str = "outcome") -> None:
    """Fail on anything but plain data and the outcome's own record types (no tensors, programs, frames)."""
    if isinstance(value, PLAIN):
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _walk(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str), f"{where}: key {k!r} is not a str"
            _walk(v, f"{where}.{k}")
    elif isinstance(value, RECORDS):
        for f in dataclasses.fields(value):
            _walk(getattr(value, f.name), f"{where}.{f.name}")
    else:
        raise AssertionError(f"{where} holds a {type(value).__module__}.{type(value).__qualname__}")


class Branchy(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:  # data-dependent: capture fails with a torch exception full of frames
            return self.lin(x)
        return x


class Broken(torch.nn.Module):
    def forward(self, x):
        return x @ torch.ones(7, 7)


class Hang(torch.nn.Module):
    def forward(self, x):
        while True:
            x = x + 0


CASES = {
    "passed": (lambda: torch.nn.Linear(4, 4),
               {"dynamic_shapes": {"input": {0: Dim("b", min=2, max=16)}}, "examples": 2}),
    "failed": (Branchy, {"examples": 0}),
    "error": (Broken, {"examples": 0}),
    "timeout": (Hang, {"examples": 0, "timeout": 0.3}),
}


@pytest.mark.parametrize("status", CASES)
def test_an_outcome_is_plain_data_and_keeps_neither_model_nor_program_alive(status):
    make, options = CASES[status]
    model = make()
    alive = weakref.ref(model)

    outcome = exportcore.check(model, (torch.randn(3, 4),), mode="non_strict", **options)

    assert outcome.status == status, outcome.failure
    _walk(outcome)
    _walk(outcome.to_dict())
    assert exportcore.Outcome.from_json(json.dumps(outcome.to_dict())) == outcome
    del model
    gc.collect()
    assert alive() is None, "something the check left behind still holds the user's model"


@pytest.mark.parametrize("status", ["passed", "failed", "error"])
def test_a_check_frees_its_own_programs_when_it_returns(status):
    # Exported programs and graph modules are reference cycles that hold the model's weights: left to
    # the collector's next full pass, a zoo's previous model (GPU memory too) lived on into the next case.
    make, options = CASES[status]
    model = make()
    held = [weakref.ref(model), *map(weakref.ref, model.parameters())]

    outcome = exportcore.check(model, (torch.randn(3, 4),), mode="non_strict", **options)

    assert outcome.status == status, outcome.failure
    del model
    assert [ref() for ref in held] == [None] * len(held), "the model outlived check() until a garbage collection"


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _check_passing(session: exportcore.EngineSession | None = None) -> exportcore.Outcome:
    return exportcore.check(torch.nn.Linear(4, 4), (torch.randn(3, 4),), mode="non_strict", examples=0, session=session)


def test_a_check_hands_the_collector_back_as_it_found_it():
    older = _Cycle()
    collected = []
    weakref.finalize(older, collected.append, True)
    del older  # garbage from before the check: collected after it, never lost
    assert _check_passing().status == "passed"
    with pytest.raises(TypeError, match="args must be a tuple"):
        exportcore.check(torch.nn.Linear(4, 4), [torch.randn(3, 4)])
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert collected == [True]


class _CyclicLinear(torch.nn.Linear):
    def __init__(self, features: int) -> None:
        super().__init__(features, features)
        self.__dict__["me"] = self  # a reference cycle (as a hook holding a bound method makes)


def test_garbage_older_than_a_check_waits_for_no_explicit_collection(monkeypatch):
    from exportcore.sandbox import heap

    session = exportcore.EngineSession()  # the collector's bookkeeping is the session's: the checks share one

    cyclic = _CyclicLinear(2048)  # 16 MiB of weights: a model that must not wait for the periodic collection
    assert sum(p.numel() * p.element_size() for p in cyclic.parameters()) >= heap.WATCH_BYTES
    outcome = exportcore.check(cyclic, (torch.randn(3, 2048),), mode="non_strict", examples=0, session=session)
    assert outcome.status == "passed"
    weight = weakref.ref(cyclic.weight)
    del cyclic  # only a full collection frees it, and the next check does not traverse older objects
    assert _check_passing(session).status == "passed"
    assert weight() is None, "a model from an earlier check outlived the next check"

    # The periodic collection, at a count this test can afford (64 checks by default).
    monkeypatch.setattr(heap, "FULL_EVERY", 3)
    older = _Cycle()
    collected = []
    weakref.finalize(older, collected.append, True)
    del older
    model = torch.nn.Linear(4, 4)
    for _ in range(heap.FULL_EVERY + 1):
        exportcore.check(model, (torch.randn(3, 4),), mode="non_strict", examples=0, session=session)
    assert collected == [True], f"older cyclic garbage outlived {heap.FULL_EVERY + 1} checks"


def test_smaller_models_lingering_together_wait_no_longer_than_one_large_one(monkeypatch):
    from exportcore.sandbox import heap

    session = exportcore.EngineSession()  # the collector's bookkeeping is the session's: the checks share one

    monkeypatch.setattr(heap, "FULL_EVERY", 10**6)  # only the weights decide here
    weights = []
    for _ in range(4):  # 4 MiB each: none is WATCH_BYTES alone, the four are
        cyclic = _CyclicLinear(1024)
        outcome = exportcore.check(cyclic, (torch.randn(3, 1024),), mode="non_strict", examples=0, session=session)
        assert outcome.status == "passed"
        weights.append(weakref.ref(cyclic.weight))
        del cyclic
    assert sum(ref() is not None for ref in weights) == 4, "freed before any full collection: the test proves nothing"
    assert _check_passing(session).status == "passed"
    assert [ref() for ref in weights] == [None] * 4, "models of earlier checks, 16 MiB together, outlived the next check"


def test_a_check_leaves_a_frozen_heap_and_a_disabled_collector_alone():
    gc.collect()
    gc.freeze()  # a fork server's own freeze: check() must not hand these objects back
    try:
        frozen = gc.get_freeze_count()
        assert _check_passing().status == "passed"
        # neither handed back (0) nor frozen more; objects that died meanwhile left the count
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        assert _check_passing().status == "passed"
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


SCRIPT = textwrap.dedent("""
    import ctypes, gc, sys
    import torch, exportcore
    from torch.export import Dim

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim  # hand freed heap back, so RSS shows live memory
    except (OSError, AttributeError):
        trim = lambda pad: 0

    def rss_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    class Big(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(16, 16)
            self.register_buffer("table", torch.ones(1024, 1024))  # 4 MiB: a case kept alive shows

        def forward(self, x):
            return self.lin(x) + self.table[: x.shape[0], :16]

    seen = {}
    for i in range(1, 101):
        outcome = exportcore.check(
            Big(), (torch.randn(4, 16),), dynamic_shapes={"x": {0: Dim("b", min=2, max=32)}},
            mode="non_strict", examples=0, checks=("numerics", "serialize"), case_id=f"case{i}",
        )
        assert outcome.status == "passed", outcome.failure
        if i in (20, 100):
            gc.collect()
            trim(0)
            seen[i] = rss_mib()
    print(seen[20], seen[100])
""")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads RSS from /proc")
def test_a_hundred_exports_in_one_process_do_not_grow_without_bound():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    at_20, at_100 = map(float, done.stdout.split())
    # Measured ~0.1 MiB per export (torch 2.14 keeps each export's ShapeEnv alive through a C++
    # reference cycle). Keeping a case's model or program alive would add >= 4 MiB per case (320 MiB).
    assert at_100 - at_20 < 48, f"RSS grew from {at_20:.0f} MiB to {at_100:.0f} MiB over 80 exports"
