"""A conftest's edit between two sessions is checked again, never served: the result cache's proof, as a user meets it.

Three sessions of one project: cold (checks and stores), unchanged (served), and one after an edit to
the conftest that leaves the model's own files as they were. The edited session must fail as a cold
run of it does.
"""

from __future__ import annotations

import json

import pytest

MODELS = """
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.sin()
        return self.chunked(x)

    def chunked(self, x):
        return torch.cat([part.sin() for part in x.split(8)])


class Silu(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)
"""

TESTS = """
import pytest
import torch
from torch.export import Dim

from models import {model}


@pytest.mark.exportable(modes=["strict"], dynamic_shapes={{"x": {{0: Dim("rows", min=2, max=64)}}}})
def test_model():
    return {model}(), (torch.randn(8, 3),)
"""

PATCHING_CONFTEST = """
import pytest

import models


def off_by_half(self, x):
    return x.sin() + 0.5


@pytest.fixture(autouse=True)
def fast_chunks(monkeypatch):
    monkeypatch.setattr(models.Net, "chunked", off_by_half)
"""

DECOMPOSING_CONFTEST = """
import torch
from torch._decomp import global_decomposition_table


def gate(x):
    return torch.sigmoid(x){edit}


def silu(x):
    return x * gate(x)


global_decomposition_table["post_autograd"][torch.ops.aten.silu.default] = silu
"""


def session(pytester) -> tuple[str, str | None]:
    """Run the project's suite in a new process; return its one record's verdict and where it was taken from."""
    pytester.runpytest_subprocess("--export-report=r.json")
    (record,) = json.loads((pytester.path / "r.json").read_text())["records"]
    return record["verdict"], record["outcome"]["reused_from"]


@pytest.mark.parametrize("model, before, after", [
    pytest.param("Net", "", PATCHING_CONFTEST, id="a conftest replaces a method only drawn shapes reach"),
    pytest.param("Silu", DECOMPOSING_CONFTEST.format(edit=""), DECOMPOSING_CONFTEST.format(edit=" * 1.5"),
                 id="a conftest edits a helper its decomposition calls"),
])
def test_a_conftest_edit_is_checked_again_in_the_next_session(pytester, model, before, after) -> None:
    pytester.makepyfile(models=MODELS, test_models=TESTS.format(model=model), conftest=before)
    assert session(pytester) == ("passed", None)
    verdict, served = session(pytester)
    assert verdict == "passed" and (served or "").startswith("cache:"), served
    pytester.makepyfile(conftest=after)
    verdict, served = session(pytester)
    assert verdict == "failed" and served is None, (verdict, served)
