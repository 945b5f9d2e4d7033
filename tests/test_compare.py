"""exportcore.compare: leaf-by-leaf comparison of eager and exported outputs."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections import OrderedDict, namedtuple

import pytest

torch = pytest.importorskip("torch")
import torch.utils._pytree as pytree  # noqa: E402

from exportcore.compare import Mismatch, compare, compare_with_reference, default_tolerances  # noqa: E402

Hidden = namedtuple("Hidden", ["hidden", "out"])


@dataclasses.dataclass(frozen=True)
class Frozen:
    logits: object
    steps: int


class ModelOutput(OrderedDict):
    """Like transformers' ModelOutput: a dict whose keys are also attributes, None fields left out."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


pytree.register_pytree_node(
    Pair,
    lambda p: ([p.first, p.second], None),
    lambda values, _: Pair(*values),
    flatten_with_keys_fn=lambda p: (
        [(pytree.GetAttrKey("first"), p.first), (pytree.GetAttrKey("second"), p.second)], None
    ),
)


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0)).to(dtype)


# ---- tensors -----------------------------------------------------------------------------------


def test_equal_trees_compare_equal():
    x = rand(4, 5)
    tree = {"a": [x, (x.int(), 3)], "b": Hidden([x], 1.5), "c": Frozen(x, 2), "d": None, "e": "txt"}
    same = {
        "a": [x.clone(), (x.int(), 3)], "b": Hidden([x.clone()], 1.5), "c": Frozen(x.clone(), 2), "d": None, "e": "txt"
    }
    assert compare(tree, same) is None


def test_value_failure_reports_leaf_errors_fraction_and_worst_element():
    x = rand(32, 32)
    y = x.clone()
    y[3, 4] += 0.5
    y[7, 1] += 0.25
    y[0, 0] += 1e-7  # inside tolerance: not counted
    m = compare({"logits": [x]}, {"logits": [y]})
    assert isinstance(m, Mismatch)
    assert (m.path, m.kind) == ("output['logits'][0]", "value")
    assert m.worst_index == [3, 4]
    assert m.max_abs == pytest.approx(0.5, rel=1e-5)
    assert m.max_rel == pytest.approx(abs(0.5 / float(x[3, 4])), rel=1e-4)
    assert m.fraction == pytest.approx(2 / 1024)
    assert "2 / 1024 elements (0.20%)" in m.message
    assert "worst at index [3, 4]" in m.message
    assert f"expected {float(x[3, 4]):.8g}, got {float(y[3, 4]):.8g}" in m.message
    assert "max abs error 0.5" in m.message and "max rel error" in m.message
    assert str(m) == m.message


def test_float32_default_tolerance_absorbs_reordering_but_not_real_errors():
    x = rand(64)
    assert compare(x, x * (1 + 3e-5)) is None  # reordered float math
    assert compare(x, x * (1 + 1e-3)) is not None
    assert compare(x, x * (1 + 1e-3), rtol=1e-2) is None  # caller's tolerance wins
    assert compare(x, x + 1e-3, rtol=0.0, atol=1e-2) is None


@pytest.mark.parametrize(
    ("dtype", "ok_rel", "bad_rel"),
    [(torch.float64, 1e-9, 1e-5), (torch.float16, 5e-4, 1e-2), (torch.bfloat16, 0.0, 1e-1)],
)
def test_dtype_aware_defaults(dtype, ok_rel, bad_rel):
    x = rand(16, dtype=torch.float64).abs() + 1
    expected = x.to(dtype)
    assert compare(expected, (x * (1 + ok_rel)).to(dtype)) is None
    found = compare(expected, (x * (1 + bad_rel)).to(dtype))
    assert found is not None and found.kind == "value" and str(dtype) in found.message
    assert default_tolerances(dtype) == default_tolerances(str(dtype).removeprefix("torch."))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.uint8, torch.bool])
def test_integers_and_bools_compare_exactly(dtype):
    x = torch.tensor([1, 0, 1, 1]).to(dtype)
    y = x.clone()
    y[2] = 0
    m = compare(x, y, rtol=1.0, atol=1.0)  # tolerances never apply to exact dtypes
    assert m is not None and m.kind == "value" and m.worst_index == [2] and "compared exactly" in m.message
    assert compare(x, x.clone()) is None


