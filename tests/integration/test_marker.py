"""@pytest.mark.exportable: one test per mode, ids, composition with parametrize, selection."""

from __future__ import annotations

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


MODES = ("strict", "non_strict", "training")


def test_one_marker_expands_into_three_passing_exports(project, records):
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.exportable
        def test_mlp():
            return lin_case()
    """)
    # The returned case must not trip pytest's "test returned non-None" warning.
    result = project.runpytest("-v", "-W", "error::pytest.PytestReturnNotNoneWarning")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([f"*test_m.py::test_mlp[[]{m}[]] PASSED*" for m in MODES])
    data = records()
    assert [(r["test"], r["case"], r["mode"], r["verdict"]) for r in data["records"]] == [
        (f"test_m.py::test_mlp[{m}]", "test_m.py::test_mlp", m, "passed") for m in MODES
    ]
    assert all(r["outcome"]["status"] == "passed" and r["outcome"]["mode"] == r["mode"] for r in data["records"])
    assert sorted(map(tuple, data["selected"])) == sorted(("test_m.py::test_mlp", m) for m in MODES)


def test_mode_ids_compose_with_user_parametrize_and_k_selects(project, canned, records):
    canned({})
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.parametrize("n", [4, 8])
        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_canned_sizes(n):
            return lin_case()
    """)
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "test_m.py::test_canned_sizes[[]4-strict[]]",
        "test_m.py::test_canned_sizes[[]4-non_strict[]]",
        "test_m.py::test_canned_sizes[[]8-strict[]]",
        "test_m.py::test_canned_sizes[[]8-non_strict[]]",
    ])
    result = project.runpytest("-k", "strict and not non_strict")
    result.assert_outcomes(passed=2, deselected=2)
    data = records()
    assert sorted((r["case"], r["mode"]) for r in data["records"]) == [
        ("test_m.py::test_canned_sizes[4]", "strict"),
        ("test_m.py::test_canned_sizes[8]", "strict"),
    ]
    # Deselected (case, mode) pairs are not part of the run, so they cannot regress in it.
    assert sorted(map(tuple, data["selected"])) == [
        ("test_m.py::test_canned_sizes[4]", "strict"),
        ("test_m.py::test_canned_sizes[8]", "strict"),
    ]


def test_accepts_tuple_with_kwargs_case_object_and_export_mode_argument(project, canned, records):
    canned({})
    project.makepyfile(test_m="""
        import pytest
        from exportcore import Case
        from models import Lin, lin_case

        @pytest.mark.exportable(modes=["strict"])
        class TestCanned:
            def test_canned_kwargs(self):
                model, args = lin_case()
                return model, (), {"x": args[0]}

            def test_canned_case(self, export_mode):
                assert export_mode == "strict"
                model, args = lin_case()
                return Case(model, args, name="lin")
    """)
    project.runpytest().assert_outcomes(passed=2)
    assert sorted(r["case"] for r in records()["records"]) == [
        "test_m.py::TestCanned::test_canned_case",
        "test_m.py::TestCanned::test_canned_kwargs",
    ]


def test_marker_is_registered_with_help(project):
    result = project.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.exportable(dynamic_shapes=None, modes=None*expect=None)*"])
    project.makepyfile(test_m="""
        import pytest

        @pytest.mark.exportable(modes=["strict"])
        def test_canned():
            return None
    """)
    # --strict-markers would reject an unregistered marker at collection.
    project.runpytest("--strict-markers", "--collect-only").assert_outcomes()


@pytest.mark.parametrize("where", ["option", "ini"])
def test_unknown_export_mode_is_a_usage_error(project, where):
    if where == "ini":
        project.makeini("[pytest]\nexport_modes = strict, eager\n")
        result = project.runpytest()
    else:
        result = project.runpytest("--export-modes=strict,eager")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--export-modes: unknown mode 'eager'; known: strict, non_strict, training*"])


def test_help_lists_mode_and_check_names_and_the_default_example_count(project):
    result = project.runpytest("--help")
    text = " ".join(result.stdout.str().split())
    assert "comma-separated export modes to run, of strict, non_strict, training and any a plugin adds" in text
    assert ("comma-separated checks to run, of numerics, decompose, serialize, accept, reject, state, dtype "
            "(default: all; ini export_checks)") in text
    assert "hypothesis-drawn input shapes per case and mode (default: 10; ini export_examples)" in text


@pytest.mark.parametrize(("kwargs", "message"), [
    ("mode=['strict']", "unknown argument 'mode' (did you mean 'modes'?); expected one of dynamic_shapes, modes,*"),
    ("dynamic_shape={}", "unknown argument 'dynamic_shape' (did you mean 'dynamic_shapes'?)*"),
    ("modes=['non-strict']", "modes: unknown mode 'non-strict' (did you mean 'non_strict'?); known: strict,*"),
    ("checks=['numeric']", "checks: unknown check 'numeric' (did you mean 'numerics'?); known:*"),
    ("flavour=1", "unknown argument 'flavour'; expected one of*"),  # nothing close: no guess
])
def test_a_misspelt_marker_argument_suggests_the_close_one(project, kwargs, message):
    project.makepyfile(test_m=f"""
        import pytest

        @pytest.mark.exportable({kwargs})
        def test_typo():
            pass
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"test_m.py::test_typo: @pytest.mark.exportable: {message}"])
