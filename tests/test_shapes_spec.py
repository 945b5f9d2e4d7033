"""ShapeSpec parses every dynamic_shapes form torch.export 2.14 accepts, and names bad fields."""

from __future__ import annotations

import subprocess
import sys
from collections import namedtuple

import pytest
import torch
import torch.export
from torch.export import Dim, ShapesCollection

from exportcore.shapes import ShapeSpec

# torch 2.6/2.7 spell Dim.AUTO/DYNAMIC/STATIC as members of the _DimHint enum, which take no
# min/max; from 2.8 they are callable (Dim.AUTO(max=8)).
HINT_BOUNDS = callable(Dim.AUTO)
needs_hint_bounds = pytest.mark.skipif(
    not HINT_BOUNDS, reason="this torch's Dim.AUTO/Dim.DYNAMIC take no min/max (the _DimHint enum is not callable before 2.8)")

Pair = namedtuple("Pair", "left right")


class TwoInputs(torch.nn.Module):
    def forward(self, x, y, mask=None):
        return x


def axes_roots(spec: ShapeSpec) -> dict[str, list]:
    return {s.path: [a.root for a in s.axes] for s in spec.tensors}


def test_derived_dims_share_a_root_and_shapes_follow_it():
    b = Dim("b", min=2, max=64)
    spec = ShapeSpec.from_export_spec({"x": {0: b}, "y": {0: b + 1}}, (torch.ones(4, 16), torch.ones(5)), None, model=TwoInputs())
    assert list(spec.roots) == ["b"]
    assert spec.dims["b"] == (2, 64, "named")
    assert spec.declared_ranges() == {"b": "[2, 64]"}
    assert spec.roots["b"].example == 4
    assert {k: str(e) for k, (_, e) in spec.derived.items()} == {"b + 1": "b + 1"}
    assert spec.shapes_for({"b": 7}) == {"args[0]": (7, 16), "args[1]": (8,)}


def test_chained_derivations_compose_on_the_root():
    d = Dim("d", min=2, max=10)
    spec = ShapeSpec.from_export_spec(({0: 2 * d + 1}, {0: (2 * d + 1) + 3}), (torch.ones(7), torch.ones(10)), None)
    assert spec.roots["d"].example == 3
    assert spec.shapes_for({"d": 5}) == {"args[0]": (11,), "args[1]": (14,)}
    assert spec.root_range("d") == (2, 10)


def test_example_size_not_of_the_derived_form_names_the_field():
    d = Dim("d", min=2, max=10)
    with pytest.raises(ValueError, match=r"dynamic_shapes\[0\]\[0\].*not of the form 2\*d"):
        ShapeSpec.from_export_spec(({0: 2 * d},), (torch.ones(7),), None)


def test_dim_hints_become_anonymous_roots_named_after_their_axis():
    spec = ShapeSpec.from_export_spec(({0: Dim.AUTO, 1: Dim.DYNAMIC, 2: Dim.STATIC},), (torch.ones(7, 4, 2),), None)
    assert spec.dims == {"args[0].shape[0]": (0, 7 + 16, "auto"), "args[0].shape[1]": (0, 4 + 16, "dynamic")}
    assert spec.declared_ranges()["args[0].shape[0]"] == "[0, int_oo]"
    assert spec.tensors[0].axes[2].static


@needs_hint_bounds
def test_bounded_dim_hints_keep_their_bounds():
    spec = ShapeSpec.from_export_spec(
        ({0: Dim.AUTO, 1: Dim.DYNAMIC(min=3, max=9), 2: Dim.STATIC, 3: Dim.AUTO(min=4)},), (torch.ones(7, 4, 2, 5),), None
    )
    assert spec.dims == {
        "args[0].shape[0]": (0, 7 + 16, "auto"),
        "args[0].shape[1]": (3, 9, "dynamic"),
        "args[0].shape[3]": (4, 5 + 16, "auto"),
    }
    assert spec.declared_ranges()["args[0].shape[0]"] == "[0, int_oo]"
    assert spec.tensors[0].axes[2].static


