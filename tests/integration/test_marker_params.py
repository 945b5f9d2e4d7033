"""The exportable marker on pytest.param(..., marks=...): honoured, merged with the test's, or refused."""

from __future__ import annotations

import textwrap

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery



def test_marker_given_only_through_pytest_param_exports_the_model(project, verdicts):
    # Was a false pass: the parameter's marker was ignored and the test passed by returning a value.
    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import DataDependent, Lin

        @pytest.mark.parametrize("model", [
            pytest.param(DataDependent, marks=pytest.mark.exportable(modes=["non_strict"]), id="branchy"),
            pytest.param(Lin, marks=pytest.mark.exportable(modes=["non_strict"]), id="lin"),
        ])
        def test_models(model):
            return model(), (torch.ones(2, 4),)
    """)
    result = project.runpytest()
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*_ test_models[[]branchy-non_strict[]] _*",
                                 "export failed in non_strict: stage capture, category data-dependent"])
    assert verdicts() == {
        ("test_m.py::test_models[branchy]", "non_strict"): "failed",
        ("test_m.py::test_models[lin]", "non_strict"): "passed",
    }


def test_parameter_marker_merges_with_the_function_marker_closest_wins(project, verdicts, records):
    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import DataDependent, Lin

        @pytest.mark.exportable(modes=["strict", "non_strict"], expect={"strict": "branches on data"})
        @pytest.mark.parametrize("model", [
            # modes from the parameter, expect from the function: strict only, an expected failure
            pytest.param(DataDependent, marks=pytest.mark.exportable(modes=["strict"]), id="branchy"),
            # expect={} from the parameter replaces the function's: both modes must pass
            pytest.param(Lin, marks=pytest.mark.exportable(expect={}), id="lin"),
            pytest.param(DataDependent, id="plain"),  # the function's marker alone
        ])
        def test_models(model):
            return model(), (torch.ones(2, 4),)
    """)
    result = project.runpytest("-p", "no:randomly")
    result.assert_outcomes(xfailed=2, passed=2, failed=1)
    assert verdicts() == {
        ("test_m.py::test_models[branchy]", "strict"): "xfailed",
        ("test_m.py::test_models[lin]", "strict"): "passed",
        ("test_m.py::test_models[lin]", "non_strict"): "passed",
        ("test_m.py::test_models[plain]", "strict"): "xfailed",
        ("test_m.py::test_models[plain]", "non_strict"): "failed",
    }
    by_key = {(r["case"], r["mode"]): r for r in records()["records"]}
    assert by_key[("test_m.py::test_models[branchy]", "strict")]["expect"]["reason"] == "branches on data"


def test_parameter_marker_narrowed_away_by_export_modes_drops_out(project, verdicts):
    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import Lin

        @pytest.mark.parametrize("model", [
            pytest.param(Lin, marks=pytest.mark.exportable(modes=["strict"]), id="strict_only"),
            pytest.param(Lin, marks=pytest.mark.exportable(), id="all"),
        ])
        def test_models(model):
            return model(), (torch.ones(2, 4),)
    """)
    project.runpytest("--export-modes=non_strict").assert_outcomes(passed=1)
    assert verdicts() == {("test_m.py::test_models[all]", "non_strict"): "passed"}


@pytest.mark.parametrize(("decorators", "param_marks", "message"), [
    pytest.param(
        "@pytest.mark.exportable(expect={'strict': 'branches'})", "modes=['non_strict']",
        "test_m.py::test_models[[]p[]]: @pytest.mark.exportable (a pytest.param's marker merged with the test's, "
        "closest wins per argument): expect names mode 'strict', which this test does not run (modes: non_strict*",
        id="expect-outside-param-modes"),
    pytest.param(
        "", "modes=['strict'], rtol='loose'",
        "test_m.py::test_models[[]p[]]: @pytest.mark.exportable: rtol must be a finite non-negative number*",
        id="bad-param-argument"),
])
def test_parameter_marker_that_cannot_be_honoured_is_a_collection_error(pytester, decorators, param_marks, message):
    pytester.makepyfile(test_m=f"""
        import pytest

        {decorators}
        @pytest.mark.parametrize("model", [pytest.param(None, marks=pytest.mark.exportable({param_marks}), id="p")])
        def test_models(model):
            return model
    """)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str()


def test_unmarked_parameter_beside_marked_ones_is_a_collection_error(pytester):
    # It would run as a plain test and pass by returning its (model, args).
    pytester.makepyfile(test_m="""
        import pytest

        @pytest.mark.parametrize("model", [
            pytest.param(1, marks=pytest.mark.exportable(), id="marked"),
            pytest.param(2, id="unmarked"),
        ])
        def test_models(model):
            return model
    """)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "test_m.py::test_models[[]unmarked[]]: @pytest.mark.exportable: other parameters of this test carry "
        "the marker and this one does not, so it would pass without exporting anything*"
    ])


def test_each_item_runs_with_the_spec_its_parameter_was_parametrized_from(project, verdicts):
    # The marker is parsed once, at parametrization; the items carry that spec. A marker edited after
    # collection (here by a conftest hook) must not change what an item checks: the collected test
    # list, its modes and its expectations were decided from the spec the item carries.
    project.makepyfile(conftest=(project.path / "conftest.py").read_text() + textwrap.dedent("""

        def pytest_collection_modifyitems(items):
            for item in items:
                for marker in item.iter_markers("exportable"):
                    marker.kwargs["expect"] = {"strict": "edited after collection"}
    """))
    project.makepyfile(test_m="""
        import pytest
        import torch
        from models import Lin

        @pytest.mark.parametrize("n", [
            pytest.param(2, marks=pytest.mark.exportable(modes=["strict"]), id="two"),
            pytest.param(3, marks=pytest.mark.exportable(modes=["non_strict"]), id="three"),
        ])
        def test_models(n, export_mode):
            assert export_mode == {2: "strict", 3: "non_strict"}[n] and isinstance(export_mode, str)
            assert {export_mode: 1}["strict" if n == 2 else "non_strict"] == 1  # keys like the plain column
            return Lin(), (torch.ones(n, 4),)
    """)
    result = project.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2)
    assert verdicts() == {
        ("test_m.py::test_models[two]", "strict"): "passed",
        ("test_m.py::test_models[three]", "non_strict"): "passed",
    }