def test_large_int64_difference_is_not_lost_to_overflow():
    big = torch.tensor([2**62, -(2**62)])
    m = compare(big, torch.tensor([-(2**62), -(2**62)]))
    assert m is not None and m.worst_index == [0] and m.max_abs == pytest.approx(2.0**63)


def test_complex_compares_absolute_difference():
    z = torch.complex(rand(8), rand(8) * 2)
    assert compare(z, z.clone()) is None
    w = z.clone()
    w[5] = w[5] + 1j
    m = compare(z, w)
    assert m is not None and m.worst_index == [5] and m.max_abs == pytest.approx(1.0)


def test_nan_positions_must_agree_and_nan_equals_nan():
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert compare(x, x.clone()) is None
    y = x.clone()
    y[0] = float("nan")
    m = compare(x, y)
    assert m is not None and m.kind == "nonfinite" and m.worst_index == [0]
    z = x.clone()
    z[2] = -float("inf")
    m = compare(x, z)
    assert m is not None and m.kind == "nonfinite" and "expected inf, got -inf" in m.message
    assert compare(x[:1], torch.tensor([float("inf")])).kind == "nonfinite"


@pytest.mark.parametrize(
    ("actual", "kind", "said"),
    [
        (torch.zeros(2, 4), "shape", "expected shape [2, 3], got [2, 4]"),
        (torch.zeros(2, 3, dtype=torch.float64), "dtype", "expected dtype torch.float32, got torch.float64"),
        (torch.zeros(2, 3, device="meta"), "device", "expected device cpu, got meta"),
        (3.0, "type", "expected Tensor, got float"),
    ],
)
def test_shape_dtype_device_and_type_are_reported_as_such(actual, kind, said):
    m = compare({"y": torch.zeros(2, 3)}, {"y": actual})
    assert m is not None and (m.kind, m.path) == (kind, "output['y']")
    assert said in m.message


def test_empty_noncontiguous_and_sparse_tensors():
    assert compare(torch.empty(0, 3), torch.empty(0, 3)) is None
    x = rand(6, 4)
    assert compare(x.t(), x.t().contiguous()) is None
    y = x.clone()
    y[1, 2] += 1
    assert compare(x.to_sparse(), x.to_sparse()) is None
    m = compare(x.to_sparse(), y.to_sparse())
    assert m is not None and m.worst_index == [1, 2]


def test_tensor_that_requires_grad_compares():
    w = rand(3).requires_grad_()
    assert compare(w * 2, (w * 2).detach()) is None


# ---- structure and paths -----------------------------------------------------------------------


def test_paths_through_namedtuple_dataclass_model_output_and_pytree_class():
    x = rand(3)
    bad = x + 1
    cases = [
        (Hidden([x, x], 1), Hidden([x, bad], 1), "output.hidden[1]"),
        (Frozen(x, 1), Frozen(bad, 1), "output.logits"),
        (ModelOutput(logits=x), ModelOutput(logits=bad), "output.logits"),
        (OrderedDict(a=x), OrderedDict(a=bad), "output['a']"),
        (Pair(x, [x]), Pair(x, [bad]), "output.second[0]"),
        (torch.max(torch.stack([x, x]), 0), torch.max(torch.stack([x, bad]), 0), "output.values"),
        ((x, {"k": (x,)}), (x, {"k": (bad,)}), "output[1]['k'][0]"),
    ]
    for expected, actual, path in cases:
        m = compare(expected, actual)
        assert m is not None and m.path == path and m.message.startswith(path + ":"), (path, m)


def test_model_output_compares_only_present_keys():
    x = rand(2)
    assert compare(ModelOutput(logits=x), ModelOutput(logits=x.clone())) is None
    m = compare(ModelOutput(logits=x), ModelOutput(logits=x, hidden=x))
    assert m is not None and m.kind == "structure" and "unexpected ['hidden']" in m.message


def test_structure_mismatches():
    x = rand(2)
    m = compare({"a": x, "b": x}, {"a": x})
    assert m is not None and m.kind == "structure" and "missing ['b']" in m.message
    m = compare([x, x], [x])
    assert m is not None and (m.kind, m.path) == ("structure", "output")
    assert "expected 2 elements in list, got 1" in m.message
    m = compare((x,), [x])
    assert m is not None and m.kind == "type" and "expected tuple, got list" in m.message
    assert compare(Hidden(x, 1), (x, 1)).kind == "type"