def test_unbounded_dims_are_capped_and_int_oo_never_leaks():
    spec = ShapeSpec.from_export_spec(({0: Dim("n")},), (torch.ones(5),), None)
    lo, hi = spec.root_range("n")
    assert (lo, hi) == (2, 5 + 16)
    assert all(isinstance(v, int) for r in spec.dims.values() for v in r[:2])


def test_tuple_list_none_and_int_forms():
    b = Dim("b", min=2, max=8)
    args = (torch.ones(3, 4), torch.ones(3, 2), torch.ones(6))
    spec = ShapeSpec.from_export_spec([(b, 4), [b, None], None], args, None)
    assert axes_roots(spec) == {"args[0]": ["b", None], "args[1]": ["b", None], "args[2]": [None]}
    with pytest.raises(ValueError, match=r"dynamic_shapes\[0\]\[1\]: static size 5 does not match the example's size 4"):
        ShapeSpec.from_export_spec([(b, 5), None, None], args, None)


def test_nested_pytrees_and_kwargs_use_forward_names():
    b = Dim("b", min=2, max=8)

    class Nested(torch.nn.Module):
        def forward(self, ids, extra, *, mask):
            return ids

    args = (torch.ones(3, dtype=torch.long), {"a": [torch.ones(3, 2), 1.5], "p": Pair(torch.ones(2), torch.ones(3))})
    shapes = {"ids": {0: b}, "extra": {"a": [{0: b}, None], "p": (None, (b,))}, "mask": (b, b + 1)}
    spec = ShapeSpec.from_export_spec(shapes, args, {"mask": torch.ones(3, 4)}, model=Nested())
    assert axes_roots(spec) == {
        "args[0]": ["b"],
        "args[1]['a'][0]": ["b", None],
        "args[1]['p'].left": [None],
        "args[1]['p'].right": ["b"],
        "kwargs['mask']": ["b", "b"],
    }
    assert spec.shapes_for({"b": 5})["kwargs['mask']"] == (5, 6)


def test_var_keyword_inputs_can_be_named_at_the_top_level():
    b = Dim("b", min=2, max=8)

    class Loose(torch.nn.Module):
        def forward(self, x, *rest, **extra):
            return x

    args = (torch.ones(3), torch.ones(3, 2))
    kwargs = {"mask": torch.ones(3), "flag": True}
    spec = ShapeSpec.from_export_spec({"x": (b,), "rest": ((b, 2),), "mask": (b,), "flag": None}, args, kwargs, model=Loose())
    assert axes_roots(spec) == {"args[0]": ["b"], "args[1]": ["b", None], "kwargs['mask']": ["b"]}
    spec = ShapeSpec.from_export_spec({"x": (b,), "rest": None, "extra": {"mask": (b,), "flag": None}}, args, kwargs, model=Loose())
    assert axes_roots(spec)["kwargs['mask']"] == ["b"]
    with pytest.raises(ValueError, match=r"dynamic_shapes\['extra'\]: keys \['mask'\] do not match the input's keys \['mask', 'flag'\]"):
        ShapeSpec.from_export_spec({"x": (b,), "rest": None, "mask": (b,)}, args, kwargs, model=Loose())


def test_dict_form_without_model_maps_names_to_positions_and_kwargs():
    b = Dim("b", min=2, max=8)
    spec = ShapeSpec.from_export_spec({"x": {0: b}, "mask": {1: b}}, (torch.ones(3),), {"mask": torch.ones(2, 3)})
    assert axes_roots(spec) == {"args[0]": ["b"], "kwargs['mask']": [None, "b"]}


