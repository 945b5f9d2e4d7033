"""--export-cache-audit: a share of the results the cache served is checked again in full; a stale entry fails loudly.

A planted stale entry (a cached finding removed from an entry on disk: the proof still matches, the
entry no longer says what a full check finds) is served as a pass without the audit, and caught by
it as an internal failure naming the pair and both outcomes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_export.cache_audit import selected

# Cache machinery over real sessions: the same on any torch (.ci/run runs it on the newest only).
pytestmark = pytest.mark.machinery

SUITE = """
import pytest
import torch
from torch.export import Dim


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


@pytest.mark.exportable(modes=["non_strict"], examples=2, dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}})
def test_double():
    return Double(), (torch.randn(4, 3),)
"""


def _records(path: Path) -> list[dict]:
    return json.loads(path.read_text())["records"]


def _entries(root: Path) -> list[Path]:
    return sorted((root / ".pytest_cache" / "d" / "pytest-export-results").glob("*/*.json"))


def test_the_audit_finds_a_planted_stale_entry_and_passes_an_honest_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_audit=SUITE)
    cold = pytester.runpytest_subprocess("--export-report=cold.json")
    assert cold.ret == 0, cold.stdout.str()
    (record,) = _records(pytester.path / "cold.json")
    kinds = {f["kind"] for f in record["outcome"]["findings"]}
    assert kinds, "the model's drawn shapes leave a finding (sizes 0/1, another dtype) for the entry to hold"

    honest = pytester.runpytest_subprocess("--export-report=honest.json", "--export-cache-audit=1")
    assert honest.ret == 0, honest.stdout.str()
    (record,) = _records(pytester.path / "honest.json")
    assert record["outcome"]["reused_from"].startswith("cache:")
    assert any(n.startswith("cache audit: checked again in full, the same") for n in record["outcome"]["notes"])

    for entry in _entries(pytester.path):  # plant a stale entry: its findings dropped
        data = json.loads(entry.read_text())
        if "outcome" in data:  # the whole outcome, served before eager (exportcore.reuse.whole)
            data["outcome"]["findings"] = []
        else:  # the checks after capture
            data["findings"] = {step: [] for step in data["findings"]}
        entry.write_text(json.dumps(data))
    served = pytester.runpytest_subprocess("--export-report=served.json")
    (record,) = _records(pytester.path / "served.json")
    assert record["outcome"]["reused_from"].startswith("cache:") and not record["outcome"]["findings"]
    audited = pytester.runpytest_subprocess("--export-report=audited.json", "--export-cache-audit=1.0")
    assert audited.ret == 1
    (record,) = _records(pytester.path / "audited.json")
    failure = record["outcome"]["failure"]
    assert (record["verdict"], failure["category"], failure["exc_type"]) == ("failed", "internal", "CacheAuditMismatch")
    assert "the result cache served passed" in failure["message"] and "checking again in full gives" in failure["message"]
    audited.stdout.fnmatch_lines(["*CacheAuditMismatch*"])


def test_the_share_is_chosen_by_the_key_the_same_everywhere() -> None:
    keys = [(f"t.py::test_{i}", mode) for i in range(400) for mode in ("strict", "non_strict")]
    chosen = [k for k in keys if selected(*k, 0.25)]
    assert 0.15 < len(chosen) / len(keys) < 0.35
    assert chosen == [k for k in keys if selected(*k, 0.25)]  # deterministic: shards agree
    assert all(selected(*k, 1.0) for k in keys) and not any(selected(*k, 0.0) for k in keys)


def test_a_share_outside_0_1_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_audit=SUITE)
    result = pytester.runpytest_subprocess("--export-cache-audit=1.5")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--export-cache-audit must be a share between 0 and 1, got 1.5*"])
