"""The dynamism ledger in the reports and the terminal, and an audit: no pass contradicts its own ledger.

Runs real sessions: the examples' derived-dims file and the catalog's dynamic-shape cases, whose
records must carry a ledger per declared dim and never be counted passed with a range-declared dim
narrowed or specialized; and a small suite whose Markdown, HTML and terminal show the column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_export.results.audit import passes_contradicting_their_dims
from pytest_export.results.report import load_report

ROOT = Path(__file__).resolve().parents[2]
# Reports, terminal and a catalog run: the ledger itself is tested on every torch (tests/test_dynamism_ledger.py).
pytestmark = pytest.mark.machinery

SUITE = """
import pytest
import torch
from torch.export import Dim


class AtMost32(torch.nn.Module):
    def forward(self, x):
        torch._check(x.shape[0] <= 32)
        return x * 2


class Rows(torch.nn.Module):
    def forward(self, x):
        return x.sum(1)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}})
def test_auto():
    return AtMost32(), (torch.randn(4, 8),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
def test_named():
    return Rows(), (torch.randn(4, 8),)
"""


def test_the_ledger_in_markdown_html_json_and_the_terminal(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_dims=SUITE)
    args = ("-p", "no:cacheprovider", "--export-report=r.json", "--export-report=r.md", "--export-report=r.html")
    result = pytester.runpytest(*args)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["dynamic dims: 1 narrowed of 2 declared (-v lists each)"])
    md = (pytester.path / "r.md").read_text()
    assert "| dynamic dims |" in md and "batch 2..16 ✓" in md and "→ 2..32" in md
    assert "batch 2..16 ✓" in (pytester.path / "r.html").read_text()
    records = json.loads((pytester.path / "r.json").read_text())["records"]
    kinds = {r["case"].split("::")[-1]: [d["kind"] for d in r["outcome"]["dims"]] for r in records}
    assert kinds == {"test_auto": ["narrowed"], "test_named": ["dynamic"]}
    verbose = pytester.runpytest("-p", "no:cacheprovider", "-v")
    verbose.stdout.fnmatch_lines(["dynamic dims (2 declared, 1 dynamic as declared):",
                                  "  test_dims.py::test_auto[[]non_strict[]]: * → 2..32"])


def test_no_pass_of_the_examples_or_the_catalog_contradicts_its_ledger(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_derived=(ROOT / "examples" / "test_derived_dims.py").read_text())
    result = pytester.runpytest("-p", "no:cacheprovider", "--export-report=examples.json")
    assert result.ret == 0, result.stdout.str()
    result = pytester.runpytest("--pyargs", "exportdb", "-p", "no:cacheprovider", "-k", "dynamic_shapes",
                                           "--export-report=catalog.json")
    assert result.ret == 0, result.stdout.str()
    for name in ("examples.json", "catalog.json"):
        records = load_report(pytester.path / name).records
        declared = [r for r in records if r.outcome is not None and r.outcome.declared]
        assert declared, f"{name}: no record declared a dynamic dim"
        # every record with a declared dim carries its ledger, one entry per declared dim
        assert all(len(r.outcome.dims) == len(r.outcome.declared) for r in declared), name
        assert passes_contradicting_their_dims(records) == [], name