def test_shapes_collection_with_and_without_model():
    b = Dim("b", min=2, max=8)
    x, y = torch.ones(3, 4), torch.ones(3)
    sc = ShapesCollection()
    sc[x] = {0: b}
    sc[y] = (b,)
    for model in (TwoInputs(), None):
        spec = ShapeSpec.from_export_spec(sc, (x,), {"y": y}, model=model)
        assert axes_roots(spec) == {"args[0]": ["b", None], "kwargs['y']": ["b"]}


@pytest.mark.skipif(not hasattr(torch.export, "AdditionalInputs"), reason="torch.export.AdditionalInputs: torch >= 2.8")
def test_additional_inputs_mark_the_varying_axes_dynamic():
    ai = torch.export.AdditionalInputs()
    ai.add((torch.ones(5, 4), torch.ones(6)))
    ai.add((torch.ones(7, 4), torch.ones(6)))
    spec = ShapeSpec.from_export_spec(ai, (torch.ones(3, 4), torch.ones(6)), None)
    assert spec.dims == {"args[0].shape[0]": (0, 19, "dynamic")}


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"x": {0: Dim("b")}, "z": None}, r"top-level keys \['x', 'z'\] must be the forward's argument names \['x', 'y'\]"),
        ({"x": (Dim("b"),), "y": None}, r"dynamic_shapes\['x'\]: has 1 entries but args\[0\] has rank 2"),
        ({"x": {2: Dim("b")}, "y": None}, r"dynamic_shapes\['x'\]: axis 2 is not an axis of args\[0\]"),
        ({"x": {0: "b"}, "y": None}, r"dynamic_shapes\['x'\]\[0\]: expected None, an int, a Dim"),
        ({"x": {0: Dim("b", max=8)}, "y": {0: Dim("b", max=9)}}, r"dynamic_shapes\['y'\]\[0\]: dim 'b' is defined twice"),
        ((None,), r"dynamic_shapes: has 1 entries but the inputs have 2"),
        (Dim.AUTO, r"dynamic_shapes: expected a dict, tuple, list"),
    ],
)
def test_mismatched_specs_name_the_field(shapes, message):
    with pytest.raises(ValueError, match=message):
        ShapeSpec.from_export_spec(shapes, (torch.ones(3, 4), torch.ones(3)), None, model=TwoInputs())


def test_shape_for_a_non_tensor_input_is_refused():
    with pytest.raises(ValueError, match=r"dynamic_shapes\[1\]: cannot give a shape .* non-tensor input args\[1\]"):
        ShapeSpec.from_export_spec(({0: Dim("b")}, {0: Dim("b")}), (torch.ones(3), "text"), None)


def test_bad_args_and_kwargs_types():
    with pytest.raises(TypeError, match="args must be a tuple"):
        ShapeSpec.from_export_spec(None, [torch.ones(3)], None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="kwargs must be a dict"):
        ShapeSpec.from_export_spec(None, (torch.ones(3),), [1])  # type: ignore[arg-type]


def test_root_range_is_solved_from_derived_floors():
    d = Dim("d", min=2, max=10)
    # torch guards the derived size d - 1 >= 2 (measured), so d starts at 3
    spec = ShapeSpec.from_export_spec(({0: d}, {0: d - 1}), (torch.ones(5), torch.ones(4)), None)
    assert spec.root_range("d") == (3, 10)
    # the floor is on sizes: a root that is never a size itself starts at its declared min (size 2 here)
    phantom = Dim("p", min=1, max=8)
    spec = ShapeSpec.from_export_spec(({0: 2 * phantom},), (torch.ones(6),), None)
    assert spec.root_range("p") == (1, 8)
    # ... unless it is also a size somewhere: then that size's floor holds it at 2
    spec = ShapeSpec.from_export_spec(({0: phantom}, {0: 2 * phantom}), (torch.ones(3), torch.ones(6)), None)
    assert spec.root_range("p") == (2, 8)
    # torch's default min=0 says nothing: the root still starts at 1 (0 would be "no min given")
    spec = ShapeSpec.from_export_spec(({0: Dim("q", max=8) + 2},), (torch.ones(6),), None)
    assert spec.root_range("q") == (1, 8)


