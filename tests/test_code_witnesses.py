"""Code only the drawn shapes reach is named in the cache entry: an edit there is checked again, never served."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore import reuse, shared_programs
from exportcore.result_cache import ResultCache
from processes import last_lines

SPEC = {"x": {0: Dim("n", min=2, max=64)}}

# Eager leaves the traced path past 16 rows (``is_compiling``: export takes the first branch), and
# calls a helper the 8-row examples never reach: neither the graph nor eager's answer on the
# examples shows an edit to it; only a drawn shape past 16 rows does.
MODEL = '''
import torch

SCALE = {scale}


def long_rows(x):
    return x.sin() * {factor} * SCALE


class Gated(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.sin()
        return long_rows(x)
'''


def load(path: Path, factor: str = "1.0", scale: str = "1.0") -> type:
    """Write the model's module (as a user edits it), import it afresh and return its class."""
    stamp = path.stat().st_mtime_ns + 10**9 if path.exists() else None
    path.write_text(MODEL.format(factor=factor, scale=scale))
    if stamp is not None:  # a new mtime, however fast the edit came
        os.utime(path, ns=(stamp, stamp))
    spec = importlib.util.spec_from_file_location("pte_gated_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Gated


def check(cache: ResultCache, cls: type, mode: str = "strict"):
    args = (torch.randn(8, 3, generator=torch.Generator().manual_seed(0)),)
    outcome = exportcore.check(cls(), args, dynamic_shapes=SPEC, mode=mode, case_id="case", cache=cache)
    reuse.clear()  # each check() stands for a new session
    shared_programs.clear()
    return outcome


def served(outcome) -> bool:
    return (outcome.reused_from or "").startswith("cache:")


@pytest.fixture
def warm(tmp_path):
    """A cache holding the unedited model's pass (its drawn shapes ran long_rows), and the model's file."""
    cache, path = ResultCache(tmp_path / "cache"), tmp_path / "gated_model.py"
    assert check(cache, load(path)).status == "passed"
    assert served(check(cache, load(path)))  # unchanged: served
    return cache, path


@pytest.mark.parametrize("edit", [{"factor": "2.0"}, {"scale": "2.0"}], ids=["its code", "a constant it reads"])
def test_an_edit_only_drawn_shapes_reach_is_checked_again(warm, edit) -> None:
    cache, path = warm
    edited = check(cache, load(path, **edit))
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure


def test_a_plain_functions_helpers_are_found_again(tmp_path) -> None:
    # check() wraps a plain function in a module; its module (loaded from a file, not in sys.modules)
    # is found through that wrapper's closure, so the unchanged case is served. Non-strict: torch 2.6's
    # dynamo imports a function's module by name, which such a module does not have.
    path = tmp_path / "gated_function.py"
    path.write_text(MODEL.format(factor="1.0", scale="1.0") + "\n\ndef gated(x):\n    return Gated()(x)\n")
    spec = importlib.util.spec_from_file_location("pte_gated_function", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, lambda: module.gated, "non_strict").status == "passed"
    assert served(check(cache, lambda: module.gated, "non_strict"))


def test_an_edit_to_code_no_run_reached_leaves_the_entry(warm) -> None:
    # The examples' record and the witnesses name what ran; a module's other code is not part of it.
    cache, path = warm
    path.write_text(path.read_text() + "\n\ndef unused():\n    return 1\n")
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    spec = importlib.util.spec_from_file_location("pte_gated_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert served(check(cache, module.Gated))


def test_a_witness_that_cannot_be_found_again_means_a_full_run(tmp_path) -> None:
    # The helper's module is reached through a closure; once sys.modules forgets it, nothing can read its
    # source and globals again to prove them unchanged: the case runs in full (and still passes).
    (tmp_path / "pte_far_helpers.py").write_text("def long_rows(x):\n    return x.sin()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        helpers = importlib.import_module("pte_far_helpers")

        class Far(torch.nn.Module):
            def forward(self, x):
                if torch.compiler.is_compiling() or x.shape[0] <= 16:
                    return x.sin()
                return helpers.long_rows(x)

        cache = ResultCache(tmp_path / "cache")
        assert check(cache, Far).status == "passed"
        assert served(check(cache, Far))
        del sys.modules["pte_far_helpers"]
        outcome = check(cache, Far)
        assert outcome.status == "passed" and not served(outcome)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("pte_far_helpers", None)


SESSION = '''
import sys
import torch
import exportcore
from torch.export import Dim
from exportcore.result_cache import ResultCache

LIMIT = 16


def long_rows(x):
    return x.sin() * 1.0


class Gated(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= LIMIT:
            return x.sin()
        return long_rows(x)


x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
outcome = exportcore.check(Gated(), (x,), dynamic_shapes={"x": {0: Dim("n", min=2, max=64)}}, mode="strict",
                           case_id="case", cache=ResultCache(sys.argv[1]))
print(outcome.status, outcome.reused_from)
'''


def test_an_unchanged_function_only_drawn_shapes_reach_is_served_in_a_new_process(tmp_path) -> None:
    lines = last_lines(SESSION, tmp_path)
    assert lines[0] == "passed None", lines[0]
    assert lines[1].startswith("passed cache: strict, "), lines[1]
