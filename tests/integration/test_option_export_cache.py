"""--export-cache: a rerun of an unchanged suite takes the earlier run's results; every way to turn it off works.

One cold session per worker writes the cache (``cold_run``); each test copies its folder into its
own, which is another checkout in another place: the rerun must still be served there (a CI cache
action restores the folder into whatever workspace the runner has).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import session_env

SUITE = """
import pytest
import torch
from torch.export import Dim


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.lin(x).relu()


class Branchy(torch.nn.Module):
    def forward(self, x):
        return x + 1 if x.sum() > 0 else x - 1


@pytest.mark.exportable(modes=["strict", "non_strict"], dynamic_shapes={"x": {0: Dim("batch", min=2, max=32)}})
def test_mlp():
    torch.manual_seed(0)
    return Mlp(), (torch.randn(4, 8),)


@pytest.mark.exportable(modes=["non_strict"], expect={"non_strict": "data-dependent branch"})
def test_branch():
    return Branchy(), (torch.ones(2, 3),)
"""


def records(pytester, *args: str) -> dict[tuple[str, str], tuple[str, str | None]]:
    result = pytester.runpytest_subprocess("--export-report=r.json", *args)
    assert result.ret == 0, result.stdout.str()
    return read(pytester.path / "r.json")


def read(report: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    data = json.loads(report.read_text())
    return {(r["case"], r["mode"]): (r["verdict"], r["outcome"]["reused_from"]) for r in data["records"]}


@pytest.fixture(scope="module")
def cold_run(tmp_path_factory) -> tuple[Path, dict]:
    """A cold session of SUITE run as a user runs it: its folder (the cache it wrote inside) and its records."""
    home = tmp_path_factory.mktemp("cold-checkout")
    (home / "test_models.py").write_text(SUITE)
    env = session_env()
    basetemp = tmp_path_factory.mktemp("cold-basetemp")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--export-report=r.json", f"--basetemp={basetemp}"],
                          cwd=home, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return home, read(home / "r.json")


@pytest.fixture
def warm_checkout(pytester, cold_run) -> dict:
    """The cold run's folder copied into this test's (another path); return the cold run's records."""
    home, cold = cold_run
    shutil.copytree(home, pytester.path, dirs_exist_ok=True)
    return cold


def from_cache(got: dict) -> set[tuple[str, str]]:
    return {key for key, (_, source) in got.items() if (source or "").startswith("cache:")}


def verdicts(got: dict) -> dict:
    return {key: verdict for key, (verdict, _) in got.items()}


def test_a_rerun_in_another_checkout_is_served_from_the_cache_with_the_same_verdicts(pytester, warm_checkout) -> None:
    cold = warm_checkout
    warm = records(pytester)
    assert verdicts(warm) == verdicts(cold) == {
        ("test_models.py::test_mlp", "strict"): "passed",
        ("test_models.py::test_mlp", "non_strict"): "passed",
        ("test_models.py::test_branch", "non_strict"): "xfailed",
    }
    assert from_cache(cold) == set()
    # the failing case runs in full every time; both passing modes come from the cache
    assert from_cache(warm) == {("test_models.py::test_mlp", "strict"), ("test_models.py::test_mlp", "non_strict")}
    assert list((pytester.path / ".pytest_cache" / "d" / "pytest-export-results").glob("*/*.json"))


@pytest.mark.machinery  # options, terminal text and folders: the same on any torch (.ci/run)
def test_the_terminal_says_what_was_reused(pytester, warm_checkout) -> None:
    # a user sees why a warm run was fast, and that a slow one (a cache not restored) served nothing
    warm = pytester.runpytest_subprocess()
    assert warm.ret == 0, warm.stdout.str()
    # non_strict passed cold: served whole (neither eager nor its capture ran); strict: after its capture
    warm.stdout.fnmatch_lines(["reused: 1 served whole from the result cache, 1 from the result cache, of 3 results "
                               "(served whole: neither eager nor the capture ran; the others captured and ran eager)"])
    shared = pytester.runpytest_subprocess("--export-cache=off", "-v")
    # without the cache, non_strict still takes strict's identical program's results in this session
    shared.stdout.fnmatch_lines(["reused: 1 from another mode's identical program, of 3 results*"])
    full = pytester.runpytest_subprocess("--export-no-reuse")
    assert full.ret == 0, full.stdout.str()
    assert "reused:" not in full.stdout.str()


@pytest.mark.machinery  # options, terminal text and folders: the same on any torch (.ci/run)
@pytest.mark.parametrize("off", [["--export-cache=off"], ["--cache-clear"], ["-p", "no:cacheprovider"],
                                 ["--export-no-reuse"], ["--export-cache=write"]])
def test_every_way_to_turn_it_off(pytester, warm_checkout, off: list[str]) -> None:
    # the same copied cache serves both passing pairs when nothing turns it off (the test above)
    assert from_cache(records(pytester, *off)) == set()


@pytest.mark.machinery  # options, terminal text and folders: the same on any torch (.ci/run)
def test_a_cache_folder_that_cannot_be_made_warns_once_and_changes_no_verdict(pytester, warm_checkout) -> None:
    # a damaged restored CI cache: a file where the folder belongs
    folder = pytester.path / ".pytest_cache" / "d" / "pytest-export-results"
    shutil.rmtree(folder)
    folder.write_text("not a folder")
    result = pytester.runpytest_subprocess("--export-report=r.json")
    assert result.ret == 0, result.stdout.str()
    got = read(pytester.path / "r.json")
    assert verdicts(got) == verdicts(warm_checkout) and from_cache(got) == set()
    assert result.stdout.str().count("the result cache is off for this run") == 1
    assert folder.read_text() == "not a folder"


def test_an_edited_model_is_rechecked_in_full(pytester, warm_checkout) -> None:
    pytester.makepyfile(test_models=SUITE.replace("self.lin(x).relu()", "self.lin(x).tanh()"))
    assert from_cache(records(pytester)) == set()
    assert from_cache(records(pytester)) == {("test_models.py::test_mlp", "strict"),
                                             ("test_models.py::test_mlp", "non_strict")}


@pytest.mark.machinery  # options, terminal text and folders: the same on any torch (.ci/run)
def test_a_bad_value_is_a_usage_error(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    result = pytester.runpytest_subprocess("--export-cache=sometimes")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--export-cache: invalid choice: 'sometimes'*"])
    pytester.makeini("[pytest]\nexport_cache = sometimes\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*export_cache must be one of off, read, write, on, got 'sometimes'*"])


@pytest.mark.machinery  # options, terminal text and folders: the same on any torch (.ci/run)
def test_hypothesis_storage_goes_under_pytests_cache(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    records(pytester, "-k", "mlp")
    assert not (pytester.path / ".hypothesis").exists()
    assert (pytester.path / ".pytest_cache" / "d" / "hypothesis").is_dir()


@pytest.mark.machinery  # options, terminal text and folders: the same on any torch (.ci/run)
def test_a_projects_own_hypothesis_folder_is_kept(pytester) -> None:
    pytester.makepyfile(test_models=SUITE)
    (pytester.path / ".hypothesis").mkdir()
    records(pytester, "-k", "mlp")
    assert not (pytester.path / ".pytest_cache" / "d" / "hypothesis").exists()
