"""The catalog runs as a test suite through the plugin: ``pytest --pyargs exportdb -n 2``."""

from __future__ import annotations

import pytest


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
@pytest.mark.slow
def test_pyargs_run_with_xdist(pytester: pytest.Pytester) -> None:
    # A subprocess: the installed package is collected by name, with two xdist workers.
    result = pytester.runpytest_subprocess(
        "--pyargs", "exportdb", "-n", "2", "-p", "no:cacheprovider",
        "-k", "test_if_on_tensor_value or test_cond_on_tensor_value or test_lock_context_manager",
    )
    result.assert_outcomes(passed=5, xfailed=4)
    result.stdout.fnmatch_lines(["*results: 5 passed, 4 xfailed*"])
