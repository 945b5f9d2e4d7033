"""The engine's pipeline table: every check name enables a step, a new step runs in order, ranges stay numbers."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore import pipeline
from exportcore.case import CHECKS
from exportcore.guards import ExportedRange, exported_ranges
from exportcore.pipeline import PIPELINE, Step


def test_every_check_name_enables_a_step_and_every_step_names_known_checks():
    enabling = {name for step in PIPELINE for name in step.enabled_by}
    assert enabling == set(CHECKS)
    assert len({step.name for step in PIPELINE}) == len(PIPELINE)


def test_a_step_added_to_the_table_runs_after_the_stages_with_their_results(monkeypatch):
    seen: list[tuple] = []

    def probe(run) -> None:
        seen.append((run.ep is not None, sorted(run.programs), run.reference is not None))
        run.finding("probe", "the added step ran")

    added = Step("probe", probe, ("dtype",))
    monkeypatch.setattr(pipeline, "PIPELINE", (*PIPELINE, added))
    outcome = exportcore.check(torch.nn.Linear(3, 3), (torch.randn(2, 3),), examples=0)
    assert outcome.status == "passed", outcome.failure
    assert seen == [(True, ["decomposed", "exported", "reloaded"], True)]
    assert [f.kind for f in outcome.findings] == ["probe"]

    # Its check name switched off, the step does not run.
    seen.clear()
    outcome = exportcore.check(torch.nn.Linear(3, 3), (torch.randn(2, 3),), checks=("numerics",), examples=0)
    assert outcome.status == "passed" and not seen and not outcome.findings


def test_a_failing_step_stops_the_walk_with_its_verdict(monkeypatch):
    later: list[str] = []

    def fails(run) -> None:
        from exportcore.outcome import Failure

        run.fail(Failure(stage="numerics", category="numerics", exc_type="Probe", message="stopped here"))

    steps = list(PIPELINE)
    at = next(i for i, s in enumerate(steps) if s.name == "numerics")
    steps[at + 1:at + 1] = [Step("fails", fails), Step("after", lambda run: later.append("ran"))]
    monkeypatch.setattr(pipeline, "PIPELINE", tuple(steps))
    outcome = exportcore.check(torch.nn.Linear(3, 3), (torch.randn(2, 3),), examples=0)
    assert outcome.status == "failed" and outcome.failure.message == "stopped here"
    assert later == []


def test_exported_ranges_are_numbers_and_text_only_in_the_outcome():
    class Lin(torch.nn.Module):
        def forward(self, x):
            return x * 2

    x = torch.randn(4, 3)
    spec = {"x": {0: Dim("b", min=2, max=16), 1: Dim("c", min=3)}}
    ep = torch.export.export(Lin(), (x,), dynamic_shapes=spec, strict=False)
    ranges = exported_ranges(ep)
    assert sorted((r.lo, r.hi) for r in ranges.values()) == [(2, 16), (3, None)]
    outcome = exportcore.check(Lin(), (x,), dynamic_shapes=spec, examples=2)
    assert outcome.range_constraints == {"b": "[2, 16]", "c": "[3, int_oo]"}


@pytest.mark.parametrize("lo, hi, text, floor, ceiling", [
    (2, None, "[2, int_oo]", 2, float("inf")),
    (None, None, "[-int_oo, int_oo]", 0, float("inf")),  # an unbacked symbol: unbounded sizes start at 0
    (0, 64, "[0, 64]", 0, 64),
])
def test_an_exported_range_prints_as_torch_does_and_bounds_sizes(lo, hi, text, floor, ceiling):
    r = ExportedRange(lo, hi)
    assert (r.text(), r.floor, r.ceiling) == (text, floor, ceiling)


class PythonRuntime:
    """A target adapter whose 'runtime' is the exported program itself: the target table under test, not a runtime."""

    name = "onnx"
    tolerance = (1e-5, 1e-6)

    def missing(self):
        return None

    def unsupported_device(self, device):
        return None

    def lower(self, ep, args, kwargs, workdir, options):
        from exportcore.targets.base import Lowered

        return Lowered(path=workdir, notes=["lowered in Python"])

    def load(self, lowered, ep, options, device):
        from exportcore.targets.base import flat_tensors

        module = ep.module()
        return lambda args, kwargs: flat_tensors(module(*args, **kwargs))

    def rejection(self, exc):
        from exportcore.guards import is_guard_error

        return is_guard_error(exc)


def test_a_target_walks_its_table_and_a_step_added_there_sees_the_loaded_runtime(monkeypatch):
    from exportcore.stages import runtime

    monkeypatch.setattr(runtime, "get_target", lambda name: PythonRuntime())
    monkeypatch.setattr(runtime, "unavailable", lambda name: None)
    seen: list[tuple] = []

    def probe(run) -> None:
        seen.append((run.runtime.name, run.runtime.runner is not None, run.runtime.stateful, run.ep is not None))

    table = pipeline.TARGET_PIPELINE
    at = [step.name for step in table].index("load") + 1
    monkeypatch.setattr(pipeline, "TARGET_PIPELINE", (*table[:at], Step("probe", probe), *table[at:]))
    torch.manual_seed(0)
    outcome = exportcore.check(torch.nn.Linear(4, 3), (torch.randn(4, 4),), dynamic_shapes=(
        {0: Dim("batch", min=2, max=16)},), target="onnx", examples=3, case_id="lin")
    assert outcome.status == "passed", outcome.failure and outcome.failure.headline()
    assert outcome.mode == "onnx" and seen == [("onnx", True, False, True)]
    assert {"lower", "load", "run", "guards"} <= set(outcome.timings)
    assert "lowered in Python" in outcome.notes
    kinds = {row.kind.split(" (")[0] for row in outcome.shape_table}
    assert {"example", "in range", "out of range"} <= kinds
    # ep.module() and this 'runtime' are one program: the same verdict in both columns, every row
    assert all(row.cells[".module()"] == row.cells["onnx"] for row in outcome.shape_table)

    assert any(row.cells["onnx"] == "rejected" for row in outcome.shape_table)
    assert outcome.examples.rejected >= 1


def test_modes_and_targets_run_the_same_numerics_drawn_shape_and_reject_checks():
    # One check per question, looping over the programs under test (exportcore.programs.under_test.sides): a
    # target's table names the very functions a mode's does, so a check changed or added there
    # serves both.
    from exportcore.checks import accept, numerics, reject

    by_name = {step.name: step.run for step in pipeline.PIPELINE}
    target = {step.name: step.run for step in pipeline.TARGET_PIPELINE}
    assert by_name["numerics"] is target["examples"] is numerics.run
    assert by_name["drawn shapes"] is target["drawn shapes"] is accept.run
    assert by_name["reject"] is target["reject"] is reject.run
