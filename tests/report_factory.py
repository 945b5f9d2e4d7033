"""Synthetic records for the report, gate and merge tests (typed, through the plugin's one constructor)."""

from __future__ import annotations

from exportcore.outcome import (
    Counterexample,
    ExampleStats,
    Failure,
    Finding,
    GraphStats,
    Outcome,
    SourceLocation,
)
from pytest_export.results.records import Expectation, Record

STATUS = {"passed": "passed", "xpassed": "passed", "xfailed": "failed", "failed": "failed",
          "error": "error", "timeout": "timeout", "crashed": "crashed", "skipped": "skipped",
          "unstable": "failed"}  # the run shown is the first that did not pass (pytest_export.repeat)


def make_record(
    case: str = "tests/test_m.py::test_mlp",
    mode: str = "strict",
    verdict: str = "passed",
    *,
    message: str = "Could not guard on data-dependent expression u0 > 0",
    category: str = "data-dependent",
    stage: str = "capture",
    expect: Expectation | None = None,
    duration: float = 0.5,
) -> Record:
    """Return one record; failing verdicts carry a fully populated Failure."""
    file = case.split("::")[0]
    base, _, params = case.partition("[")
    test = f"{base}[{params[:-1]}-{mode}]" if params else f"{case}[{mode}]"
    outcome = Outcome(
        case_id=case, mode=mode, status=STATUS[verdict], checks=["numerics", "accept"],
        timings={"eager": 0.01, "capture": 0.4, "decompose": 0.1, "numerics": 0.02},
        graph=GraphStats(node_count=7, op_histogram={"aten.linear.default": 2, "aten.relu.default": 1},
                         code="def forward(self, x):\n    linear = torch.ops.aten.linear.default(x)\n    return (linear,)"),
        declared={"batch": "[1, 64]"}, range_constraints={"s0": "VR[2, 64]"},
        examples=ExampleStats(tried=10, accepted=9, rejected=3), torch_version="2.14.1",
    )
    if verdict == "unstable":
        outcome.repeats = ["passed", "failed"]
    if STATUS[verdict] not in ("passed", "skipped"):
        outcome.failure = Failure(
            stage=stage, category=category, exc_type="torch._dynamo.exc.UserError", message=message,
            detail=message + "\n\nSuggested fixes:\n  torch._check(x.item() > 0)",
            hint="use torch.cond or torch._check to tell export about the value",
            source=SourceLocation(file=file, line=12, function="forward", code="if x.sum() > 0:"),
            exportdb_case="cond_predicate", traceback="Traceback (most recent call last):\n  ...",
        )
        outcome.counterexample = Counterexample(shapes={"args[0]": [1, 3]}, message="batch=1 rejected",
                                                reproduce="pytest 'tests/test_m.py::test_mlp[strict]'")
        outcome.findings = [Finding(kind="specialized", severity="warning", message="batch specialized to 4",
                                    input="args[0]")]
    if expect is None and verdict in ("xfailed", "xpassed"):
        expect = Expectation("data-dependent control flow", category)
    return Record.make(test, case, mode, verdict, outcome, expect=expect, duration=duration)


def sample_records() -> list[Record]:
    """Return a small run: one failing case, one expected failure, the rest passing."""
    return [
        make_record("tests/test_a.py::test_mlp", "strict"),
        make_record("tests/test_a.py::test_mlp", "non_strict"),
        make_record("tests/test_a.py::test_mlp", "training"),
        make_record("tests/test_a.py::test_branch", "strict", "failed"),
        make_record("tests/test_a.py::test_branch", "non_strict", "xfailed"),
        make_record("tests/test_b.py::test_conv[4]", "strict"),
        make_record("tests/test_b.py::test_conv[4]", "non_strict", "error", stage="eager", category="input"),
    ]
