"""For a zoo row that fails with dynamic dims: the least restrictive spec that passes, verified.

A red cell says the inferred spec fails; a reader also wants to know whether the model exports at all.
The same case is checked again in the same mode with every check the row ran, first with only the
batch dynamic, then static, and the first that passes is named in the row's notes ("exports with a
static input size (no dynamic dim)"), or the notes say that none does. The row's verdict stays the inferred spec's: the re-checks add notes,
never a pass. Only failures a spec can change are re-checked (not one at input, in eager or in the test, nor a
timeout): the cost is one or two more exports for a failing row, none for a passing one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

    from exportcore.case import Case
    from exportcore.outcome import Outcome

__all__ = ["least_restrictive"]

#: Stages whose failure no spec changes: the case is wrong, the model fails without torch.export, or the test
#: failed after its export passed.
_NOT_THE_SPEC = ("input", "eager", "test")


def least_restrictive(item: pytest.Item, case: Case, outcome: Outcome) -> str | None:
    """Re-check a failing zoo row with fewer dynamic dims; return the note saying what passed, or None."""
    if outcome.status != "failed" or case.dynamic_shapes is None or outcome.failure is None:
        return None
    if outcome.failure.stage in _NOT_THE_SPEC:
        return None
    from exportcore.zoo.building import batch_only

    tries: list[tuple[str, Any]] = []
    batch = batch_only(case.dynamic_shapes)
    if 0 < _dynamic(batch) < _dynamic(case.dynamic_shapes):
        tries.append(("with only the batch dynamic", batch))
    tries.append(("with a static input size (no dynamic dim)", None))
    failed = []
    for words, spec in tries:
        verdict = _recheck(item, case, spec)
        if verdict.status == "passed":
            tail = f"; {', '.join(failed)}" if failed else ""
            return (f"least restrictive spec that passes: exports {words} (verified: re-checked in this mode with "
                    f"every check, passed{tail}); the inferred spec above fails")
        failed.append(f"{words}: {_failed_at(verdict)}")
    return f"fails with fewer dynamic dims too (verified; {'; '.join(failed)}): the failure is not the spec's"


def _recheck(item: pytest.Item, case: Case, spec: Any) -> Outcome:
    import dataclasses

    from pytest_export.marker import ExportSpec
    from pytest_export.runner import column_options, engine_options, item_case_id, run_engine
    from pytest_export.session_state import plugin_session

    column = item.column  # type: ignore[attr-defined]
    options = plugin_session(item.config).options
    relaxed = dataclasses.replace(case, dynamic_shapes=spec)
    engine = {**column_options(column, ExportSpec(), options), "explain": "off"}
    # its own case id: a re-check is a different case, never a result the session proved for the row's spec
    case_id = f"{item_case_id(item, column.label)}::{'batch' if spec is not None else 'static'}"
    return run_engine(item, relaxed, column, engine_options(item, relaxed, ExportSpec(), options, case_id, **engine))


def _dynamic(dynamic_shapes: Any) -> int:
    """How many dynamic dims a spec declares (any nesting), for "did batch_only leave out any"."""
    if dynamic_shapes is None or isinstance(dynamic_shapes, int):
        return 0
    if isinstance(dynamic_shapes, dict):
        return sum(_dynamic(v) for v in dynamic_shapes.values())
    if isinstance(dynamic_shapes, (list, tuple)):
        return sum(_dynamic(v) for v in dynamic_shapes)
    return 1  # a Dim, a derived dim, Dim.AUTO / Dim.DYNAMIC


def _failed_at(outcome: Outcome) -> str:
    failure = outcome.failure
    return f"{outcome.status} at {failure.stage}" if failure is not None else outcome.status
