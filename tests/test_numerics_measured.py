"""Numerics as a number: every outcome keeps, per program compared, how much of its tolerance it used.

A model adds a known small error only while it is being exported (traced), so each program differs from
eager by an amount computed here by hand (and checked against bare torch): the outcome must carry
that amount as a fraction of ``atol + rtol * |eager|`` on a pass, past 1.0 on a failure, the
donor's numbers where a mode reuses another's results (memory and disk), and survive JSON.
"""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensor  # noqa: E402

import exportcore  # noqa: E402
from exportcore import EngineSession  # noqa: E402
from exportcore.compare import UNBOUNDED, Meter, compare, compare_with_reference  # noqa: E402
from exportcore.outcome import Outcome, ProgramError  # noqa: E402
from exportcore.reuse.result_cache import ResultCache  # noqa: E402

PROGRAMS = ["exported", "decomposed", "reloaded"]
F32_RTOL, F32_ATOL = 1e-4, 1e-5  # float32's defaults (exportcore.compare.tolerances)


def _exporting() -> bool:
    # torch.compiler.is_exporting is 2.7+; on 2.6 is_compiling is true while export traces (strict or not)
    return getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)()


class Planted(torch.nn.Module):
    """``2x`` in eager; the exported program adds ``delta`` times the batch size (more error at larger batches)."""

    def __init__(self, delta: float) -> None:
        super().__init__()
        self.delta = delta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2.0
        if _exporting():
            y = y + self.delta * x.shape[0]
        return y


def by_hand(delta: float, batch: int, rtol: float = F32_RTOL, atol: float = F32_ATOL) -> tuple[float, float, float]:
    """(fraction of the budget, max abs, max rel) on ones(batch, 4): eager 2.0, the program 2 + delta*batch (float32)."""
    eager = 2.0
    program = float(torch.tensor(eager + delta * batch, dtype=torch.float32))
    diff = abs(program - eager)
    return diff / (atol + rtol * eager), diff, diff / eager


def errors(outcome: Outcome) -> dict[str, ProgramError]:
    return {e.program: e for e in outcome.numerics}


def test_a_pass_carries_each_programs_measured_error_as_computed_by_hand() -> None:
    x = torch.ones(3, 4)
    out = exportcore.check(Planted(1e-5), (x,))
    assert out.status == "passed", out.failure
    fraction, max_abs, max_rel = by_hand(1e-5, 3)
    # bare torch: the exported program is off by exactly that much
    program = torch.export.export(Planted(1e-5), (x,)).module()(x)
    assert float((program.double() - (x * 2).double()).abs().max()) == pytest.approx(max_abs, rel=1e-12)
    found = errors(out)
    assert sorted(found) == sorted(PROGRAMS)
    for name in PROGRAMS:
        e = found[name]
        assert 0.1 < e.worst_fraction < 1.0  # measured on a pass, with headroom left
        assert e.worst_fraction == pytest.approx(fraction, rel=1e-9)
        assert e.max_abs == pytest.approx(max_abs, rel=1e-9) and e.max_rel == pytest.approx(max_rel, rel=1e-9)
        assert e.max_ulp == round(max_abs / 2.0 ** -22)  # float32 spacing in [2, 4)
        assert (e.where, e.inputs, e.samples, e.forgiven) == ("output", "the example inputs", 1, False)


def test_the_budget_is_the_users_tolerance_when_given() -> None:
    out = exportcore.check(Planted(1e-5), (torch.ones(3, 4),), rtol=0.0, atol=1e-4)
    fraction, _, _ = by_hand(1e-5, 3, rtol=0.0, atol=1e-4)
    assert out.status == "passed" and errors(out)["exported"].worst_fraction == pytest.approx(fraction, rel=1e-9)


def test_a_numerics_failure_measures_past_the_budget() -> None:
    out = exportcore.check(Planted(1e-3), (torch.ones(3, 4),))
    assert out.status == "failed" and out.failure.stage == "numerics"
    fraction, max_abs, _ = by_hand(1e-3, 3)
    e = errors(out)["exported"]  # the first program compared fails the case
    assert e.worst_fraction == pytest.approx(fraction, rel=1e-9) and e.worst_fraction > 1.0
    assert e.max_abs == pytest.approx(max_abs, rel=1e-9)


def test_drawn_shapes_are_measured_and_the_worst_names_its_shape() -> None:
    out = exportcore.check(Planted(1e-5), (torch.ones(3, 4),), dynamic_shapes={"x": {0: Dim("b", min=2, max=16)}},
                           examples=6)
    assert out.status == "passed", out.failure
    found = errors(out)
    exported = found["exported"]
    assert exported.samples > 1  # the examples and every drawn shape
    batch = json.loads(exported.inputs.split("args[0]=")[1].rstrip(")"))[0]
    assert exported.inputs.startswith("a drawn in-range shape (args[0]=[") and batch > 3
    assert exported.worst_fraction == pytest.approx(by_hand(1e-5, batch)[0], rel=1e-9)
    # decomposed and reloaded are proven ep.module()'s program, so not run again on drawn shapes:
    # what it measured there stands for them too
    for name in ("decomposed", "reloaded"):
        assert found[name].worst_fraction == exported.worst_fraction and found[name].samples == exported.samples


