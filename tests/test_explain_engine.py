"""exportcore.diagnosis.explain: guard solving, spec rewriting and the verified fix, on real exports where it matters."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.diagnosis.explain.bounds import solve, violations
from exportcore.diagnosis.explain.specs import render_spec, replace_bounds, spec_changes
from exportcore.outcome import Explanation, Outcome, SchemaError, SpecFix
from exportcore.shapes.parse import read_form
from exportdb.registry import parse_version

TORCH = parse_version(torch.__version__)
# torch 2.6/2.7 do not guard a strided conv's output against size 1 (the intermediate sizes'
# 0/1 specialization arrived in 2.8, measured on 2.6, 2.7, 2.8): the Stem below exports for every h >= 2.
SIZE_ONE_GUARDED = TORCH >= (2, 8)
# torch before 2.13 first guards the parity of a strided stack's size, ((h - 1) // 2) % 2 != 0, not
# its lower bound (measured: resnet18 on 2.6 to 2.12 and 2.14; the strided ExportDB stack on 2.6 to 2.13).
PARITY_GUARD = TORCH < (2, 13)

CONV_MESSAGE = """Constraints violated (h, w)! For more information, run with TORCH_LOGS="+dynamic".
  - Not all values of w = L['x'].size()[3] in the specified range 32 <= w <= 128 satisfy the generated guard (1 + (((-1) + L['x'].size()[3]) // 32)) != 1.
  - Not all values of h = L['x'].size()[2] in the specified range 32 <= h <= 128 satisfy the generated guard (1 + (((-1) + L['x'].size()[2]) // 32)) != 1.
"""


def test_conv_guard_solves_to_min_33() -> None:
    found = violations(CONV_MESSAGE)
    assert [(v.name, v.source) for v in found] == [("w", "L['x'].size()[3]"), ("h", "L['x'].size()[2]")]
    solved = {s.name: s for s in solve(found, {"w": (32, 128), "h": (32, None)}, {"w": 64, "h": 64})}
    assert solved["w"].bounds == (33, 128)
    assert solved["h"].bounds == (33, None)  # an unbounded max stays unbounded
    assert solved["w"].guards == ("(1 + (((-1) + w) // 32)) != 1",)


def test_round_and_floor_keep_python_semantics() -> None:
    # round() rounds half to even: round(2 / 2) == 1 breaks the guard, round(3 / 2) == 2 does not.
    msg = ("  - Not all values of n = L['x'].size()[0] in the specified range n <= 64 satisfy the generated "
           "guard round(L['x'].size()[0] / 2) != 1.")
    assert solve(violations(msg), {"n": (2, 64)}, {"n": 8})[0].bounds == (3, 64)
    floor = msg.replace("round(", "math.floor(")
    assert solve(violations(floor), {"n": (2, 64)}, {"n": 8})[0].bounds == (4, 64)


def test_every_other_value_becomes_a_derived_dim() -> None:
    msg = ("  - Not all values of n = L['x'].size()[0] in the specified range n <= 64 satisfy the generated "
           "guard (L['x'].size()[0] // 2) == (L['x'].size()[0] + (-1)*(L['x'].size()[0] // 2)).")
    solution = solve(violations(msg), {"n": (2, 64)}, {"n": 16})[0]
    assert (solution.bounds, solution.step) == ((2, 64), 2)
    spec = replace_bounds(read_form({"x": {0: Dim("n", min=2, max=64)}}), {"n": solution.bounds}, {"n": 2})
    assert render_spec(spec) == "_n = Dim('_n', min=1, max=32)\ndynamic_shapes={'x': {0: 2 * _n}}"


def test_a_guard_true_everywhere_is_not_fixed_by_a_range() -> None:
    msg = ("  - Not all values of n = L['x'].size()[0] in the specified range n <= 64 satisfy the generated "
           "guard round(L['x'].size()[0] / 2) >= 0.")
    solution = solve(violations(msg), {"n": (2, 64)}, {"n": 8})[0]
    assert solution.bounds is None and "torch cannot prove it" in solution.note


def test_unreadable_guard_is_reported_not_guessed() -> None:
    msg = ("  - Not all values of n = L['x'].size()[0] in the specified range n <= 64 satisfy the generated "
           "guard L['y'].size()[0] <= L['x'].size()[0].")
    solution = solve(violations(msg), {"n": (2, 64)}, {"n": 8})[0]
    assert solution.bounds is None and "cannot read the guard" in solution.note


def test_replace_bounds_keeps_shared_and_derived_dims() -> None:
    w = Dim("w", min=32, max=128)
    spec = read_form({"x": {2: w, 3: w}, "y": (2 * w + 1, None), "z": [Dim.AUTO]})
    new = replace_bounds(spec, {"w": (33, 128)})
    built = new.build()
    assert built["x"][2] is built["x"][3] and built["x"][2].min == 33
    assert built["y"][0].min == 67 and built["y"][1] is None
    assert spec.bounds() == {"w": (32, 128)}
    assert render_spec(new) == "w = Dim('w', min=33, max=128)\ndynamic_shapes={'x': {2: w, 3: w}, 'y': (2 * w + 1, None), 'z': [Dim.AUTO]}"
    assert spec_changes(spec, new)[0] == "dynamic_shapes['x'][2]: w [32, 128] -> w [33, 128]"
    assert replace_bounds(spec, {"w": (64, 64)}).build()["x"][2] == 64  # one value left: static


class Stem(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, 2, 1), torch.nn.Conv2d(4, 4, 3, 2, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).mean((2, 3))


@pytest.mark.skipif(SIZE_ONE_GUARDED, reason="this torch guards a conv output against size 1: see the next test")
def test_torch_without_size_one_guards_exports_the_stem_as_it_is() -> None:
    outcome = exportcore.check(Stem(), (torch.randn(1, 3, 16, 16),), dynamic_shapes={"x": {2: Dim("h", min=2, max=64)}},
                               examples=2)
    assert outcome.status == "passed" and outcome.explanation is None, outcome.failure


@pytest.mark.skipif(not SIZE_ONE_GUARDED, reason="torch < 2.8 exports this Stem for every h >= 2: nothing to fix")
def test_check_verifies_the_fix_and_passing_cases_pay_nothing() -> None:
    shapes = {"x": {2: Dim("h", min=2, max=64)}}
    outcome = exportcore.check(Stem(), (torch.randn(1, 3, 16, 16),), dynamic_shapes=shapes, examples=2)
    assert outcome.status == "failed"
    fix = outcome.explanation.fix
    assert fix.status == "verified", fix
    assert "h = Dim('h', min=" in fix.dynamic_shapes
    new_min = int(fix.dynamic_shapes.split("min=")[1].split(",")[0])
    assert new_min > 2
    # The fix is what it claims: the same model exports with it.
    again = exportcore.check(Stem(), (torch.randn(1, 3, 16, 16),), examples=2, explain="off",
                             dynamic_shapes={"x": {2: Dim("h", min=new_min, max=64)}})
    assert again.status == "passed", again.failure
    off = exportcore.check(Stem(), (torch.randn(1, 3, 16, 16),), dynamic_shapes=shapes, examples=2, explain="off")
    assert off.status == "failed" and off.explanation is None
    ok = exportcore.check(Stem(), (torch.randn(1, 3, 16, 16),), examples=2, explain="full")
    assert ok.status == "passed" and ok.explanation is None


def test_bad_explain_argument_names_it() -> None:
    with pytest.raises(ValueError, match="explain must be"):
        exportcore.check(Stem(), (torch.randn(1, 3, 16, 16),), explain="yes")


def test_explanation_round_trips_and_bad_fields_are_named() -> None:
    outcome = Outcome("c", "strict", status="failed",
                      explanation=Explanation(fix=SpecFix("verified", "dynamic_shapes=None", exports=1, seconds=0.5)))
    assert Outcome.from_json(outcome.to_json()) == outcome
    data = outcome.to_dict()
    data["explanation"]["fix"]["exports"] = "one"
    with pytest.raises(SchemaError, match=r"outcome.explanation.fix.exports must be int"):
        Outcome.from_dict(data)
    data = outcome.to_dict()
    del data["explanation"]  # reports written before explanations existed still load
    assert Outcome.from_dict(data).explanation is None


def test_resnet18_gets_a_verified_min_33() -> None:
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18(num_classes=10)
    shapes = {"x": {2: Dim("h", min=32, max=128), 3: Dim("w", min=32, max=128)}}
    outcome = exportcore.check(model, (torch.randn(1, 3, 64, 64),), dynamic_shapes=shapes, examples=2)
    fix = outcome.explanation.fix
    assert fix.status == "verified", fix
    if PARITY_GUARD:  # the only range around the example 64 where ((h - 1) // 2) is odd
        assert outcome.status == "failed" and outcome.failure.exportdb_case == "floordiv_on_size"
        assert fix.dynamic_shapes.splitlines()[:2] == ["h = Dim('h', min=63, max=64)", "w = Dim('w', min=63, max=64)"]
        return
    assert outcome.status == "failed" and outcome.failure.exportdb_case == "conv_output_size_guard"
    assert fix.dynamic_shapes.splitlines()[:2] == ["h = Dim('h', min=33, max=128)", "w = Dim('w', min=33, max=128)"]


def test_a_runtime_guard_rejection_is_solved_too() -> None:
    # Strict mode exports the strided stack and only its program rejects small in-spec sizes.
    from exportdb.registry import get

    case = get("conv_output_size_guard").instantiate()
    outcome = exportcore.check_case(case, "strict", examples=2)
    fix = outcome.explanation.fix
    assert fix.status == "verified", fix
    if PARITY_GUARD:  # export itself refuses the parity; around the example 32 only [31, 32] keeps it
        assert (outcome.status, outcome.failure.stage) == ("failed", "constraints")
        assert "h = Dim('h', min=31, max=32)" in fix.dynamic_shapes
        return
    assert (outcome.status, outcome.failure.stage) == ("failed", "guards")
    assert "h = Dim('h', min=9, max=64)" in fix.dynamic_shapes


def test_a_fix_that_does_not_export_is_only_suggested() -> None:
    from types import SimpleNamespace

    from exportcore.diagnosis.explain.fix import corrected_spec
    from exportcore.outcome import Failure
    from exportcore.shapes import ShapeSpec

    failure = Failure(stage="constraints", category="torch.dynamic-shape", exc_type="UserError",
                      message="Constraints violated (h, w)!", detail=CONV_MESSAGE)
    shapes = {"x": {2: Dim("h", min=32, max=128), 3: Dim("w", min=32, max=128)}}
    spec = ShapeSpec.from_export_spec(shapes, (torch.randn(1, 3, 64, 64),))  # the fix reads the parsed spec
    run = SimpleNamespace(
        outcome=Outcome("c", "non_strict", status="failed", failure=failure), spec=spec, model=None, args=(),
        kwargs={}, mode=SimpleNamespace(name="non_strict"), examples=2, inputs=None, seed=0, session=None,
        findings_as_errors=False, device="cpu", dynamic_shapes=shapes,
    )
    broken = Failure(stage="numerics", category="numerics", exc_type="ValueMismatch", message="outputs differ")

    def recheck(case, options, session):
        assert case.dynamic_shapes["x"][2].min == 33 and options.explain == "off"
        assert options.device == "cpu"  # verified on the run's device, where its model and examples are
        assert session is run.session  # the run's own session
        return Outcome("c", "non_strict", status="failed", failure=broken)

    fix = corrected_spec(run, recheck)
    assert fix.status == "suggested" and fix.exports == 1
    assert fix.reason.startswith("exported, but its checks failed: [numerics] numerics: ValueMismatch: outputs differ")
    assert "h = Dim('h', min=33, max=128)" in fix.dynamic_shapes


def test_a_rendered_spec_reads_as_the_user_wrote_it_on_every_torch():
    # torch 2.6/2.7 spell hints as enum members (no .type): Dim.DYNAMIC and Dim.STATIC once read Dim.AUTO
    b = Dim("b", min=2, max=8)
    spec = read_form({"x": {0: Dim.DYNAMIC, 1: Dim.STATIC, 2: 2 * b + 1, 3: b, 4: Dim.AUTO}})
    assert render_spec(spec) == ("b = Dim('b', min=2, max=8)\n"
                                 "dynamic_shapes={'x': {0: Dim.DYNAMIC, 1: Dim.STATIC, 2: 2 * b + 1, 3: b, 4: Dim.AUTO}}")
    assert spec.bounds() == {"b": (2, 8)}
