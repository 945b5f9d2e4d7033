"""pytest_export.records: the helpers every reader of records (reports, gate, merge, diff) shares."""

from __future__ import annotations

import subprocess
import sys

from exportcore.outcome import Failure, Outcome, SourceLocation
from pytest_export.records import failure_headline, failure_of, ordered_modes, worst


def _record(verdict: str, failure: Failure | None = None, mode: str = "strict") -> dict:
    outcome = Outcome(case_id="t.py::c", mode=mode, status="failed" if failure else "passed", failure=failure)
    return {"test": f"t.py::c[{mode}]", "case": "t.py::c", "mode": mode, "verdict": verdict,
            "outcome": outcome.to_dict()}


def test_a_records_headline_is_the_failures_own():
    failure = Failure(stage="capture", category="data-dependent", exc_type="UserError", message="branch on x",
                      source=SourceLocation("m.py", 12, "forward", "if x.sum() > 0:"))
    record = _record("failed", failure)
    assert failure_of(record) is not None
    assert failure_headline(failure_of(record)) == failure.headline()
    assert failure_headline(failure_of(record), at=False) == "[capture] data-dependent: UserError: branch on x"
    assert failure_of(_record("passed")) is None and failure_of({"outcome": None}) is None


def test_the_worst_record_speaks_for_its_key():
    passed, xpassed = _record("passed"), _record("xpassed")
    failed, crashed = _record("failed"), _record("crashed")
    assert worst([passed, failed, crashed]) is failed
    assert worst([xpassed, passed]) is xpassed  # both exported: the first stands
    assert worst([passed, _record("skipped")])["verdict"] == "skipped"  # not run is not exported


def test_known_modes_come_first_in_their_order_then_the_others_sorted():
    assert ordered_modes(["zeta", "training", "strict", "aoti", "strict"], ("strict", "non_strict", "training")) == [
        "strict", "training", "aoti", "zeta",
    ]


def test_reading_records_imports_neither_pytest_nor_torch():
    code = ("import sys, pytest_export.records, pytest_export.report, pytest_export.gate, pytest_export.merge, "
            "pytest_export.diff; bad = {'pytest', 'torch'} & set(sys.modules); assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
