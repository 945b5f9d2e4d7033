"""Record keys come from the item: a user parametrize id that looks like a mode id never collides."""

from __future__ import annotations

import pytest

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

RUNS = {"serial": (), "xdist": ("-p", "xdist", "-n", "2", "-p", "no:benchmark")}


@pytest.mark.parametrize("run", list(RUNS))
def test_parametrize_ids_ending_in_a_mode_name_keep_distinct_keys(project, records, run):
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.parametrize("v", [1, 2], ids=["v1-strict", "v1"])
        @pytest.mark.exportable(modes=["strict", "non_strict"], checks=["numerics"])
        def test_m(v):
            return lin_case()
    """)
    result = project.runpytest("-p", "no:cacheprovider", "--export-report=r.json", *RUNS[run])
    result.assert_outcomes(passed=4)
    data = records()
    keys = sorted((r["test"], r["case"], r["mode"]) for r in data["records"])
    assert keys == [
        ("test_m.py::test_m[v1-non_strict]", "test_m.py::test_m[v1]", "non_strict"),
        ("test_m.py::test_m[v1-strict-non_strict]", "test_m.py::test_m[v1-strict]", "non_strict"),
        ("test_m.py::test_m[v1-strict-strict]", "test_m.py::test_m[v1-strict]", "strict"),
        ("test_m.py::test_m[v1-strict]", "test_m.py::test_m[v1]", "strict"),
    ]
    assert sorted(map(tuple, data["selected"])) == sorted((case, mode) for _, case, mode in keys)
    # Four distinct (case, mode) cells: the matrix shows no hole and no doubled cell.
    result.stdout.fnmatch_lines(["*test_m.py::test_m[[]v1-strict[]]   * . * . *",
                                 "*test_m.py::test_m[[]v1[]]   * . * . *"])
