"""Verified option rescue: a failing case retried under an export option torch offers, with every check.

``backed_size_oblivious`` is what tutorials teach against the 0/1 specialization: a batch declared
from 1 whose example is 1 fails to export; under the option it exports with the batch dynamic
from 1, and bare ``torch.export`` agrees (the program equals eager at 1, 2, 5 and 8). A model whose
failure is its own code (a broadcast that needs 4 rows) is rescued by no option, and says so.
(``reshape(4, -1)``, the tutorial's failure, *is* rescued: its output is ``(4, 2*batch)`` for any
batch, and only torch's size reasoning, not the model, fixed the batch.)
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.diagnosis.explain.rescue import OPTIONS, export_config


class BatchSum(torch.nn.Module):
    def forward(self, x):
        return (x * 2).sum(0)


class FourRows(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(4, 1)  # broadcasts only for 4 rows (or 1): the model needs that size


SPEC = {"x": {0: Dim("batch", min=1, max=8)}}

_config = pytest.importorskip("torch.fx.experimental._config")
pytestmark = pytest.mark.skipif(not hasattr(_config, "backed_size_oblivious"),
                                reason="this torch has no backed_size_oblivious option (torch 2.6)")


def test_a_zero_one_specialization_is_rescued_by_backed_size_oblivious_verified() -> None:
    outcome = exportcore.check(BatchSum(), (torch.randn(1, 4),), dynamic_shapes=SPEC, mode="non_strict")
    assert outcome.status == "failed" and outcome.failure.stage == "constraints"
    rescue = outcome.explanation.rescue
    assert (rescue.status, rescue.option, rescue.tried) == ("verified", "backed_size_oblivious",
                                                            ["backed_size_oblivious"])
    assert "export_config={'backed_size_oblivious': True}" in rescue.code
    # bare torch: plain export refuses, the option exports a program equal to eager across the range
    with pytest.raises(Exception, match="batch"):
        torch.export.export(BatchSum(), (torch.randn(1, 4),), dynamic_shapes=SPEC, strict=False)
    with export_config({"backed_size_oblivious": True}):
        ep = torch.export.export(BatchSum(), (torch.randn(1, 4),), dynamic_shapes=SPEC, strict=False)
    for batch in (1, 2, 5, 8):
        x = torch.randn(batch, 4)
        torch.testing.assert_close(ep.module()(x), BatchSum()(x))
    # the option stays around the re-check only
    from torch.fx.experimental import _config

    assert _config.backed_size_oblivious is False


def test_a_failure_no_option_changes_says_so() -> None:
    outcome = exportcore.check(FourRows(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("batch", max=64)}},
                               mode="non_strict")
    rescue = outcome.explanation.rescue
    assert rescue.status == "none" and rescue.tried[0] == "backed_size_oblivious" and not rescue.code
    assert set(rescue.tried) <= set(OPTIONS) and sorted(rescue.reasons) == sorted(rescue.tried)  # each says why


def test_an_unknown_option_names_itself() -> None:
    with pytest.raises(ValueError, match="export_config: 'no_such_option' is not an option"):
        with export_config({"no_such_option": True}):
            pass


def test_the_rescue_the_failure_text_shows_passes_as_a_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_batch='''
import pytest
import torch
from torch.export import Dim


class BatchSum(torch.nn.Module):
    def forward(self, x):
        return (x * 2).sum(0)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}})
def test_plain():
    return BatchSum(), (torch.randn(1, 4),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}},
                        export_config={"backed_size_oblivious": True})
def test_rescued():
    return BatchSum(), (torch.randn(1, 4),)
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["rescued by backed_size_oblivious (verified*",
                                 "  @pytest.mark.exportable(..., export_config={'backed_size_oblivious': True})"])


class _HangsOffTheExample(torch.nn.Module):
    """Narrows the declared batch [2, 16] to [2, 8]; eager hangs, by construction, at any batch but 4."""

    def forward(self, x):
        if x.shape[0] > 8:
            return x * 3
        exporting = getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)()  # 2.6: is_compiling
        if not exporting and x.shape[0] != 4:
            import time

            time.sleep(3600)
        return x * 2


def test_the_fix_and_the_rescue_share_one_time_limit() -> None:
    # The fix's re-check draws batches inside [2, 8] and hangs: it spends the case's whole limit, and the
    # rescue is not tried (each step had a limit of its own: a failing zoo row cost several limits).
    outcome = exportcore.check(_HangsOffTheExample(), (torch.randn(4, 3),),
                               dynamic_shapes={"x": {0: Dim("b", min=2, max=16)}}, mode="non_strict", timeout=15)
    assert (outcome.status, outcome.failure.stage) == ("failed", "constraints")
    explanation = outcome.explanation
    assert "fix" in explanation.timings and "rescue" not in explanation.timings, explanation.timings
    assert "rescue: not tried, the case's time limit (15 s) was spent" in explanation.notes, explanation.notes
