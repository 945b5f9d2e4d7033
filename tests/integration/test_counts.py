"""One count, in one vocabulary, in every output: cases, modes and targets, results.

A new user read ``34 passed`` (pytest), ``verdicts: 36 passed`` (the terminal summary), ``36/46
passed`` (the HTML title) and ``21 cases × 6 modes`` (an HTML card counting targets as modes) for
one run. Each output now says how many results, from how many cases, in which modes and targets.
"""

from __future__ import annotations

import html
import json
import re

import pytest

# Report and terminal machinery: the same on any torch (.ci/run runs it on the newest only).
pytestmark = pytest.mark.machinery

SUITE = """
import pytest
import torch
from torch.export import Dim


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()


@pytest.mark.exportable(modes=["strict", "non_strict"], targets=["onnx"], examples=2,
                        dynamic_shapes={"x": {0: Dim("batch", min=2, max=8)}})
def test_head():
    return Head(), (torch.randn(4, 4),)


def test_variants(export_check):
    for width in (2, 3):
        outcome = export_check(torch.nn.Linear(width, 2), (torch.randn(2, width),), mode="non_strict",
                               examples=2, case_id=f"lin-{width}")
        assert outcome.passed
"""


def test_terminal_html_markdown_and_json_count_the_same_results_in_the_same_words(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_counts=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=r.json",
                                           "--export-report=r.html", "--export-report=r.md")
    assert result.ret == 0, result.stdout.str()
    summary = json.loads((pytester.path / "r.json").read_text())["summary"]
    # test_head: 2 modes + the onnx target (skipped where onnx is not installed: a result all the same);
    # test_variants: two export_check results in one test
    assert (summary["total"], summary["cases"]) == (5, 3)
    spans = "3 cases in 2 modes and 1 target"
    passed = summary["verdicts"].get("passed", 0)

    line = next(x for x in result.stdout.lines if x.startswith("results: "))
    assert f"(5 from {spans}; pytest counts tests: 2 of these results come from export_check" in line
    page = html.unescape((pytester.path / "r.html").read_text())
    assert f"<title>pytest-export: {passed} of 5 results passed" in page
    assert f"from {spans}" in page and "× 3 modes" not in page
    assert f"**5 results** ({spans}):" in (pytester.path / "r.md").read_text()

    # the columns in one order everywhere; an export_check row names the test that recorded it
    header = result.stdout.lines[result.stdout.lines.index(next(x for x in result.stdout.lines
                                                                 if "export matrix" in x)) + 1]
    assert header.split() == ["strict", "non_strict", "onnx"]
    matrix = re.search(r'<table class="matrix"><thead><tr><th>case</th>(.*?)</tr>', page)
    assert matrix is not None and re.findall(r"<th>(.*?)</th>", matrix.group(1)) == header.split()
    assert any(x.startswith("test_counts.py::test_variants::lin-2 ") for x in result.stdout.lines)
    assert "test_counts.py::test_variants::lin-2" in page
    # the page's header names the modes and the targets apart
    assert "<b>modes</b> strict, non_strict, training</span>" in page and "<b>targets</b> onnx</span>" in page