def test_a_mode_that_reuses_another_carries_the_donors_measurements() -> None:
    session = EngineSession()
    shapes = {"x": {0: Dim("b", min=2, max=16)}}
    x = torch.ones(3, 4)
    strict = exportcore.check(Planted(1e-5), (x,), dynamic_shapes=shapes, mode="strict", case_id="c", session=session)
    non_strict = exportcore.check(Planted(1e-5), (x,), dynamic_shapes=shapes, mode="non_strict", case_id="c",
                                  session=session)
    assert strict.reused_from is None and non_strict.reused_from == "strict"
    assert strict.numerics and non_strict.numerics == strict.numerics
    assert non_strict.numerics is not strict.numerics


def test_the_disk_cache_round_trips_the_measurements(tmp_path) -> None:
    def run() -> Outcome:
        return exportcore.check(Planted(1e-5), (torch.ones(3, 4),), dynamic_shapes={"x": {0: Dim("b", min=2, max=16)}},
                                mode="strict", case_id="c", session=EngineSession(ResultCache(tmp_path)))

    cold, warm = run(), run()
    assert (warm.reused_from or "").startswith("cache:")
    assert cold.numerics and warm.numerics == cold.numerics


def test_the_json_round_trips_and_an_older_report_loads_without_measurements() -> None:
    out = exportcore.check(Planted(1e-5), (torch.ones(3, 4),))
    again = Outcome.from_json(out.to_json())
    assert again.numerics == out.numerics and again == out
    older = out.to_dict()
    del older["numerics"]
    assert Outcome.from_dict(older).numerics == []


def test_leaves_are_measured_exact_ones_at_zero_or_unbounded() -> None:
    meter = Meter()
    eager = {"ids": torch.tensor([1, 2, 3]), "mask": torch.tensor([True, False]), "y": torch.tensor([2.0, 0.0])}
    program = {"ids": torch.tensor([1, 2, 3]), "mask": torch.tensor([True, False]), "y": torch.tensor([2.0001, 1e-6])}
    assert compare(eager, program, meter=meter) is None
    leaves = meter.leaves
    assert leaves["output['ids']"].fraction == leaves["output['mask']"].fraction == 0.0
    y = leaves["output['y']"]
    diff = float(torch.tensor(2.0001)) - 2.0
    assert y.fraction == pytest.approx(max(diff / (F32_ATOL + F32_RTOL * 2.0), 1e-6 / F32_ATOL), rel=1e-6)
    assert y.max_rel == pytest.approx(diff / 2.0, rel=1e-6)  # the element where eager is 0 has no relative error

    meter = Meter()
    found = compare(torch.tensor([1, 2]), torch.tensor([1, 5]), meter=meter)
    assert found is not None and meter.leaves["output"].fraction == UNBOUNDED and meter.leaves["output"].max_abs == 3
    meter = Meter()
    assert compare(torch.tensor([1.0, math.nan]), torch.tensor([1.0, 2.0]), meter=meter) is not None
    assert meter.worst().fraction == UNBOUNDED


def _exact(x: torch.Tensor) -> torch.Tensor:
    return (x.double().sum(-1) * 0.01 - 16.0 * x.shape[-1] * 0.01).to(x.dtype)


def _sequential(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(-1)[..., -1] * 0.01 - 16.0 * x.shape[-1] * 0.01


class Logits(torch.nn.Module):
    """Eager sums in double, the traced program in float32: past the plain tolerances, forgiven as rounding."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _sequential(x) if isinstance(x, FakeTensor) else _exact(x)


def _inputs() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(8, 10, 4096) + 16.0


def test_a_leaf_forgiven_as_rounding_reports_its_fraction_and_says_so() -> None:
    x = _inputs()
    meter = Meter()
    assert compare_with_reference(_exact(x), _sequential(x), _exact(x.double()), meter=meter) is None
    assert meter.worst().forgiven and meter.worst().fraction > 1.0
    out = exportcore.check(Logits(), (x,), mode="non_strict", checks=("numerics",))
    assert out.status == "passed", out.failure
    e = errors(out)["exported"]
    assert e.forgiven and e.worst_fraction > 1.0 and e.where == "output"


def test_a_targets_runtime_is_measured_against_its_own_budget() -> None:
    from exportcore.targets import unavailable

    if unavailable("aoti") is not None:
        pytest.skip(str(unavailable("aoti")))
    out = exportcore.check(Planted(1e-5), (torch.ones(3, 4),), target="aoti", rtol=0.0, atol=1e-4)
    assert out.status == "passed", out.failure
    e = errors(out)["aoti"]  # ep.module(), shown beside it and not judged, is the mode column's to measure
    assert [x.program for x in out.numerics] == ["aoti"]
    assert e.worst_fraction == pytest.approx(by_hand(1e-5, 3, rtol=0.0, atol=1e-4)[0], rel=1e-9)
    assert (e.where, e.inputs) == ("output[0]", "the example inputs")
