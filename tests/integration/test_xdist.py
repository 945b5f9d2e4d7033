"""pytest-xdist: workers' outcomes reach the controller unchanged; a dead worker's test is 'crashed'."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("xdist")

TESTS = """
    import pytest
    import torch
    from models import DataDependent, lin_case

    @pytest.mark.exportable(modes=["strict", "non_strict"], checks=["numerics", "accept", "reject"])
    def test_lin():
        return lin_case()

    @pytest.mark.parametrize("n", [2, 3])
    @pytest.mark.exportable(modes=["strict", "non_strict"], expect={"strict": "branch", "non_strict": "branch"})
    def test_branchy(n):
        return DataDependent(), (torch.ones(n),)

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_fails():
        return lin_case()

    @pytest.mark.exportable(modes=["strict"])
    def test_wrong_return():
        return 42
"""


def _comparable(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[list[str]]]:
    records = []
    for r in sorted(data["records"], key=lambda r: r["test"]):
        r = dict(r, duration=None)
        if r["outcome"]:
            r["outcome"] = dict(r["outcome"], timings=None)
        records.append(r)
    return records, data["selected"]


def test_two_workers_aggregate_exactly_the_serial_outcomes(project, canned, records):
    canned({"test_canned_fails": ("failed", "python.builtin")})
    project.makepyfile(test_m=TESTS)
    serial = project.runpytest("-p", "no:cacheprovider")
    serial.assert_outcomes(passed=2, xfailed=4, failed=2)
    expected = _comparable(records())
    assert len(expected[0]) == 8

    distributed = project.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    distributed.assert_outcomes(passed=2, xfailed=4, failed=2)
    assert _comparable(records()) == expected


def test_worker_crash_is_recorded_as_crashed_and_other_outcomes_survive(project, canned, records):
    canned({})
    project.makepyfile(test_m="""
        import os
        import pytest
        from exportcore import Case

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_canned_before():
            return Case(model=lambda x: x, args=(1,))

        @pytest.mark.exportable(modes=["strict"])
        def test_dies():
            os._exit(1)

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_canned_after():
            return Case(model=lambda x: x, args=(1,))
    """)
    result = project.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*worker 'gw*' crashed while running 'test_m.py::test_dies[[]strict[]]'*"])
    data = records()
    by_test = {r["test"]: r for r in data["records"]}
    assert len(by_test) == 5
    crashed = by_test["test_m.py::test_dies[strict]"]
    assert (crashed["case"], crashed["verdict"], crashed["outcome"]["status"]) == (
        "test_m.py::test_dies", "crashed", "crashed")
    assert crashed["outcome"]["failure"]["category"] == "crashed"
    assert all(r["verdict"] == "passed" for t, r in by_test.items() if "canned" in t)
    assert ["test_m.py::test_dies", "strict"] in data["selected"]
    assert len(data["selected"]) == 5
