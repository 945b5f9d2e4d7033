"""ShapesSpec / ParamsSpec (torch >= 2.14) as a dynamic_shapes style: parsed, drawn, accepted, rejected.

On an older torch the module does not exist: these tests skip, and a test that imports it
gets a hint naming the installed torch (tests/integration/test_marker_errors.py covers the plugin path).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings

import exportcore
from exportcore.shapes import ShapeSpec, valid_assignments
from exportcore.shapes.shapes_spec import export_accepts_shapes_spec, is_shapes_spec, unavailable_hint

ds = pytest.importorskip("torch.fx.experimental.dynamic_spec", reason="ShapesSpec/ParamsSpec: torch >= 2.14")


class Pair(torch.nn.Module):
    def forward(self, x, y):
        return x.sum(0) + y[: x.shape[0]].sum(0)


def _pair_spec():
    b = ds.ShapeVar("batch", min=2, max=32)
    return ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([b, 3]), "y": ds.TensorSpec([b * 2, 3])}))


ARGS = (torch.randn(4, 3), torch.randn(8, 3))


def test_shapes_spec_is_recognised_by_class():
    assert is_shapes_spec(_pair_spec()) and is_shapes_spec(ds.ParamsSpec({}))
    assert not is_shapes_spec({"x": None})


def test_parsed_roots_ranges_and_derived_axes():
    spec = ShapeSpec.from_export_spec(_pair_spec(), ARGS, None, model=Pair())
    assert spec.declared_ranges() == {"batch": "[2, 32]"}
    assert spec.example_assignment() == {"batch": 4}
    assert spec.shapes_for({"batch": 5}) == {"args[0]": (5, 3), "args[1]": (10, 3)}
    assert list(spec.derived) == ["2*batch"]


def test_params_spec_shorthand_and_unbacked_size_one_is_drawable():
    spec = ShapeSpec.from_export_spec(ds.ParamsSpec({"x": ds.TensorSpec([ds.ShapeVar("n", max=8), None])}),
                                      (torch.randn(4, 3), torch.randn(2, 3)), None, model=Pair())
    # ShapesSpec dims are unbacked: torch does not specialize 0/1 for them.
    assert spec.root_range("n") == (1, 8)
    drawn: list[int] = []

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(valid_assignments(spec))
    def draw(assignment: dict[str, int]) -> None:
        drawn.append(assignment["n"])

    draw()
    assert 1 in drawn and 0 not in drawn


@pytest.mark.parametrize(("make", "message"), [
    (lambda: ds.ShapesSpec({"x": ds.TensorSpec([ds.ShapeVar("b"), 3]), "z": None}),
     r"ParamsSpec names \['z'\] are not parameters of forward \['x', 'y'\]"),
    (lambda: ds.ShapesSpec({"x": ds.TensorSpec([ds.ShapeVar("b")])}), r"dynamic_shapes\['x'\]: has 1 entries"),
    (lambda: ds.ShapesSpec({"x": ds.TensorSpec([ds.ShapeVar("b", min=10, max=20), 3])}),
     r"example size 4 is outside the declared range of b \[10, 20\]"),
    (lambda: (lambda b: ds.ShapesSpec({"x": ds.TensorSpec([b, 3])}, assumptions=[b % 2 == 0]))(ds.ShapeVar("b")),
     r"ShapesSpec assumptions .* are not supported"),
])
def test_bad_shapes_spec_names_the_field(make, message):
    with pytest.raises(ValueError, match=message):
        ShapeSpec.from_export_spec(make(), ARGS, None, model=Pair())


EXPORT_TAKES_IT = export_accepts_shapes_spec()
needs_export_support = pytest.mark.skipif(not EXPORT_TAKES_IT, reason="this torch's export does not take a ShapesSpec")


@pytest.mark.skipif(EXPORT_TAKES_IT, reason="this torch's export takes a ShapesSpec")
def test_a_torch_with_the_module_but_not_the_export_support_gets_a_clear_error():
    # torch 2.13 ships torch.fx.experimental.dynamic_spec, but its export fails on the spec with
    # "object of type 'ShapesSpec' has no len()": the case's input, said as such, before any export.
    with pytest.raises(ValueError, match=r"dynamic_shapes: a ShapesSpec/ParamsSpec needs a torch whose export accepts it"):
        exportcore.check(Pair(), ARGS, dynamic_shapes=_pair_spec(), mode="non_strict", examples=0)


@needs_export_support
@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_check_accepts_in_spec_and_the_graph_asserts_reject_out_of_spec(mode):
    outcome = exportcore.check(Pair(), ARGS, dynamic_shapes=_pair_spec(), mode=mode, examples=4)
    assert outcome.status == "passed", outcome.failure and outcome.failure.headline()
    assert outcome.examples.accepted >= 4 and outcome.examples.rejected >= 3
    # Out-of-range sizes and a broken y = 2*x relation raise torch's runtime assertions, which
    # are a ShapesSpec's guards: nothing is reported as passing the guards.
    assert [f.kind for f in outcome.findings if f.kind == "reject_unguarded"] == []


@needs_export_support
def test_branch_on_a_shapes_spec_dim_fails_instead_of_specializing():
    class Branch(torch.nn.Module):
        def forward(self, x):
            return x * 3 if x.shape[0] > 16 else x * 2

    spec = ds.ShapesSpec({"x": ds.TensorSpec([ds.ShapeVar("n", min=2, max=32), 3])})
    outcome = exportcore.check(Branch(), (torch.randn(4, 3),), dynamic_shapes=spec, mode="non_strict", examples=6)
    # Unbacked dims cannot be guarded on: export refuses rather than keeping only the example's branch.
    assert outcome.status == "failed" and outcome.failure.stage == "capture", outcome.failure


def test_hint_for_a_missing_dynamic_spec_module_names_the_torch_version():
    hint = unavailable_hint("ModuleNotFoundError: No module named 'torch.fx.experimental.dynamic_spec'")
    assert "torch >= 2.14" in hint and "installed torch is 2." in hint
    assert unavailable_hint("ModuleNotFoundError: No module named 'onnx'") == ""
