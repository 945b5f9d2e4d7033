"""-n without --dist: a case's modes go to one worker, so the later mode reuses the earlier one's runs."""

from __future__ import annotations

import json

import pytest

from exportcore.columns import Column
from pytest_export.distributed.scheduling import case_scope

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

SUITE = """
import pytest
import torch
from torch.export import Dim


class Mlp(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin = torch.nn.Linear(8, width)

    def forward(self, x):
        return self.lin(x).relu()


@pytest.mark.parametrize("width", [2, 3, 4, 5])
@pytest.mark.exportable(modes=["strict", "non_strict"], dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
def test_mlp(width):
    torch.manual_seed(0)
    return Mlp(width), (torch.randn(4, 8),)
"""


def reused(pytester, *args: str) -> dict[str, str | None]:
    result = pytester.runpytest_subprocess("-n", "2", "-v", "--export-report=r.json", "--export-cache=off", *args)
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "r.json").read_text())
    return {r["case"]: r["outcome"]["reused_from"] for r in report["records"] if r["mode"] == "non_strict"}, result


def test_each_case_runs_on_one_worker_and_its_second_mode_reuses_the_first(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    got, result = reused(pytester)
    result.stdout.fnmatch_lines(["*scheduling tests via CaseScheduling*"])
    # every strict/non_strict pair captured the same program on one worker: no duplicated work
    assert got == {f"test_models.py::test_mlp[{w}]": "strict" for w in (2, 3, 4, 5)}


def test_a_dist_the_user_gives_is_kept(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    _, result = reused(pytester, "--dist", "load")
    result.stdout.fnmatch_lines(["*scheduling tests via LoadScheduling*"])


@pytest.mark.parametrize(("nodeid", "case"), [
    ("t.py::test_a[strict]", "t.py::test_a"),
    ("t.py::test_a[4-non_strict]", "t.py::test_a[4]"),
    ("t.py::test_a[v1-strict-strict]", "t.py::test_a[v1-strict]"),
    ("t.py::test_a[aoti-cuda]", "t.py::test_a"),
    ("t.py::test_plain", "t.py::test_plain"),
])
def test_case_scope(nodeid: str, case: str) -> None:
    columns = (Column("strict"), Column("non_strict"), Column("training"), Column("aoti"), Column("aoti", "cuda"))
    assert case_scope(nodeid, columns) == case
