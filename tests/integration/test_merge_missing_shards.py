"""``merge --allow-missing-shards`` says a shard is missing, not that a session was interrupted.

Real shard sessions (real exports): shard 1 of 2 runs to its end, shard 2's report never arrives. The merge
warns that shard 2 is missing, and its reports say so; only a shard whose own session stopped early is
called interrupted.
"""

from __future__ import annotations

import json

import pytest

from pytest_export.__main__ import main

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

BODY = """
import pytest
import torch


@pytest.mark.exportable(modes=["non_strict"], checks=["numerics"], examples=1)
def test_{name}():
    return torch.nn.ReLU(), (torch.ones(2),)
"""


def test_a_missing_shard_is_called_missing_not_interrupted(pytester, capsys) -> None:
    pytester.makepyfile(test_a=BODY.format(name="a"), test_b=BODY.format(name="b"))
    run = ("-p", "no:cacheprovider")
    assert pytester.runpytest(*run, "--export-report=whole.json").ret == 0
    assert pytester.runpytest(*run, "--export-report=a.json", "--export-shard=1/2").ret == 0
    # Shard 2 of 2 never wrote b.json: merged with what there is.
    code = main(["merge", "a.json", "-o", "m.json", "-o", "m.md", "-o", "m.html", "--baseline", "whole.json",
                 "--allow-missing-shards"])
    err = capsys.readouterr().err
    assert code == 1  # the missing shard's keys fail the gate
    assert "interrupted" not in err and "stopped early" not in err, err
    assert ("warning: shard 2 of 2 is missing: merged without it (--allow-missing-shards); the merged report is "
            "incomplete") in err
    merged = json.loads((pytester.path / "m.json").read_text())
    assert merged["complete"] is False
    assert merged["stop_reason"] == "shard 2 of 2 is missing (merged with --allow-missing-shards)"
    for page in ("m.md", "m.html"):
        text = (pytester.path / page).read_text()
        assert "shard 2 of 2 is missing" in text and "interrupted" not in text, page

    # A shard whose session stopped early (-x) is the one called so.
    pytester.makepyfile(test_b=BODY.format(name="b").replace("torch.ones(2)", "torch.ones(2, dtype=torch.long)")
                        .replace("torch.nn.ReLU()", "torch.nn.Linear(2, 2)"))  # fails (dtype): -x stops there
    assert pytester.runpytest(*run, "--export-report=b.json", "--export-shard=2/2", "-x").ret == 1
    assert main(["merge", "a.json", "b.json", "-o", "n.json"]) == 0
    err = capsys.readouterr().err
    assert "warning: shard report b.json: stopped early" in err and "is missing" not in err, err
