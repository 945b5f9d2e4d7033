"""--export-timeout bounds what builds a case too: a marker test's body, a zoo factory; the other results stay."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.machinery, pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM")]

# Generous for the healthy work (a fresh process imports torch and warms up the export under a
# limit); before --export-timeout bounded the bodies, the session never ended and this ran out.
SESSION_LIMIT_S = 600
LIMIT = "--export-timeout=5"

TESTS = """
    import time

    import pytest
    from exportcore import Case

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_a_first():
        return Case(model=lambda x: x, args=(1,))

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_b_body_sleeps():
        time.sleep(10**6)

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_c_body_spins():
        while True:
            pass

    @pytest.mark.exportable(modes=["non_strict"])
    def test_canned_d_after():
        return Case(model=lambda x: x, args=(1,))
"""

FACTORIES = """
    import time

    import torch

    def hangs():
        while True:
            time.sleep(1)

    def fine():
        return torch.nn.Linear(4, 3), (torch.randn(2, 4),)
"""


# The healthy model's export gets a limit no loaded machine comes near; the factories keep --export-timeout.
EXPORT_LIMIT = """
def pytest_export_run(item, case, mode, options):
    from exportcore.check import check_case

    return check_case(case, mode, **dict(options, timeout=600))
"""


def _records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["test"].split("::")[-1]: r for r in json.loads(path.read_text())["records"]}


def _failure(record: dict[str, Any]) -> dict[str, Any]:
    return record["outcome"]["failure"]


def test_a_hanging_test_body_times_out_naming_the_test_and_the_others_are_kept(project, canned):
    canned({})
    project.makepyfile(test_build=TESTS)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", LIMIT, "--export-report=r.json",
                                          timeout=SESSION_LIMIT_S)
    result.assert_outcomes(passed=2, failed=2)
    records = _records(project.path / "r.json")
    assert {test: r["verdict"] for test, r in records.items()} == {
        "test_canned_a_first[non_strict]": "passed", "test_canned_b_body_sleeps[non_strict]": "timeout",
        "test_canned_c_body_spins[non_strict]": "timeout", "test_canned_d_after[non_strict]": "passed"}
    for name, line in (("b_body_sleeps", "time.sleep(10**6)"), ("c_body_spins", "while True:")):
        failure = _failure(records[f"test_canned_{name}[non_strict]"])
        assert (failure["stage"], failure["category"], failure["exc_type"]) == ("input", "timeout", "CaseTimeout")
        assert failure["message"] == (f"test_build.py::test_canned_{name}[non_strict]: the test's body ran past the "
                                      "time limit of 5 s before returning its case")
        assert failure["source"]["file"] == "test_build.py" and failure["source"]["code"] in (line, "pass")
    result.stdout.fnmatch_lines([
        "*test_canned_b_body_sleeps[[]non_strict[]]*", "export timed out in non_strict: stage input, category timeout",
        "  CaseTimeout: test_build.py::test_canned_b_body_sleeps[[]non_strict[]]: the test's body ran past the time "
        "limit of 5 s before returning its case"])


def test_a_hanging_zoo_factory_times_out_naming_the_model_and_the_others_are_kept(project):
    pytest.importorskip("torch")
    from conftest import RECORDER

    project.makeconftest(RECORDER + EXPORT_LIMIT)
    project.makepyfile(mymodels=FACTORIES)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", LIMIT, "--export-report=r.json",
                                          "--export-model=mymodels:hangs", "--export-model=mymodels:fine",
                                          "--export-modes=non_strict", timeout=SESSION_LIMIT_S)
    result.assert_outcomes(passed=1, failed=1)
    records = _records(project.path / "r.json")
    assert {test: r["verdict"] for test, r in records.items()} == {
        "zoo/mymodels/hangs[non_strict]": "timeout", "zoo/mymodels/fine[non_strict]": "passed"}
    failure = _failure(records["zoo/mymodels/hangs[non_strict]"])
    assert (failure["stage"], failure["category"]) == ("input", "timeout")
    assert failure["message"] == ("zoo/mymodels/hangs[non_strict]: building mymodels/hangs ran past the time limit "
                                  "of 5 s before returning its case")
    assert failure["source"]["file"].endswith("mymodels.py") and failure["source"]["function"] == "hangs"
