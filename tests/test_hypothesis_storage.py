"""exportcore.check() in a script leaves no ``.hypothesis/`` folder in the working directory.

Hypothesis writes one as soon as it draws (its constants cache). A user who calls the engine from
a script, a notebook or a unittest suite did not ask for it; one who chose a place for it, or whose
project has the folder already, keeps exactly that.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.machinery  # where hypothesis keeps its files: the same on any torch

SCRIPT = """
import torch, exportcore
from torch.export import Dim
from hypothesis import configuration

chosen = {chosen!r}
if chosen:
    configuration.set_hypothesis_home_dir(chosen)
model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())
outcome = exportcore.check(model, (torch.randn(4, 16),), dynamic_shapes=({{0: Dim("batch", max=64)}},),
                           mode="non_strict", examples=10)
assert outcome.status == "passed" and outcome.examples.tried, outcome
print("home after:", configuration.storage_directory(intent_to_write=False).home_directory)
"""


def _run(cwd: Path, chosen: str = "", **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    environ.update(env, XDG_CACHE_HOME=str(cwd / "xdg"))
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(chosen=chosen)], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_a_script_leaves_no_hypothesis_folder_behind(tmp_path: Path) -> None:
    out = _run(tmp_path)
    assert not (tmp_path / ".hypothesis").exists()
    assert (tmp_path / "xdg" / "exportcore" / "hypothesis" / "constants").is_dir()
    # handed back: the user's own hypothesis tests after the check find the default place
    assert f"home after: {tmp_path / '.hypothesis'}" in out


def test_a_projects_folder_and_a_chosen_place_are_kept(tmp_path: Path) -> None:
    (tmp_path / ".hypothesis").mkdir()
    _run(tmp_path)
    assert (tmp_path / ".hypothesis" / "constants").is_dir() and not (tmp_path / "xdg").exists()

    chosen = tmp_path / "mine"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _run(elsewhere, chosen=str(chosen))
    assert (chosen / "constants").is_dir() and f"home after: {chosen}" in out
    assert not (elsewhere / ".hypothesis").exists()