def test_python_scalars():
    assert compare(3, 3) is None
    assert compare(3, 4).kind == "value"
    assert compare(True, 1).kind == "type"  # a bool that became an int is a change
    assert compare(1.0, 1.0 + 1e-7) is None
    m = compare(1.0, 1.1, path="out[2]")
    assert m is not None and m.path == "out[2]" and "expected 1.0, got 1.1" in m.message
    assert compare(float("nan"), float("nan")) is None
    assert compare(float("inf"), -float("inf")).kind == "nonfinite"
    assert compare("a", "b").kind == "value"
    assert compare(None, None) is None and compare(None, 0).kind == "type"
    assert compare(torch.Size([2, 3]), (2, 3)) is None
    assert compare(torch.Size([2, 3]), torch.Size([2, 4])).path == "output[1]"


def test_bad_tolerances_are_named():
    with pytest.raises(ValueError, match="rtol"):
        compare(1.0, 1.0, rtol=-1)
    with pytest.raises(ValueError, match="atol"):
        compare(1.0, 1.0, atol="small")  # type: ignore[arg-type]


def test_the_float64_comparison_walks_and_names_every_leaf():
    # compare_with_reference pairs the leaves itself (to forgive rounding leaf by leaf).
    x = rand(2)

    def tree(a0=x, a11=3, hidden=x, second=2):
        return {"a": [a0, (2, a11)], "b": Hidden(hidden, None), "c": Pair(1, second)}

    expected = tree()
    assert compare_with_reference(expected, tree(), expected) is None
    for change, path in [({"a0": x + 1}, "output['a'][0]"), ({"a11": 4}, "output['a'][1][1]"),
                         ({"hidden": x * 3}, "output['b'].hidden"), ({"second": 5}, "output['c'].second")]:
        m = compare_with_reference(expected, tree(**change), expected)
        assert m is not None and (m.path, m.kind) == (path, "value"), (path, m)


# ---- on a real exported program ----------------------------------------------------------------


class DictModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        logits = self.lin(x)
        return {"logits": logits, "parts": Hidden([logits.softmax(-1)], x.shape[1]), "n": x.shape[0]}


@pytest.fixture(scope="module")
def exported():
    model = DictModel().eval()
    x = rand(2, 4)
    return model, x, torch.export.export(model, (x,))


def test_exported_program_matches_eager_leaf_by_leaf(exported):
    model, x, ep = exported
    eager, actual = model(x), ep.module()(x)
    assert compare(eager, actual) is None and compare_with_reference(eager, actual, eager) is None
    parts = actual["parts"]
    changed = {**actual, "parts": Hidden([parts.hidden[0] * 2], parts.out)}
    assert compare_with_reference(eager, changed, eager).path == "output['parts'].hidden[0]"


def test_altered_exported_program_is_reported_at_its_leaf(exported):
    model, x, ep = exported
    altered = ep.module()
    # A fresh Parameter: the exported module's weights alias the model's, so no in-place edit.
    altered.lin.bias = torch.nn.Parameter(altered.lin.bias.detach() + torch.tensor([0.0, 0.5, 0.0]))
    m = compare(model(x), altered(x))
    assert m is not None and (m.path, m.kind) == ("output['logits']", "value")
    assert m.worst_index is not None and m.worst_index[1] == 1
    assert m.fraction == pytest.approx(2 / 6)


@dataclasses.dataclass
class Registered:
    a: object
    b: object


torch.export.register_dataclass(Registered)


class ManyOutputs(torch.nn.Module):
    def forward(self, x):
        return [x + 1, (x * 2,)], Hidden(x, x.sum()), Registered(x, x), x.shape, x.shape[0]


def test_every_output_kind_survives_export_and_compares_equal():
    x = rand(3, 2)
    ep = torch.export.export(ManyOutputs(), (x,), dynamic_shapes={"x": {0: torch.export.Dim("b", min=2, max=8)}})
    actual = ep.module()(x)
    assert type(actual[3]) is tuple  # torch.Size comes back as a plain tuple: must still compare equal
    assert compare(ManyOutputs()(x), actual) is None


def test_import_does_not_load_torch():
    code = "import sys, exportcore.compare, exportcore.diagnosis.classify; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
