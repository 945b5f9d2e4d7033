"""Code only the drawn shapes reach is named in the cache entry: an edit there is checked again, never served."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
import torch

from exportcore.reuse.result_cache import ResultCache
from processes import checked_twice
from sessions import check, reported_version, served, warmed, write_module

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
    return write_module(path, MODEL.format(factor=factor, scale=scale), "pte_gated_model").Gated


@pytest.fixture
def warm(tmp_path):
    """A cache holding the unedited model's pass (its drawn shapes ran long_rows), and the model's file."""
    return warmed(tmp_path, load)


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
    text = MODEL.format(factor="1.0", scale="1.0") + "\n\ndef gated(x):\n    return Gated()(x)\n"
    module = write_module(tmp_path / "gated_function.py", text, "pte_gated_function")
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, lambda: module.gated, "non_strict").status == "passed"
    assert served(check(cache, lambda: module.gated, "non_strict"))


def test_an_edit_to_code_no_run_reached_leaves_the_entry(warm) -> None:
    # The examples' record and the witnesses name what ran; a module's other code is not part of it.
    cache, path = warm
    module = write_module(path, path.read_text() + "\n\ndef unused():\n    return 1\n", "pte_gated_model")
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


MODEL_IN_SESSION = '''
LIMIT = 16


def long_rows(x):
    return x.sin() * 1.0


class Gated(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= LIMIT:
            return x.sin()
        return long_rows(x)
'''


def test_an_unchanged_function_only_drawn_shapes_reach_is_served_in_a_new_process(tmp_path) -> None:
    lines = checked_twice(MODEL_IN_SESSION, "Gated", tmp_path)
    assert lines[0] == "passed None", lines[0]
    assert lines[1].startswith("passed cache: strict, "), lines[1]


def test_an_installed_library_only_drawn_shapes_reach_is_named_by_its_version(tmp_path) -> None:
    # Past 16 rows eager runs torchvision's own Python (stochastic_depth, a no-op outside training): a
    # rebuilt torchvision whose kernels changed may keep every line of that Python, so its version is
    # part of the witness. The examples' record does not name it (8 rows never reach it).
    torchvision = pytest.importorskip("torchvision")

    class Deep(torch.nn.Module):
        def forward(self, x):
            if torch.compiler.is_compiling() or x.shape[0] <= 16:
                return x.sin()
            return torchvision.ops.stochastic_depth(x.sin(), 0.0, "row", training=False)

    cache = ResultCache(tmp_path / "cache")
    assert check(cache, Deep).status == "passed"
    assert served(check(cache, Deep))
    with reported_version("torchvision", "0.0.0+rebuilt"):
        outcome = check(cache, Deep)
    assert outcome.status == "passed" and not served(outcome)
