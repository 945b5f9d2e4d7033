"""--export-model-max-params reads every way a count is written (issue 50, item 16).

``1e400`` was an INTERNALERROR (float gives inf, ``int(inf)`` raises) and ``1E6`` was refused while
``1e6`` was accepted.
"""

from __future__ import annotations

import pytest

from pytest_export.zoo.options import _count

FACTORY = '''
import torch

def make():
    return torch.nn.Linear(4, 4), (torch.randn(3, 4),)
'''


@pytest.mark.parametrize("raw, count", [
    ("1e6", 10**6), ("1E6", 10**6), ("1e+6", 10**6), ("25M", 25 * 10**6), ("1.5B", 1_500_000_000),
    ("2.5e3k", 2_500_000), ("25000000", 25_000_000), (" 30m ", 30 * 10**6),
    ("1e400", 10**18), ("1E999999999", 10**18), ("1e400M", 10**18),  # more than any model: clamped
])
def test_a_count_is_read_whichever_way_it_is_written(raw: str, count: int) -> None:
    assert _count(raw) == count


@pytest.mark.parametrize("raw", ["-5", "1e-3", "ten", "5MB", "inf", "nan", "1e"])
def test_what_is_not_a_count_is_a_usage_error_naming_it(raw: str) -> None:
    with pytest.raises(pytest.UsageError, match=rf"--export-model-max-params must be a parameter count.*{raw!r}"):
        _count(raw)


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
def test_the_option_takes_a_huge_or_upper_case_count(pytester: pytest.Pytester) -> None:
    pytest.importorskip("torch")
    pytester.makepyfile(budget_models=FACTORY)
    huge = pytester.runpytest_subprocess("--export-model=budget_models:make", "--export-model-max-params=1e400",
                                         "--collect-only", "-q")
    assert huge.ret == pytest.ExitCode.OK, huge.stdout.str() + huge.stderr.str()
    assert "INTERNALERROR" not in huge.stdout.str() + huge.stderr.str()
    # 1E1 is ten parameters: the Linear's 20 are over it, the skip says so (the count was read, not refused)
    small = pytester.runpytest_subprocess("--export-model=budget_models:make", "--export-model-max-params=1E1",
                                          "--export-modes=strict", "-rs")
    small.stdout.fnmatch_lines(["*SKIPPED*budget_models/make: 20 parameters, over the budget of 10 "
                                "(--export-model-max-params)*"])