def test_unsatisfiable_spec_names_the_dims():
    d = Dim("d", min=2, max=10)
    with pytest.raises(ValueError, match=r"unsatisfiable: dim 'd' declared \[2, 10\] has no valid size \(d - 20 >= 2 needs d >= 22\)"):
        ShapeSpec.from_export_spec(({0: d - 20},), (torch.ones(3),), None)
    with pytest.raises(ValueError, match=r"dim 'b' declared \[0, 1\] .*specializes sizes below 2"):
        ShapeSpec.from_export_spec(({0: Dim("b", max=1)},), (torch.ones(1),), None)


@pytest.mark.parametrize("spec, shapes, message", [
    # torch 2.14.1 refuses each of these ("2 not in range [10, 20]", "... specialized it to be a constant (1)",
    # "Expected input L['x'].size()[1] to be equal to 2*b, where b = 4, but got 10")
    ({0: Dim("b", min=10, max=20)}, [(2, 4)], r"\[0\]\[0\]: example size 2 is outside the declared range of b \[10, 20\]"),
    ({0: Dim("b", min=3)}, [(1, 4)], r"example size 1 is outside the declared range of b \[3, int_oo\]"),
    ({0: Dim("b", max=5)}, [(6, 4)], r"example size 6 is outside the declared range of b \[0, 5\]"),
    ({1: Dim("b", min=4, max=8) * 2}, [(3, 20)], r"\[0\]\[1\]: example size 20 gives b = 10, outside b's declared range \[4, 8\]"),
    ({0: Dim("b", min=4, max=8), 1: Dim("b", min=4, max=8) * 2}, [(4, 10)],
     r"\[0\]\[1\]: example size 10 gives b = 5, but args\[0\].shape\[0\] gives b = 4"),
])
def test_example_outside_its_declared_range_or_disagreeing_names_the_field(spec, shapes, message):
    with pytest.raises(ValueError, match=message):
        ShapeSpec.from_export_spec((spec,), tuple(torch.ones(s) for s in shapes), None)


def test_examples_torch_accepts_are_accepted():
    # sizes 0/1 inside a named dim's range fail later as torch's 0/1 specialization, not as bad input;
    # torch exports Dim.AUTO/DYNAMIC with an example outside their min/max as it is.
    assert ShapeSpec.from_export_spec(({0: Dim("b")},), (torch.ones(1, 4),), None).example_assignment() == {"b": 1}


@needs_hint_bounds
def test_bounded_hints_with_examples_outside_their_bounds_are_accepted():
    spec = ShapeSpec.from_export_spec(({0: Dim.DYNAMIC(min=5, max=10), 1: Dim.AUTO(max=3)},), (torch.ones(2, 8),), None)
    assert spec.example_assignment() == {"args[0].shape[0]": 2, "args[0].shape[1]": 8}


def test_violations_describe_out_of_spec_assignments():
    b = Dim("b", min=3, max=8)
    spec = ShapeSpec.from_export_spec(({0: b, 1: 4}, {0: b + 1}), (torch.ones(3, 4), torch.ones(4)), None)
    assert spec.violations({"b": 5}) == []
    assert spec.violations({"b": 2}) == ["below_min:b"]
    assert spec.violations({"b": 9}) == ["above_max:b"]
    assert spec.violations({"b": 5, "args[0].shape[1]": 5}) == ["static_changed:args[0].shape[1]"]
    assert spec.violations({"b": 5, "args[1].shape[0]": 7}) == ["relation_broken:args[1].shape[0]"]
    with pytest.raises(ValueError, match="unknown dim"):
        spec.shapes_for({"nope": 3})


def test_importing_shapes_does_not_import_torch():
    code = "import sys, exportcore.shapes; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
