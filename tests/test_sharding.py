"""--export-shard=K/N selects whole cases, balanced by a previous report's durations (pytest_export.distributed.sharding)."""

from __future__ import annotations

import json
import re

import pytest

from pytest_export.distributed.sharding import assign

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

SUITE = """
import pytest
import torch
from torch.export import Dim


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5])
@pytest.mark.exportable(dynamic_shapes=({0: Dim("batch", min=2, max=8)},))
def test_lin(width):
    torch.manual_seed(0)
    return torch.nn.Linear(4, width), (torch.randn(3, 4),)


def test_plain():
    pass
"""


def test_largest_cases_go_first_onto_the_lightest_shard() -> None:
    counts = {"a": 3, "b": 3, "c": 3, "d": 3}
    assert assign(counts, 2, {"a": 10.0, "b": 1.0, "c": 1.0, "d": 8.0}) == {"a": 0, "d": 1, "b": 1, "c": 1}
    # a case the durations do not know weighs their median; without durations every item counts one
    assert assign({"a": 1, "b": 1, "new": 1}, 2, {"a": 5.0, "b": 1.0}) == {"a": 0, "new": 1, "b": 1}
    assert assign({"a": 3, "b": 1, "c": 1, "d": 1}, 2, {}) == {"a": 0, "b": 1, "c": 1, "d": 1}


def _collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return [line for line in result.outlines if "::" in line]


def _case(nodeid: str) -> str:
    return re.sub(r"-?(strict|non_strict|training)\]$", "]", nodeid)


def test_shards_split_by_case_and_cover_every_test_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    every = _collected(pytester)
    shards = [_collected(pytester, f"--export-shard={k}/3") for k in (1, 2, 3)]
    assert sorted(sum(shards, [])) == sorted(every)  # each test on exactly one shard
    owners: dict[str, int] = {}
    for k, ids in enumerate(shards):
        for nodeid in ids:
            assert owners.setdefault(_case(nodeid), k) == k, f"{nodeid}: its case's modes span shards"
    assert all(ids for ids in shards)


def test_durations_from_an_earlier_report_balance_the_shards(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--export-modes=non_strict", "--export-examples=1", "--export-report=r.json",
                                           "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "r.json").read_text())
    for record in report["records"]:  # make one case as slow as all the others together
        record["duration"] = 40.0 if record["case"] == "test_suite.py::test_lin[3]" else 1.0
    (pytester.path / "r.json").write_text(json.dumps(report))
    first = _collected(pytester, "--export-shard=1/2", "--export-durations=r.json")
    assert [_case(n) for n in first] == ["test_suite.py::test_lin[3]"] * 3
    second = _collected(pytester, "--export-shard=2/2", "--export-durations=r.json")
    assert len(second) == len(_collected(pytester)) - 3


def test_a_missing_durations_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--export-shard=1/2", "--export-durations=nope.json", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--export-durations nope.json: no such file (a JSON report of an earlier run)*"])


def test_pytest_split_selects_alone(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_split")
    pytester.makepyfile(test_suite=SUITE)
    every = _collected(pytester)
    ours_too = _collected(pytester, "--splits=2", "--group=1", "--export-shard=1/2")
    split_only = _collected(pytester, "--splits=2", "--group=1")
    assert ours_too == split_only and len(split_only) < len(every)
