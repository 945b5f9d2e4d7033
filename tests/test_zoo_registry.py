"""The zoo's committed registry lists match the installed timm, torchvision and transformers (issue 55 item 1).

Like OpenVINO's model-hub list check: when a library registers a model the committed list lacks, the test
fails naming it as *unchecked* (new upstream, never silently absent), and one the list has that the library
dropped as *missing*. It lists, it builds nothing. Machinery: the registries are the libraries', the same on
any torch (the oldest-torch CI step pins an older torchvision whose registry is its own).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from exportcore.zoo.registry import compare, installed, read_list

pytestmark = pytest.mark.machinery

LISTS = Path(__file__).resolve().parent.parent / "docs" / "zoo"
MODULES = {"timm": "timm", "torchvision": "torchvision", "hf": "transformers"}


@pytest.mark.parametrize("kind", sorted(MODULES))
def test_committed_list_matches_the_installed_registry(kind: str) -> None:
    if importlib.util.find_spec(MODULES[kind]) is None:
        pytest.skip(f"{MODULES[kind]} is not installed: its registry cannot be listed")
    where = LISTS / f"registry-{kind}.txt"
    version, known = read_list(where)
    diff = compare(kind, known, installed(kind))
    if diff:
        from importlib import metadata

        now = metadata.version(MODULES[kind])
        pytest.fail(f"{diff.text(f'docs/zoo/{where.name}')}\n  (list taken from {MODULES[kind]} {version}, "
                    f"installed {now})", pytrace=False)


def test_a_difference_names_new_models_unchecked_and_dropped_ones_missing() -> None:
    diff = compare("timm", ["timm/a", "timm/gone"], ["timm/a", "timm/new_b", "timm/new_a"])
    assert diff and diff.unchecked == ("timm/new_a", "timm/new_b") and diff.missing == ("timm/gone",)
    text = diff.text("docs/zoo/registry-timm.txt")
    assert "2 unchecked (new upstream): timm/new_a, timm/new_b" in text and "1 missing" in text
    assert "python -m exportcore.zoo.registry timm > docs/zoo/registry-timm.txt" in text
    assert not compare("timm", ["timm/a"], ["timm/a"])


def test_the_committed_lists_are_whole_registries() -> None:
    """Every library's list, not a sample: the sizes issue 55 counts (timm 1,371, torchvision 121)."""
    sizes = {kind: len(read_list(LISTS / f"registry-{kind}.txt")[1]) for kind in MODULES}
    assert sizes["timm"] >= 1300 and sizes["torchvision"] >= 120 and sizes["hf"] >= 600, sizes
