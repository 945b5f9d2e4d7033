"""An exportable test that builds its model unseeded gets the same weights in every mode and every run."""

from __future__ import annotations

import json

import pytest

SUITE = """
import pytest
import torch
from torch.export import Dim


@pytest.mark.exportable(modes=["strict", "non_strict"], dynamic_shapes={"input": {0: Dim("batch", min=2, max=16)}})
def test_unseeded():
    return torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()), (torch.randn(4, 8),)


def test_plain_after(request):
    # the global stream continues as if no exportable test had run before this one
    (request.config.rootpath / "plain.txt").write_text(repr(torch.rand(3).tolist()))
"""

CONFTEST = """
import torch

def pytest_sessionstart(session):
    torch.manual_seed(1234)
"""


def run(pytester, *args: str) -> dict:
    result = pytester.runpytest_subprocess("--export-report=r.json", "-p", "no:randomly", *args)
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "r.json").read_text())
    return {r["mode"]: r["outcome"]["reused_from"] for r in report["records"]}


def test_every_mode_and_every_run_sees_one_model(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    # one model in both modes: the later mode reuses the earlier one's runs
    assert run(pytester, "--export-cache=off") == {"strict": None, "non_strict": "strict"}
    run(pytester)
    # and the same model in the next session: served from the result cache
    assert all((source or "").startswith("cache:") for source in run(pytester).values())


# ExportDB's way: the module imports no torch, each case builds (and imports) it inside the test.
LAZY_SUITE = """
import pytest


@pytest.mark.exportable(modes=["strict", "non_strict"])
def test_first_of_the_session():
    import torch

    return torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()), (torch.randn(4, 8),)
"""


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
def test_the_first_test_of_a_session_is_seeded_before_torch_is_imported(pytester) -> None:
    # It was not: torch was not imported yet when the seed was due, so its first mode got other
    # weights than its second (no reuse) and than the next session (never served from the cache).
    pytester.makepyfile(test_lazy=LAZY_SUITE)
    assert run(pytester, "--export-cache=off") == {"strict": None, "non_strict": "strict"}
    run(pytester)
    assert all((source or "").startswith("cache:") for source in run(pytester).values())


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
def test_the_global_rng_is_left_as_it_was(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    pytester.makeconftest(CONFTEST)
    pytester.runpytest_subprocess("-p", "no:randomly", "-k", "plain").assert_outcomes(passed=1)
    alone = (pytester.path / "plain.txt").read_text()
    pytester.runpytest_subprocess("-p", "no:randomly", "--export-cache=off").assert_outcomes(passed=3)
    assert (pytester.path / "plain.txt").read_text() == alone
