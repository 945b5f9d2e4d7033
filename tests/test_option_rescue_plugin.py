"""The option rescue end to end: a pytest session's failure text, and ``python -m pytest_export explain``.

Issue 54's acceptance: a model that specializes at 0/1 is reported "rescued by backed_size_oblivious
(verified)" with its code, and one no option rescues says so; the marker line the rescue prints makes
the case pass (both options).
"""

from __future__ import annotations

import inspect
import sys

import pytest
import torch

_config = pytest.importorskip("torch.fx.experimental._config")
pytestmark = pytest.mark.skipif(
    not hasattr(_config, "backed_size_oblivious")
    or "prefer_deferred_runtime_asserts_over_guards" not in inspect.signature(torch.export.export).parameters,
    reason="this torch offers neither rescue option (torch 2.6)")

CASES = '''
import pytest
import torch
from torch.export import Dim

BATCH = {"x": {0: Dim("batch", min=1, max=8)}}


class BatchSum(torch.nn.Module):
    def forward(self, x):
        return (x * 2).sum(0)


class PadsToEven(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        if (n + 1) // 2 * 2 >= n:
            return x * 2
        return x - 1


class FourRows(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(4, 1)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes=BATCH)
def test_zero_one():
    return BatchSum(), (torch.randn(1, 4),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes=BATCH)
def test_unprovable():
    return PadsToEven(), (torch.randn(4, 3),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes=BATCH,
                        export_config={"prefer_deferred_runtime_asserts_over_guards": True})
def test_unprovable_rescued():
    return PadsToEven(), (torch.randn(4, 3),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim("batch", max=64)}})
def test_four_rows():
    return FourRows(), (torch.randn(4, 8),)
'''


def test_the_session_and_explain_say_rescued_or_not(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rescue=CASES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=out/r.json",
                                           "--export-report=out/r.md", "--export-report=out/r.html")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "rescued by backed_size_oblivious (verified*",
        "  @pytest.mark.exportable(..., export_config={'backed_size_oblivious': True})",
        "  with torch.fx.experimental._config.patch(backed_size_oblivious=True):",
    ])
    result.stdout.fnmatch_lines([
        "rescued by prefer_deferred_runtime_asserts_over_guards (verified*",
        "  @pytest.mark.exportable(..., export_config={'prefer_deferred_runtime_asserts_over_guards': True})",
        "  ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes, "
        "prefer_deferred_runtime_asserts_over_guards=True)",
    ])
    result.stdout.fnmatch_lines(["no option rescues it (backed_size_oblivious: still failed at *; "
                                 "prefer_deferred_runtime_asserts_over_guards: still failed at *"])
    assert out.count("rescued by ") == 2 and out.count("no option rescues it") == 1

    # the ledger in the failure text: torch fixed the batch to the example's 1 (test_option_rescue.py: bare torch)
    result.stdout.fnmatch_lines(["  batch 1..8 → 1 ✗  (specialized: *)"])

    md = (pytester.path / "out" / "r.md").read_text(encoding="utf-8")
    assert md.count("  - option rescue: `rescued by backed_size_oblivious (verified)`") == 1
    assert "    @pytest.mark.exportable(..., export_config={'backed_size_oblivious': True})" in md
    assert ("  - option rescue: `no option rescues (tried backed_size_oblivious, "
            "prefer_deferred_runtime_asserts_over_guards)`") in md
    page = (pytester.path / "out" / "r.html").read_text(encoding="utf-8")
    assert "<dt>option rescue</dt><dd>rescued by backed_size_oblivious (verified)" in page
    assert "<dt>option rescue</dt><dd>no option rescues (tried backed_size_oblivious" in page

    for node, says in (("test_rescue.py::test_zero_one[non_strict]", "rescued by backed_size_oblivious (verified"),
                       ("test_rescue.py::test_four_rows[non_strict]", "no option rescues it (")):
        explained = pytester.run(sys.executable, "-m", "pytest_export", "explain", "out/r.json", node)
        assert explained.ret == 1, explained.stdout.str()  # the case still fails, as recorded
        assert says in explained.stdout.str()
        recorded = explained.stdout.str().split("$ (cd", 1)[0]  # what the report held, before the re-run
        assert "  recorded dynamism (declared -> what the program took):" in recorded
        if "zero_one" in node:
            assert "    batch 1..8 → 1 ✗  (specialized: " in recorded
            assert "  recorded option rescue: rescued by backed_size_oblivious (verified)" in recorded
            assert "    with torch.fx.experimental._config.patch(backed_size_oblivious=True):" in recorded
        else:
            assert "    batch 0..64 → 4 ✗  (specialized: " in recorded
            assert ("  recorded option rescue: no option rescues (tried backed_size_oblivious, "
                    "prefer_deferred_runtime_asserts_over_guards)") in recorded
            assert "    backed_size_oblivious: still failed at " in recorded
