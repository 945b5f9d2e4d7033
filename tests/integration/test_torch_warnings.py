"""torch's own warnings during an export are notes on the result; the user's code's warnings stay warnings.

dynamo's "Dynamo does not know how to trace the builtin `time.perf_counter` ... please file an
issue" reached pytest's warnings summary for a failure pinned with ``expect=``: torch's noise, read
by a newcomer as a broken setup. A warning raised in torch's own files is now kept on the result
(the report, ``-v``); one attributed to the user's code (their own ``warnings.warn``, a deprecated
torch API their forward calls with ``stacklevel=2``) reaches the summary as before.
"""

from __future__ import annotations

import json

import pytest

SUITE = """
import warnings

import pytest
import torch
import torch._dynamo.utils


class Noisy(torch.nn.Module):
    def forward(self, x):
        # attributed to torch's own file (stacklevel 0: warn_once's line), as dynamo's own warnings are
        torch._dynamo.utils.warn_once("torch internal noise for the test", stacklevel=0)
        warnings.warn("the user's own warning", UserWarning)
        return x * 2


@pytest.mark.exportable(modes=["non_strict"], examples=0)
def test_noisy():
    return Noisy(), (torch.randn(3),)
"""


def test_torchs_warnings_are_notes_and_the_users_are_warnings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_noisy=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=r.json")
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert "the user's own warning" in out
    assert "torch internal noise" not in out
    record = json.loads((pytester.path / "r.json").read_text())["records"][0]
    assert "torch warned (UserWarning): torch internal noise for the test" in record["outcome"]["notes"]


def test_under_w_error_torchs_warning_changes_nothing(pytester: pytest.Pytester) -> None:
    mine = "        warnings.warn(\"the user's own warning\", UserWarning)\n"
    assert mine in SUITE
    pytester.makepyfile(test_noisy=SUITE.replace(mine, ""))
    # (the plugin's own findings would fail it under -W error, as documented: only numerics here)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error", "--export-checks=numerics")
    result.assert_outcomes(passed=1)
