"""The ExportDB catalog: size, taxonomy, rewrites, declarations, and that it stays torch-free."""

from __future__ import annotations

import subprocess
import sys

import pytest

from exportcore.case import Case
from exportdb import registry
from exportdb.registry import MODES, PASS, TAGS, Fails, all_cases, get

TORCH_TAGS = (
    "python.assert", "python.builtin", "python.closure", "python.context-manager",
    "python.control-flow", "python.data-structure", "python.object-model",
    "python.standard-library", "torch.cond", "torch.dynamic-shape", "torch.dynamic-value",
    "torch.escape-hatch", "torch.map", "torch.mutation", "torch.operator",
)

#: Pain points the issue lists, each with a case that must keep existing.
PAIN_POINTS = (
    "item_dependent_split_count", "tolist_as_index", "nonzero_output", "item_with_torch_check",
    "example_size_one_specializes", "dim_auto_specializes_silently", "derived_dim_plus_one",
    "unrelated_dims_must_be_equal", "batchnorm_running_stats", "dropout_train_and_eval",
    "custom_op_missing_fake", "custom_op_wrong_fake_shape", "cond_on_tensor_value",
    "map_over_leading_dim", "while_loop_counter", "scan_cumulative", "dict_input",
    "dataclass_registered", "namedtuple_input_output", "kwargs_only_forward",
    "forward_hook_on_submodule", "tensor_constant_attribute", "autograd_function_custom_backward",
    "input_mutation", "output_aliases_input", "int_argument_specialized", "float_argument",
    "bool_flag_argument", "str_mode_argument", "int_float_promotion", "data_attribute_assignment",
    "id_builtin",
)


def test_catalog_is_large_and_categorized() -> None:
    cases = all_cases()
    assert len(cases) >= 100
    assert len({c.category for c in cases}) >= 15
    assert {c.category for c in cases} == set(registry.CATEGORIES)


@pytest.mark.parametrize("tag", TORCH_TAGS)
def test_every_torch_exportdb_tag_is_covered(tag: str) -> None:
    assert tag in TAGS
    assert registry.by_tag(tag), f"no case tagged {tag}"


def test_taxonomy_contains_torchs_own_exportdb_tags() -> None:
    from torch._export.db.case import _TAGS

    torch_tags = {f"{group}.{tag}" for group, tags in _TAGS.items() for tag in tags}
    assert torch_tags <= set(TAGS)
    assert torch_tags <= set(TORCH_TAGS)


@pytest.mark.parametrize("name", PAIN_POINTS)
def test_pain_points_have_cases(name: str) -> None:
    assert get(name).name == name


def test_names_unique_and_tags_known() -> None:
    cases = all_cases()
    assert len({c.name for c in cases}) == len(cases)
    for c in cases:
        assert set(c.tags) <= set(TAGS), c.name
        assert set(c.expect) == set(MODES), c.name


def test_every_failing_case_names_a_rewrite_that_passes() -> None:
    assert registry.validate() == []
    # On the newest torch (the catalog's reference); an older torch may fail the rewrite too.
    failing = [c for c in all_cases() if any(isinstance(e, Fails) for e in c.expect_on(None).values())]
    assert len(failing) >= 20
    for c in failing:
        target = get(c.rewrite)
        for mode, exp in c.expect_on(None).items():
            if isinstance(exp, Fails):
                assert mode in target.modes and target.expect_on(None)[mode] == PASS, (c.name, mode)


def test_marker_expect_has_reason_and_category() -> None:
    case = get("if_on_tensor_value")
    expect = case.marker_expect()
    assert set(expect) == set(MODES)
    assert expect["strict"]["category"] == "data-dependent"
    assert "exportdb/cases/control_flow.py:" in expect["strict"]["reason"]
    assert get("cond_on_tensor_value").marker_expect() == {}


def test_every_builder_returns_a_case() -> None:
    for c in all_cases():
        made = c.instantiate()
        assert isinstance(made, Case), c.name
        assert isinstance(made.args, tuple) and callable(made.model), c.name
        assert made.name == c.name


def test_source_is_the_builder_without_decorator() -> None:
    src = get("cond_on_tensor_value").source()
    assert src.startswith("def _():") and "torch.cond" in src and "@case" not in src


def _builder():  # noqa: ANN202 - a throwaway builder for declaration errors
    return None


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tags": ("python.nope",)}, ValueError, "unknown tag"),
        ({"tags": "python.builtin"}, TypeError, "tags must be"),
        ({"expect": {"eager": PASS}}, ValueError, "unknown mode"),
        ({"expect": "fails"}, TypeError, "expect must be"),
        ({"expect": Fails("data-dependent")}, ValueError, "must name its rewrite"),
        ({"description": "short"}, ValueError, "description"),
        ({"modes": ("strict",), "expect": {"training": Fails("x")}, "rewrite": "y"}, ValueError, "does not run"),
    ],
)
def test_bad_declarations_name_the_field(kwargs: dict, error: type, match: str) -> None:
    args = {"tags": ("python.builtin",), "description": "a description that teaches something"}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        registry.case(name="declaration_test_case", **args)(_builder)
    assert "declaration_test_case" not in registry._REGISTRY


def test_bad_name_and_duplicate() -> None:
    with pytest.raises(ValueError, match="snake_case"):
        registry.case(name="Bad-Name", tags=("python.builtin",), description="x" * 30)
    with pytest.raises(ValueError, match="declared twice"):
        registry.case(name="if_on_tensor_value", tags=("python.builtin",), description="x" * 30)


def test_fails_requires_category() -> None:
    with pytest.raises(TypeError, match="category"):
        Fails("")


def test_unknown_lookups_raise_clearly() -> None:
    with pytest.raises(KeyError, match="no exportdb case named 'nope'"):
        get("nope")
    with pytest.raises(ValueError, match="unknown tag"):
        registry.by_tag("nope")


def test_importing_and_listing_does_not_import_torch() -> None:
    code = (
        "import sys, exportdb, exportdb.docs, exportcore.diagnosis.links\n"
        "from exportdb.__main__ import main\n"
        "assert len(exportdb.all_cases()) >= 100\n"
        "main(['list', '--tag', 'torch.cond'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "cond_on_tensor_value" in proc.stdout
