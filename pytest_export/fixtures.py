"""The ``export_check`` fixture: run one case in one mode from inside a test, get the Outcome back.

And :func:`record_outcome`: record an outcome made inside a running test (``export_check``, the
unittest mixin, a bare check()).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

import pytest

from pytest_export.session_state import plugin_session

if TYPE_CHECKING:
    from exportcore.case import Case
    from exportcore.outcome import Outcome

__all__ = ["export_check", "record_outcome"]

_OPTIONS = ("dynamic_shapes", "checks", "rtol", "atol", "examples", "inputs", "case_id", "target_options")


@pytest.fixture
def export_check(request: pytest.FixtureRequest) -> Callable[..., Outcome]:
    """Return ``check(model, args, kwargs=None, mode="non_strict", target=None, device="cpu", **options)``.

    The outcome is recorded like a marker test's (it reaches the reports and the gate),
    under the mode passed, or the target (``aoti``, ``onnx``, ``executorch``: checked in
    that runtime, starting from the inference export in ``mode``), with ``-cuda`` for
    device cuda. ``options``: dynamic_shapes, checks, rtol, atol, examples, inputs,
    case_id (default: the test's node id), target_options. Raises TypeError/ValueError for wrong
    arguments only; a case that fails to export comes back as an Outcome to assert on.
    """
    item = request.node
    options = plugin_session(item.config).options
    seen: dict[tuple[str, str], int] = {}

    def check(model: Any, args: tuple, kwargs: dict[str, Any] | None = None, mode: str = "non_strict",
              target: str | None = None, device: str = "cpu", **extra: Any) -> Outcome:
        # Imported at the first call: a plugin module's fixtures load with it, in every session.
        from exportcore.case import Case
        from exportcore.columns import Column
        from exportcore.devices import DEVICES
        from exportcore.targets import TARGETS
        from pytest_export.reporting.journal import note_done, note_started
        from pytest_export.marker import ExportSpec
        from pytest_export.results.records import Record
        from pytest_export.results.verdicts import verdict_of
        from pytest_export.runner import add_record, engine_options, run_engine, settle_outcome

        unknown = sorted(set(extra) - set(_OPTIONS))
        if unknown:
            raise TypeError(f"export_check() got an unexpected option {unknown[0]!r}; expected {', '.join(_OPTIONS)}")
        if mode not in options.known_modes:
            raise ValueError(f"export_check(): unknown mode {mode!r}; known: {', '.join(options.known_modes)}")
        if not isinstance(args, tuple):
            raise TypeError(f"export_check(): args must be a tuple, got {type(args).__name__}")
        if target is not None and target not in TARGETS:
            raise ValueError(f"export_check(): unknown target {target!r}; known: {', '.join(TARGETS)}")
        if device not in DEVICES:
            raise ValueError(f"export_check(): unknown device {device!r}; known: {', '.join(DEVICES)}")
        column = Column(target or mode, device)
        start = time.perf_counter()
        case_id = _unique(extra.pop("case_id", None) or item.nodeid, column.label, seen)
        engine_extra: dict[str, Any] = {"mode": mode, **column.keywords()}
        if target is not None:
            engine_extra["target_options"] = extra.pop("target_options", None)
        elif extra.pop("target_options", None) is not None:
            raise TypeError("export_check(): target_options needs a target")
        checks = extra.pop("checks", None)
        spec = ExportSpec(checks=tuple(checks) if checks is not None else None, examples=extra.pop("examples", None))
        case = Case(model=model, args=args, kwargs=kwargs, **extra)
        note_started(item, case_id, mode)  # a crash from here on is recorded as this case's
        # Like exportcore.check(): wrong arguments raise here, a broken case comes back as an Outcome.
        engine = engine_options(item, case, spec, options, case_id, **engine_extra)
        outcome = run_engine(item, case, column, engine, raise_bad_arguments=True)
        outcome = settle_outcome(item, case, outcome)
        duration = time.perf_counter() - start
        record = Record.make(item.nodeid, case_id, column.label, verdict_of(outcome), outcome, duration=duration,
                             source="fixture")
        add_record(item, record)
        note_done(item, record)
        return record.outcome  # its texts encodable (made by the codec)

    return check


def _unique(case_id: str, mode: str, seen: dict[tuple[str, str], int]) -> str:
    # Two calls in one test with the same mode must not collide on the gate key (case, mode).
    n = seen.get((case_id, mode), 0) + 1
    seen[(case_id, mode)] = n
    return case_id if n == 1 else f"{case_id}#{n}"


def record_outcome(item: pytest.Item, outcome: Outcome, *, case: Case | None = None, duration: float = 0.0,
                   source: str = "fixture") -> Outcome:
    """Settle ``outcome`` (plugins' hook, findings warned), record it for ``item``; return the recorded outcome.

    The key is (outcome's case id or the test's node id, outcome's mode): what reports and the gate
    see, the same as for a marker test.
    """
    from pytest_export.reporting.journal import note_done
    from pytest_export.results.records import Record
    from pytest_export.results.verdicts import verdict_of
    from pytest_export.runner import add_record, settle_outcome

    outcome = settle_outcome(item, case, outcome)
    record = Record.make(item.nodeid, outcome.case_id or item.nodeid, outcome.mode, verdict_of(outcome), outcome,
                         duration=duration, source=source)
    add_record(item, record)
    note_done(item, record)
    return record.outcome  # its texts encodable (made by the codec)
